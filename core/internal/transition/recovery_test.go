package transition

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// After RecoveredAfter, a state decides as a missing one would, at every later
// instant and for every cost: that is what lets the memory store evict it.
func TestARecoveredStateDecidesLikeAMissingOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	algorithms := append([]core.Algorithm{core.Concurrency}, rateAlgorithms...)
	for _, alg := range algorithms {
		var policies []core.Policy
		if alg == core.Concurrency {
			policies = []core.Policy{core.MustConcurrencyPolicy("c", 3, 2*time.Second)}
		} else {
			policies = referencePolicies(alg)
		}
		for _, p := range policies {
			for trial := 0; trial < 20; trial++ {
				var s State
				times, costs := randomTrace(rng, p, 1+rng.IntN(40))
				now := times[0]
				for i := range times {
					s, _ = Step(s, &p, times[i], costs[i], uint64(i+1))
					now = times[i]
				}
				after := RecoveredAfter(s, &p, now)
				if after < 0 {
					t.Fatalf("%v: RecoveredAfter %v", p, after)
				}
				recovered := now + after.Milliseconds()
				for _, later := range []int64{0, 1, p.PeriodMillis() / 3, p.PeriodMillis(), 5 * p.PeriodMillis()} {
					at := recovered + later
					for _, cost := range []int64{1, p.Capacity()} {
						if _, got := Peek(s, &p, at, cost); !sameDecision(got, peekMissing(&p, at, cost)) {
							t.Fatalf("%v: %v after %v (at +%dms, cost %d) decides %+v, a missing key %+v",
								p, s, after, later, cost, got, peekMissing(&p, at, cost))
						}
					}
				}
			}
		}
	}
}

// The fixed window reports the time to its window's end even when empty; an empty
// window has recovered all the same.
func TestAnEmptyFixedWindowHasRecovered(t *testing.T) {
	p := core.MustPolicy("w", core.FixedWindow, core.PerMinute(10))
	s, _ := Step(State{}, &p, t0, 1, 0)
	if got := RecoveredAfter(s, &p, t0); got <= 0 {
		t.Fatalf("a window with one admitted request recovered after %v", got)
	}
	if got := RecoveredAfter(s, &p, t0+60_000); got != 0 {
		t.Fatalf("the next window, still empty, recovers after %v, want 0", got)
	}
	if got := RecoveredAfter(State{}, &p, t0); got != 0 {
		t.Fatalf("the missing state recovers after %v, want 0", got)
	}
}

func peekMissing(p *core.Policy, at, cost int64) core.Result {
	_, r := Peek(State{}, p, at, cost)
	return r
}

func sameDecision(a, b core.Result) bool {
	return a.Allowed == b.Allowed && a.Remaining == b.Remaining && a.RetryAfter == b.RetryAfter &&
		a.ResetAfter == b.ResetAfter && a.Delay == b.Delay
}
