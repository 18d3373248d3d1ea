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

// While the account's settlement is on its way, B's login comes from an address no
// answer is known for (or, in the second case, whose policy is not in Local mode),
// so B cannot be decided from the last answers. B used to go to the store, which
// did not hold the settlement yet and admitted it: 6 of 5 on a Cluster whose master
// resumed (examples/server's TestClusterLoginStackOnAStuckMaster). B now waits for
// A's settlement to end, and the store, which then holds it, refuses B.
func TestStackThatWaitsForTheSettlement(t *testing.T) {
	for _, tc := range []struct {
		name      string
		options   []resilient.Option
		addressOf string
	}{
		{"unknown address", nil, "192.0.2.9"},
		{"address policy in Open mode", []resilient.Option{resilient.WithPolicyMode("login-ip", resilient.Open)}, "192.0.2.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, append([]resilient.Option{resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen}, tc.options...)...)
			account := core.MustPolicy("login-account", core.TokenBucket, core.PerMinute(5))
			ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
			login := func(addr string, results []core.Result) bool {
				reqs := []core.Request{{Policy: account, Key: "alice"}, {Policy: ip, Key: addr}}
				allowed, err := r.store.DecideStack(context.Background(), reqs, results)
				if err != nil {
					t.Error(err)
				}
				return allowed
			}
			if !login("192.0.2.1", make([]core.Result, 2)) || !login("192.0.2.2", make([]core.Result, 2)) {
				t.Fatal("healthy logins refused")
			}
			r.shared.fail(errDown)
			for i := range 3 {
				if !login("192.0.2.1", make([]core.Result, 2)) {
					t.Fatalf("slow login %d refused, want the 3 the account's last answer left", i)
				}
			}
			r.shared.heal()
			// At A's first settling charge, B starts; A goes on after B is done, or
			// after 200 ms when B waits for A.
			var b atomic.Bool
			var bResults [2]core.Result
			bDone := make(chan struct{})
			onDecideCall(r, 1, func() {
				go func() { defer close(bDone); b.Store(login(tc.addressOf, bResults[:])) }()
				select {
				case <-bDone:
				case <-time.After(200 * time.Millisecond):
				}
			})
			a := login("192.0.2.1", make([]core.Result, 2))
			<-bDone
			if a || b.Load() {
				t.Fatalf("A admitted %v; B, while A's settlement was on its way, admitted %v; want both refused, the account spent its 5", a, b.Load())
			}
			if bResults[0].Allowed || bResults[0].RetryAfter <= 0 {
				t.Errorf("B's account result %+v, want refused with a Retry-After", bResults[0])
			}
			if got := admittedOf(t, r, account, "alice", 3); got != 0 {
				t.Fatalf("then %d more admitted on the account, want 0", got)
			}
		})
	}
}
