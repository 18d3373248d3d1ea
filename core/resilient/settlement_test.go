package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestRefusalAfterRecoveryKeepsLocalDebt: a refusal by the shared store just after
// recovery (a weighted request larger than what is left) used to end the settlement
// of what Local mode admitted during the outage, and the shared store then granted
// its whole Remaining again: 19 admitted in about a second under 10/min.
func TestRefusalAfterRecoveryKeepsLocalDebt(t *testing.T) {
	r := newRig(t)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	if got := admittedOf(t, r, p, "k", 1); got != 1 { // shared: 9 left
		t.Fatalf("healthy: %d", got)
	}
	r.trip(t, p)
	if got := admittedOf(t, r, p, "k", 12); got != 9 { // local continues from 9
		t.Fatalf("local admitted %d, want 9", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
	// One weighted request the shared store refuses (it has 9 < 10 left).
	res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Cost: 10})
	if err != nil || res.Allowed {
		t.Fatalf("cost 10: %+v %v, want refused", res, err)
	}
	// The key has spent 10 of 10 within ~1 s: at 10/min nothing more is due.
	if got := admittedOf(t, r, p, "k", 10); got != 0 {
		t.Fatalf("after recovery %d more admitted (total %d in ~1s for a 10/min policy, burst 10); want 0", got, 10+got)
	}
}

// TestRefusedStackKeepsMemberDebt: the same through a login stack. A stack refused
// by one member (an exhausted IP) used to end the settlement of the other (the
// account), whose local debt was then forgotten: an attacker exhausts one address,
// tries the account once from it, and goes on from a fresh one.
func TestRefusedStackKeepsMemberDebt(t *testing.T) {
	r := newRig(t)
	account := core.MustPolicy("login-account", core.TokenBucket, core.PerMinute(5))
	ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	stack := func(acct, addr string) bool {
		reqs := []core.Request{{Policy: account, Key: acct}, {Policy: ip, Key: addr}}
		results := make([]core.Result, 2)
		ok, err := r.store.DecideStack(context.Background(), reqs, results)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !stack("victim", "ip1") { // account: 4 left in Redis
		t.Fatal("healthy stack refused")
	}
	r.trip(t, account)
	n := 0
	for i := 0; i < 10; i++ {
		if stack("victim", "ip1") {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("local admitted %d, want 4", n)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("login-account") })
	// Exhaust ip2 in Redis with other accounts, then one attempt on the victim from it.
	for i := 0; i < 20; i++ {
		stack("other"+string(rune('a'+i)), "ip2")
	}
	if stack("victim", "ip2") {
		t.Fatal("ip2 should be exhausted")
	}
	n = 0
	for i := 0; i < 5; i++ {
		if stack("victim", "ip3") {
			n++
		}
	}
	if n != 0 {
		t.Fatalf("victim account admitted %d more after recovery (total %d in ~1s, policy 5/min); want 0", n, 5+n)
	}
}
