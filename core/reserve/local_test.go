package reserve_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestLocalAccounting steps one replica through a token bucket of 10 per second,
// capacity 20, leased 5 at a time, and checks every result and what the backing
// store saw.
func TestLocalAccounting(t *testing.T) {
	clock := storetest.NewClock()
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: api, Size: 5, Lifetime: time.Second})

	steps := []struct {
		at        time.Duration
		cost      int64
		allowed   bool
		remaining int64 // local units left + what the backing store had left at the lease
		leases    int64 // leases taken so far
		calls     int64 // decisions that reached the backing store so far
	}{
		{0, 1, true, 4 + 15, 1, 1}, // a lease of 5: 15 left in the bucket
		{0, 1, true, 3 + 15, 1, 1}, // local
		{0, 3, true, 0 + 15, 1, 1}, // local, the lease is spent
		{0, 2, true, 3 + 10, 2, 2}, // a second lease: 10 left in the bucket
		{0, 4, true, 1 + 8, 3, 3},  // 3 left < 4: a lease of 5 − 3 = 2 completes it
		{0, 1, true, 0 + 8, 3, 3},  // local
	}
	for i, st := range steps {
		clock.Set(storetest.Start + st.at.Milliseconds())
		res := decide(t, s, api, "k", st.cost)
		if res.Allowed != st.allowed || res.Remaining != st.remaining || res.Limit != 20 || res.Policy != "api" {
			t.Fatalf("step %d: got %+v, want allowed %v remaining %d", i, res, st.allowed, st.remaining)
		}
		if got := s.Stats().Leases; got != st.leases {
			t.Fatalf("step %d: %d leases, want %d", i, got, st.leases)
		}
		if got := backing.decisions.Load(); got != st.calls {
			t.Fatalf("step %d: %d backing decisions, want %d", i, got, st.calls)
		}
	}
	if got := available(t, backing, api, "k"); got != 8 {
		t.Fatalf("backing store has %d, want 8 (20 − 12 leased)", got)
	}
	st := s.Stats()
	if st.Leased != 12 || st.Held != 0 || st.Keys != 1 {
		t.Fatalf("stats %+v: want 12 leased, none held, 1 key", st)
	}
}

// TestFallbackToSmallerSlices: when a full lease is refused, a replica takes what
// the backing store said remains, then the request's own cost, so low traffic is
// not refused while the backing store has budget.
func TestFallbackToSmallerSlices(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerMinute(10))
	backing := newMemoryBacking(t, clock)
	lease := reserve.Lease{Policy: p, Size: 8}
	a := newReplica(t, backing, clock, lease)
	b := newReplica(t, backing, clock, lease)

	if res := decide(t, a, p, "k", 1); !res.Allowed || res.Remaining != 7+2 {
		t.Fatalf("a: %+v, want a lease of 8", res)
	}
	// b asks for 8, is refused, learns 2 remain and takes them.
	if res := decide(t, b, p, "k", 1); !res.Allowed || res.Remaining != 1 {
		t.Fatalf("b: %+v, want a lease of 2", res)
	}
	if got := backing.decisions.Load(); got != 3 {
		t.Fatalf("%d backing decisions, want 3 (8 to a; 8 refused and 2 to b)", got)
	}
	if res := decide(t, b, p, "k", 1); !res.Allowed {
		t.Fatalf("b's second: %+v", res)
	}
	// b's third: the bucket is empty; the refusal is the backing store's, for cost 1.
	want, err := backing.refundingStore.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	res := decide(t, b, p, "k", 1)
	if res.Allowed || res.RetryAfter != want.RetryAfter || res.RetryAfter != 6*time.Second {
		t.Fatalf("b refused: %+v, want RetryAfter %v", res, want.RetryAfter)
	}
	// a still spends its own lease.
	for i := 0; i < 7; i++ {
		if res := decide(t, a, p, "k", 1); !res.Allowed {
			t.Fatalf("a's lease, request %d: %+v", i, res)
		}
	}
	if res := decide(t, a, p, "k", 1); res.Allowed {
		t.Fatalf("a admitted past its lease and an empty bucket: %+v", res)
	}
}

// TestRefusalIsRemembered: a refused key is refused locally, without a round trip,
// with the Retry-After counting down, until the backing store's Retry-After passes.
func TestRefusalIsRemembered(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(1), core.WithBurst(2))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 2})
	decide(t, s, p, "k", 2) // the whole bucket
	calls := backing.decisions.Load()
	first := decide(t, s, p, "k", 1)
	if first.Allowed || first.RetryAfter != time.Second {
		t.Fatalf("refusal %+v: want RetryAfter 1s", first)
	}
	calls = backing.decisions.Load() - calls
	clock.Advance(400 * ms)
	before := backing.decisions.Load()
	res := decide(t, s, p, "k", 1)
	if res.Allowed || res.RetryAfter != 600*ms {
		t.Fatalf("remembered refusal %+v: want RetryAfter 600ms", res)
	}
	if got := backing.decisions.Load() - before; got != 0 {
		t.Fatalf("%d backing decisions during a remembered refusal, want 0 (the refusal took %d)", got, calls)
	}
	// A costlier request waits longer than the remembered refusal says: the backing
	// store answers it.
	if res := decide(t, s, p, "k", 2); res.Allowed || res.RetryAfter != 1600*ms {
		t.Fatalf("a costlier request: %+v, want the backing store's RetryAfter 1.6s", res)
	}
	clock.Advance(600 * ms)
	if res := decide(t, s, p, "k", 1); !res.Allowed {
		t.Fatalf("after Retry-After: %+v", res)
	}
}

