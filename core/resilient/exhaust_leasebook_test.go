package resilient_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// leaseBookLimit is leases.go's maxFallbackLeases: how many leases granted by a
// failure mode the lease book remembers.
const leaseBookLimit = 100_000

// fillLeaseBook trips r's breaker and has an Open concurrency policy grant
// leaseBookLimit unenforced leases that stay in flight (an attacker's slow
// requests on an Open route, or just a busy replica): the lease book is full.
func fillLeaseBook(t *testing.T) *rig {
	t.Helper()
	if testing.Short() {
		t.Skip("100,000 decisions; skipped with -short")
	}
	flood := core.MustConcurrencyPolicy("flood", 1, time.Minute)
	r := newRig(t, resilient.WithPolicyMode("flood", resilient.Open))
	r.trip(t, export)
	ctx := context.Background()
	for i := 0; i < leaseBookLimit; i++ {
		res, err := r.store.Decide(ctx, core.Request{Policy: flood, Key: "f", Lease: uint64(1_000_000 + i)})
		if err != nil || !res.Allowed {
			t.Fatalf("open mode, lease %d: %+v, %v", i, res, err)
		}
	}
	return r
}

// A local lease granted while the lease book holds leaseBookLimit unenforced
// leases is remembered all the same, and its release frees its slot in the local
// store. Left out, its release went towards the shared store (queued, the breaker
// being open) and never to the local store: the slot stayed taken for the lease
// timeout by a request that had ended.
func TestLocalLeaseReleasedWhileTheLeaseBookIsFullFreesItsSlot(t *testing.T) {
	r := fillLeaseBook(t)
	ctx := context.Background()
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("local mode, lease %d: %+v, %v", lease, res, err)
		}
	}
	_ = r.store.Release(ctx, exportLease(1), 1) // the request of lease 1 ends
	res, err := r.store.Decide(ctx, exportLease(3))
	if err != nil || !res.Allowed {
		t.Fatalf("lease 1 ended, only lease 2 in flight under a limit of 2: %+v, %v; want admitted "+
			"(the local lease was never released: its slot is held for the lease timeout)", res, err)
	}
}

// A local lease granted while the lease book holds leaseBookLimit unenforced
// leases is handed over when the shared store comes back, which then refuses
// beyond the limit. Left out of the book, it was not: 4 in flight against a limit
// of 2 (TestLocalLeasesInFlightCountOnReturn is the same with room in the book).
func TestLocalLeasesInFlightCountOnReturnWhenTheLeaseBookIsFull(t *testing.T) {
	r := fillLeaseBook(t)
	ctx := context.Background()
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("local mode, lease %d: %+v, %v", lease, res, err)
		}
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	inFlight := 2
	for lease := uint64(3); lease <= 4; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err == nil && res.Allowed {
			inFlight++
		}
	}
	if inFlight > 2 {
		t.Fatalf("%d requests in flight on key k against a limit of 2: the local leases, forgotten by the full "+
			"lease book, were not handed over to the shared store", inFlight)
	}
}

// fillWithLocalLeases trips a rig's breaker and has Local mode grant local leases of
// a concurrency policy with the given lease timeout, one per key, until the lease
// book holds leaseBookLimit of them (the trip's last decision holds one). lease(i)
// is the request of key i: 0 to leaseBookLimit-2 hold theirs.
func fillWithLocalLeases(t *testing.T, timeout time.Duration) (*rig, func(i int) core.Request) {
	t.Helper()
	wide := core.MustConcurrencyPolicy("wide", 1, timeout)
	r := newRig(t)
	r.trip(t, wide)
	lease := func(i int) core.Request {
		return core.Request{Policy: wide, Key: "k" + strconv.Itoa(i), Lease: uint64(i + 1)}
	}
	for i := range leaseBookLimit - 1 {
		if res, err := r.store.Decide(context.Background(), lease(i)); err != nil || !res.Allowed {
			t.Fatalf("local mode, lease %d: %+v, %v", i, res, err)
		}
	}
	return r, lease
}

// Local mode grants no lease that the lease book cannot remember: with
// leaseBookLimit local leases in flight, the next is refused with a short
// Retry-After, not granted where nothing would release it or hand it over. Once one
// ends, the next is granted.
func TestLocalModeRefusesALeaseTheFullBookCannotRemember(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 decisions; skipped with -short")
	}
	r, lease := fillWithLocalLeases(t, time.Minute)
	ctx := context.Background()
	res, err := r.store.Decide(ctx, lease(leaseBookLimit))
	if err != nil || res.Allowed || res.RetryAfter <= 0 || res.RetryAfter > time.Minute {
		t.Fatalf("a local lease beyond the book's %d: %+v, %v; want refused with a Retry-After", leaseBookLimit, res, err)
	}
	if err := r.store.Release(ctx, lease(0), 1); err != nil {
		t.Fatal(err)
	}
	if res, err := r.store.Decide(ctx, lease(leaseBookLimit)); err != nil || !res.Allowed {
		t.Fatalf("one local lease ended: %+v, %v; want the next granted", res, err)
	}
}

// Local leases left to lapse (never released, as core.Request.Lease allows) free
// the full lease book: nothing swept them while Local mode refused before
// remembering a lease, and every later local lease was refused for good.
func TestLapsedLocalLeasesFreeTheFullBook(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 decisions; skipped with -short")
	}
	r, lease := fillWithLocalLeases(t, time.Second)
	ctx := context.Background()
	r.clock.Advance(time.Minute) // every lease has lapsed, in the local store too
	for i := 0; i < 3; i++ {
		r.clock.Advance(time.Minute)
		res, err := r.store.Decide(ctx, lease(leaseBookLimit+i))
		if err != nil || !res.Allowed {
			t.Errorf("%d min after every local lease lapsed, a fresh key: %+v, %v; want admitted", 2+i, res, err)
		}
	}
}

// Two local leases of one key under one ID (0, "no ID" in core.Request.Lease) share
// one entry of the lease book, which counts it once. They counted twice, and their
// releases took one out: once leaseBookLimit such pairs had come and gone, with
// nothing in flight, Local mode refused requests on fresh keys for good.
func TestLeasesUnderOneIDCountOnceInTheBook(t *testing.T) {
	if testing.Short() {
		t.Skip("400,000 calls; skipped with -short")
	}
	pairs := core.MustConcurrencyPolicy("pairs", 2, time.Second)
	r := newRig(t)
	r.trip(t, pairs)
	ctx := context.Background()
	for i := range leaseBookLimit {
		req := core.Request{Policy: pairs, Key: "k" + strconv.Itoa(i)}
		_, _ = r.store.Decide(ctx, req)
		_, _ = r.store.Decide(ctx, req)
		_ = r.store.Release(ctx, req, 0)
		_ = r.store.Release(ctx, req, 0)
	}
	for m := 1; m <= 3; m++ {
		r.clock.Advance(time.Minute) // every lease has lapsed
		admitted := 0
		for j := range 10 {
			req := core.Request{Policy: pairs, Key: "fresh" + strconv.Itoa(100*m+j), Lease: uint64(100*m + j)}
			if res, err := r.store.Decide(ctx, req); err == nil && res.Allowed {
				admitted++
			}
		}
		if admitted != 10 {
			t.Errorf("%d min later, nothing else in flight: %d of 10 requests on fresh keys admitted; want 10", m, admitted)
		}
	}
}
