package resilient_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// backFromLocal returns a rig whose policy p (5 a minute) the shared store admitted
// 2 of and Local mode local more, and which is back on the shared store, which never
// saw those.
func backFromLocal(t *testing.T, p core.Policy, local int) *rig {
	t.Helper()
	r := newRig(t)
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("healthy: %d admitted, want 2", got)
	}
	r.trip(t, p)
	if got := admittedOf(t, r, p, "k", local); got != local {
		t.Fatalf("Local mode: %d admitted, want %d", got, local)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback(p.Name()) })
	return r
}

// raceTheSettlement decides A, the key's first decision back on the shared store,
// and B, started when A's settling charge is about to reach the store (call 2). A
// goes on once B is held in the store after its own decision (call 3), as if its
// answer were on its way back, or after 200 ms when B waits for A.
func raceTheSettlement(t *testing.T, r *rig, p core.Policy) (a, b core.Result) {
	t.Helper()
	var calls atomic.Int32
	var bHeld atomic.Bool
	applied, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
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
	a = r.decide(t, p, "k")
	close(release)
	<-done
	return a, b
}

// TestShortDecisionDoesNotEndTheSettlement: of 5 a minute, the shared store admits
// 2 and Local mode the 3 left; back on the shared store, which never saw those 3, A
// is admitted by it, and refused because the local allowance has nothing left to pay
// for it (short); its charge brings the store down. B was admitted by the store
// before that charge landed, and settled after it: A's refusal had ended the
// settlement, so B was not checked against the allowance and kept its admission,
// 6 of 5 (a login account on a Cluster whose master was stopped got 6). A refusal
// now leaves the settlement open, as a shared refusal always did, and B waits for
// A's settlement before it calls the store (TestAdmissionRacingTheAllowanceSettlement).
func TestShortDecisionDoesNotEndTheSettlement(t *testing.T) {
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	r := backFromLocal(t, p, 3)
	if a, b := raceTheSettlement(t, r, p); a.Allowed || b.Allowed {
		t.Fatalf("A: %+v; B, racing A's settlement: %+v; want both refused, the key spent its 5", a, b)
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
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	r := backFromLocal(t, p, 2)
	if a, b := raceTheSettlement(t, r, p); !a.Allowed || b.Allowed {
		t.Fatalf("A: %+v; B, racing A's settlement: %+v; want A admitted (the allowance's last unit) and B refused", a, b)
	}
	if got := admittedOf(t, r, p, "k", 3); got != 0 {
		t.Fatalf("then %d more admitted, want 0", got)
	}
}
