package resilient_test

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A window spent in Local mode stays spent when the shared store returns later in
// the same window: the return's settlement must not count the window as recovering
// little by little, as a bucket does.
func TestWindowSpentInLocalModeStaysSpentOnReturn(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(string(alg), func(t *testing.T) {
			r := newRig(t)
			p := core.MustPolicy("api", alg, core.PerMinute(10))
			minute := time.Minute.Milliseconds()
			r.clock.Set((r.clock.Millis()/minute + 1) * minute) // a window starts
			r.trip(t, p)
			if got := admittedOf(t, r, p, "k", 12); got != 10 {
				t.Fatalf("Local mode admitted %d of 12, want 10", got)
			}
			r.clock.Advance(30 * time.Second)
			r.shared.heal()
			waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
			if got := admittedOf(t, r, p, "k", 10); got != 0 {
				t.Fatalf("back on the shared store 30 s into the window Local mode spent: %d admitted, want 0", got)
			}
		})
	}
}
