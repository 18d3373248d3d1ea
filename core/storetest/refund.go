package storetest

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// testRefunds replays traces of decisions and refunds through every policy, with a
// clock that sometimes goes back, and compares every decision with the model, where
// a refund is transition.Refund. A refund names the instant of an earlier
// admission of its key (Result.DecidedAt), often one whose window has since been
// followed by another, or an instant at which nothing was charged.
func testRefunds(t *testing.T, newStore NewStore) {
	for _, p := range Policies() {
		t.Run(p.Name(), func(t *testing.T) {
			clock := NewClock()
			store := newStore(t, clock)
			refunder, ok := store.(core.Refunder)
			if !ok {
				t.Skip("the store does not implement core.Refunder")
			}
			rng := rand.New(rand.NewPCG(3, uint64(len(p.Name()))))
			ref := newModel()
			admitted := map[string][]time.Time{} // each key's admission instants, newest last
			at := Start
			for i := 0; i < traceLength; i++ {
				switch rng.IntN(4) {
				case 0:
				case 1:
					at += rng.Int64N(max(2, p.PeriodMillis()/p.Limit()+2))
				case 2:
					at += rng.Int64N(p.PeriodMillis() + 1)
				default:
					at -= rng.Int64N(p.PeriodMillis()/4 + 1) // refunds and decisions from a clock behind
				}
				clock.Set(at)
				key := []string{"alice", "bob"}[rng.IntN(2)]
				req := core.Request{Policy: p, Key: key, Cost: 1 + rng.Int64N(p.Capacity()), Lease: uint64(i + 1)}
				if rng.IntN(3) == 0 {
					chargedAt := refundInstant(rng, admitted[key], at)
					if err := refunder.Refund(context.Background(), req, chargedAt); err != nil {
						t.Fatalf("step %d: refund: %v", i, err)
					}
					ref.refund(req, at, chargedAt)
					continue
				}
				got, err := store.Decide(context.Background(), req)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if want := ref.decide(req, at); got != want {
					t.Fatalf("step %d (t=%+dms cost %d):\n got %+v\nwant %+v", i, at-Start, req.Cost, got, want)
				}
				if got.Allowed {
					admitted[key] = append(admitted[key], got.DecidedAt)
				}
			}
		})
	}
}

// refundInstant picks the charge instant of a refund: mostly one of the key's
// recent admissions, sometimes now or the zero time.
func refundInstant(rng *rand.Rand, admitted []time.Time, now int64) time.Time {
	switch n := len(admitted); {
	case n > 0 && rng.IntN(4) != 0:
		return admitted[n-1-rng.IntN(min(n, 4))]
	case rng.IntN(2) == 0:
		return time.UnixMilli(now)
	}
	return time.Time{}
}

// refund is transition.Refund on the model's state of req's key.
func (m *model) refund(req core.Request, now int64, chargedAt time.Time) {
	k := [2]string{req.Policy.ID(), req.Key}
	if s, ok := m.states[k]; ok {
		m.states[k] = clone(transition.Refund(s, &req.Policy, now, chargedAt.UnixMilli(), req.EffectiveCost()))
	}
}
