package redisstore

import (
	"context"
	"sync"
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

// TestEmbeddedStoreExpiresKeys decides on an embedded store and closes it: its key
// carries a TTL that countDownTTLs will count down, and Close returns, having stopped
// that goroutine.
func TestEmbeddedStoreExpiresKeys(t *testing.T) {
	store, err := NewEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	p := core.MustPolicy("embedded", core.GCRA, core.PerSecond(10))
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Cost: 1}); err != nil {
		t.Fatal(err)
	}
	ttl, err := store.client.(*redis.Client).PTTL(context.Background(), store.Key(p, "k")).Result()
	if err != nil || ttl <= 0 || ttl > time.Second {
		t.Fatalf("TTL %v (%v), want within (0, 1s]", ttl, err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
}
