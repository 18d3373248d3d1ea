package transition

import (
	"math/rand/v2"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// backwardTrace is randomTrace with the clock going back now and then, by up to a
// period, as it does between replicas and in replayed logs (WithClock, the
// simulator).
func backwardTrace(rng *rand.Rand, p core.Policy, n int) (times, costs []int64) {
	times, costs = randomTrace(rng, p, n)
	for i := range times {
		if rng.IntN(6) == 0 {
			times[i] -= rng.Int64N(p.PeriodMillis() + 1)
		}
	}
	return times, costs
}

// Retry-After is the true wait when the clock is behind the state: waiting it out
// admits the same request (with no traffic in between), and waiting one
// millisecond less does not. A wait measured from now instead of from the state's
// time is too short by how far the clock is behind.
func TestRetryAfterIsTheRealWaitWhenTheClockGoesBack(t *testing.T) {
	checkRetryAfterIsTheRealWait(t, rand.New(rand.NewPCG(21, 22)), backwardTrace, 600)
}

// The token bucket's example: a bucket charged at 1000 ms, asked again at 900 ms
// (the clock 100 ms behind), needs the 100 ms back to 1000 ms plus the refill.
func TestTokenBucketRetryAfterCountsFromTheStateTime(t *testing.T) {
	p := core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10), core.WithBurst(1)) // a token per 100 ms
	s, r := Step(State{}, &p, t0+1000, 1, 0)
	if !r.Allowed {
		t.Fatalf("first request refused: %+v", r)
	}
	s, r = Step(s, &p, t0+900, 1, 0)
	if r.Allowed || r.RetryAfter.Milliseconds() != 200 {
		t.Fatalf("at 900 ms: %+v, want refused with Retry-After 200ms", r)
	}
	if _, r = Step(s, &p, t0+1000, 1, 0); r.Allowed {
		t.Fatalf("at 1000 ms (the too-short wait): admitted")
	}
	if _, r = Step(s, &p, t0+1100, 1, 0); !r.Allowed {
		t.Fatalf("at 1100 ms: %+v, want admitted", r)
	}
}

// Remaining is never negative, also when the clock is behind a GCRA state by less
// than the millisecond the far check looks at: a fine rate (2500/s, 0.4 ms a token)
// queued 3 tokens at 10 ms, and asked at 8 ms sees the queue 0.8 ms beyond the
// burst of 2.
func TestGCRARemainingIsNeverNegativeWhenTheClockGoesBack(t *testing.T) {
	p := core.MustPolicy("fine", core.GCRA, core.PerSecond(2500), core.WithBurst(2))
	var s State
	var r core.Result
	for i := 0; i < 3; i++ {
		s, r = Step(s, &p, t0+10, 1, 0)
	}
	_, r = Step(s, &p, t0+8, 1, 0)
	if r.Allowed || r.Remaining < 0 {
		t.Fatalf("at 8 ms: %+v, want refused with Remaining >= 0", r)
	}
}

// The property behind it, on random traces with the clock going back: no rate
// algorithm reports a negative Remaining.
func TestRemainingIsNeverNegative(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, alg := range core.Algorithms() {
		if alg == core.Concurrency {
			continue // Remaining is the free slots: never below zero by construction
		}
		for _, p := range referencePolicies(alg) {
			var s State
			times, costs := backwardTrace(rng, p, 400)
			for i := range times {
				var r core.Result
				s, r = Step(s, &p, times[i], costs[i], uint64(i+1))
				if r.Remaining < 0 {
					t.Fatalf("%s: decision %d at %d (cost %d): Remaining %d", p, i, times[i], costs[i], r.Remaining)
				}
			}
		}
	}
}
