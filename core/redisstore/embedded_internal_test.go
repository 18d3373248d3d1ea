package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestEmbeddedTTLsCountDown drives countDownTTLs with a clock of the test's own: a key
// expires once the clock has passed its TTL, never before, and a clock that steps
// back does not make TTLs run fast.
func TestEmbeddedTTLsCountDown(t *testing.T) {
	server := miniredis.RunT(t)
	var mu sync.Mutex
	clock := time.Unix(1767225600, 0)
	advance := func(d time.Duration) {
		mu.Lock()
		clock = clock.Add(d)
		mu.Unlock()
	}
	ticks := make(chan time.Time)
	stop := countDownTTLs(server, ticks, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	defer stop()
	tick := func() {
		ticks <- time.Time{}
		ticks <- time.Time{} // received only once the first tick's work is done
	}
	server.Set("k", "v")
	server.SetTTL("k", 1500*time.Millisecond)
	for _, step := range []struct {
		advance time.Duration
		exists  bool
	}{
		{time.Second, true},            // 500 ms left
		{-10 * time.Second, true},      // the clock steps back: nothing counted
		{10 * time.Second, true},       // back where it was: still nothing
		{499 * time.Millisecond, true}, // 1 ms left
		{time.Millisecond, false},
	} {
		advance(step.advance)
		tick()
		if server.Exists("k") != step.exists {
			t.Fatalf("after %v: exists %v, want %v (TTL %v)", step.advance, !step.exists, step.exists, server.TTL("k"))
		}
	}
}

// TestEmbeddedStoreExpiresKeys decides on embedded stores, with the caller's clock and
// with Redis TIME: a key lives while its state has not recovered, and goes at the
// first tick after its TTL on the store's clock; Close stops the countdown.
func TestEmbeddedStoreExpiresKeys(t *testing.T) {
	ctx := context.Background()
	p := core.MustPolicy("embedded", core.GCRA, core.PerSecond(10))
	t.Run("caller clock", func(t *testing.T) {
		var ms atomic.Int64
		ms.Store(1767225600000)
		ticks := make(chan time.Time)
		store, err := newEmbedded(ticks, WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		if _, err := store.Decide(ctx, core.Request{Policy: p, Key: "k", Cost: 1}); err != nil {
			t.Fatal(err)
		}
		ttl := time.Duration(store.client.(*redis.Client).PTTL(ctx, store.Key(p, "k")).Val())
		if ttl <= DefaultCallerClockMargin || ttl > DefaultCallerClockMargin+time.Second {
			t.Fatalf("TTL %v, want the recovery of one token plus %v", ttl, DefaultCallerClockMargin)
		}
		for _, step := range []struct {
			advance time.Duration
			exists  bool
		}{
			{ttl - time.Millisecond, true},
			{time.Millisecond, false},
		} {
			ms.Add(step.advance.Milliseconds())
			ticks <- time.Time{}
			ticks <- time.Time{} // received once the first tick's work is done
			if n := store.client.(*redis.Client).Exists(ctx, store.Key(p, "k")).Val(); (n == 1) != step.exists {
				t.Fatalf("after %v more: %d keys, want exists %v", step.advance, n, step.exists)
			}
		}
	})
	t.Run("server clock", func(t *testing.T) {
		store, err := NewEmbedded()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Decide(ctx, core.Request{Policy: p, Key: "k", Cost: 1}); err != nil {
			t.Fatal(err)
		}
		ttl, err := store.client.(*redis.Client).PTTL(ctx, store.Key(p, "k")).Result()
		if err != nil || ttl <= 0 || ttl > time.Second {
			t.Fatalf("TTL %v (%v), want within (0, 1s]", ttl, err)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
