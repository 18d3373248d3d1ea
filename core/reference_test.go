package core

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// These reference models transcribe DESIGN.md's definitions literally, in exact
// rational arithmetic (math/big.Rat), with none of the integer scaling the
// implementation uses. Random traces must get identical decisions from both.

func rat(a, b int64) *big.Rat { return big.NewRat(a, b) }

func ceilRat(x *big.Rat) int64 {
	q := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: floor for positive denominators
	if new(big.Rat).SetInt(q).Cmp(x) < 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func floorRat(x *big.Rat) int64 { return new(big.Int).Div(x.Num(), x.Denom()).Int64() }

// tokenBucketRef: admits when min(burst, tokens + (t-last)*limit/period) >= cost; starts full.
type tokenBucketRef struct {
	tokens *big.Rat
	last   int64
}

func (m *tokenBucketRef) decide(p Policy, t, cost int64) (allowed bool, remaining, retryMs int64) {
	rate := rat(p.Limit(), p.PeriodMillis())
	tokens, last := rat(p.Burst(), 1), t
	if m.tokens != nil {
		tokens, last = new(big.Rat).Set(m.tokens), m.last
		if t > last {
			tokens.Add(tokens, new(big.Rat).Mul(rat(t-last, 1), rate))
			last = t
		}
		if tokens.Cmp(rat(p.Burst(), 1)) > 0 {
			tokens = rat(p.Burst(), 1)
		}
	}
	if tokens.Cmp(rat(cost, 1)) < 0 {
		missing := new(big.Rat).Sub(rat(cost, 1), tokens)
		return false, floorRat(tokens), ceilRat(missing.Quo(missing, rate))
	}
	tokens.Sub(tokens, rat(cost, 1))
	m.tokens, m.last = tokens, last
	return true, floorRat(tokens), 0
}

// leakyBucketRef: slot s = max(t, TAT), admitted when s-t <= burst*period/limit, then TAT = s + cost*period/limit.
type leakyBucketRef struct{ tat *big.Rat }

func (m *leakyBucketRef) decide(p Policy, t, cost int64) (allowed bool, delayMs int64) {
	interval := rat(p.PeriodMillis(), p.Limit())
	s := rat(t, 1)
	if m.tat != nil && m.tat.Cmp(s) > 0 {
		s = new(big.Rat).Set(m.tat)
	}
	wait := new(big.Rat).Sub(s, rat(t, 1))
	if wait.Cmp(new(big.Rat).Mul(rat(p.Burst(), 1), interval)) > 0 {
		return false, 0
	}
	m.tat = new(big.Rat).Add(s, new(big.Rat).Mul(rat(cost, 1), interval))
	return true, ceilRat(wait)
}

// slidingWindowRef: admits when cur + prev*(1 - elapsed/period) + cost <= limit.
type slidingWindowRef struct{ counts map[int64]int64 }

func (m *slidingWindowRef) decide(p Policy, t, cost int64) bool {
	k := t / p.PeriodMillis()
	elapsed := t - k*p.PeriodMillis()
	estimate := rat(m.counts[k]+cost, 1)
	weight := new(big.Rat).Sub(rat(1, 1), rat(elapsed, p.PeriodMillis()))
	estimate.Add(estimate, weight.Mul(weight, rat(m.counts[k-1], 1)))
	if estimate.Cmp(rat(p.Limit(), 1)) > 0 {
		return false
	}
	m.counts[k] += cost
	return true
}

// windowRefs: fixed window [k*period,(k+1)*period) and sliding log (t-period, t], by listing admissions.
type admission struct{ at, cost int64 }

func fixedWindowRef(log []admission, p Policy, t, cost int64) bool {
	k, sum := t/p.PeriodMillis(), int64(0)
	for _, a := range log {
		if a.at/p.PeriodMillis() == k {
			sum += a.cost
		}
	}
	return sum+cost <= p.Limit()
}

func slidingLogRef(log []admission, p Policy, t, cost int64) bool {
	sum := int64(0)
	for _, a := range log {
		if a.at > t-p.PeriodMillis() && a.at <= t {
			sum += a.cost
		}
	}
	return sum+cost <= p.Limit()
}

// randomTrace is a trace in non-decreasing time with costs up to the capacity.
func randomTrace(rng *rand.Rand, p Policy, n int) (times, costs []int64) {
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
func referencePolicies(alg Algorithm) []Policy {
	rates := []Rate{PerSecond(10), {Limit: 7, Period: 3 * time.Second}, {Limit: 3, Period: 7 * time.Millisecond},
		PerSecond(2500), {Limit: 13, Period: 1009 * time.Millisecond}, PerMinute(5),
		// the ends of the supported range: 10^9 per day (also with an awkward limit) and per millisecond
		{Limit: 1_000_000_000, Period: 24 * time.Hour}, {Limit: 999_999_999, Period: 24 * time.Hour},
		{Limit: 1_000_000_000, Period: time.Millisecond}}
	var ps []Policy
	for _, r := range rates {
		if alg.usesBurst() {
			ps = append(ps, MustPolicy("p", alg, r), MustPolicy("p", alg, r, WithBurst(2)))
			if burst, err := NewPolicy("p", alg, r, WithBurst(r.Limit*3+2)); err == nil {
				ps = append(ps, burst)
			}
		} else {
			ps = append(ps, MustPolicy("p", alg, r))
		}
	}
	return ps
}

func TestTokenBucketMatchesDefinitionExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range referencePolicies(TokenBucket) {
		for trial := 0; trial < 20; trial++ {
			var s State
			ref := &tokenBucketRef{}
			times, costs := randomTrace(rng, p, 300)
			for i := range times {
				var r Result
				s, r = Step(s, &p, times[i], costs[i], 0)
				allowed, remaining, retry := ref.decide(p, times[i], costs[i])
				if r.Allowed != allowed || r.Remaining != remaining || r.RetryAfter != time.Duration(retry)*time.Millisecond {
					t.Fatalf("%v step %d (t=%d cost %d): got %+v, definition says allowed=%v remaining=%d retry=%dms",
						p, i, times[i]-t0, costs[i], r, allowed, remaining, retry)
				}
			}
		}
	}
}

func TestLeakyBucketMatchesDefinitionExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range referencePolicies(LeakyBucket) {
		for trial := 0; trial < 20; trial++ {
			var s State
			ref := &leakyBucketRef{}
			times, costs := randomTrace(rng, p, 300)
			for i := range times {
				var r Result
				s, r = Step(s, &p, times[i], costs[i], 0)
				allowed, delay := ref.decide(p, times[i], costs[i])
				if r.Allowed != allowed || r.Delay != time.Duration(delay)*time.Millisecond {
					t.Fatalf("%v step %d (t=%d cost %d): got %+v, definition says allowed=%v delay=%dms",
						p, i, times[i]-t0, costs[i], r, allowed, delay)
				}
			}
		}
	}
}

func TestWindowAlgorithmsMatchDefinitionExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, alg := range []Algorithm{FixedWindow, SlidingLog, SlidingWindow} {
		for _, p := range referencePolicies(alg) {
			for trial := 0; trial < 20; trial++ {
				var s State
				var log []admission
				sliding := &slidingWindowRef{counts: map[int64]int64{}}
				times, costs := randomTrace(rng, p, 300)
				for i := range times {
					var r Result
					s, r = Step(s, &p, times[i], costs[i], 0)
					var want bool
					switch alg {
					case FixedWindow:
						want = fixedWindowRef(log, p, times[i], costs[i])
					case SlidingLog:
						want = slidingLogRef(log, p, times[i], costs[i])
					case SlidingWindow:
						want = sliding.decide(p, times[i], costs[i])
					}
					if r.Allowed != want {
						t.Fatalf("%v step %d (t=%d cost %d): got %+v, definition says allowed=%v", p, i, times[i]-t0, costs[i], r, want)
					}
					if r.Allowed {
						log = append(log, admission{times[i], costs[i]})
					}
				}
			}
		}
	}
}
