package reserve_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestUnleasedPoliciesPassThroughExactly replays one random trace of decisions,
// stacks, refunds and releases through a memory store and through a Store over
// another memory store that leases a policy the trace never uses — one with the same
// name as a policy it does use — and requires identical answers, one for one.
func TestUnleasedPoliciesPassThroughExactly(t *testing.T) {
	clock := storetest.NewClock()
	exact := memory.MustNew(memory.WithClock(clock.Now))
	defer exact.Close()
	policies := storetest.Policies()
	leased := core.MustPolicy(policies[0].Name(), policies[0].Algorithm(), core.Rate{Limit: policies[0].Limit() + 1, Period: policies[0].Period()})
	s, err := reserve.New(memory.MustNew(memory.WithClock(clock.Now)), []reserve.Lease{{Policy: leased, Size: 1}}, reserve.WithClock(clock.Now), reserve.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range policies {
		if s.Leased(p) {
			t.Fatalf("%s is leased", p.ID())
		}
	}

	ctx := context.Background()
	rng := rand.New(rand.NewPCG(6, 3))
	for i := 0; i < 3000; i++ {
		clock.Advance(time.Duration(rng.IntN(40)) * time.Millisecond)
		p := policies[rng.IntN(len(policies))]
		req := core.Request{Policy: p, Key: []string{"a", "b"}[rng.IntN(2)], Cost: 1 + rng.Int64N(p.Capacity()), Lease: uint64(i + 1)}
		switch rng.IntN(8) {
		case 0:
			chargedAt := clock.Now().Add(-time.Duration(rng.IntN(2000)) * time.Millisecond)
			if err1, err2 := exact.Refund(ctx, req, chargedAt), s.Refund(ctx, req, chargedAt); (err1 == nil) != (err2 == nil) {
				t.Fatalf("step %d: refund: %v vs %v", i, err1, err2)
			}
		case 1:
			if p.Algorithm() == core.Concurrency {
				lease := uint64(1 + rng.IntN(i+1))
				if err1, err2 := exact.Release(ctx, req, lease), s.Release(ctx, req, lease); (err1 == nil) != (err2 == nil) {
					t.Fatalf("step %d: release: %v vs %v", i, err1, err2)
				}
			}
		case 2:
			q := policies[rng.IntN(len(policies))]
			if q.Name() == p.Name() {
				continue
			}
			stack := []core.Request{req, {Policy: q, Key: req.Key, Lease: req.Lease}}
			want, got := make([]core.Result, 2), make([]core.Result, 2)
			ok1, err1 := exact.DecideStack(ctx, stack, want)
			ok2, err2 := s.DecideStack(ctx, stack, got)
			if err1 != nil || err2 != nil || ok1 != ok2 || want[0] != got[0] || want[1] != got[1] {
				t.Fatalf("step %d: stack:\n got %v %+v %v\nwant %v %+v %v", i, ok2, got, err2, ok1, want, err1)
			}
		default:
			want, err1 := exact.Decide(ctx, req)
			got, err2 := s.Decide(ctx, req)
			if err1 != nil || err2 != nil || got != want {
				t.Fatalf("step %d: %s cost %d:\n got %+v %v\nwant %+v %v", i, p.ID(), req.Cost, got, err2, want, err1)
			}
		}
	}
	if st := s.Stats(); st.Leases != 0 || st.Keys != 0 {
		t.Fatalf("stats %+v: an unleased trace took leases", st)
	}
}

// TestLargerThanALeaseSeesTheWholeBudget: a request that costs more than a lease
// goes to the backing store after the key's live lease is returned, so it is decided
// against the key's whole budget: 1 from a lease of 10, then 95 of the 99 left, is
// admitted (the backing store alone holds 90), and the key then admits the last 4
// and no more. Without the return the 95 is refused, and a settlement of Local mode's
// admissions (core/resilient charges them this way) leaves the balance spendable.
func TestLargerThanALeaseSeesTheWholeBudget(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(fmt.Sprint(alg), func(t *testing.T) {
			clock := storetest.NewClock() // never advances
			p := core.MustPolicy("p", alg, core.PerHour(100))
			s := newReplica(t, newMemoryBacking(t, clock), clock, reserve.Lease{Policy: p, Size: 10})
			if !decide(t, s, p, "k", 1).Allowed {
				t.Fatal("the first request was refused")
			}
			if res := decide(t, s, p, "k", 95); !res.Allowed {
				t.Fatalf("95 of the 99 left refused: %+v", res)
			}
			if n := admittedOf(t, s, p, "k", 10); n != 4 {
				t.Fatalf("then %d admitted, want the 4 left", n)
			}
		})
	}
}
