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
	"github.com/go-ratelimit/ratelimit/core/storetest"
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

// TestEmbeddedTTLsFollowTheStoresClock: NewOnClock counts TTLs down on the clock it
// decides at, before each command, and never on the real clock. The simulator used
// New with a virtual clock: keys expired in real time, and a replay that ran longer
// than a key's TTL decided it afresh while it still restricted in replay time (a
// fixed window of 1 per 10 s admitted a second request 9.5 s after the first, after
// 80 s of replay). Here a key lives while it restricts, nine and a half minutes on
// the store's clock, and expires once that clock passes its TTL.
func TestEmbeddedTTLsFollowTheStoresClock(t *testing.T) {
	clock := storetest.NewClock()
	store, server, err := newStoreOnClock(clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := core.MustPolicy("api", core.FixedWindow, core.Rate{Limit: 1, Period: 10 * time.Minute})
	ctx := context.Background()
	decide := func(key string) core.Result {
		t.Helper()
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// storetest.Start is the start of a 10-minute window.
	if !decide("a").Allowed {
		t.Fatal("the first request of the window was refused")
	}
	clock.Advance(9*time.Minute + 30*time.Second)
	if res := decide("a"); res.Allowed || res.RetryAfter != 30*time.Second {
		t.Fatalf("9m30s into the window: %+v, want refused for 30s", res)
	}
	if !server.Exists(store.Key(p, "a")) {
		t.Fatal("the key is gone while its window restricts")
	}
	clock.Advance(2 * time.Minute) // past the window and the 1-minute margin
	decide("b")
	if server.Exists(store.Key(p, "a")) {
		t.Fatalf("the key outlived its TTL on the store's clock (TTL %v)", server.TTL(store.Key(p, "a")))
	}
}
