package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestRefundValidates: a refund checks its request like a decision does.
func TestRefundValidates(t *testing.T) {
	store, err := redisstore.New(newMiniredisClient(t))
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("refund-invalid", core.TokenBucket, core.PerSecond(5))
	for _, req := range []core.Request{{Key: "k"}, {Policy: p, Key: "k", Cost: 9}, {Policy: p}} {
		if err := store.Refund(context.Background(), req, time.Now()); err == nil {
			t.Errorf("refund of %+v succeeded", req)
		}
	}
}
