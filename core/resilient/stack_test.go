package resilient_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

var (
	account = core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	loginIP = core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	subnet  = core.MustPolicy("login-subnet", core.FixedWindow, core.PerMinute(2))
)

func loginStack(user string) []core.Request {
	return []core.Request{
		{Policy: account, Key: "form:username:" + user},
		{Policy: loginIP, Key: "ip:192.0.2.1"},
		{Policy: subnet, Key: "net4:192.0.2.0/24"},
	}
}

// What a stack of mixed failure modes does during an outage: any Closed
// policy fails the whole stack closed; otherwise the Local policies decide together,
// all-or-nothing, and the Open ones are unenforced.
func TestStackFailureModes(t *testing.T) {
	tests := []struct {
		name  string
		modes [3]resilient.Mode // account, ip, subnet
		// per attempt: admitted, or unavailable (err)
		want []string
		// the outcomes of the third attempt, per policy
		third []string
	}{
		{
			name:  "all open",
			modes: [3]resilient.Mode{resilient.Open, resilient.Open, resilient.Open},
			want:  []string{"admitted", "admitted", "admitted"},
			third: []string{"login-account:unenforced/open", "login-ip:unenforced/open", "login-subnet:unenforced/open"},
		},
		{
			name:  "one closed fails the stack closed",
			modes: [3]resilient.Mode{resilient.Local, resilient.Open, resilient.Closed},
			want:  []string{"unavailable", "unavailable", "unavailable"},
			third: []string{"login-account:unavailable/closed", "login-ip:unavailable/closed", "login-subnet:unavailable/closed"},
		},
		{
			name:  "local subnet (2 a minute) refuses the third, open members uncharged",
			modes: [3]resilient.Mode{resilient.Open, resilient.Open, resilient.Local},
			want:  []string{"admitted", "admitted", "refused"},
			third: []string{"login-account:uncharged/open", "login-ip:uncharged/open", "login-subnet:denied/local"},
		},
		{
			name:  "all local: all-or-nothing in process",
			modes: [3]resilient.Mode{resilient.Local, resilient.Local, resilient.Local},
			want:  []string{"admitted", "admitted", "refused"},
			third: []string{"login-account:uncharged/local", "login-ip:uncharged/local", "login-subnet:denied/local"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t,
				resilient.WithPolicyMode("login-account", tt.modes[0]),
				resilient.WithPolicyMode("login-ip", tt.modes[1]),
				resilient.WithPolicyMode("login-subnet", tt.modes[2]))
			r.trip(t, account) // an established outage: the breaker is open
			for i, want := range tt.want {
				r.rec.decisions = nil
				results := make([]core.Result, 3)
				allowed, err := r.store.DecideStack(context.Background(), loginStack("alice"), results)
				got := "refused"
				var unavailable *resilient.UnavailableError
				switch {
				case errors.As(err, &unavailable):
					got = "unavailable"
					if !slices.Equal(unavailable.Policies, []string{"login-subnet"}) || !errors.Is(err, core.ErrStoreUnavailable) {
						t.Fatalf("attempt %d: %+v", i+1, unavailable)
					}
				case err != nil:
					t.Fatalf("attempt %d: %v", i+1, err)
				case allowed:
					got = "admitted"
				}
				if got != want {
					t.Fatalf("attempt %d: %s, want %s (results %+v)", i+1, got, want, results)
				}
				for j := range results {
					open := tt.modes[j] == resilient.Open
					if err == nil && (results[j].Unenforced != open || results[j].Policy != loginStack("")[j].Policy.Name()) {
						t.Fatalf("attempt %d: result %d %+v", i+1, j, results[j])
					}
					if !allowed && results[j].Allowed {
						t.Fatalf("attempt %d: refused stack with an admitted member %+v", i+1, results[j])
					}
				}
			}
			if got := r.rec.outcomes(); !slices.Equal(got, tt.third) {
				t.Fatalf("third attempt outcomes %v, want %v", got, tt.third)
			}
		})
	}
}

// In Local mode a refused stack charges nothing: the account admits its fifth attempt
// after the subnet refused the third.
func TestLocalStackChargesNothingWhenRefused(t *testing.T) {
	r := newRig(t)
	r.trip(t, account)
	results := make([]core.Result, 3)
	for i := 0; i < 4; i++ { // subnet admits 2, refuses 2
		r.store.DecideStack(context.Background(), loginStack("alice"), results)
	}
	res, err := r.store.Decide(context.Background(), core.Request{Policy: account, Key: "form:username:alice"})
	if err != nil || !res.Allowed || res.Remaining != 2 {
		t.Fatalf("account after 2 admitted and 2 refused stacks: %+v %v, want remaining 2 after this one", res, err)
	}
}

