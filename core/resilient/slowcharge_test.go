package resilient_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// whileInFlight makes the rig's shared store run decide once, while its first call
// after this is still in flight (it has decided, not yet answered): with
// WithMaxInFlight(1), that decision is a slow call.
func whileInFlight(r *rig, decide func()) {
	var once sync.Once
	r.shared.mu.Lock()
	r.shared.afterDecide = func() { once.Do(decide) }
	r.shared.mu.Unlock()
}

// A slow call admitted from the key's last answer spends a unit the shared store
// never saw. The key's next admission there charges it; when the shared store has no
// room left for it, that admission was granted the same unit and is refused: its
// charge stands for the slow call's. The answer left 1 (2 a minute); B is in flight
// when A, finding the in-flight bound taken, is admitted from that answer; the store
// then admits B with the same unit. Dropping the charge admitted both.
func TestSlowAdmissionIsNotGrantedAgain(t *testing.T) {
	r := newRig(t, resilient.WithMaxInFlight(1), resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))
	if res := r.decide(t, p, "k"); !res.Allowed || res.Remaining != 1 {
		t.Fatalf("healthy: %+v; want admitted with 1 left", res)
	}
	var a core.Result
	whileInFlight(r, func() { a = r.decide(t, p, "k") })
	b := r.decide(t, p, "k")
	if !a.Allowed || b.Allowed || b.RetryAfter <= 0 {
		t.Fatalf("A, the slow call: %+v; B, the store's admission of the same unit: %+v; want A admitted, B refused with a Retry-After", a, b)
	}
	if got := r.rec.outcomes(); !slices.Contains(got, "api:allowed/last-shared") {
		t.Fatalf("A was not decided from the last answer: %v", got)
	}
	if got := admittedOf(t, r, p, "k", 2); got != 0 {
		t.Fatalf("then %d more admitted, want 0: the key spent its 2", got)
	}
}

// The same for a stack: A, a slow login decided from the members' last answers,
// takes the subnet's last unit (2 a minute); the store then admits B with it. B is
// refused as a whole: the subnet's charge stands for A's, the others' are given
// back.
func TestSlowStackAdmissionIsNotGrantedAgain(t *testing.T) {
	r := newRig(t, resilient.WithMaxInFlight(1), resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	if got := stackAdmits(t, r, "alice", 1); got != 1 {
		t.Fatalf("healthy: %d admitted, want 1", got)
	}
	var a bool
	whileInFlight(r, func() { a = stackAdmits(t, r, "alice", 1) == 1 })
	results := make([]core.Result, 3)
	b, err := r.store.DecideStack(context.Background(), loginStack("alice"), results)
	if err != nil || !a || b || results[2].RetryAfter <= 0 {
		t.Fatalf("A admitted %v; B admitted %v, %v, %+v; want A admitted, B refused by the subnet", a, b, err, results)
	}
	r.clock.Advance(31 * time.Second) // past the pre-limiter's memory of the refusal, in the same minute
	sub := loginStack("alice")[2]
	if got := admittedOf(t, r, sub.Policy, sub.Key, 3); got != 0 {
		t.Fatalf("the subnet then admits %d more this minute, want 0: it spent its 2", got)
	}
	acc := loginStack("alice")[0]
	if got := admittedOf(t, r, acc.Policy, acc.Key, 5); got != 3 {
		t.Fatalf("the account then admits %d of 5, want 3: it spent 2 (B's charge given back)", got)
	}
}

// A slow admission stays owed past a refusal: the key's next shared answer refuses it
// (another instance spent the unit the last answer left), so there is no charge to
// stand for the slow call's and no room to charge it; the key's next admission there
// pays it. Dropping it with the refusal let the key admit 4 in 31s at 2 a minute.
func TestSlowAdmissionIsOwedPastARefusal(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))
	if res := r.decide(t, p, "k"); !res.Allowed || res.Remaining != 1 {
		t.Fatalf("healthy: %+v; want admitted with 1 left", res)
	}
	// Another instance spends the unit the answer left; this one does not hear of it.
	if res, err := r.shared.mem.Decide(context.Background(), core.Request{Policy: p, Key: "k"}); err != nil || !res.Allowed {
		t.Fatalf("another instance: %+v, %v", res, err)
	}
	r.shared.fail(errDown)
	if res := r.decide(t, p, "k"); !res.Allowed {
		t.Fatalf("a slow call on an answer that left 1: %+v; want admitted", res)
	}
	r.shared.heal()
	if res := r.decide(t, p, "k"); res.Allowed {
		t.Fatalf("back on the shared store, which has nothing left: %+v; want refused", res)
	}
	r.clock.Advance(31 * time.Second) // one unit back, past the refusal's Retry-After
	calls := r.shared.calls.Load()
	if res := r.decide(t, p, "k"); res.Allowed || r.shared.calls.Load() == calls {
		t.Fatalf("the unit back, owed to the slow admission: %+v; want refused by the shared store", res)
	}
}
