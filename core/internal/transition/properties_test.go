package transition

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

var rateAlgorithms = []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingLog, core.SlidingWindow, core.LeakyBucket}

// Over any interval [a, b], a token bucket (and GCRA) admits at most
// burst + (b-a)×limit/period; each window of a fixed window at most the limit; any
// (t-period, t] of a sliding log at most the limit; and a leaky bucket's slots are
// spaced by cost×period/limit with no wait longer than burst×period/limit.
func TestNoAlgorithmAdmitsMoreThanItsDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, alg := range rateAlgorithms {
		for _, p := range referencePolicies(alg) {
			for trial := 0; trial < 10; trial++ {
				var s State
				var admitted []admission
				var slots []int64 // leaky: admission time + delay
				times, costs := randomTrace(rng, p, 400)
				for i := range times {
					var r core.Result
					s, r = Step(s, &p, times[i], costs[i], 0)
					if r.Allowed {
						admitted = append(admitted, admission{times[i], costs[i]})
						slots = append(slots, times[i]+r.Delay.Milliseconds())
					}
				}
				checkAdmissionBound(t, p, admitted, slots)
			}
		}
	}
}

func checkAdmissionBound(t *testing.T, p core.Policy, admitted []admission, slots []int64) {
	t.Helper()
	period, limit := p.PeriodMillis(), p.Limit()
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA:
		for i := range admitted {
			sum := int64(0)
			for j := i; j < len(admitted); j++ {
				sum += admitted[j].cost
				// sum <= burst + (b-a)×limit/period, in integers
				if elapsed := admitted[j].at - admitted[i].at; sum*period > p.Burst()*period+elapsed*limit {
					t.Fatalf("%v: admitted %d in [%d, %d]ms", p, sum, admitted[i].at-t0, admitted[j].at-t0)
				}
			}
		}
	case core.FixedWindow:
		perWindow := map[int64]int64{}
		for _, a := range admitted {
			if perWindow[a.at/period] += a.cost; perWindow[a.at/period] > limit {
				t.Fatalf("%v: window %d admitted %d", p, a.at/period, perWindow[a.at/period])
			}
		}
	case core.SlidingLog:
		for i := range admitted {
			if sum := windowSum(admitted, admitted[i].at-period, admitted[i].at); sum > limit {
				t.Fatalf("%v: admitted %d in (%d, %d]ms", p, sum, admitted[i].at-period-t0, admitted[i].at-t0)
			}
		}
	case core.SlidingWindow:
		// The counter's estimate is a weighted mean of two windows: it never admits more than
		// twice the limit in any period, and never more than the limit in one fixed window.
		for i := range admitted {
			if sum := windowSum(admitted, admitted[i].at-period, admitted[i].at); sum > 2*limit {
				t.Fatalf("%v: admitted %d in (%d, %d]ms", p, sum, admitted[i].at-period-t0, admitted[i].at-t0)
			}
		}
		checkAdmissionBound(t, core.MustPolicy(p.Name(), core.FixedWindow, p.Rate()), admitted, slots)
	case core.LeakyBucket:
		for i := 1; i < len(slots); i++ {
			// consecutive slots at least cost×period/limit apart
			if (slots[i]-slots[i-1])*limit < admitted[i-1].cost*period-limit {
				t.Fatalf("%v: slots %d and %d too close", p, slots[i-1]-t0, slots[i]-t0)
			}
		}
		for i := range slots {
			if wait := slots[i] - admitted[i].at; wait*limit > p.Burst()*period+limit {
				t.Fatalf("%v: a request waits %dms", p, wait)
			}
		}
	}
}

func windowSum(admitted []admission, from, to int64) int64 {
	sum := int64(0)
	for _, a := range admitted {
		if a.at > from && a.at <= to {
			sum += a.cost
		}
	}
	return sum
}

// The token bucket and GCRA agree decision for decision, and on every reported field.
func TestTokenBucketAndGCRAAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tb := range referencePolicies(core.TokenBucket) {
		gcra := core.MustPolicy("p", core.GCRA, tb.Rate(), core.WithBurst(tb.Burst()))
		for trial := 0; trial < 20; trial++ {
			var sTB, sGCRA State
			times, costs := randomTrace(rng, tb, 400)
			for i := range times {
				var rTB, rGCRA core.Result
				sTB, rTB = Step(sTB, &tb, times[i], costs[i], 0)
				sGCRA, rGCRA = Step(sGCRA, &gcra, times[i], costs[i], 0)
				if rTB != rGCRA {
					t.Fatalf("%v step %d: token bucket %+v, gcra %+v", tb, i, rTB, rGCRA)
				}
			}
		}
	}
}

