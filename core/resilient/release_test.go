package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

var export = core.MustConcurrencyPolicy("export", 2, time.Minute)

// Leases are released where they were granted: local ones locally, unenforced ones
// nowhere, shared ones in the shared store.
func TestReleaseWhereGranted(t *testing.T) {
	ctx := context.Background()
	req := func(lease uint64) core.Request {
		return core.Request{Policy: export, Key: "ip:192.0.2.1", Lease: lease}
	}

	local := newRig(t)
	local.shared.fail(errDown)
	for lease := uint64(1); lease <= 3; lease++ {
		res, err := local.store.Decide(ctx, req(lease))
		if err != nil || res.Allowed != (lease <= 2) {
			t.Fatalf("local lease %d: %+v %v", lease, res, err)
		}
	}
	// Three failures ask for a confirming probe, which calls the shared store in the
	// background; it has ended once the breaker is open.
	waitFor(t, "the confirming probe", func() bool { return local.store.Breaker() == resilient.BreakerOpen })
	calls := local.shared.calls.Load()
	if err := local.store.Release(ctx, req(1), 1); err != nil {
		t.Fatal(err)
	}
	if local.shared.calls.Load() != calls {
		t.Fatal("releasing a local lease called the shared store")
	}
	if res, _ := local.store.Decide(ctx, req(4)); !res.Allowed {
		t.Fatalf("after a local release: %+v", res)
	}

	open := newRig(t, resilient.WithMode(resilient.Open))
	open.shared.fail(errDown)
	res, _ := open.store.Decide(ctx, req(7))
	if !res.Unenforced || res.Lease != 7 {
		t.Fatalf("open lease: %+v", res)
	}
	open.shared.heal()
	calls = open.shared.calls.Load()
	if err := open.store.Release(ctx, req(7), 7); err != nil || open.shared.calls.Load() != calls {
		t.Fatalf("releasing an unenforced lease: %v, %d calls", err, open.shared.calls.Load()-calls)
	}

	shared := newRig(t)
	if res, _ := shared.store.Decide(ctx, req(9)); !res.Allowed {
		t.Fatal(res)
	}
	calls = shared.shared.calls.Load()
	if err := shared.store.Release(ctx, req(9), 9); err != nil || shared.shared.calls.Load() != calls+1 {
		t.Fatalf("releasing a shared lease: %v", err)
	}
	shared.trip(t, export)
	if err := shared.store.Release(ctx, req(9), 9); !errors.Is(err, core.ErrStoreUnavailable) || !errors.Is(err, resilient.ErrBreakerOpen) {
		t.Fatalf("releasing a shared lease with the breaker open: %v", err)
	}
	if err := shared.store.Release(ctx, core.Request{Policy: perMinute5, Key: "k"}, 1); err == nil {
		t.Fatal("releasing a rate policy is not an error")
	}
}

// A lease the shared store granted, whose request ended while the store was
// unreachable, is released there once it is back: the release that failed is made
// again before the key's next decision. Left to lapse at its timeout, both slots
// stayed taken for the rest of the minute after the outage, by requests long ended.
func TestSharedLeaseEndedInAnOutageIsReleasedOnReturn(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("healthy: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.trip(t, export)
	for lease := uint64(1); lease <= 2; lease++ {
		if err := r.store.Release(ctx, exportLease(lease), lease); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatalf("outage: releasing lease %d: %v; want it unavailable", lease, err)
		}
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("export") })
	// Another replica, on the shared store directly, finds both slots free before
	// this one decides on the key: the releases were made as the breaker closed.
	waitFor(t, "the releases made as the breaker closed", func() bool {
		free := 0
		for lease := uint64(100); lease <= 101; lease++ {
			if res, err := r.shared.mem.Decide(ctx, exportLease(lease)); err == nil && res.Allowed {
				free++
			}
		}
		for lease := uint64(100); lease <= 101; lease++ {
			_ = r.shared.mem.Release(ctx, exportLease(lease), lease)
		}
		return free == 2
	})
	for lease := uint64(3); lease <= 4; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
			t.Fatalf("back, leases 1 and 2 ended: lease %d: %+v, %v; want admitted by the shared store", lease, res, err)
		}
	}
	if res, err := r.store.Decide(ctx, exportLease(5)); err != nil || res.Allowed {
		t.Fatalf("leases 3 and 4 in flight: lease 5: %+v, %v; want refused", res, err)
	}
}

// A release that fails while the breaker stays closed (one slow call) is made again
// before the key's next decision on the shared store.
func TestSharedLeaseWhoseReleaseFailedIsReleasedBeforeTheKeysNextDecision(t *testing.T) {
	r := newRig(t, neverOpen)
	ctx := context.Background()
	for lease := uint64(1); lease <= 2; lease++ {
		if res, err := r.store.Decide(ctx, exportLease(lease)); err != nil || !res.Allowed {
			t.Fatalf("healthy: lease %d: %+v, %v", lease, res, err)
		}
	}
	r.shared.fail(errDown)
	if err := r.store.Release(ctx, exportLease(1), 1); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("releasing lease 1 on a failing store: %v; want it unavailable", err)
	}
	r.shared.heal()
	if res, err := r.store.Decide(ctx, exportLease(3)); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
		t.Fatalf("lease 1 ended, lease 2 in flight: lease 3: %+v, %v; want admitted by the shared store", res, err)
	}
	if res, err := r.store.Decide(ctx, exportLease(4)); err != nil || res.Allowed {
		t.Fatalf("leases 2 and 3 in flight: lease 4: %+v, %v; want refused", res, err)
	}
}
