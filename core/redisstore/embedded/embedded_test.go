package embedded_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func TestNew(t *testing.T) {
	clock := storetest.NewClock()
	var closed []string
	store, err := embedded.New(redisstore.WithClock(clock.Now),
		redisstore.WithCloser(func() error { closed = append(closed, "caller's"); return nil }))
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("embedded", core.FixedWindow, core.PerMinute(2))
	for i, want := range []bool{true, true, false} {
		res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
		if err != nil || res.Allowed != want {
			t.Fatalf("decision %d: %+v, %v; want allowed=%v", i, res, err, want)
		}
	}
	if err := store.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if len(closed) != 1 {
		t.Fatalf("the caller's closer ran %d times, want once", len(closed))
	}
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"}); !errors.Is(err, redisstore.ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}

func TestNewValidatesOptions(t *testing.T) {
	if _, err := embedded.New(redisstore.WithPrefix("{")); err == nil {
		t.Fatal("an invalid option was accepted")
	}
}
