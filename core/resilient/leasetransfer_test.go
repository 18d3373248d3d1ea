package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// backFromLocalLeases is a rig whose Local mode granted both slots of export (2 in
// flight) on key k, as leases 1 and 2, and that is back on the shared store, which
// never saw them; their requests are still running.
func backFromLocalLeases(t *testing.T) *rig {
	t.Helper()
	r := newRig(t)
	r.trip(t, export)
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(context.Background(), exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("local mode: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	return r
}

func exportLease(lease uint64) core.Request {
	return core.Request{Policy: export, Key: "k", Lease: lease}
}

// Leases that Local mode granted and whose requests still run count on the shared
// store once it is back: the key's next decision hands them over first, so the
// shared store, which never saw them, does not admit two more (4 in flight against a
// limit of 2). Their releases then go to the shared store, which frees their slots.
func TestLocalLeasesInFlightCountOnReturn(t *testing.T) {
	r := backFromLocalLeases(t)
	ctx := context.Background()
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || res.Allowed {
		t.Fatalf("back on the shared store with 2 local leases in flight: %+v, %v; want refused", res, err)
	}
	if err := r.store.Release(ctx, exportLease(1), 1); err != nil {
		t.Fatal(err)
	}
	if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || !res.Allowed {
		t.Fatalf("after lease 1 ended: %+v, %v; want its slot", res, err)
	}
	if res, err := r.store.Decide(ctx, exportLease(5)); err != nil || res.Allowed {
		t.Fatalf("leases 2 and 4 in flight: %+v, %v; want refused", res, err)
	}
	bothSlotsFreeAfter(t, r, 2, 4)
}

// bothSlotsFreeAfter releases the leases in flight and checks that both slots of key
// k are free: no slot is held by a request that ended.
func bothSlotsFreeAfter(t *testing.T, r *rig, inFlight ...uint64) {
	t.Helper()
	ctx := context.Background()
	for _, lease := range inFlight {
		if err := r.store.Release(ctx, exportLease(lease), lease); err != nil {
			t.Fatal(err)
		}
	}
	for lease := uint64(100); lease <= 101; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("every lease ended: lease %d: %+v, %v; want admitted", lease, res, err)
		}
	}
}

// A request that ends while its local lease is being handed over leaves nothing
// behind on the shared store: its release, which finds the lease still local, and
// the hand-over, which then finds it gone, together free the slot.
func TestLocalLeaseEndingDuringItsHandOver(t *testing.T) {
	r := backFromLocalLeases(t)
	ctx := context.Background()
	whileInFlight(r, func() { // during the hand-over of the key's leases
		if err := r.store.Release(ctx, exportLease(1), 1); err != nil {
			t.Error(err)
		}
	})
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || !res.Allowed {
		t.Fatalf("lease 1 ended during its hand-over, lease 2 in flight: %+v, %v; want admitted", res, err)
	}
	if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || res.Allowed {
		t.Fatalf("leases 2 and 3 in flight: %+v, %v; want refused", res, err)
	}
	bothSlotsFreeAfter(t, r, 2, 3)
}
