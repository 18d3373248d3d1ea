package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// testRetriedAcquire holds a store to transition.acquireLease's retries: an acquire
// whose lease ID a live lease holds (a retry after a lost reply, a lease handed
// back to a store that may hold it) is admitted and holds one lease, which one
// release ends; alone and in a stack, whose refusal leaves it held. (On a Cluster,
// a stack refused on another slot at the instant the lease was taken ends it: its
// request did not run. The suite's clock moves on before the stack.)
func testRetriedAcquire(t *testing.T, newStore NewStore) {
	clock := NewClock()
	store := newStore(t, clock)
	ctx := context.Background()
	p := core.MustConcurrencyPolicy("retried", 2, 5*time.Second)
	other := core.MustPolicy("retried-other", core.FixedWindow, core.Rate{Limit: 1, Period: time.Hour})
	req := func(id uint64) core.Request { return core.Request{Policy: p, Key: "client", Lease: id} }
	mustAllow(t, store, req(1), true)
	clock.Advance(time.Millisecond)
	if res := mustAllow(t, store, req(1), true); res.Remaining != 1 || res.Lease != 1 {
		t.Fatalf("retried acquire: %+v, want lease 1 held once (remaining 1)", res)
	}
	mustAllow(t, store, req(2), true)
	clock.Advance(time.Millisecond)
	mustAllow(t, store, req(1), true) // the key is full, but lease 1 holds its slot
	mustAllow(t, store, req(3), false)

	// In a stack, on another key's slot on a Cluster, refused by the other policy:
	// lease 2 stays held, once.
	mustAllow(t, store, core.Request{Policy: other, Key: "other"}, true)
	clock.Advance(time.Millisecond)
	stack := []core.Request{req(2), {Policy: other, Key: "other"}}
	results := make([]core.Result, 2)
	if allowed, err := store.DecideStack(ctx, stack, results); err != nil || allowed {
		t.Fatalf("stack: allowed=%v err=%v, want refused by %q", allowed, err, other.Name())
	}
	mustAllow(t, store, req(3), false)

	if err := store.Release(ctx, req(0), 1); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, store, req(3), true) // one release freed lease 1's one slot
	mustAllow(t, store, req(4), false)
	if err := store.Release(ctx, req(0), 2); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, store, req(4), true)
	mustAllow(t, store, req(5), false)
}
