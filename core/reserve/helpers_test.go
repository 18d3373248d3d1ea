package reserve_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// refundingStore is a backing store: a core.Store that takes back cost.
type refundingStore interface {
	core.Store
	core.Refunder
}

// shared is a backing store that several replicas share in a test: it counts the
// decisions that reach it, and Close leaves it open (the test closes it), so that
// its state can be inspected after the replicas have closed.
type shared struct {
	refundingStore
	decisions atomic.Int64
}

func (s *shared) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	s.decisions.Add(1)
	return s.refundingStore.Decide(ctx, req)
}

func (s *shared) Close() error { return nil }

// newMemoryBacking is a memory store on clock, closed when t ends.
func newMemoryBacking(t testing.TB, clock *storetest.Clock) *shared {
	m := memory.MustNew(memory.WithClock(clock.Now))
	t.Cleanup(func() { m.Close() })
	return &shared{refundingStore: m}
}

// newReplica wraps backing with leases on clock, without a background sweeper,
// closed when t ends.
func newReplica(t testing.TB, backing core.Store, clock *storetest.Clock, leases ...reserve.Lease) *reserve.Store {
	s, err := reserve.New(backing, leases, reserve.WithClock(clock.Now), reserve.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// decide is Decide that fails the test on an error.
func decide(t testing.TB, s core.Store, p core.Policy, key string, cost int64) core.Result {
	t.Helper()
	res, err := s.Decide(context.Background(), core.Request{Policy: p, Key: key, Cost: cost})
	if err != nil {
		t.Fatalf("decide %s/%s cost %d: %v", p.Name(), key, cost, err)
	}
	return res
}

// admittedOf decides n requests of cost 1 for key on s and counts the admissions.
func admittedOf(t testing.TB, s core.Store, p core.Policy, key string, n int) int {
	t.Helper()
	admitted := 0
	for range n {
		if decide(t, s, p, key, 1).Allowed {
			admitted++
		}
	}
	return admitted
}

// available is how many units of cost 1 the backing store would admit for key at
// once, found by spending them on a copy-free probe: it charges and refunds.
func available(t testing.TB, backing *shared, p core.Policy, key string) int64 {
	t.Helper()
	var n int64
	var chargedAt time.Time
	for n < p.Capacity() {
		res, err := backing.refundingStore.Decide(context.Background(), core.Request{Policy: p, Key: key, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed {
			break
		}
		n, chargedAt = n+1, res.DecidedAt
	}
	if n > 0 {
		if err := backing.refundingStore.Refund(context.Background(), core.Request{Policy: p, Key: key, Cost: n}, chargedAt); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

const ms = time.Millisecond
