package storetest

import (
	"context"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// testRetryAfterWithClockGoingBack replays traces whose clock goes back now and
// then, and at every refusal retries the request twice on the same key: one
// millisecond before its Retry-After, which must be refused (and spends
// nothing), and at its Retry-After, which must be admitted. Retry-After is the
// true wait even when the clock is behind the key's state (a replica's clock, a
// replayed log). Every answer must also match the pure model's.
func testRetryAfterWithClockGoingBack(t *testing.T, newStore NewStore) {
	for _, p := range Policies() {
		if p.Algorithm() == core.Concurrency {
			continue // its Retry-After is a hint: a slot frees when a request ends
		}
		t.Run(p.Name(), func(t *testing.T) {
			for seed := uint64(3); seed <= 4; seed++ {
				clock := NewClock()
				store := newStore(t, clock)
				ref := newModel()
				decide := func(i int, what string, req core.Request, at int64) core.Result {
					t.Helper()
					clock.Set(at)
					got, err := store.Decide(context.Background(), req)
					if err != nil {
						t.Fatalf("seed %d step %d %s (t=+%dms key=%s cost=%d): %v", seed, i, what, at-Start, req.Key, req.Cost, err)
					}
					if want := ref.decide(req, at); got != want {
						t.Fatalf("seed %d step %d %s (t=+%dms key=%s cost=%d):\n got %+v\nwant %+v", seed, i, what, at-Start, req.Key, req.Cost, got, want)
					}
					return got
				}
				for i, s := range makeTrace(p, seed, traceLength, true) {
					req := core.Request{Policy: p, Key: s.key, Cost: s.cost}
					res := decide(i, "", req, s.at)
					if res.Allowed {
						continue
					}
					wait := res.RetryAfter.Milliseconds()
					if wait <= 0 {
						t.Fatalf("seed %d step %d: refused with Retry-After %v", seed, i, res.RetryAfter)
					}
					if early := decide(i, "retried 1ms early", req, s.at+wait-1); early.Allowed {
						t.Fatalf("seed %d step %d: admitted 1ms before its Retry-After %v", seed, i, res.RetryAfter)
					}
					if later := decide(i, "retried at Retry-After", req, s.at+wait); !later.Allowed {
						t.Fatalf("seed %d step %d: refused again after waiting its Retry-After %v: %+v", seed, i, res.RetryAfter, later)
					}
				}
			}
		})
	}
}

// testFineGCRAClockBehind is the case the traces rarely hit: a GCRA rate finer than
// a millisecond (2500/s) with its queue past the burst by less than a millisecond
// when the clock is 2 ms behind. The answer must match the model, with a Remaining
// that is never negative.
func testFineGCRAClockBehind(t *testing.T, newStore NewStore) {
	p := core.MustPolicy("fine-gcra", core.GCRA, core.PerSecond(2500), core.WithBurst(2))
	clock := NewClock()
	store := newStore(t, clock)
	ref := newModel()
	req := core.Request{Policy: p, Key: "k"}
	for i, at := range []int64{Start + 10, Start + 10, Start + 10, Start + 8} {
		clock.Set(at)
		got, err := store.Decide(context.Background(), req)
		if err != nil {
			t.Fatalf("decision %d: %v", i, err)
		}
		if want := ref.decide(req, at); got != want || got.Remaining < 0 {
			t.Fatalf("decision %d at +%dms:\n got %+v\nwant %+v (Remaining never negative)", i, at-Start, got, want)
		}
	}
}
