package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// A refund given back in process memory gives no more than the shared store would:
// the cost less what the bucket has refilled since the charge. Here a shared charge
// is refunded a second after it was made, once its bucket of 10 had refilled and
// been spent again, while a slow call's admission is not yet paid to the shared
// store. Cancelling that payment whole (as the memo did) admitted 11 at one instant.
func TestLateRefundDoesNotCancelASlowCallsCharge(t *testing.T) {
	r := newRig(t, neverOpen)
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	req, first := r.emptyThenRefill(t, api, time.Second)
	admitted := admittedOf(t, r, api, "k", 9)
	r.shared.fail(errDown)
	admitted += admittedOf(t, r, api, "k", 1) // a slow call, from the last answer's 1
	r.refundWithoutACall(t, "a second after the charge", req, first)
	r.shared.heal()
	admitted += admittedOf(t, r, api, "k", 5)
	if admitted != 10 {
		t.Fatalf("admitted %d at one instant after the bucket refilled, want 10 (the refund came after the bucket had refilled its charge)", admitted)
	}
}

// The same in Local mode: a late refund gives the key's local allowance nothing of
// what the bucket refilled, so the outage admits what it would have without it.
func TestLateRefundGivesALocalAllowanceNothingRefilled(t *testing.T) {
	admittedAfterRefill := func(refund bool) int {
		r := newRig(t)
		api := core.MustPolicy("api", core.TokenBucket, core.PerHour(10))
		req, first := r.emptyThenRefill(t, api, time.Hour)
		admitted := admittedOf(t, r, api, "k", 5)
		r.trip(t, api)
		admitted += admittedOf(t, r, api, "k", 3)
		if refund {
			r.refundWithoutACall(t, "an hour after the charge", req, first)
		}
		return admitted + admittedOf(t, r, api, "k", 10)
	}
	without, with := admittedAfterRefill(false), admittedAfterRefill(true)
	if without != 10 || with != 10 {
		t.Fatalf("admitted after the refill: %d without the late refund, %d with it; want 10 both", without, with)
	}
}

// A bucket decided in process memory names the Store's instant, so that its refund
// gives back what the bucket has not refilled since: a charge of 4 at 10 a second,
// refunded 150 ms later, gives back 2 (2.5 in tokens, rounded down), from the slow
// call's unpaid charge and from a Local allowance alike. A window decided in memory
// names no instant (TestRefundOfALocalDecisionTakesNothingFromASharedWindow).
func TestRefundOfAnInMemoryChargeGivesBackWhatHasNotRefilled(t *testing.T) {
	for _, local := range []bool{false, true} {
		name := map[bool]string{false: "slow call", true: "Local mode"}[local]
		t.Run(name, func(t *testing.T) {
			r := newRig(t, neverOpen)
			if local {
				r = newRig(t)
			}
			api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
			ctx := context.Background()
			if res, err := r.store.Decide(ctx, core.Request{Policy: api, Key: "k", Cost: 2}); err != nil || res.Remaining != 8 {
				t.Fatalf("healthy: %+v, %v; want remaining 8", res, err)
			}
			if local {
				r.trip(t, api)
			} else {
				r.shared.fail(errDown)
			}
			req := core.Request{Policy: api, Key: "k", Cost: 4}
			res, err := r.store.Decide(ctx, req)
			if err != nil || !res.Allowed || res.Remaining != 4 {
				t.Fatalf("a charge of 4: %+v, %v; want admitted, remaining 4", res, err)
			}
			if want := time.UnixMilli(r.clock.Millis()); !res.DecidedAt.Equal(want) {
				t.Fatalf("decided in memory at %v, want the Store's instant %v", res.DecidedAt, want)
			}
			r.clock.Advance(150 * time.Millisecond)
			r.refundWithoutACall(t, "150 ms after the charge", req, res)
			// 4 left, and 2 back; Local mode has refilled 1.5 more, a slow call nothing.
			want := int64(6)
			if local {
				want = 7
			}
			if res, err := r.store.Decide(ctx, core.Request{Policy: api, Key: "k", Cost: want}); err != nil || !res.Allowed {
				t.Fatalf("after the refund, a charge of %d: %+v, %v; want admitted", want, res, err)
			}
			if res := r.decide(t, api, "k"); res.Allowed {
				t.Fatalf("after the refund and a charge of %d, one more: %+v; want refused (the refund gave back 4, not 2)", want, res)
			}
		})
	}
}

// emptyThenRefill spends api's bucket of 10 for key "k" on the shared store, the
// first request alone, and waits refill for it to fill again: it returns the first
// request and its result, whose refund is then late.
func (r *rig) emptyThenRefill(t *testing.T, api core.Policy, refill time.Duration) (core.Request, core.Result) {
	t.Helper()
	req := core.Request{Policy: api, Key: "k"}
	first, err := r.store.Decide(context.Background(), req)
	if err != nil || !first.Allowed {
		t.Fatalf("healthy: %+v, %v", first, err)
	}
	if got := admittedOf(t, r, api, "k", 9); got != 9 {
		t.Fatalf("healthy: %d of 9 more admitted", got)
	}
	r.clock.Advance(refill)
	return req, first
}
