package resilient_test

import (
	"context"
	"errors"
	"sync"
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

// While the breaker is open, a refund of what the shared store charged is dropped:
// the charge stays, so a lost refund only ever makes the store admit less. (A
// window's refund never goes to process memory; a bucket's goes back to the local
// allowance only for what Local mode charged: refundlocal_test.go.)
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

// A refund gives back the request's own charge, in the window that counted it, also
// when the request's admission went on to pay the key's debt to the shared store (what
// slow calls admitted) in the next window: that debt stays charged.
func TestRefundAfterADebtPaymentFindsTheRequestsOwnCharge(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	minute := time.Minute.Milliseconds()
	r.clock.Set((r.clock.Millis()/minute+1)*minute - 10) // 10ms before a window ends
	if got := admittedOf(t, r, api, "k", 1); got != 1 {
		t.Fatalf("healthy: %d admitted, want 1", got)
	}
	r.shared.fail(errDown)
	if got := admittedOf(t, r, api, "k", 2); got != 2 {
		t.Fatalf("slow calls admitted %d, want 2", got)
	}
	r.shared.heal()
	var once sync.Once // the request is charged in this window, its debt in the next
	r.shared.mu.Lock()
	r.shared.afterDecide = func() { once.Do(func() { r.clock.Advance(20 * time.Millisecond) }) }
	r.shared.mu.Unlock()
	ctx := context.Background()
	req := core.Request{Policy: api, Key: "k"}
	res, err := r.store.Decide(ctx, req)
	if err != nil || !res.Allowed {
		t.Fatalf("back on the shared store: %+v, %v", res, err)
	}
	if err := r.store.Refund(ctx, req, res.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	// The new window holds the 2 slow admissions; the refund came out of the old one.
	if res, err := r.shared.mem.Decide(ctx, req); err != nil || res.Remaining != 7 {
		t.Fatalf("the next window after the refund: %+v, %v; want remaining 7 (the debt of 2 and this 1)", res, err)
	}
}

// A request decided in process memory during an outage is paid to the shared store
// later, as its key's debt. Its refund, made once the store is back but before that
// payment, gives a window nothing: the window never counted the cost, and the debt
// may land in the next one.
func TestRefundOfALocalDecisionTakesNothingFromASharedWindow(t *testing.T) {
	r := newRig(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	minute := time.Minute.Milliseconds()
	r.clock.Set((r.clock.Millis()/minute+1)*minute - 5000) // 5s before a window ends
	if got := admittedOf(t, r, api, "k", 3); got != 3 {
		t.Fatalf("healthy: %d admitted, want 3", got)
	}
	r.trip(t, api)
	ctx := context.Background()
	req := core.Request{Policy: api, Key: "k"}
	res, err := r.store.Decide(ctx, req)
	if err != nil || !res.Allowed || !res.DecidedAt.IsZero() {
		t.Fatalf("in Local mode: %+v, %v; want admitted, with no shared instant", res, err)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
	if err := r.store.Refund(ctx, req, res.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if res, err := r.shared.mem.Decide(ctx, req); err != nil || res.Remaining != 6 {
		t.Fatalf("the shared window after the refund: %+v, %v; want remaining 6 (3 counted before the outage, and this 1)", res, err)
	}
}

// A refund can make the shared store admit what it refused. Once it succeeded, the
// pre-limiter, which refuses only what the shared store would, refuses a request of
// the key only at the refund's cost more than the refusal it remembers, still
// without a round trip; a smaller one is the shared store's to decide. A refund that
// fails changes nothing. A queue's refusal is forgotten: a refund brings its slot
// nearer, whatever the cost.
func TestARefundRaisesTheCostThePreLimiterRefuses(t *testing.T) {
	ctx := context.Background()
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	r := newRig(t)
	decide := func(what string, cost int64, allowed bool, remaining int64, calls int64) {
		t.Helper()
		before := r.shared.calls.Load()
		res, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Cost: cost})
		if got := r.shared.calls.Load() - before; err != nil || res.Allowed != allowed || res.Remaining != remaining || got != calls {
			t.Fatalf("%s: %+v %v after %d shared calls; want allowed %v, remaining %d after %d", what, res, err, got, allowed, remaining, calls)
		}
	}
	charge, err := r.store.Decide(ctx, core.Request{Policy: p, Key: "k", Cost: 7})
	if err != nil || !charge.Allowed {
		t.Fatalf("charge 7: %+v %v", charge, err)
	}
	decide("cost 4 of the 3 left", 4, false, 3, 1)
	r.shared.fail(errDown)
	if err := r.store.Refund(ctx, core.Request{Policy: p, Key: "k", Cost: 1}, charge.DecidedAt); err == nil {
		t.Fatal("a refund through a failing store succeeded")
	}
	r.shared.heal()
	decide("cost 4 after a failed refund", 4, false, 3, 0)
	if err := r.store.Refund(ctx, core.Request{Policy: p, Key: "k", Cost: 1}, charge.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	decide("cost 5 of the 4 left after the refund", 5, false, 4, 0)
	decide("cost 4 of the 4 left", 4, true, 0, 1)

	q := core.MustPolicy("queue", core.LeakyBucket, core.PerSecond(1), core.WithBurst(3))
	queued, err := r.store.Decide(ctx, core.Request{Policy: q, Key: "k", Cost: 3})
	if err != nil || !queued.Allowed {
		t.Fatalf("queue 3: %+v %v", queued, err)
	}
	if res, err := r.store.Decide(ctx, core.Request{Policy: q, Key: "k"}); err != nil || !res.Allowed {
		t.Fatalf("a fourth unit, its slot 3s away: %+v %v, want admitted", res, err)
	}
	if res, err := r.store.Decide(ctx, core.Request{Policy: q, Key: "k"}); err != nil || res.Allowed {
		t.Fatalf("a fifth unit behind 4s of the queue: %+v %v, want refused", res, err)
	}
	if err := r.store.Refund(ctx, core.Request{Policy: q, Key: "k"}, queued.DecidedAt); err != nil {
		t.Fatalf("refund: %v", err)
	}
	if res, err := r.store.Decide(ctx, core.Request{Policy: q, Key: "k"}); err != nil || !res.Allowed {
		t.Fatalf("a unit behind 3s of the queue after the refund: %+v %v, want admitted", res, err)
	}
}
