package reference

import (
	"fmt"
	"math/big"

	"github.com/go-ratelimit/ratelimit/core"
)

// Decision is what a definition says of one request. Fields a definition does not
// determine are -1: the window algorithms define admission, not Remaining or waits.
type Decision struct {
	Allowed      bool
	Remaining    int64
	RetryAfterMs int64
	DelayMs      int64
}

// Model decides requests in time order (times in ms since the Unix epoch).
type Model interface {
	Decide(t, cost int64) Decision
}

// New returns the definition of p's algorithm. GCRA shares the token bucket's
// definition. It panics on the concurrency algorithm, which has no rate definition.
func New(p core.Policy) Model {
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA:
		return &tokenBucket{p: p}
	case core.LeakyBucket:
		return &leakyBucket{p: p}
	case core.FixedWindow:
		return &fixedWindow{p: p}
	case core.SlidingLog:
		return &slidingLog{p: p}
	case core.SlidingWindow:
		return &slidingWindow{p: p, counts: map[int64]int64{}}
	}
	panic(fmt.Sprintf("reference: no rate definition for %s", p.Algorithm()))
}

func rat(a, b int64) *big.Rat { return big.NewRat(a, b) }

func ceilRat(x *big.Rat) int64 {
	q := new(big.Int).Div(x.Num(), x.Denom())
	if new(big.Rat).SetInt(q).Cmp(x) < 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

func floorRat(x *big.Rat) int64 { return new(big.Int).Div(x.Num(), x.Denom()).Int64() }

// tokenBucket: admits cost at t when min(burst, tokens + (t-last)×limit/period) >= cost; starts full.
type tokenBucket struct {
	p      core.Policy
	tokens *big.Rat
	last   int64
}

func (m *tokenBucket) Decide(t, cost int64) Decision {
	rate := rat(m.p.Limit(), m.p.PeriodMillis())
	burst := rat(m.p.Burst(), 1)
	tokens, last := new(big.Rat).Set(burst), t
	if m.tokens != nil {
		tokens, last = new(big.Rat).Set(m.tokens), m.last
		if t > last {
			tokens.Add(tokens, new(big.Rat).Mul(rat(t-last, 1), rate))
			last = t
		}
		if tokens.Cmp(burst) > 0 {
			tokens = burst
		}
	}
	if tokens.Cmp(rat(cost, 1)) < 0 {
		missing := new(big.Rat).Sub(rat(cost, 1), tokens)
		return Decision{Remaining: floorRat(tokens), RetryAfterMs: ceilRat(missing.Quo(missing, rate))}
	}
	tokens.Sub(tokens, rat(cost, 1))
	m.tokens, m.last = tokens, last
	return Decision{Allowed: true, Remaining: floorRat(tokens)}
}

// leakyBucket: slot s = max(t, TAT), admitted when s-t <= burst×period/limit, then
// TAT = s + cost×period/limit; the request waits s-t.
type leakyBucket struct {
	p   core.Policy
	tat *big.Rat
}

func (m *leakyBucket) Decide(t, cost int64) Decision {
	interval := rat(m.p.PeriodMillis(), m.p.Limit())
	reach := new(big.Rat).Mul(rat(m.p.Burst(), 1), interval)
	s := rat(t, 1)
	if m.tat != nil && m.tat.Cmp(s) > 0 {
		s = new(big.Rat).Set(m.tat)
	}
	wait := new(big.Rat).Sub(s, rat(t, 1))
	if wait.Cmp(reach) > 0 {
		return Decision{Remaining: -1, RetryAfterMs: ceilRat(new(big.Rat).Sub(wait, reach)), DelayMs: 0}
	}
	m.tat = new(big.Rat).Add(s, new(big.Rat).Mul(rat(cost, 1), interval))
	return Decision{Allowed: true, Remaining: -1, DelayMs: ceilRat(wait)}
}

// admitted is one admitted request of a window algorithm.
type admitted struct{ at, cost int64 }

// fixedWindow: windows [k×period, (k+1)×period); admits when count + cost <= limit.
type fixedWindow struct {
	p   core.Policy
	log []admitted
}

func (m *fixedWindow) Decide(t, cost int64) Decision {
	period := m.p.PeriodMillis()
	k, sum := t/period, int64(0)
	for _, a := range m.log {
		if a.at/period == k {
			sum += a.cost
		}
	}
	if sum+cost > m.p.Limit() {
		return Decision{Remaining: m.p.Limit() - sum, RetryAfterMs: (k+1)*period - t}
	}
	m.log = append(m.log, admitted{t, cost})
	return Decision{Allowed: true, Remaining: m.p.Limit() - sum - cost}
}

// slidingLog: window (t-period, t]; admits when sum(cost) + cost <= limit.
type slidingLog struct {
	p   core.Policy
	log []admitted
}

func (m *slidingLog) Decide(t, cost int64) Decision {
	sum := int64(0)
	for _, a := range m.log {
		if a.at > t-m.p.PeriodMillis() && a.at <= t {
			sum += a.cost
		}
	}
	if sum+cost > m.p.Limit() {
		// until enough entries age out: the earliest t' whose window admits cost
		wait, left := int64(0), sum
		for _, a := range m.log {
			if a.at > t-m.p.PeriodMillis() && a.at <= t {
				left -= a.cost
				if left+cost <= m.p.Limit() {
					wait = a.at + m.p.PeriodMillis() - t
					break
				}
			}
		}
		return Decision{Remaining: m.p.Limit() - sum, RetryAfterMs: wait}
	}
	m.log = append(m.log, admitted{t, cost})
	return Decision{Allowed: true, Remaining: m.p.Limit() - sum - cost}
}

// slidingWindow: admits when cur + prev×(1 - elapsed/period) + cost <= limit.
type slidingWindow struct {
	p      core.Policy
	counts map[int64]int64
}

func (m *slidingWindow) estimate(t int64) *big.Rat {
	period := m.p.PeriodMillis()
	k := t / period
	weight := new(big.Rat).Sub(rat(1, 1), rat(t-k*period, period))
	return new(big.Rat).Add(rat(m.counts[k], 1), weight.Mul(weight, rat(m.counts[k-1], 1)))
}

func (m *slidingWindow) Decide(t, cost int64) Decision {
	limit := rat(m.p.Limit(), 1)
	if new(big.Rat).Add(m.estimate(t), rat(cost, 1)).Cmp(limit) > 0 {
		return Decision{Remaining: -1, RetryAfterMs: m.wait(t, cost)}
	}
	m.counts[t/m.p.PeriodMillis()] += cost
	return Decision{Allowed: true, Remaining: -1}
}

// wait is the first later millisecond at which the estimate admits cost, with no
// admissions in between. Within a window the estimate only falls, so it is the
// first whole offset e at which cur + prev×(1 - e/period) + cost <= limit, that is
// e >= period×(1 - (limit-cur-cost)/prev); failing that, the same in the next window
// with cur as the previous count; failing that, the window after, where both are 0.
func (m *slidingWindow) wait(t, cost int64) int64 {
	period := m.p.PeriodMillis()
	k := t / period
	firstFit := func(cur, prev int64) (int64, bool) { // offset into a window with these counts
		spare := rat(m.p.Limit()-cur-cost, 1)
		if spare.Sign() < 0 {
			return 0, false
		}
		if prev == 0 {
			return 0, true
		}
		e := new(big.Rat).Sub(rat(1, 1), new(big.Rat).Quo(spare, rat(prev, 1)))
		offset := ceilRat(e.Mul(e, rat(period, 1)))
		return max(offset, 0), offset < period
	}
	if e, ok := firstFit(m.counts[k], m.counts[k-1]); ok && k*period+e > t {
		return k*period + e - t
	}
	if e, ok := firstFit(0, m.counts[k]); ok {
		return (k+1)*period + e - t
	}
	return (k+2)*period - t
}