// Retry-After is exact to the millisecond: waiting it out admits the same request
// (with no traffic in between), and waiting one millisecond less does not.
func TestRetryAfterIsTheRealWait(t *testing.T) {
	checkRetryAfterIsTheRealWait(t, rand.New(rand.NewPCG(11, 12)), randomTrace, 400)
}

// checkRetryAfterIsTheRealWait checks, for every rate algorithm and reference policy,
// on n steps of the traces trace makes, that every refusal's Retry-After is the
// exact wait for the same request.
func checkRetryAfterIsTheRealWait(t *testing.T, rng *rand.Rand, trace func(*rand.Rand, core.Policy, int) ([]int64, []int64), n int) {
	t.Helper()
	for _, alg := range rateAlgorithms {
		for _, p := range referencePolicies(alg) {
			var s State
			times, costs := trace(rng, p, n)
			for i := range times {
				before := s
				var r core.Result
				s, r = Step(s, &p, times[i], costs[i], 0)
				if r.Allowed {
					continue
				}
				if r.RetryAfter <= 0 {
					t.Fatalf("%v step %d: refused with Retry-After %v", p, i, r.RetryAfter)
				}
				wait := r.RetryAfter.Milliseconds()
				if _, later := Peek(before, &p, times[i]+wait, costs[i]); later.RetryAfter != 0 {
					t.Fatalf("%v step %d: still refused after waiting Retry-After %v: %+v", p, i, r.RetryAfter, later)
				}
				if _, early := Peek(before, &p, times[i]+wait-1, costs[i]); early.RetryAfter == 0 {
					t.Fatalf("%v step %d: Retry-After %v is 1ms longer than needed", p, i, r.RetryAfter)
				}
			}
		}
	}
}

// A refused request changes nothing: the state Step returns is the state it was given.
func TestRefusalsSpendNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, alg := range rateAlgorithms {
		for _, p := range referencePolicies(alg) {
			var s State
			times, costs := randomTrace(rng, p, 300)
			for i := range times {
				before := s
				before.Log = append([]LogEntry(nil), s.Log...)
				next, r := Step(s, &p, times[i], costs[i], 0)
				if !r.Allowed && !reflect.DeepEqual(normalize(next), normalize(before)) {
					t.Fatalf("%v step %d: a refusal changed the state\nbefore %+v\nafter  %+v", p, i, before, next)
				}
				s = next
			}
		}
	}
}

func normalize(s State) State {
	if len(s.Log) == 0 {
		s.Log = nil
	}
	return s
}

// A clock that jumps backwards never mints tokens: after any backwards jump, no
// algorithm admits more than it would have at the latest instant already seen.
func TestClockGoingBackNeverMintsTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, alg := range rateAlgorithms {
		for _, p := range referencePolicies(alg) {
			var s State
			latest := int64(0)
			times, costs := randomTrace(rng, p, 300)
			for i := range times {
				at := times[i]
				if i > 0 && rng.IntN(5) == 0 {
					at -= rng.Int64N(3 * p.PeriodMillis())
				}
				latest = max(latest, at)
				_, atLatest := Peek(s, &p, latest, costs[i])
				var r core.Result
				s, r = Step(s, &p, at, costs[i], 0)
				if r.Allowed && atLatest.RetryAfter != 0 {
					t.Fatalf("%v step %d: admitted at %d although refused at the latest instant %d", p, i, at-t0, latest-t0)
				}
			}
		}
	}
}

// Concurrency leases never exceed the limit, with releases, lapses and weights.
func TestConcurrencyNeverExceedsLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	p := core.MustConcurrencyPolicy("inflight", 5, 200*time.Millisecond)
	var s State
	held := map[uint64]Lease{}
	at := t0
	for i := uint64(1); i <= 3000; i++ {
		at += rng.Int64N(30)
		if rng.IntN(3) == 0 {
			for id := range held {
				s = ReleaseLease(s, id)
				delete(held, id)
				break
			}
		}
		cost := 1 + rng.Int64N(3)
		var r core.Result
		s, r = Step(s, &p, at, cost, i)
		if r.Allowed {
			held[i] = Lease{ID: i, Cost: cost, Expires: at + 200}
		}
		inFlight := int64(0)
		for id, l := range held {
			if l.Expires <= at {
				delete(held, id)
				continue
			}
			inFlight += l.Cost
		}
		if inFlight > p.Limit() {
			t.Fatalf("request %d: %d in flight, limit %d", i, inFlight, p.Limit())
		}
	}
}
