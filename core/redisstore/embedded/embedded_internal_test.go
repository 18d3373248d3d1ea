package embedded

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestEmbeddedTTLsCountDown drives countDownTTLs with a clock of the test's own: a key
// written before the first tick expires once the counted time has passed its TTL, not
// before; a stall counts as one tick at most, and a clock that steps back does not
// make TTLs run fast.
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
	stop := countDownTTLs(server, ticks, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }, time.Second)
	defer stop()
	tick := func() {
		ticks <- time.Time{}
		ticks <- time.Time{} // received only once the first tick's work is done
	}
	server.Set("k", "v")
	server.SetTTL("k", 2500*time.Millisecond)
	for _, step := range []struct {
		advance time.Duration
		exists  bool
	}{
		{time.Second, true},            // 1.5 s left
		{5 * time.Second, true},        // a stall: one second counted, 500 ms left
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

// TestEmbeddedKeysOutliveTheirState decides on embedded stores, with Redis TIME and
// with the caller's clock, and counts their TTLs down on a clock of the test's own. A
// key written just before a tick loses a whole tick at that tick, so its TTL holds
// the state's recovery, the margin and one tick more: it outlives the tick that comes right after its
// write, and goes once the clock has passed its TTL.
func TestEmbeddedKeysOutliveTheirState(t *testing.T) {
	ctx := context.Background()
	p := core.MustPolicy("embedded", core.GCRA, core.PerSecond(10)) // a token recovers in 100 ms
	const tick = time.Second
	for _, c := range []struct {
		name    string
		options []redisstore.Option
		margin  time.Duration
	}{
		{"server clock", nil, redisstore.DefaultServerTimeMargin},
		{"caller clock", []redisstore.Option{redisstore.WithClock(time.Now)}, redisstore.DefaultCallerClockMargin},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ns atomic.Int64
			ticks := make(chan time.Time)
			store, server, err := newStore(ticks, func() time.Time { return time.Unix(0, ns.Load()) }, tick, c.options...)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			if _, err := store.Decide(ctx, core.Request{Policy: p, Key: "k", Cost: 1}); err != nil {
				t.Fatal(err)
			}
			key := store.Key(p, "k")
			ttl := server.TTL(key)
			if want := 100*time.Millisecond + c.margin + tick; ttl <= want-5*time.Millisecond || ttl > want {
				t.Fatalf("TTL %v, want the recovery, the margin and a tick, %v", ttl, want)
			}
			count := func(advance time.Duration, exists bool) {
				t.Helper()
				ns.Add(int64(advance))
				ticks <- time.Time{}
				ticks <- time.Time{} // received once the first tick's work is done
				if server.Exists(key) != exists {
					t.Fatalf("after %v more: exists %v, want %v", advance, !exists, exists)
				}
			}
			count(tick, true) // the tick right after the write takes a whole tick off
			left := ttl - tick
			for ; left > tick; left -= tick {
				count(tick, true)
			}
			count(left-time.Millisecond, true)
			count(time.Millisecond, false)
		})
	}
}

// The in-process server listens on a loopback port: another local process that
// connects to it without the store's password can neither read nor write the limits.
func TestEmbeddedServerRequiresItsPassword(t *testing.T) {
	ticks := make(chan time.Time)
	store, server, err := newStore(ticks, time.Now, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	ctx := context.Background()
	if res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"}); err != nil || res.Remaining != 9 {
		t.Fatalf("the store's own decision: %+v, %v; want admitted with 9 left", res, err)
	}
	intruder := redis.NewClient(&redis.Options{Addr: server.Addr()})
	defer intruder.Close()
	for _, cmd := range [][]any{{"FLUSHALL"}, {"KEYS", "*"}, {"SET", "k", "v"}} {
		if err := intruder.Do(ctx, cmd...).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Errorf("%v without the password: %v, want NOAUTH", cmd, err)
		}
	}
	if res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"}); err != nil || res.Remaining != 8 {
		t.Fatalf("the store's next decision: %+v, %v; want admitted with 8 left: the state stayed", res, err)
	}
}
