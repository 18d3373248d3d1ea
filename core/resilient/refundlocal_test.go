package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// In Local mode a bucket's refund goes back to the key's local allowance, which
// charged it: a request an inner limiter refused spends nothing of the outer one
// during an outage either (the layered app's double charge,
// examples/server TestLayeredLimitsThroughAnOutage). On the return, the settlement
// charges the shared store only what Local mode kept.
func TestRefundInLocalModeGoesBackToTheAllowance(t *testing.T) {
	r := newRig(t)
	api := core.MustPolicy("api", core.TokenBucket, core.PerHour(10))
	ctx := context.Background()
	r.trip(t, api)
	req := core.Request{Policy: api, Key: "k", Cost: 4}
	res, err := r.store.Decide(ctx, req)
	if err != nil || !res.Allowed || res.Remaining != 6 {
		t.Fatalf("charge 4 in Local mode: %+v, %v; want admitted, remaining 6", res, err)
	}
	r.refundWithoutACall(t, "in Local mode", req, res)
	if res := r.decide(t, api, "k"); res.Remaining != 9 {
		t.Fatalf("after the refund, one more request leaves %d, want 9", res.Remaining)
	}
	// The allowance gives back only what its decisions charged: 1 now, not 5.
	err = r.store.Refund(ctx, core.Request{Policy: api, Key: "k", Cost: 5}, time.Time{})
	if !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("a refund of 5 against 1 charged in Local mode: %v, want the rest dropped (ErrStoreUnavailable)", err)
	}
	if res := r.decide(t, api, "k"); res.Remaining != 9 {
		t.Fatalf("after a refund of 5 against 1 charged, one more request leaves %d, want 9", res.Remaining)
	}

	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
	if res := r.decide(t, api, "k"); !res.Allowed {
		t.Fatalf("back on the shared store: %+v, want admitted", res)
	}
	// Local mode kept 1; the return's admission is 1 more.
	if res, err := r.shared.mem.Decide(ctx, core.Request{Policy: api, Key: "k"}); err != nil || res.Remaining != 7 {
		t.Fatalf("shared state after the return: %+v, %v; want remaining 7 (1 kept in Local mode, 1 on return, 1 now)", res, err)
	}
}

// A slow call's admission is charged to the shared store later, by the key's next
// admission there. Its refund cancels that charge without a call, so a refund made
// while the store is failing neither waits out a deadline nor is lost.
func TestRefundOfASlowAdmissionCancelsItsCharge(t *testing.T) {
	r := newRig(t, neverOpen)
	api := core.MustPolicy("api", core.GCRA, core.PerHour(10))
	ctx := context.Background()
	if res := r.decide(t, api, "k"); !res.Allowed || res.Remaining != 9 {
		t.Fatalf("healthy: %+v, want remaining 9", res)
	}
	r.shared.fail(errDown)
	req := core.Request{Policy: api, Key: "k", Cost: 4}
	res, err := r.store.Decide(ctx, req)
	if err != nil || !res.Allowed || res.Remaining != 5 {
		t.Fatalf("a slow call of cost 4: %+v, %v; want admitted from the last answer, remaining 5", res, err)
	}
	r.refundWithoutACall(t, "of the slow admission", req, res)
	if res := r.decide(t, api, "k"); !res.Allowed || res.Remaining != 8 {
		t.Fatalf("a slow call after the refund: %+v, want remaining 8 (the 9 of the last answer, less 1)", res)
	}
	r.shared.heal()
	if res := r.decide(t, api, "k"); !res.Allowed {
		t.Fatalf("back on the shared store: %+v, want admitted", res)
	}
	if res, err := r.shared.mem.Decide(ctx, core.Request{Policy: api, Key: "k"}); err != nil || res.Remaining != 6 {
		t.Fatalf("shared state: %+v, %v; want remaining 6 (1 healthy, 1 slow, 1 on return, 1 now)", res, err)
	}
}

// refundWithoutACall refunds req, admitted with res, and fails unless the refund
// succeeded without calling the shared store.
func (r *rig) refundWithoutACall(t *testing.T, what string, req core.Request, res core.Result) {
	t.Helper()
	calls := r.shared.calls.Load()
	if err := r.store.Refund(context.Background(), req, res.DecidedAt); err != nil {
		t.Fatalf("refund %s: %v", what, err)
	}
	if got := r.shared.calls.Load(); got != calls {
		t.Fatalf("the refund %s called the shared store (%d calls, want %d)", what, got, calls)
	}
}
