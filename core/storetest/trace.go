package storetest

import (
	"math/rand/v2"

	"github.com/go-ratelimit/ratelimit/core"
)

// step is one request of a trace.
type step struct {
	at      int64 // ms
	key     string
	cost    int64
	release int // concurrency: release the lease admitted at this step index (-1: none)
}

// makeTrace returns a deterministic trace for p: bursts at one instant, gaps around
// the policy's emission interval and period, weighted costs up to the capacity,
// three keys, and (when backwards) a few steps where the clock goes back.
func makeTrace(p core.Policy, seed uint64, n int, backwards bool) []step {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	period := p.PeriodMillis()
	keys := []string{"alice", "bob", "203.0.113.9"}
	steps := make([]step, 0, n)
	at := Start + rng.Int64N(period+1)
	for i := 0; i < n; i++ {
		switch r := rng.IntN(10); {
		case r < 4: // same instant
		case r < 7:
			at += rng.Int64N(max(2, period/max(1, p.Limit())+2))
		case r < 9:
			at += rng.Int64N(period + 1)
		default:
			at += period + rng.Int64N(2*period+1)
		}
		when := at
		if backwards && rng.IntN(12) == 0 {
			when = at - rng.Int64N(period+1)
		}
		cost := int64(0) // the policy's default
		if rng.IntN(3) == 0 {
			cost = 1 + rng.Int64N(p.Capacity())
		}
		s := step{at: when, key: keys[rng.IntN(len(keys))], cost: cost, release: -1}
		if p.Algorithm() == core.Concurrency && i > 0 && rng.IntN(2) == 0 {
			s.release = rng.IntN(i)
		}
		steps = append(steps, s)
	}
	return steps
}
