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

// Local mode grants no lease that the lease book cannot remember: with
// leaseBookLimit local leases in flight, the next is refused with a short
// Retry-After, not granted where nothing would release it or hand it over. Once one
// ends, the next is granted.
func TestLocalModeRefusesALeaseTheFullBookCannotRemember(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 decisions; skipped with -short")
	}
	wide := core.MustConcurrencyPolicy("wide", 1, time.Minute)
	r := newRig(t)
	r.trip(t, wide)
	ctx := context.Background()
	lease := func(i int) core.Request {
		return core.Request{Policy: wide, Key: "k" + strconv.Itoa(i), Lease: uint64(i + 1)}
	}
	// The trip's last decision holds a local lease on its key: leaseBookLimit-1 more.
	for i := range leaseBookLimit - 1 {
		if res, err := r.store.Decide(ctx, lease(i)); err != nil || !res.Allowed {
			t.Fatalf("local mode, lease %d: %+v, %v", i, res, err)
		}
	}
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
