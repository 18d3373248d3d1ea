package resilient_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestRedisClusterHandOverHoldsTheLeaseOnce on a real 3-master Cluster: lease 1,
// granted by Local mode after its acquire timed out on the stopped master, runs
// locally while its phantom sits on that master. The master answers again, and
// lease 2's decision hands lease 1 over (one call, under its ID) before its own:
// read on the master, the key holds lease 1 once and lease 2, and a third request
// is refused by Redis, the limit of 2 counting the handed-over lease. Lease 1's
// release, now Redis's, frees its slot on Redis at once, with nothing left for a
// release pass; once lease 2 ends too and a pass runs, the key holds nothing.
func TestRedisClusterHandOverHoldsTheLeaseOnce(t *testing.T) {
	pairs := core.MustConcurrencyPolicy("pairs", 2, time.Minute)
	pair := func(lease uint64) core.Request { return core.Request{Policy: pairs, Key: "k", Lease: lease} }
	cp := phantomOnCluster(t, pair(1))
	r, ctx := cp.r, context.Background()
	wantLeases := func(when string, want ...uint64) {
		t.Helper()
		if got := cp.leases(t); !slices.Equal(got, want) {
			t.Fatalf("%s: the master holds leases %v; want %v", when, got, want)
		}
	}
	decide := func(lease uint64, allowed bool, when string) {
		t.Helper()
		r.rec.mu.Lock()
		calls, decisions := len(r.rec.calls), len(r.rec.decisions)
		r.rec.mu.Unlock()
		res, err := r.store.Decide(ctx, pair(lease))
		if err != nil || res.Allowed != allowed {
			t.Fatalf("%s: lease %d: %+v, %v; want allowed %v", when, lease, res, err, allowed)
		}
		r.rec.mu.Lock()
		defer r.rec.mu.Unlock()
		for _, c := range r.rec.calls[calls:] {
			if c.Kind != "" {
				t.Fatalf("%s: lease %d: a call failed: %v", when, lease, c.Err)
			}
		}
		if d := r.rec.decisions[decisions:]; len(d) != 1 || d[0].Via != resilient.ViaShared {
			t.Fatalf("%s: lease %d decided by %+v; want Redis", when, lease, d)
		}
		if lease == 2 && len(r.rec.calls)-calls != 2 {
			t.Errorf("%s: lease 2's decision made %d calls; want 2, lease 1's hand-over and its own", when, len(r.rec.calls)-calls)
		}
	}

	decide(2, true, "Redis answers again")
	wantLeases("lease 1 handed over, leases 1 and 2 running", 1, 2)
	decide(3, false, "leases 1 and 2 running, of 2")
	wantLeases("lease 3 refused", 1, 2)
	if err := r.store.Release(ctx, pair(1), 1); err != nil {
		t.Fatal(err)
	}
	wantLeases("lease 1 ended, released on Redis", 2)
	if n := r.store.EndedLeases(); n != 0 {
		t.Errorf("lease 1 ended: %d ended leases in the book; want 0 (its release went to Redis)", n)
	}
	if err := r.store.Release(ctx, pair(2), 2); err != nil {
		t.Fatal(err)
	}
	r.store.ReleasePass()
	wantLeases("every request ended")
	if n := r.store.EndedLeases(); n != 0 {
		t.Errorf("%d ended leases left in the book; want 0", n)
	}
}
