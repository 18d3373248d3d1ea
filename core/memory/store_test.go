package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func TestSweepEvictsOnlyRecoveredKeys(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock)
	ctx := context.Background()
	fast := core.MustPolicy("fast", core.TokenBucket, core.PerSecond(10)) // recovers in 100ms per token
	slow := core.MustPolicy("slow", core.FixedWindow, core.PerMinute(10)) // recovers when its minute ends
	for i := 0; i < 10; i++ {
		mustDecide(t, store, core.Request{Policy: fast, Key: fmt.Sprint("f", i)})
	}
	clock.Set(storetest.Start - storetest.Start%60000 + 1000) // one second into a minute
	mustDecide(t, store, core.Request{Policy: slow, Key: "s"})
	clock.Advance(200 * time.Millisecond)
	if n := store.Sweep(); n != 10 {
		t.Fatalf("swept %d keys, want the 10 recovered token buckets", n)
	}
	if st := store.Stats(); st.Keys != 1 || st.Evicted != 10 {
		t.Fatalf("stats %+v, want 1 key left and 10 evicted", st)
	}
	// The window's key is still held and still counts.
	for i := 0; i < 9; i++ {
		mustDecide(t, store, core.Request{Policy: slow, Key: "s"})
	}
	if res, _ := store.Decide(ctx, core.Request{Policy: slow, Key: "s"}); res.Allowed {
		t.Fatal("the sweep lost the window's count")
	}
	clock.Advance(time.Minute)
	if n := store.Sweep(); n != 1 {
		t.Fatalf("after the window ended swept %d, want 1", n)
	}
}

func TestKeyCapBoundsMemoryUnderAFloodOfKeys(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(1000), memory.WithShards(16))
	p := core.MustPolicy("flood", core.SlidingLog, core.PerMinute(3))
	for i := 0; i < 50_000; i++ {
		mustDecide(t, store, core.Request{Policy: p, Key: fmt.Sprint("203.0.", i/256, ".", i%256)})
	}
	st := store.Stats()
	if st.Keys > 1000 {
		t.Fatalf("%d keys held, cap 1000", st.Keys)
	}
	// Every held key still restricts its client for a minute: none is evicted,
	// and the new keys are decided against the policy's overflow entry.
	if st.EvictedEarly != 0 || st.Overflowed < 49_000 {
		t.Fatalf("stats %+v: want no early eviction and about 49000 overflowed decisions", st)
	}
}

// With the cap hit, the store prefers to evict recovered keys over live ones.
func TestKeyCapEvictsRecoveredKeysFirst(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock, memory.WithMaxKeys(8), memory.WithShards(1))
	live := core.MustPolicy("live", core.FixedWindow, core.Rate{Limit: 1, Period: time.Hour})
	idle := core.MustPolicy("idle", core.TokenBucket, core.PerSecond(1000))
	for i := 0; i < 4; i++ {
		mustDecide(t, store, core.Request{Policy: live, Key: fmt.Sprint("live", i)})
	}
	for i := 0; i < 4; i++ {
		mustDecide(t, store, core.Request{Policy: idle, Key: fmt.Sprint("idle", i)})
	}
	clock.Advance(time.Second) // the token buckets have recovered; the hour windows have not
	for i := 0; i < 4; i++ {
		mustDecide(t, store, core.Request{Policy: idle, Key: fmt.Sprint("new", i)})
	}
	if st := store.Stats(); st.EvictedEarly != 4 || st.Keys != 8 || st.Overflowed != 0 {
		t.Fatalf("stats %+v: want the 4 recovered keys evicted for the 4 new ones", st)
	}
	for i := 0; i < 4; i++ {
		if res, _ := store.Decide(context.Background(), core.Request{Policy: live, Key: fmt.Sprint("live", i)}); res.Allowed {
			t.Fatalf("live key %d lost its state", i)
		}
	}
}

func TestCloseStopsTheJanitorAndRefusesWork(t *testing.T) {
	store, err := memory.New(memory.WithSweepInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(1))
	if _, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"}); err != memory.ErrClosed {
		t.Fatalf("Decide after Close: %v, want ErrClosed", err)
	}
}

func TestInvalidOptions(t *testing.T) {
	for name, opt := range map[string]memory.Option{
		"nil clock":      memory.WithClock(nil),
		"zero keys":      memory.WithMaxKeys(0),
		"zero shards":    memory.WithShards(0),
		"negative sweep": memory.WithSweepInterval(-time.Second),
	} {
		if _, err := memory.New(opt); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRefund(t *testing.T) {
	clock := storetest.NewClock()
	store := newTestStore(t, clock)
	p := core.MustPolicy("refund", core.FixedWindow, core.PerMinute(3))
	var charged core.Result
	for i := 0; i < 3; i++ {
		charged = mustDecide(t, store, core.Request{Policy: p, Key: "k"})
	}
	if err := store.Refund(context.Background(), core.Request{Policy: p, Key: "k", Cost: 2}, charged.DecidedAt); err != nil {
		t.Fatal(err)
	}
	res := mustDecide(t, store, core.Request{Policy: p, Key: "k"})
	if !res.Allowed || res.Remaining != 1 {
		t.Fatalf("after refunding 2: %+v, want admitted with 1 remaining", res)
	}
}

func mustDecide(t testing.TB, store core.Store, req core.Request) core.Result {
	t.Helper()
	res, err := store.Decide(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
