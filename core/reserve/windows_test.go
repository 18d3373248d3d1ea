package reserve_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// ledger is a backing store that books, per window of period, the cost it admitted
// and the cost refunded to that window (by chargedAt).
type ledger struct {
	*shared
	period int64 // ms

	mu       sync.Mutex
	charged  map[int64]int64
	refunded map[int64]int64
}

func (l *ledger) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	res, err := l.shared.Decide(ctx, req)
	if err == nil && res.Allowed {
		l.mu.Lock()
		l.charged[res.DecidedAt.UnixMilli()/l.period] += req.EffectiveCost()
		l.mu.Unlock()
	}
	return res, err
}

func (l *ledger) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	l.mu.Lock()
	l.refunded[chargedAt.UnixMilli()/l.period] += req.EffectiveCost()
	l.mu.Unlock()
	return l.shared.Refund(ctx, req, chargedAt)
}

// TestSlidingWindowLeftoverStaysInItsWindow: a weighted request that finds part of
// its cost in a lease charged in the previous window, and the rest in a new lease
// charged in this one, must not let refunds give this window back more than it
// counted: that would hand other replicas' requests a second time to this window.
// The leftover goes back to its own window before the new lease is taken.
func TestSlidingWindowLeftoverStaysInItsWindow(t *testing.T) {
	testLeftoverStaysInItsWindow(t, func(t *testing.T, clock *storetest.Clock) *shared { return newMemoryBacking(t, clock) })
}

func TestSlidingWindowLeftoverStaysInItsWindowRedis(t *testing.T) {
	testLeftoverStaysInItsWindow(t, redisBacking(standalone))
}

func TestSlidingWindowLeftoverStaysInItsWindowCluster(t *testing.T) {
	testLeftoverStaysInItsWindow(t, redisBacking(cluster))
}

func testLeftoverStaysInItsWindow(t *testing.T, newBacking func(*testing.T, *storetest.Clock) *shared) {
	for _, alg := range []core.Algorithm{core.SlidingWindow, core.SlidingLog} {
		t.Run(string(alg), func(t *testing.T) {
			clock := storetest.NewClock()
			const period = 60_000
			clock.Set(clock.Millis() - clock.Millis()%period + period - 100) // 100ms before a window ends
			p := core.MustPolicy("p", alg, core.PerMinute(100))
			backing := &ledger{shared: newBacking(t, clock), period: period,
				charged: map[int64]int64{}, refunded: map[int64]int64{}}
			s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 5})
			decide(t, s, p, "k", 2) // a lease of 5, 3 left
			decide(t, s, p, "k", 2) // 1 left
			clock.Advance(200 * ms) // the next window
			req := core.Request{Policy: p, Key: "k", Cost: 2}
			res := decide(t, s, p, "k", 2)
			if err := s.Refund(context.Background(), req, res.DecidedAt); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil { // returns the unspent balance
				t.Fatal(err)
			}
			for w, refunded := range backing.refunded {
				if charged := backing.charged[w]; refunded > charged {
					t.Errorf("window %d: %d refunded, more than the %d it counted (charged %v, refunded %v)",
						w, refunded, charged, backing.charged, backing.refunded)
				}
			}
		})
	}
}

// slowBacking advances the shared clock by latency before each decision: a round
// trip that takes that long.
type slowBacking struct {
	*shared
	clock   *storetest.Clock
	latency time.Duration
}

func (b *slowBacking) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	b.clock.Advance(b.latency)
	return b.shared.Decide(ctx, req)
}

// TestFixedWindowLeftoverIsNotSpentInTheNextWindow: a request that finds only part
// of its cost left in a fixed window's lease, 3ms before the window ends, takes a
// new lease over a round trip of 4ms, which the backing store charges in the next
// window. The replica used to pay the request with the old window's leftover and
// the new lease, so the next window admitted 11 of its limit of 10. The leftover
// now goes back, and each window admits at most its limit, counted by the windows
// the backing store dated the admissions in.
func TestFixedWindowLeftoverIsNotSpentInTheNextWindow(t *testing.T) {
	for _, cost := range []int64{2, 5} { // covered by the new lease alone, or not
		t.Run(fmt.Sprint("cost=", cost), func(t *testing.T) {
			clock := storetest.NewClock()
			const period = 60_000
			end := clock.Millis() - clock.Millis()%period + period
			clock.Set(end - 50)
			p := core.MustPolicy("p", core.FixedWindow, core.PerMinute(10))
			backing := &slowBacking{shared: newMemoryBacking(t, clock), clock: clock}
			s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 5, Lifetime: time.Hour})
			decide(t, s, p, "k", 2) // a lease of 5 charged in the first window; 3 left
			decide(t, s, p, "k", 2) // 1 left
			clock.Set(end - 3)      // the lease lives to the window's end, less up to 1ms
			backing.latency = 4 * ms
			admitted := map[int64]int64{} // per window the backing store dated the admission in
			count := func(res core.Result, cost int64) {
				if res.Allowed {
					admitted[res.DecidedAt.UnixMilli()/period] += cost
				}
			}
			first := decide(t, s, p, "k", cost) // the new lease is charged in the next window
			if !first.Allowed || first.DecidedAt.UnixMilli() < end {
				t.Fatalf("setup: %+v, want an admission dated in the next window", first)
			}
			count(first, cost)
			backing.latency = 0
			for range 20 {
				count(decide(t, s, p, "k", 1), 1)
				clock.Advance(ms)
			}
			if next := admitted[end/period]; next > 10 {
				t.Fatalf("the next window admitted %d of its limit of 10 (per window %v, stats %+v)", next, admitted, s.Stats())
			}
		})
	}
}
