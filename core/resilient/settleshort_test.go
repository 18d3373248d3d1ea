package resilient_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestShortDecisionDoesNotEndTheSettlement: of 5 a minute, the shared store admits
// 2 and Local mode the 3 left; back on the shared store, which never saw those 3, A
// is admitted by it, and refused because the local allowance has nothing left to pay
// for it (short); its charge brings the store down. B was admitted by the store
// before that charge landed, and settled after it: A's refusal had ended the
// settlement, so B was not checked against the allowance and kept its admission,
// 6 of 5 (a login account on a Cluster whose master was stopped got 6). A refusal
// now leaves the settlement open, as a shared refusal always did (and B now waits
// for A's settlement before it calls the store: TestAdmissionRacingTheAllowance-
// Settlement).
func TestShortDecisionDoesNotEndTheSettlement(t *testing.T) {
	r := newRig(t)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("healthy: %d admitted, want 2", got)
	}
	r.trip(t, p)
	if got := admittedOf(t, r, p, "k", 5); got != 3 {
		t.Fatalf("Local mode: %d admitted, want the 3 left", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })

	// Call 1 is A's own; at call 2, A's charge, B starts; A goes on once B is held
	// in the store after its decision (call 3), or after 200 ms, B waiting for A.
	var calls atomic.Int32
	var bHeld atomic.Bool
	applied, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var b core.Result
	r.shared.mu.Lock()
	r.shared.beforeDecide = func() {
		switch calls.Add(1) {
		case 2:
			go func() { defer close(done); b = r.decide(t, p, "k") }()
			select {
			case <-applied:
			case <-time.After(200 * time.Millisecond):
			}
		case 3:
			bHeld.Store(true)
		}
	}
	r.shared.afterDecide = func() {
		if bHeld.CompareAndSwap(true, false) {
			close(applied)
			<-release
		}
	}
	r.shared.mu.Unlock()
	a := r.decide(t, p, "k")
	close(release)
	<-done
	if a.Allowed || b.Allowed {
		t.Fatalf("A: %+v; B, admitted by the store before A's charge landed: %+v; want both refused, the key spent its 5", a, b)
	}
	if got := admittedOf(t, r, p, "k", 3); got != 0 {
		t.Fatalf("then %d more admitted, want 0", got)
	}
}

// TestAdmissionRacingTheAllowanceSettlement: of 5 a minute, the shared store admits
// 2 and Local mode 2 of the 3 left; back on the shared store, which never saw those
// 2, A is admitted by it and by the allowance's last unit, and its charge brings the
// store down to what the allowance leaves. B reached the store before that charge
// landed and was admitted with a unit the allowance had spent; settled after A's
// admission had ended the settlement, it kept it: 6 of 5. B now waits for A's
// settlement to end before it calls the store, which then refuses it.
func TestAdmissionRacingTheAllowanceSettlement(t *testing.T) {
	r := newRig(t)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("healthy: %d admitted, want 2", got)
	}
	r.trip(t, p)
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("Local mode: %d admitted, want 2", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })

	// Call 1 is A's own; at call 2, A's charge, B starts; A goes on once B is
	// held in the store after its decision (call 3), or after 200 ms.
	var calls atomic.Int32
	var bHeld atomic.Bool
	applied, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var b core.Result
	r.shared.mu.Lock()
	r.shared.beforeDecide = func() {
		switch calls.Add(1) {
		case 2:
			go func() { defer close(done); b = r.decide(t, p, "k") }()
			select {
			case <-applied:
			case <-time.After(200 * time.Millisecond):
			}
		case 3:
			bHeld.Store(true)
		}
	}
	r.shared.afterDecide = func() {
		if bHeld.CompareAndSwap(true, false) {
			close(applied)
			<-release
		}
	}
	r.shared.mu.Unlock()
	a := r.decide(t, p, "k")
	close(release)
	<-done
	if !a.Allowed || b.Allowed {
		t.Fatalf("A: %+v; B, racing A's settlement: %+v; want A admitted (the allowance's last unit) and B refused", a, b)
	}
	if got := admittedOf(t, r, p, "k", 3); got != 0 {
		t.Fatalf("then %d more admitted, want 0", got)
	}
}
