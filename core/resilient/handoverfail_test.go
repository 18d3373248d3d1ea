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
