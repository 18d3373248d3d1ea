package transition

import (
	"math/rand/v2"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// admission is one admitted request.
type admission struct{ at, cost int64 }

// randomTrace is a trace in non-decreasing time with costs up to the capacity.
func randomTrace(rng *rand.Rand, p core.Policy, n int) (times, costs []int64) {
	at := t0 + rng.Int64N(p.PeriodMillis())
	gap := max(1, p.PeriodMillis()/p.Limit())
	for i := 0; i < n; i++ {
		switch rng.IntN(4) {
		case 0:
		case 1, 2:
			at += rng.Int64N(2*gap + 1)
		default:
			at += rng.Int64N(p.PeriodMillis() + 1)
		}
		cost := int64(1)
		if rng.IntN(4) == 0 {
			cost = 1 + rng.Int64N(p.Capacity())
		}
		times, costs = append(times, at), append(costs, cost)
	}
	return times, costs
}

// referencePolicies are rates chosen to stress the integer scaling: coprime limits
// and periods, sub-millisecond intervals, bursts above and below the limit.
func referencePolicies(alg core.Algorithm) []core.Policy {
	rates := []core.Rate{core.PerSecond(10), {Limit: 7, Period: 3 * time.Second}, {Limit: 3, Period: 7 * time.Millisecond},
		core.PerSecond(2500), {Limit: 13, Period: 1009 * time.Millisecond}, core.PerMinute(5),
		// the ends of the supported range: 10^9 per day (also with an awkward limit) and per millisecond
		{Limit: 1_000_000_000, Period: 24 * time.Hour}, {Limit: 999_999_999, Period: 24 * time.Hour},
		{Limit: 1_000_000_000, Period: time.Millisecond}}
	var ps []core.Policy
	for _, r := range rates {
		if alg == core.TokenBucket || alg == core.GCRA || alg == core.LeakyBucket {
			ps = append(ps, core.MustPolicy("p", alg, r), core.MustPolicy("p", alg, r, core.WithBurst(2)))
			if burst, err := core.NewPolicy("p", alg, r, core.WithBurst(r.Limit*3+2)); err == nil {
				ps = append(ps, burst)
			}
		} else {
			ps = append(ps, core.MustPolicy("p", alg, r))
		}
	}
	return ps
}
