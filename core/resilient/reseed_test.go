package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// inSecondOutage runs export (2 in flight) on key k through two outages: lease 1,
// admitted by the shared store, runs throughout; Local mode admits lease 2 in the
// first outage, beside the lease seeded for lease 1; the shared store comes back
// (between runs whatever the test decides on it, with the leases the test names
// released first) and fails again. It returns the rig in the second outage, with the
// pre-limiter's memory of any refusal gone.
func inSecondOutage(t *testing.T, release []uint64, between func(r *rig)) *rig {
	t.Helper()
	r := sharedLeaseThenLocalLease(t)
	ctx := context.Background()
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || res.Allowed {
		t.Fatalf("first outage: lease 3 with leases 1 and 2 in flight: %+v, %v; want refused", res, err)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	for _, lease := range release {
		if err := r.store.Release(ctx, exportLease(lease), lease); err != nil {
			t.Fatal(err)
		}
	}
	between(r)
	r.trip(t, export)
	r.clock.Advance(2 * time.Second) // past the Retry-After of a refusal, which the pre-limiter keeps
	return r
}

// Local mode counts the leases the shared store held at its latest answer, not those
// of the answer the first outage was seeded from. Back on the shared store, lease 2
// was handed over to it (and released locally) and lease 4 refused; in the second
// outage, Local mode kept the first outage's seed (lease 1 alone) and admitted lease
// 5 beside leases 1 and 2: 3 in flight against a limit of 2.
func TestSecondOutageCountsTheLeasesHandedOver(t *testing.T) {
	r := inSecondOutage(t, nil, func(r *rig) {
		if res, err := r.store.Decide(context.Background(), exportLease(4)); err != nil || res.Allowed {
			t.Fatalf("back: lease 4 with leases 1 and 2 in flight: %+v, %v; want refused", res, err)
		}
	})
	if res, err := r.store.Decide(context.Background(), exportLease(5)); err != nil || res.Allowed {
		t.Fatalf("second outage: lease 5 with leases 1 and 2 in flight: %+v, %v; want refused", res, err)
	}
}

// A second outage seeds Local mode afresh from the latest answer, and the first
// outage's seed goes: it counted leases that have ended since. Back on the shared
// store, leases 1 and 2 ended and leases 6 and 7 took both slots; in the second
// outage the new seed (2) did not fit beside the old one (1, still live), the store
// refused it, and Local mode admitted lease 8 beside leases 6 and 7.
func TestSecondOutageReplacesTheFirstSeed(t *testing.T) {
	r := inSecondOutage(t, []uint64{1, 2}, func(r *rig) {
		for lease := uint64(6); lease <= 7; lease++ {
			if res, err := r.store.Decide(context.Background(), exportLease(lease)); err != nil || !res.Allowed {
				t.Fatalf("back: lease %d: %+v, %v; want admitted", lease, res, err)
			}
		}
	})
	if res, err := r.store.Decide(context.Background(), exportLease(8)); err != nil || res.Allowed {
		t.Fatalf("second outage: lease 8 with leases 6 and 7 in flight: %+v, %v; want refused", res, err)
	}
}

// A lease handed over to the shared store counts in Local mode even when the
// decision after the hand-over fails: the hand-over's answer is the key's latest.
// Lease 2, granted in Local mode, went to the shared store (and was released
// locally) before lease 3 was decided; that call failed, and Local mode, still on
// the first outage's seed (lease 1 alone), admitted lease 3: 3 in flight.
func TestFailedCallAfterAHandOverCountsTheLeaseHandedOver(t *testing.T) {
	r := backFromLocalLeasesOnSharedLease(t)
	whileInFlight(r, func() { r.shared.fail(errDown) }) // the hand-over lands; the decision after it fails
	if res, err := r.store.Decide(context.Background(), exportLease(3)); err != nil || res.Allowed {
		t.Fatalf("lease 3 with leases 1 and 2 in flight: %+v, %v; want refused", res, err)
	}
}

// backFromLocalLeasesOnSharedLease is a rig whose shared store admitted lease 1 on
// key k, whose Local mode then admitted lease 2 beside it, and that is back on the
// shared store, which has not decided k since; both requests still run.
func backFromLocalLeasesOnSharedLease(t *testing.T) *rig {
	t.Helper()
	r := sharedLeaseThenLocalLease(t)
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	return r
}

// A second outage's seed that does not fit beside the key's own local leases (one
// the shared store refused to take over, since another replica filled it) is not
// held, and must not count as held: recorded as taken, it let the second outage
// admit lease 5 beside 1 and 9 on the shared store and 2 in the local store, 4 in
// flight of 2. The key is refused until its seed fits.
func TestSeedThatDoesNotFitIsNotHeld(t *testing.T) {
	ctx := context.Background()
	r := inSecondOutage(t, nil, func(r *rig) {
		if res, err := r.shared.mem.Decide(ctx, exportLease(9)); err != nil || !res.Allowed {
			t.Fatalf("another replica's lease 9: %+v, %v", res, err)
		}
		if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || res.Allowed {
			t.Fatalf("back: lease 4: %+v, %v; want refused", res, err)
		}
	})
	res, err := r.store.Decide(ctx, exportLease(5))
	if err != nil || res.Allowed {
		t.Fatalf("second outage: lease 5 with 1 and 9 (shared) and 2 (local) in flight: %+v, %v; want refused", res, err)
	}
}

// sharedLeaseThenLocalLease is a rig whose key holds lease 1 from the shared store
// and lease 2 from Local mode, in an outage that is still on; both requests run.
func sharedLeaseThenLocalLease(t *testing.T) *rig {
	t.Helper()
	r := newRig(t)
	ctx := context.Background()
	if res, err := r.store.Decide(ctx, exportLease(1)); err != nil || !res.Allowed {
		t.Fatalf("healthy: lease 1: %+v, %v", res, err)
	}
	r.trip(t, export)
	if res, err := r.store.Decide(ctx, exportLease(2)); err != nil || !res.Allowed || !res.DecidedAt.IsZero() {
		t.Fatalf("outage: lease 2: %+v, %v; want admitted in Local mode", res, err)
	}
	return r
}