// TestCostAboveLeasePassesThrough: a request costing more than the lease size is
// decided by the backing store itself.
func TestCostAboveLeasePassesThrough(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(10))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 3})
	res := decide(t, s, p, "k", 4)
	if !res.Allowed || res.Remaining != 6 || s.Stats().Leases != 0 {
		t.Fatalf("%+v, leases %d: want the backing store's own decision", res, s.Stats().Leases)
	}
}

// TestInvalidRequestsAreErrors: a leased policy's requests are validated like the
// backing store validates them.
func TestInvalidRequestsAreErrors(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(10))
	s := newReplica(t, newMemoryBacking(t, clock), clock, reserve.Lease{Policy: p, Size: 3})
	for _, req := range []core.Request{{Policy: p, Key: ""}, {Policy: p, Key: "k", Cost: 11}, {Policy: p, Key: "k", Cost: -1}} {
		if _, err := s.Decide(context.Background(), req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}

// TestExpiredLeaseIsReturned: the unspent balance goes back to the backing store
// when the lease's lifetime ends: by ReturnExpired, or by the next request.
func TestExpiredLeaseIsReturned(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.SlidingLog, core.PerMinute(100))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 10, Lifetime: 2 * time.Second})
	decide(t, s, p, "a", 1)
	decide(t, s, p, "b", 3)
	if got := available(t, backing, p, "a"); got != 90 {
		t.Fatalf("a: backing has %d, want 90", got)
	}
	clock.Advance(1999 * ms)
	if err := s.ReturnExpired(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Returned; got != 0 {
		t.Fatalf("returned %d before the lifetime ended", got)
	}
	clock.Advance(1 * ms)
	if err := s.ReturnExpired(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := available(t, backing, p, "a"); got != 99 {
		t.Fatalf("a: backing has %d after the return, want 99", got)
	}
	if got := available(t, backing, p, "b"); got != 97 {
		t.Fatalf("b: backing has %d after the return, want 97", got)
	}
	st := s.Stats()
	if st.Returned != 9+7 || st.Held != 0 || st.Keys != 0 {
		t.Fatalf("stats %+v: want 16 returned, none held, no keys kept", st)
	}

	// Without a sweep, the next request returns the ended lease before taking one.
	decide(t, s, p, "a", 1) // a lease of 10
	clock.Advance(3 * time.Second)
	decide(t, s, p, "a", 1) // returns 9, takes 10, spends 1
	if got := available(t, backing, p, "a"); got != 100-2-10 {
		t.Fatalf("a: backing has %d, want 88", got)
	}
}

// TestCloseReturnsBalances: Close gives every unspent unit back, and the store
// refuses work afterwards.
func TestCloseReturnsBalances(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.GCRA, core.PerSecond(50))
	backing := newMemoryBacking(t, clock)
	s, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 20}}, reserve.WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		decide(t, s, p, "a", 1)
	}
	decide(t, s, p, "b", 7)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := available(t, backing, p, "a"); got != 45 {
		t.Fatalf("a: backing has %d after Close, want 45", got)
	}
	if got := available(t, backing, p, "b"); got != 43 {
		t.Fatalf("b: backing has %d after Close, want 43", got)
	}
	if _, err := s.Decide(context.Background(), core.Request{Policy: p, Key: "a"}); !errors.Is(err, reserve.ErrClosed) {
		t.Fatalf("Decide after Close: %v, want ErrClosed", err)
	}
	if err := s.ReturnExpired(context.Background()); !errors.Is(err, reserve.ErrClosed) {
		t.Fatalf("ReturnExpired after Close: %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestFixedWindowLeaseEndsWithItsWindow: a fixed window's lease is not spent in the
// next window, so every window admits at most its limit.
func TestFixedWindowLeaseEndsWithItsWindow(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("fw", core.FixedWindow, core.PerSecond(10))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 6, Lifetime: time.Hour})
	clock.Advance(900 * ms)
	// A lease of 6 in window 0, 5 unspent; another replica fills window 0.
	decide(t, s, p, "k", 1)
	decide(t, newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 4}), p, "k", 4)
	clock.Advance(100 * ms) // window 1
	if admitted := admittedOf(t, s, p, "k", 20); admitted != 10 {
		t.Fatalf("window 1 admitted %d, want its limit 10 (the lease of window 0 ended with it)", admitted)
	}
}

