package resilient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// admittedOf decides key n times and counts the admissions.
func admittedOf(t testing.TB, r *rig, p core.Policy, key string, n int) int {
	t.Helper()
	admitted := 0
	for i := 0; i < n; i++ {
		if r.decide(t, p, key).Allowed {
			admitted++
		}
	}
	return admitted
}

// Entering Local mode never refills a bucket: a key continues from its last shared
// answer (3 of 5 spent: 2 left), and back on the shared store, which never saw those
// 2, the first answer is followed by a charge of them: the key gets 5 in all, not 5
// on Redis, 5 in memory and 2 more on return.
func TestLocalModeContinuesFromTheLastSharedAnswer(t *testing.T) {
	continueFromTheLastSharedAnswer(t, newRig(t))
}

// continueFromTheLastSharedAnswer spends 3 of 5 on the shared store, trips the
// breaker, checks what Local mode admits, heals the store and checks the settlement.
func continueFromTheLastSharedAnswer(t *testing.T, r *rig) {
	t.Helper()
	if got := admittedOf(t, r, perMinute5, "k", 3); got != 3 {
		t.Fatalf("healthy: %d admitted, want 3", got)
	}
	r.trip(t, perMinute5)
	if got := admittedOf(t, r, perMinute5, "k", 5); got != 2 {
		t.Fatalf("local mode admitted %d, want the 2 the shared store had left", got)
	}
	if got := admittedOf(t, r, perMinute5, "never-seen", 6); got != 5 {
		t.Fatalf("a key with no shared answer: %d admitted, want its whole share, 5", got)
	}
	r.shared.heal()
	r.clock.Advance(time.Second)
	waitFor(t, "recovery", func() bool { return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api") })
	// The shared store has 2 left for "k", plus what a second refilled (none at 5 a minute).
	if got := admittedOf(t, r, perMinute5, "k", 3); got != 0 {
		t.Fatalf("back on the shared store: %d admitted, want 0 (the local admissions are settled)", got)
	}
}

// Entering Local mode with WithReplicas(2) gives each replica half of what the last
// shared answer left: 4 left, 2 each.
func TestLocalModeDividesTheLastAnswer(t *testing.T) {
	r := newRig(t, resilient.WithReplicas(2))
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	if got := admittedOf(t, r, p, "k", 6); got != 6 {
		t.Fatalf("healthy: %d admitted, want 6", got)
	}
	r.trip(t, p)
	if got := admittedOf(t, r, p, "k", 5); got != 2 {
		t.Fatalf("local mode admitted %d, want half of the 4 left", got)
	}
}

// Slow calls with WithReplicas(2) spend each replica's half of its last answer, and
// Local mode continues from what they left of it: two replicas that both heard 6
// left admit 3 each while the store fails, and nothing more once the breaker opens.
// Each spending all of its last answer, they admitted 12 of the 6, and N replicas N
// times it, during every blip too short to open a breaker.
func TestSlowCallsShareTheLastAnswerAcrossReplicas(t *testing.T) {
	clock := storetest.NewClock()
	shared := newFakeShared(t, clock)
	p := core.MustPolicy("api", core.TokenBucket, core.PerMinute(10))
	var replicas []*rig
	for range 2 {
		// 4 slow calls each, then failures until the breaker opens at the fifth in a row.
		r := newRigOver(t, clock, shared, resilient.WithReplicas(2), resilient.WithFailureRate(0.5, 100, time.Minute), resilient.WithBreaker(5, time.Second))
		if got := admittedOf(t, r, p, "k", 2); got != 2 {
			t.Fatalf("healthy: %d admitted, want 2", got)
		}
		replicas = append(replicas, r)
	}
	// The first replica heard 8 left, the second 6: halves of 4 and 3 would still
	// admit one more than the 6 there are. A refused request of cost 7 tells each 6.
	for _, r := range replicas {
		res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Cost: 7})
		if err != nil || res.Allowed || res.Remaining != 6 {
			t.Fatalf("a request beyond what is left: %+v, %v", res, err)
		}
	}
	shared.fail(errDown)
	total := 0
	for i, r := range replicas {
		got := admittedOf(t, r, p, "k", 4)
		if got != 3 {
			t.Errorf("replica %d: slow calls admitted %d, want its half of the 6 left (3)", i, got)
		}
		total += got
	}
	if total > 6 {
		t.Fatalf("two replicas admitted %d from a last answer of 6 left", total)
	}
	// Local mode continues from the same share: nothing is left of it. Seeded from
	// half of what the slow calls left, each replica admitted 1 more.
	for i, r := range replicas {
		tripBreaker(t, r.store, p)
		if got := admittedOf(t, r, p, "k", 5); got != 0 {
			t.Errorf("replica %d: Local mode admitted %d after its slow calls spent its share", i, got)
		}
	}
}

// A slow call while the breaker stays closed is not an outage: no transition, and the
// key's last shared answer decides, without refill.
func TestSlowCallDecidesFromTheLastAnswer(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	if got := admittedOf(t, r, perMinute5, "k", 3); got != 3 {
		t.Fatalf("healthy: %d admitted, want 3", got)
	}
	r.shared.fail(errDown)
	if got := admittedOf(t, r, perMinute5, "k", 4); got != 2 {
		t.Fatalf("slow calls admitted %d, want the 2 left", got)
	}
	if r.store.Breaker() != resilient.BreakerClosed || r.store.Fallback("api") || len(r.rec.transitions()) != 0 {
		t.Fatalf("slow calls are not an outage: breaker %v, fallback %v, transitions %v", r.store.Breaker(), r.store.Fallback("api"), r.rec.transitions())
	}
	res, err := r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "k"})
	if err != nil || res.Allowed || res.RetryAfter <= 0 {
		t.Fatalf("a refusal from the last answer: %+v, %v; want a Retry-After", res, err)
	}
}

