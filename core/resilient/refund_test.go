package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// A refund reaches the shared store, so that a charge an outer limiter made is undone
// when a limiter nested inside it refuses the request.
func TestRefundGivesCostBackInTheSharedStore(t *testing.T) {
	r := newRig(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(10))
	ctx := context.Background()
	res, err := r.store.Decide(ctx, core.Request{Policy: api, Key: "k", Cost: 4})
	if err != nil || res.Remaining != 6 {
		t.Fatalf("charge 4: %+v, %v; want remaining 6", res, err)
	}
	if err := r.store.Refund(ctx, core.Request{Policy: api, Key: "k", Cost: 4}, res.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if res := r.decide(t, api, "k"); res.Remaining != 9 {
		t.Fatalf("after the refund, one more request leaves %d, want 9", res.Remaining)
	}
}

// While the breaker is open a refund is dropped, never made in memory: the charge
// stays, so a lost refund only ever makes the store admit less.
func TestRefundWhileTheBreakerIsOpenIsDropped(t *testing.T) {
	r := newRig(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(10))
	ctx := context.Background()
	res, err := r.store.Decide(ctx, core.Request{Policy: api, Key: "k", Cost: 4})
	if err != nil {
		t.Fatal(err)
	}
	r.trip(t, api)
	calls := r.shared.calls.Load()
	err = r.store.Refund(ctx, core.Request{Policy: api, Key: "k", Cost: 4}, res.DecidedAt)
	if !errors.Is(err, core.ErrStoreUnavailable) || !errors.Is(err, resilient.ErrBreakerOpen) {
		t.Fatalf("refund with the breaker open: %v, want ErrStoreUnavailable and ErrBreakerOpen", err)
	}
	if got := r.shared.calls.Load(); got != calls {
		t.Fatalf("the refund called the open store (%d calls, want %d)", got, calls)
	}
	if res, err := r.shared.mem.Decide(ctx, core.Request{Policy: api, Key: "k"}); err != nil || res.Remaining != 5 {
		t.Fatalf("shared state after the dropped refund: %+v, %v; want remaining 5 (4 charged, 1 now)", res, err)
	}
}

// noRefunds is a shared store without core.Refunder.
type noRefunds struct{ core.Store }

func TestRefundNeedsASharedStoreThatRefunds(t *testing.T) {
	shared := newFakeShared(t, nil)
	store, err := resilient.New(noRefunds{shared})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(10))
	err = store.Refund(context.Background(), core.Request{Policy: api, Key: "k"}, time.Now())
	if !errors.Is(err, resilient.ErrNoRefund) {
		t.Fatalf("refund on a shared store without Refund: %v, want ErrNoRefund", err)
	}
}
