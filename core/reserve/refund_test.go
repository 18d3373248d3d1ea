package reserve_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// A request spent from a live lease and refunded goes back to that lease's balance,
// whole: as if it had never been spent. Given to the backing store instead, it named
// the lease's charge, whose bucket had refilled part of a unit since, and the unit
// given back lost that part: one request fewer of a bucket that admits 9 once the
// refund is in, and a round trip.
func TestRefundOfALeasedRequestGoesBackToItsLease(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		t.Run(string(alg), func(t *testing.T) {
			clock := storetest.NewClock()
			backing := newMemoryBacking(t, clock)
			p := core.MustPolicy("api", alg, core.PerHour(10)) // a bucket refills a unit in 6 min
			s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 10, Lifetime: 10 * time.Minute})
			if res := decide(t, s, p, "k", 1); !res.Allowed {
				t.Fatalf("first request: %+v", res)
			}
			clock.Advance(50 * time.Second)
			req := core.Request{Policy: p, Key: "k", Cost: 2}
			res := decide(t, s, p, "k", 2)
			if !res.Allowed || res.DecidedAt.IsZero() {
				t.Fatalf("a request of 2 from the lease: %+v", res)
			}
			if err := s.Refund(context.Background(), req, res.DecidedAt); err != nil {
				t.Fatalf("refund: %v", err)
			}
			if got := backing.refunds.Load(); got != 0 {
				t.Fatalf("the refund reached the backing store (%d refunds), want it given to the live lease", got)
			}
			if got := admittedOf(t, s, p, "k", 12); got != 9 {
				t.Fatalf("after the refund: %d admitted, want 9 (10 less the first request)", got)
			}
		})
	}
}

// A refund that names another lease's charge (the lease it was spent from has ended)
// goes to the backing store, never into the live lease: that lease's return would
// name the wrong charge.
func TestRefundOfAnEndedLeaseGoesToTheBackingStore(t *testing.T) {
	clock := storetest.NewClock()
	backing := newMemoryBacking(t, clock)
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 4, Lifetime: time.Second})
	old := decide(t, s, p, "k", 1)
	clock.Advance(2 * time.Second) // the lease ended and the bucket refilled
	fresh := decide(t, s, p, "k", 1)
	if !old.Allowed || !fresh.Allowed || old.DecidedAt.Equal(fresh.DecidedAt) {
		t.Fatalf("two leases: %+v, %+v", old, fresh)
	}
	refunds := backing.refunds.Load()
	if err := s.Refund(context.Background(), core.Request{Policy: p, Key: "k"}, old.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if got := backing.refunds.Load() - refunds; got != 1 {
		t.Fatalf("a refund of an ended lease reached the backing store %d times, want once", got)
	}
	decisions := backing.decisions.Load()
	admittedOf(t, s, p, "k", 4)
	if got := backing.decisions.Load() - decisions; got != 1 {
		t.Fatalf("4 requests on a live lease with 3 left asked the backing store %d times, want once (the refund must not refill the live lease)", got)
	}
}
