package redisstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

func TestWithBatchingValidates(t *testing.T) {
	client := newMiniredisClient(t)
	for _, c := range []struct {
		window   time.Duration
		maxBatch int
	}{
		{-time.Microsecond, 64},
		{redisstore.MaxBatchWindow + 1, 64},
		{0, 1},
		{0, 0},
		{time.Millisecond, redisstore.MaxBatchSize + 1},
	} {
		_, err := redisstore.New(client, redisstore.WithBatching(c.window, c.maxBatch))
		if err == nil || !strings.Contains(err.Error(), "WithBatching") {
			t.Errorf("WithBatching(%v, %d): %v, want an error naming the option", c.window, c.maxBatch, err)
		}
	}
	for _, c := range []struct {
		window   time.Duration
		maxBatch int
	}{{0, 2}, {redisstore.MaxBatchWindow, redisstore.MaxBatchSize}, {redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch}} {
		store, err := redisstore.New(client, redisstore.WithBatching(c.window, c.maxBatch))
		if err != nil {
			t.Errorf("WithBatching(%v, %d): %v", c.window, c.maxBatch, err)
			continue
		}
		store.Close()
	}
}