// A slow call's admission says when the key recovers from what it spent too, the
// RateLimit field's "t": a bucket of 20 earning 10 a second that the shared store
// left at 19 is full again in 100 ms; after 2 slow admissions, in 300 ms. Read off
// the answer alone, a slow admission that left 8 of 20 told its client "t=0".
func TestSlowCallSaysWhenItsSpendingRecovers(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	p := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	ip := core.MustPolicy("ip", core.SlidingLog, core.PerMinute(5))
	if res := r.decide(t, p, "k"); res.ResetAfter != 100*time.Millisecond {
		t.Fatalf("healthy: %+v, want full again in 100ms", res)
	}
	r.decide(t, ip, "k") // the stack's second key has an answer too
	r.shared.fail(errDown)
	r.clock.Advance(50 * time.Millisecond)
	for i, want := range []time.Duration{150 * time.Millisecond, 250 * time.Millisecond} {
		if res := r.decide(t, p, "k"); !res.Allowed || res.ResetAfter != want {
			t.Fatalf("slow call %d: %+v, want admitted, full again in %v", i+1, res, want)
		}
	}
	r.clock.Advance(time.Second) // the spending has recovered; the answer is not refilled
	res := r.decide(t, p, "k")
	if !res.Allowed || res.Remaining != 16 || res.ResetAfter != 100*time.Millisecond {
		t.Fatalf("a slow call a second later: %+v, want admitted from the answer (16 left), full again in 100ms", res)
	}
	stack := []core.Request{{Policy: p, Key: "k"}, {Policy: ip, Key: "k"}}
	results := make([]core.Result, 2)
	if allowed, err := r.store.DecideStack(context.Background(), stack, results); err != nil || !allowed || results[0].ResetAfter != 200*time.Millisecond {
		t.Fatalf("a slow stack: %v, %v, %+v; want admitted, the first key full again in 200ms", allowed, err, results[0])
	}
}

// What slow calls admitted from the last answer is charged to the shared store by the
// key's next admission there: a new answer does not grant its Remaining again.
func TestSlowCallAdmissionsAreChargedOnReturn(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	if got := admittedOf(t, r, perMinute5, "k", 1); got != 1 {
		t.Fatalf("healthy: %d admitted, want 1", got)
	}
	r.shared.fail(errDown)
	if got := admittedOf(t, r, perMinute5, "k", 2); got != 2 {
		t.Fatalf("slow calls admitted %d, want 2 of the 4 left", got)
	}
	r.shared.heal()
	res := r.decide(t, perMinute5, "k")
	if !res.Allowed || res.Remaining != 1 {
		t.Fatalf("back on the shared store: %+v, want admitted with 1 left (1 + 2 slow + this one of 5)", res)
	}
	if got := admittedOf(t, r, perMinute5, "k", 3); got != 1 {
		t.Fatalf("then %d admitted, want the 1 left: the slow admissions were granted twice", got)
	}
}

// A slow call never refills from the last answer, however old it is: once the answer's
// ResetAfter has passed the key may have recovered, or other instances may have spent
// it since; this instance has not heard, so it admits nothing the answer did not leave.
func TestSlowCallNeverRefillsAStaleAnswer(t *testing.T) {
	r := newRig(t, resilient.WithFailureRate(0.5, 100, time.Minute), neverOpen)
	if got := admittedOf(t, r, perMinute5, "k", 5); got != 5 {
		t.Fatalf("healthy: %d admitted, want 5", got)
	}
	r.shared.fail(errDown)
	r.clock.Advance(2 * time.Minute) // well past the answer's ResetAfter
	if got := admittedOf(t, r, perMinute5, "k", 3); got != 0 {
		t.Fatalf("slow calls admitted %d from an answer that left 0, want 0", got)
	}
}

// Entering Local mode continues a concurrency key with the leases its last shared
// answer said were in flight: two requests hold both slots when the store fails, so
// Local mode admits none until their lease timeout, instead of two more.
func TestLocalModeKeepsTheLeasesInFlight(t *testing.T) {
	r := newRig(t)
	p := core.MustConcurrencyPolicy("export", 2, time.Minute)
	for i := 1; i <= 2; i++ {
		res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Lease: uint64(i)})
		if err != nil || !res.Allowed {
			t.Fatalf("healthy: lease %d: %+v, %v", i, res, err)
		}
	}
	r.trip(t, p)
	for i := 3; i <= 4; i++ {
		res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Lease: uint64(i)})
		if err != nil || res.Allowed {
			t.Fatalf("local mode, both slots in flight: lease %d: %+v, %v; want refused", i, res, err)
		}
	}
	r.clock.Advance(time.Minute + time.Millisecond) // the leases lapse
	res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Lease: 5})
	if err != nil || !res.Allowed {
		t.Fatalf("local mode after the lease timeout: %+v, %v; want admitted", res, err)
	}
}
