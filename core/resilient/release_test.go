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
