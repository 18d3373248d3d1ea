package resilient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestSlowThenLocalAdmissionsAreChargedOnce: an outage begins with slow calls (the
// breaker still closed) and goes on in Local mode, the usual order. Of 10 an hour,
// the shared store admits 2, slow calls 3 from its last answer, and Local mode,
// continuing from what those left, 2 more: 3 are left, and back on the shared store
// the key gets exactly those 3. The slow calls' spend is in the local allowance
// the settlement charges, and was charged again as slow calls' own: the key got
// none of its 3 (the helper that attacked the login stack on a Cluster found IP and
// subnet budgets short by up to 6).
func TestSlowThenLocalAdmissionsAreChargedOnce(t *testing.T) {
	r := newRig(t)
	p := core.MustPolicy("api", core.TokenBucket, core.PerHour(10))
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("healthy: %d admitted, want 2", got)
	}
	r.shared.fail(errDown)
	for i := range 3 {
		if res := r.decide(t, p, "k"); !res.Allowed {
			t.Fatalf("slow call %d: %+v, want admitted from the last answer (8 left)", i, res)
		}
	}
	waitFor(t, "the breaker to open", func() bool { return r.store.Breaker() == resilient.BreakerOpen })
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("Local mode: %d admitted of 2, want 2 (5 left after the slow calls)", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
	if got := admittedOf(t, r, p, "k", 6); got != 3 {
		t.Fatalf("back on the shared store: %d admitted, want the 3 that 2 shared, 3 slow and 2 local admissions of 10 leave", got)
	}
}

// TestLocalAllowanceRecoversFromTheSlowCallsItAbsorbed: the slow calls of an
// outage's first moments spend a key's last answer, and Local mode's first allowance
// starts below what they spent. Once that allowance has recovered, so has what they
// spent: a long outage's later allowances start whole. Subtracting their spending
// again, each new allowance stayed short of it for the rest of the outage: a bucket
// of 20 that 4 slow calls had spent admitted 16 after every pause, however long
// (found by walking the README's production setup through a Redis outage).
func TestLocalAllowanceRecoversFromTheSlowCallsItAbsorbed(t *testing.T) {
	for _, tc := range []struct {
		p        core.Policy
		replicas int
		slow     int           // admitted by slow calls, from the last answer
		pause    time.Duration // long enough for the policy to recover in full
		whole    int           // the replica's whole share
	}{
		{core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20)), 1, 4, 5 * time.Second, 20},
		{core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20)), 2, 3, 5 * time.Second, 10},
		{core.MustPolicy("api", core.SlidingLog, core.PerMinute(5)), 1, 1, 3 * time.Minute, 5},
		{core.MustPolicy("api", core.FixedWindow, core.PerMinute(6)), 2, 1, 3 * time.Minute, 3},
		{core.MustPolicy("api", core.LeakyBucket, core.PerSecond(10), core.WithBurst(20)), 1, 4, 5 * time.Second, 21},
	} {
		t.Run(fmt.Sprintf("%s/%d-replicas", tc.p.Algorithm(), tc.replicas), func(t *testing.T) {
			r := newRig(t, resilient.WithReplicas(tc.replicas))
			if !r.decide(t, tc.p, "k").Allowed {
				t.Fatal("healthy: refused")
			}
			r.shared.fail(errDown)
			if got := admittedOf(t, r, tc.p, "k", tc.slow); got != tc.slow {
				t.Fatalf("slow calls: %d admitted of %d", got, tc.slow)
			}
			tripBreaker(t, r.store, tc.p)
			for pause := range 3 {
				r.clock.Advance(tc.pause)
				if got := admittedOf(t, r, tc.p, "k", 2*tc.whole); got != tc.whole {
					t.Fatalf("Local mode, after pause %d: %d admitted, want the replica's whole share, %d", pause+1, got, tc.whole)
				}
			}
		})
	}
}
