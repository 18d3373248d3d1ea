package resilient_test

import (
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
