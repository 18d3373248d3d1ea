package resilient_test

import (
	"context"
	"testing"
	"time"
)

// Local mode's seed stands for the leases the last answer counted, and lapses when
// they do: the shared store lets them go then, whatever their requests do. Leases 1
// and 2, granted at 0 s and never released, lapse at 60 s; seeded at 50 s for the
// lease timeout, the seed refused every request until 110 s.
func TestSeedLapsesWithTheLeasesItCounts(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("healthy: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.clock.Advance(50 * time.Second)
	r.trip(t, export)
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || res.Allowed {
		t.Fatalf("outage at 50 s: lease 3 with leases 1 and 2 live: %+v, %v; want refused", res, err)
	}
	r.clock.Advance(9 * time.Second)
	if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || res.Allowed {
		t.Fatalf("outage at 59 s: lease 4 with leases 1 and 2 live: %+v, %v; want refused", res, err)
	}
	r.clock.Advance(2 * time.Second)
	if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || !res.Allowed {
		t.Fatalf("outage at 61 s: lease 4 with leases 1 and 2 lapsed: %+v, %v; want admitted", res, err)
	}
}