// stackAdmits decides the login stack for user n times and counts the admissions.
func stackAdmits(t *testing.T, r *rig, user string, n int) int {
	t.Helper()
	admitted := 0
	results := make([]core.Result, 3)
	for i := 0; i < n; i++ {
		ok, err := r.store.DecideStack(context.Background(), loginStack(user), results)
		if err != nil {
			t.Fatalf("stack %d: %v", i, err)
		}
		if ok {
			admitted++
		}
	}
	return admitted
}

// A stack decided in Local mode during an outage is settled on return, as a single
// policy is: the subnet (2 a minute) admitted 1 on the shared store and 1 in memory,
// so back on the shared store, which never saw the second, the stack is refused, and
// what the shared store charged for it is given back.
func TestLocalStackIsSettledOnReturn(t *testing.T) {
	r := backFromLocalStacks(t)
	results := make([]core.Result, 3)
	ok, err := r.store.DecideStack(context.Background(), loginStack("alice"), results)
	if err != nil || ok {
		t.Fatalf("back on the shared store: admitted %v, %v; want refused: the subnet's 2 were spent, 1 in memory", ok, err)
	}
	if results[2].RetryAfter <= 0 || results[0].Allowed || results[1].Allowed {
		t.Fatalf("refused stack: %+v; want the subnet to refuse with a Retry-After and nothing admitted", results)
	}
	// The refusal gave back the shared store's charges: the account (5 a minute) spent
	// 1 on the shared store and 1 in memory (settled above), so it admits 3 more.
	if got := admittedOf(t, r, account, "form:username:alice", 5); got != 3 {
		t.Fatalf("the account then admits %d, want 3: a refused stack must not keep its charge", got)
	}
}

// A stack whose call is slow (the breakers stay closed) and whose members Redis
// never answered for is refused with a short Retry-After, as a single request is:
// nothing is known, and instances granting their shares in memory would over-grant
// together.
func TestSlowStackOfUnknownKeysIsRefused(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	r.shared.fail(errDown)
	results := make([]core.Result, 3)
	ok, err := r.store.DecideStack(context.Background(), loginStack("bob"), results)
	if err != nil || ok {
		t.Fatalf("slow stack of unknown keys: admitted %v, %v; want refused", ok, err)
	}
	for i, res := range results {
		if res.Allowed || res.RetryAfter <= 0 {
			t.Fatalf("member %d: %+v, want refused with a Retry-After", i, res)
		}
	}
	r.shared.heal()
	if got := stackAdmits(t, r, "bob", 6); got != 2 {
		t.Fatalf("then %d admitted, want the subnet's 2: the slow stack charged nothing", got)
	}
}

// backFromLocalStacks is a rig whose login stack for alice admitted 1 on the shared
// store, then, in Local mode, the 1 more its subnet (2 a minute) had left, and which
// is back on the shared store.
func backFromLocalStacks(t *testing.T) *rig {
	t.Helper()
	r := newRig(t)
	if got := stackAdmits(t, r, "alice", 1); got != 1 {
		t.Fatalf("healthy: %d admitted, want 1", got)
	}
	r.trip(t, account)
	if got := stackAdmits(t, r, "alice", 3); got != 1 {
		t.Fatalf("local mode admitted %d stacks, want the 1 the subnet had left", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("login-subnet") })
	return r
}

// A stack refused on return because a member's local allowance cannot pay for it
// gives back what the shared store charged for it, that member included, so that
// member's settlement must leave the shared store holding no more than its
// allowance: the subnet (2 a minute) spent 1 on the shared store and 1 in memory, so
// after the refused stack it admits nothing more this minute. Charging it only what
// a kept charge would need left the given-back unit spendable: a third admission.
func TestRefusedStackOnReturnLeavesTheShortMemberSpent(t *testing.T) {
	r := backFromLocalStacks(t)
	results := make([]core.Result, 3)
	if ok, err := r.store.DecideStack(context.Background(), loginStack("alice"), results); err != nil || ok {
		t.Fatalf("back on the shared store: admitted %v, %v; want refused by the subnet", ok, err)
	}
	// Past the pre-limiter's memory of that refusal, still in the same minute.
	r.clock.Advance(31 * time.Second)
	sub := loginStack("alice")[2]
	if got := admittedOf(t, r, sub.Policy, sub.Key, 3); got != 0 {
		t.Fatalf("the subnet then admits %d more this minute, want 0: it spent its 2", got)
	}
}
