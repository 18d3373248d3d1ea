package reserve_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// tickingBacking advances the clock by 1ms before each decision while ticking, so
// that every lease is charged at its own millisecond.
type tickingBacking struct {
	*shared
	clock   *storetest.Clock
	ticking atomic.Bool
}

func (b *tickingBacking) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if b.ticking.Load() {
		b.clock.Advance(time.Millisecond)
	}
	return b.shared.Decide(ctx, req)
}

// TestLateRefundsOfRacingSpendsGiveTheBucketNothing: requests that spend from a
// lease while another replaces it (a race that a hot key hits within thousands of
// admissions) must name a charge instant a refund can measure refill from. Refunded
// ten seconds later, when the bucket has long refilled every charge, the refunds of
// all admissions give nothing back, so the full bucket admits its burst and no more.
// A zero DecidedAt gave each such request its whole cost back (spentCharge holds
// the rule on its own).
func TestLateRefundsOfRacingSpendsGiveTheBucketNothing(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("hot", core.TokenBucket, core.PerSecond(1000), core.WithBurst(1000))
	backing := &tickingBacking{shared: newMemoryBacking(t, clock), clock: clock}
	backing.ticking.Store(true)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 4, Lifetime: time.Second})

	const admissions = 400_000
	var (
		admitted atomic.Int64
		mu       sync.Mutex
		charges  = map[time.Time]int64{} // admitted cost by the instant each names
		wg       sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			mine := map[time.Time]int64{}
			for admitted.Load() < admissions {
				res := decide(t, s, p, "k", 1)
				if res.Allowed {
					admitted.Add(1)
					mine[res.DecidedAt]++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for at, n := range mine {
				charges[at] += n
			}
		})
	}
	wg.Wait()

	backing.ticking.Store(false)
	clock.Advance(10 * time.Second)
	if err := s.ReturnExpired(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := admittedOf(t, s, p, "k", 600)
	for at, n := range charges {
		if err := s.Refund(context.Background(), core.Request{Policy: p, Key: "k", Cost: n}, at); err != nil {
			t.Fatal(err)
		}
	}
	got += admittedOf(t, s, p, "k", 600)
	if got != 1000 {
		t.Errorf("a full bucket of burst 1000 admitted %d at one instant around late refunds (%d of the admissions named no instant)", got, charges[time.Time{}])
	}
}
