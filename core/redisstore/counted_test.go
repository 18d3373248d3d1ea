package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestCountedRefusalLeavesStateAsItWas: a refusal of a counted fixed window's lean
// script (lua/fixedwindow_counted.lua) charges with INCRBY and takes it back with
// DECRBY; the key's value and its absolute expiry stay exactly as they were.
func TestCountedRefusalLeavesStateAsItWas(t *testing.T) {
	store, client, ms := tickedStore(t)
	ctx := context.Background()
	ms.Store(1_767_225_600_000 + 15_000) // 45 s before the minute's window ends
	p := core.MustPolicy("counted-refusal", core.FixedWindow, core.PerMinute(3))
	key := store.Key(p, "alice")
	for i := 0; i < 3; i++ {
		if res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"}); err != nil || !res.Allowed {
			t.Fatalf("charge %d: %+v %v", i, res, err)
		}
	}
	value, expiry := client.Get(ctx, key).Val(), expireTime(t, client, key)
	if window, count, err := redisstore.FixedWindowState(p, value); err != nil || window != 1_767_225_600_000/60_000 || count != 3 {
		t.Fatalf("state %q: window %d, count %d (%v), want window %d, count 3", value, window, count, err, 1_767_225_600_000/60_000)
	}
	for i := 0; i < 5; i++ {
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: "alice"})
		if err != nil || res.Allowed || res.RetryAfter != 45*time.Second {
			t.Fatalf("refusal %d: %+v %v, want refused, retry after 45s", i, res, err)
		}
		if v, e := client.Get(ctx, key).Val(), expireTime(t, client, key); v != value || e != expiry {
			t.Fatalf("refusal %d left %q expiring at %v, want %q at %v", i, v, e, value, expiry)
		}
	}
}

// TestCountedWindowSetsItsTTLOncePerWindow: a counted fixed window's first charge in
// a window writes the state and its TTL with one SET; every other charge in that
// window is one INCRBY, with no expiry sent. The next window's first charge sets the
// state anew.
func TestCountedWindowSetsItsTTLOncePerWindow(t *testing.T) {
	store, client, ms := tickedStore(t)
	ctx := context.Background()
	p := core.MustPolicy("counted-window", core.FixedWindow, core.PerSecond(1000))
	key := store.Key(p, "bob")
	start := int64(1_767_225_600_000) // a window starts here
	decide := admitAt(t, store, ms, p, "bob")
	calls := func() (sets, incrbys, others int64) {
		return commandCalls(t, client, "set"), commandCalls(t, client, "incrby"),
			commandCalls(t, client, "get") + commandCalls(t, client, "pexpire") + commandCalls(t, client, "decrby")
	}
	sets0, incrbys0, others0 := calls()
	decide(start+100, 400)
	decide(start+700, 200)
	sets, incrbys, others := calls()
	if sets-sets0 != 1 || incrbys-incrbys0 != 600 || others != others0 {
		t.Fatalf("600 charges in one window sent %d SETs, %d INCRBYs and %d other state commands, want 1, 600 and 0",
			sets-sets0, incrbys-incrbys0, others-others0)
	}
	if window, count, err := redisstore.FixedWindowState(p, client.Get(ctx, key).Val()); err != nil || window != start/1000 || count != 600 {
		t.Fatalf("window %d, count %d (%v), want %d and 600", window, count, err, start/1000)
	}
	// The window's first charge set the expiry: its end and the margin, 901 ms after 100.
	if ttl := client.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 901*time.Millisecond {
		t.Fatalf("TTL %v, want within (0, 901ms]", ttl)
	}
	decide(start+1000, 1)
	if sets, _, _ := calls(); sets-sets0 != 2 {
		t.Fatalf("the next window's first charge: %d SETs in all, want 2", sets-sets0)
	}
	if window, count, err := redisstore.FixedWindowState(p, client.Get(ctx, key).Val()); err != nil || window != start/1000+1 || count != 1 {
		t.Fatalf("window %d, count %d (%v), want %d and 1", window, count, err, start/1000+1)
	}
}

// TestCountedBatchKeepsEachWindow: in a batch, each decision of a counted fixed window
// reports its own key's window. A key whose state lies in a later window (written by
// a clock ahead of this one) counts in that window, and the key decided after it in
// the same batch still reports the end of the batch instant's window.
func TestCountedBatchKeepsEachWindow(t *testing.T) {
	client := standaloneClient(t)
	var ms atomic.Int64
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()), batching,
		redisstore.WithClock(func() time.Time { return time.UnixMilli(ms.Load()) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := context.Background()
	p := core.MustPolicy("counted-batch-windows", core.FixedWindow, core.PerSecond(10))
	start := int64(1_767_225_600_000)
	ms.Store(start + 5_000) // a clock ahead: ann's state lies in the window of start+5s
	if res, err := store.Decide(ctx, core.Request{Policy: p, Key: "ann"}); err != nil || !res.Allowed {
		t.Fatalf("ann ahead: %+v %v", res, err)
	}
	ms.Store(start + 250)
	got, errs := redisstore.FlushBatch(store, ctx, []core.Request{{Policy: p, Key: "ann"}, {Policy: p, Key: "ben"}})
	for i, want := range []struct {
		remaining int64
		reset     time.Duration
	}{{8, 5750 * time.Millisecond}, {9, 750 * time.Millisecond}} {
		if errs[i] != nil || !got[i].Allowed || got[i].Remaining != want.remaining || got[i].ResetAfter != want.reset {
			t.Errorf("decision %d: %+v %v, want admitted, %d remaining, reset after %v", i, got[i], errs[i], want.remaining, want.reset)
		}
	}
}
