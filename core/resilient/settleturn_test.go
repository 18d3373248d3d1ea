package resilient_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// onDecideCall runs decide once, when the shared store is about to apply its nth
// Decide call from now.
func onDecideCall(r *rig, n int32, decide func()) {
	var calls atomic.Int32
	r.shared.mu.Lock()
	r.shared.beforeDecide = func() {
		if calls.Add(1) == n {
			decide()
		}
	}
	r.shared.mu.Unlock()
}

// TestConcurrentReturnWaitsForTheSettlement: of 5 a minute, the shared store admits
// 2 and slow calls 3 from its last answer, which the store never saw. Back on the
// store, A's call is admitted and its settlement charges those 3; B reaches the
// store while that charge is on its way. B was admitted by the store, which did not
// hold the 3 yet, and A refused for want of room: 6 of 5. B is now decided from the
// last answer, as a slow call is, while A settles: both refused.
func TestConcurrentReturnWaitsForTheSettlement(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))
	if got := admittedOf(t, r, p, "k", 2); got != 2 {
		t.Fatalf("healthy: %d admitted, want 2", got)
	}
	r.shared.fail(errDown)
	if got := admittedOf(t, r, p, "k", 3); got != 3 {
		t.Fatalf("slow calls: %d admitted, want the 3 the last answer left", got)
	}
	r.shared.heal()
	var b core.Result
	onDecideCall(r, 2, func() { b = r.decide(t, p, "k") }) // A's own call, then its settling charge
	if a := r.decide(t, p, "k"); a.Allowed || b.Allowed {
		t.Fatalf("A: %+v; B, while A's settlement was on its way: %+v; want both refused, the key spent its 5", a, b)
	}
	if got := admittedOf(t, r, p, "k", 3); got != 0 {
		t.Fatalf("then %d more admitted, want 0", got)
	}
}

// The same through login stacks: B, the account from another address, reaches the
// store while A's settlement of the account's slow admissions is on its way.
func TestConcurrentStackReturnWaitsForTheSettlement(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	account := core.MustPolicy("login-account", core.TokenBucket, core.PerMinute(5))
	ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	login := func(addr string) bool {
		reqs := []core.Request{{Policy: account, Key: "alice"}, {Policy: ip, Key: addr}}
		allowed, err := r.store.DecideStack(context.Background(), reqs, make([]core.Result, 2))
		if err != nil {
			t.Fatal(err)
		}
		return allowed
	}
	if !login("192.0.2.1") || !login("192.0.2.2") { // both addresses known to the last answers
		t.Fatal("healthy logins refused")
	}
	r.shared.fail(errDown)
	for i := range 3 {
		if !login("192.0.2.1") {
			t.Fatalf("slow login %d refused, want the 3 the account's last answer left", i)
		}
	}
	r.shared.heal()
	var b bool
	onDecideCall(r, 1, func() { b = login("192.0.2.2") }) // A's first settling charge
	if a := login("192.0.2.1"); a || b {
		t.Fatalf("A admitted %v; B, while A's settlement was on its way, admitted %v; want both refused, the account spent its 5", a, b)
	}
	if got := admittedOf(t, r, account, "alice", 3); got != 0 {
		t.Fatalf("then %d more admitted on the account, want 0", got)
	}
}
