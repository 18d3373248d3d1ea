package transition_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/reference"
)

// Random traces must get the same decisions from the integer transitions as from
// the literal rational transcription of DESIGN.md in package reference: admission,
// and wherever the definition fixes them, Remaining, Retry-After and the leaky
// bucket's wait.
func TestEveryAlgorithmMatchesItsDefinitionExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingLog, core.SlidingWindow, core.LeakyBucket} {
		for _, p := range transition.ReferencePolicies(alg) {
			trials := 15
			if alg == core.SlidingWindow && p.PeriodMillis() > 10_000 {
				trials = 2 // the reference finds waits millisecond by millisecond
			}
			for trial := 0; trial < trials; trial++ {
				var s transition.State
				model := reference.New(p)
				times, costs := transition.RandomTrace(rng, p, 250)
				for i := range times {
					var r core.Result
					s, r = transition.Step(s, &p, times[i], costs[i], 0)
					want := model.Decide(times[i], costs[i])
					if !agrees(r, want) {
						t.Fatalf("%v step %d (t=+%dms cost %d):\n got %+v\n definition %+v", p, i, times[i]-transition.T0, costs[i], r, want)
					}
				}
			}
		}
	}
}

func agrees(r core.Result, d reference.Decision) bool {
	return r.Allowed == d.Allowed &&
		(d.Remaining < 0 || r.Remaining == d.Remaining) &&
		r.RetryAfter == time.Duration(d.RetryAfterMs)*time.Millisecond &&
		r.Delay == time.Duration(d.DelayMs)*time.Millisecond
}
