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
