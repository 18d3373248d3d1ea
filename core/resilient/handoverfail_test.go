package resilient_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// failOnce is a shared store whose next Decide fails, when armed.
type failOnce struct {
	*fakeShared
	armed atomic.Bool
}

func (f *failOnce) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if f.armed.CompareAndSwap(true, false) {
		return core.Result{}, errDown
	}
	return f.fakeShared.Decide(ctx, req)
}

// A local lease whose hand-over fails is still in flight, and the shared store
// never saw it: the key's decision must not go on to the shared store as if the
// key held nothing. Leases 1 and 2 were granted in Local mode; back on the shared
// store, the hand-over of lease 1 failed, and the shared store, which held
// nothing, admitted lease 3: 3 in flight against a limit of 2.
func TestFailedHandOverKeepsTheLocalLeasesCounted(t *testing.T) {
	clock := storetest.NewClock()
	fake := &failOnce{fakeShared: newFakeShared(t, clock)}
	r := newRigOver(t, clock, fake)
	r.shared = fake.fakeShared
	ctx := context.Background()
	r.trip(t, export)
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("local mode: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	fake.armed.Store(true) // the hand-over's call fails; the decision's, after it, does not
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || res.Allowed {
		t.Fatalf("leases 1 and 2 in flight, their hand-over failed: lease 3: %+v, %v; want refused", res, err)
	}
}

// A key's release of a lease that ended while its release failed comes first at the
// key's next decision; when it fails again, the decision goes no further to the
// shared store: on a store that hangs, the decision's own call after it waited out
// a second deadline. The decision is made as for a failed call, from the last answer.
func TestFailedReleaseOfAnEndedLeaseEndsTheDecisionsCalls(t *testing.T) {
	r := newRig(t, neverOpen, resilient.WithDeadline(testDeadline))
	r.store.ReleasePassesByHand() // the key's decision releases the ended lease
	ctx := context.Background()
	if res, err := r.store.Decide(ctx, exportLease(1)); err != nil || !res.Allowed {
		t.Fatalf("healthy: lease 1: %+v, %v", res, err)
	}
	r.shared.fail(errDown)
	if err := r.store.Release(ctx, exportLease(1), 1); err == nil {
		t.Fatal("releasing lease 1 on a failing store: no error")
	}
	r.shared.set(nil, true, false) // hangs until the deadline
	calls := r.shared.calls.Load()
	res, err := r.store.Decide(ctx, exportLease(2))
	if got := r.shared.calls.Load() - calls; got != 1 {
		t.Errorf("lease 1's release hung: lease 2's decision made %d calls to the shared store; want 1", got)
	}
	if err != nil || !res.Allowed {
		t.Errorf("lease 2, decided from the last answer (1 of 2 in flight): %+v, %v; want admitted", res, err)
	}
	if n := r.store.EndedLeases(); n != 1 {
		t.Errorf("%d ended leases in the book; want lease 1, to release later", n)
	}
}