// TestFixedWindowLeaseEndsWithinItsWindowToTheMillisecond: the backing store counts
// a window's ResetAfter from its clock truncated to the millisecond. A lease taken
// at 999.5ms must not live on to 1000.5ms, in the next window.
func TestFixedWindowLeaseEndsWithinItsWindowToTheMillisecond(t *testing.T) {
	var nanos atomic.Int64
	clock := func() time.Time { return time.Unix(0, nanos.Load()) }
	start := time.UnixMilli(storetest.Start)
	nanos.Store(start.Add(999*ms + 500*time.Microsecond).UnixNano())
	p := core.MustPolicy("fw", core.FixedWindow, core.PerSecond(10))
	backing := &shared{refundingStore: memory.MustNew(memory.WithClock(clock), memory.WithSweepInterval(0))}
	t.Cleanup(func() { backing.refundingStore.Close() })
	s, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 5}}, reserve.WithClock(clock), reserve.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	decide(t, s, p, "k", 1) // a lease of 5 in window 0, 4 unspent
	nanos.Store(start.Add(1000*ms + 200*time.Microsecond).UnixNano())
	if admitted := admittedOf(t, backing, p, "k", 10) + admittedOf(t, s, p, "k", 10); admitted != 10 {
		t.Fatalf("window 1 admitted %d, want its limit 10", admitted)
	}
}

// TestRememberedRefusalRetryAfterIsNeverShort: a refusal remembered for one cost
// does not answer a larger cost, whose wait is longer.
func TestRememberedRefusalRetryAfterIsNeverShort(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10))
	backing := newMemoryBacking(t, clock)
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 5})
	for range 10 {
		decide(t, s, p, "k", 1)
	}
	if decide(t, s, p, "k", 1).Allowed {
		t.Fatal("the 11th request was admitted")
	}
	got, exact := decide(t, s, p, "k", 5), decide(t, backing, p, "k", 5)
	if got.Allowed || got.RetryAfter < exact.RetryAfter {
		t.Fatalf("cost 5: %+v; the backing store's wait is %v", got, exact.RetryAfter)
	}
}

// TestMaxKeysPassesNewKeysThrough: when the Store is full, new keys are decided by
// the backing store.
func TestMaxKeysPassesNewKeysThrough(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(10))
	backing := newMemoryBacking(t, clock)
	s, err := reserve.New(backing, []reserve.Lease{{Policy: p, Size: 5}}, reserve.WithClock(clock.Now), reserve.WithSweepInterval(0), reserve.WithMaxKeys(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	decide(t, s, p, "a", 1)
	if res := decide(t, s, p, "b", 1); !res.Allowed || res.Remaining != 9 {
		t.Fatalf("b: %+v, want the backing store's decision", res)
	}
	if st := s.Stats(); st.Keys != 1 || st.Leases != 1 {
		t.Fatalf("stats %+v: want 1 key, 1 lease", st)
	}
}

// TestWaitingForALeaseHonoursTheContext: a request waiting behind another's lease
// request gives up when its context ends.
func TestWaitingForALeaseHonoursTheContext(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(10))
	backing := &blocking{shared: newMemoryBacking(t, clock), entered: make(chan struct{}), release: make(chan struct{})}
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 5})
	done := make(chan error, 1)
	go func() {
		_, err := s.Decide(context.Background(), core.Request{Policy: p, Key: "k"})
		done <- err
	}()
	<-backing.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Decide(ctx, core.Request{Policy: p, Key: "k"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting request: %v, want context.Canceled", err)
	}
	close(backing.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// blocking holds the first decision until release is closed.
type blocking struct {
	*shared
	entered, release chan struct{}
	once             bool
}

func (b *blocking) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if !b.once {
		b.once = true
		close(b.entered)
		<-b.release
	}
	return b.shared.Decide(ctx, req)
}

// unenforcing admits everything without counting it, as a failing store in an open
// failure mode does.
type unenforcing struct{ *shared }

func (u unenforcing) Decide(_ context.Context, req core.Request) (core.Result, error) {
	u.decisions.Add(1)
	return core.Result{Policy: req.Policy.Name(), Allowed: true, Limit: req.Policy.Capacity(), Unenforced: true}, nil
}

// TestUnenforcedGrantsNoLease: an admission the backing store did not count is
// passed on as it is, and leaves no balance to spend.
func TestUnenforcedGrantsNoLease(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(10))
	backing := unenforcing{newMemoryBacking(t, clock)}
	s := newReplica(t, backing, clock, reserve.Lease{Policy: p, Size: 5})
	for i := int64(1); i <= 3; i++ {
		res := decide(t, s, p, "k", 1)
		if !res.Allowed || !res.Unenforced {
			t.Fatalf("request %d: %+v, want the unenforced admission", i, res)
		}
		if got := backing.decisions.Load(); got != i {
			t.Fatalf("request %d: %d backing decisions, want %d (no lease held)", i, got, i)
		}
	}
	if st := s.Stats(); st.Leases != 0 || st.Held != 0 {
		t.Fatalf("stats %+v: want no lease", st)
	}
}
