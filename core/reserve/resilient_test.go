package reserve_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestUnderResilient: a Store wrapped in core/resilient, over the embedded Redis,
// leases as it does alone, and closing the outer store returns the lease.
func TestUnderResilient(t *testing.T) {
	p := core.MustPolicy("p", core.SlidingLog, core.PerMinute(100))
	backing, err := embedded.New()
	if err != nil {
		t.Fatal(err)
	}
	leased, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 10}})
	if err != nil {
		backing.Close()
		t.Fatal(err)
	}
	store, err := resilient.New(leased, resilient.WithDeadline(10*time.Second)) // no fallback on a slow first call
	if err != nil {
		leased.Close()
		t.Fatal(err)
	}
	for i := range 15 {
		res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
		if err != nil || !res.Allowed {
			t.Fatalf("request %d: %+v %v", i, res, err)
		}
	}
	if st := leased.Stats(); st.Leases != 2 || st.Held != 5 {
		t.Fatalf("stats %+v: want 2 leases, 5 held", st)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if st := leased.Stats(); st.Returned != 5 || st.Held != 0 {
		t.Fatalf("stats after Close %+v: want 5 returned", st)
	}
}

// failable is a backing store that fails every call with core.ErrStoreUnavailable
// while down is set.
type failable struct {
	*shared
	down atomic.Bool
}

var errBackingDown = fmt.Errorf("backing down: %w", core.ErrStoreUnavailable)

func (f *failable) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if f.down.Load() {
		return core.Result{}, errBackingDown
	}
	return f.shared.Decide(ctx, req)
}

func (f *failable) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if f.down.Load() {
		return false, errBackingDown
	}
	return f.shared.DecideStack(ctx, reqs, results)
}

func (f *failable) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if f.down.Load() {
		return errBackingDown
	}
	return f.shared.Refund(ctx, req, chargedAt)
}

// TestUnderResilientFallbackStartsFromLastLease: under core/resilient, a replica's
// last shared answer for a leased key is its last lease, so Local mode continues from
// what the backing store said then. Replica A leases once (backing left 90) and
// replica B spends 80 more before the backing store fails: A's fallback starts from
// A's lease, B's from B's. The over-grant entering fallback is what the others spent
// since a replica's last lease, divided by WithReplicas (docs/failure.md), on top of
// the leases' R × (S − 1). The backing store here fails on demand;
// TestUnderResilientFallbackStartsFromLastLeaseRedis kills a real server.
func TestUnderResilientFallbackStartsFromLastLease(t *testing.T) {
	clock := storetest.NewClock() // never advances: the bucket does not refill
	backing := &failable{shared: newMemoryBacking(t, clock)}
	testFallbackStartsFromLastLease(t, clock, backing, func() { backing.down.Store(true) })
}

// TestUnderResilientFallbackStartsFromLastLeaseRedis is the same over a redis-server
// of its own, killed where the other test fails its backing store: the replicas see
// refused connections, not a store's error. The server then restarts empty, and the
// replicas' return to it grants no fresh bucket: resilient's settling charges drain
// it to what Local mode left, nothing, so only the refill since the kill is admitted.
func TestUnderResilientFallbackStartsFromLastLeaseRedis(t *testing.T) {
	clock := storetest.NewClock()
	srv := redistest.StartServer(t)
	dialed, err := redisstore.Dial([]string{srv.Addr}, redisstore.WithClock(clock.Now)) // the production client
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dialed.Close() })
	killed := clock.Now()
	p, stores := testFallbackStartsFromLastLease(t, clock, &shared{refundingStore: dialed}, func() {
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
	})
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * reserve.DefaultLifetime) // the leases taken before the kill have ended
	for _, s := range stores {
		closeBreaker(t, s, clock)
	}
	admitted := 0
	for _, s := range stores {
		admitted += admittedOf(t, s, p, "k", 100)
	}
	refill := int(clock.Now().Sub(killed) / (time.Hour / 100))
	t.Logf("admitted %d, refill %d", admitted, refill)
	if admitted > refill {
		t.Errorf("back on the restarted server the replicas admitted %d, more than the %d refilled since the kill", admitted, refill)
	}
}

// testFallbackStartsFromLastLease runs the scenario on backing, failed by fail, and
// returns its policy and the two replicas, in fallback.
func testFallbackStartsFromLastLease(t *testing.T, clock *storetest.Clock, backing core.Store, fail func()) (core.Policy, []*resilient.Store) {
	p := core.MustPolicy("p", core.TokenBucket, core.PerHour(100))
	const replicas, size = 2, 10
	var stores [replicas]*resilient.Store
	for i := range stores {
		leased := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: size})
		s, err := resilient.New(leased, resilient.WithReplicas(replicas), resilient.WithMode(resilient.Local),
			resilient.WithClock(clock.Now), resilient.WithDeadline(10*time.Second), resilient.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	a, b := stores[0], stores[1]
	healthy := admittedOf(t, a, p, "k", 1) + admittedOf(t, b, p, "k", 80)
	if healthy != 81 {
		t.Fatalf("healthy: %d admitted, want 81", healthy)
	}
	fail()
	for _, s := range stores {
		openBreaker(t, s)
	}
	fallback := [replicas]int{admittedOf(t, a, p, "k", 100), admittedOf(t, b, p, "k", 100)}
	// A's last answer: 9 unspent in its lease + the 90 left when it leased, 99 of
	// 100, so its share is 49 of 50; B's: 0 + 10, so 5.
	if fallback != [replicas]int{49, 5} {
		t.Errorf("fallback admitted %v, want [49 5]", fallback)
	}
	spentSinceLastLease := [replicas]int{80, 0} // by the other replica
	bound := int(p.Capacity()) + replicas*(size-1)
	for _, spent := range spentSinceLastLease {
		bound += spent / replicas
	}
	if total := healthy + fallback[0] + fallback[1]; total > bound {
		t.Errorf("admitted %d, above the composed bound %d", total, bound)
	}
	return p, stores[:]
}

// openBreaker decides a policy that is not leased until s's breaker opens.
func openBreaker(t *testing.T, s *resilient.Store) {
	t.Helper()
	other := core.MustPolicy("other", core.GCRA, core.PerSecond(1000))
	for end := time.Now().Add(10 * time.Second); s.Breaker() != resilient.BreakerOpen; {
		if time.Now().After(end) {
			t.Fatal("the breaker did not open within 10s of failures")
		}
		s.Decide(context.Background(), core.Request{Policy: other, Key: "trip"})
	}
}

// closeBreaker decides a policy that is not leased, moving clock on by a cooldown
// each time, until s's breaker has probed the shared store and closed.
func closeBreaker(t *testing.T, s *resilient.Store, clock *storetest.Clock) {
	t.Helper()
	other := core.MustPolicy("other", core.GCRA, core.PerSecond(1000))
	for end := time.Now().Add(10 * time.Second); s.Breaker() != resilient.BreakerClosed; {
		if time.Now().After(end) {
			t.Fatal("the breaker did not close within 10s of a healthy store")
		}
		clock.Advance(resilient.DefaultCooldown)
		s.Decide(context.Background(), core.Request{Policy: other, Key: "trip"})
		time.Sleep(10 * time.Millisecond) // the probe runs in the background
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
