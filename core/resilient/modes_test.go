package resilient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

var perMinute5 = core.MustPolicy("api", core.TokenBucket, core.PerMinute(5))

// Healthy: the shared store decides, and nothing falls back.
func TestSharedDecidesWhileHealthy(t *testing.T) {
	r := newRig(t)
	for i := 0; i < 6; i++ {
		res := r.decide(t, perMinute5, "ip:192.0.2.1")
		if res.Allowed != (i < 5) || res.Unenforced {
			t.Fatalf("decision %d: %+v", i+1, res)
		}
	}
	if got := r.shared.calls.Load(); got != 6 {
		t.Fatalf("%d shared calls, want 6", got)
	}
	if len(r.rec.fallbacks) != 0 || r.store.Fallback("api") {
		t.Fatalf("fallbacks %v", r.rec.fallbacks)
	}
}

// Open mode admits every request unenforced while the store fails, and says so.
func TestOpenModeAdmitsUnenforced(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open))
	r.shared.fail(errDown)
	for i := 0; i < 20; i++ {
		res := r.decide(t, perMinute5, "ip:192.0.2.1")
		if !res.Allowed || !res.Unenforced || res.Policy != "api" || res.Limit != 5 {
			t.Fatalf("decision %d: %+v, want admitted unenforced", i+1, res)
		}
	}
	waitFor(t, "the breaker to open", func() bool { return r.store.Breaker() == resilient.BreakerOpen })
	if res := r.decide(t, perMinute5, "ip:192.0.2.1"); !res.Allowed || !res.Unenforced {
		t.Fatalf("with the breaker open: %+v, want admitted unenforced", res)
	}
	if !r.store.Fallback("api") || !slices.Equal(r.rec.transitions(), []string{"api>open"}) {
		t.Fatalf("fallback %v, transitions %v", r.store.Fallback("api"), r.rec.transitions())
	}
}

// Open mode counts nothing, so it reports what the key's last shared answer left, not
// a fresh bucket's numbers: a client that had spent most of its quota is not told it
// is back. A key never answered reports the whole capacity. (A key the shared store
// refused stays refused by the pre-limiter until its Retry-After.)
func TestOpenModeReportsTheLastAnswer(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open))
	for range 4 { // 4 of the minute's 5, spent on the shared store
		r.decide(t, perMinute5, "spent")
	}
	r.shared.fail(errDown)
	waitFor(t, "the breaker to open", func() bool {
		r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "other"})
		return r.store.Breaker() == resilient.BreakerOpen
	})
	for range 3 { // counted nowhere: each reports the same
		res := r.decide(t, perMinute5, "spent")
		if !res.Allowed || !res.Unenforced || res.Remaining != 1 || res.ResetAfter <= 0 {
			t.Fatalf("a key with 1 left in Open mode: %+v, want admitted unenforced with 1 left and its reset", res)
		}
	}
	if res := r.decide(t, perMinute5, "never-seen"); !res.Allowed || !res.Unenforced || res.Remaining != 5 {
		t.Fatalf("a key never answered in Open mode: %+v, want admitted unenforced with 5 left", res)
	}
}

// Closed mode refuses with an *UnavailableError that wraps core.ErrStoreUnavailable
// and hints when the breaker will probe.
func TestClosedModeRefusesUnavailable(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Closed))
	r.shared.fail(errDown)
	for i := 0; i < 3; i++ {
		_, err := r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "ip:192.0.2.1"})
		var unavailable *resilient.UnavailableError
		// the cause: the store's error, or the open breaker once the failures opened it
		if !errors.As(err, &unavailable) || !errors.Is(err, core.ErrStoreUnavailable) || !errors.Is(err, errDown) && !errors.Is(err, resilient.ErrBreakerOpen) {
			t.Fatalf("decision %d: %v, want an UnavailableError wrapping ErrStoreUnavailable and the cause", i+1, err)
		}
		if unavailable.RetryAfter != time.Second || !slices.Equal(unavailable.Policies, []string{"api"}) {
			t.Fatalf("decision %d: %+v", i+1, unavailable)
		}
	}
	waitFor(t, "the breaker to open", func() bool { return r.store.Breaker() == resilient.BreakerOpen })
	r.clock.Advance(400 * time.Millisecond)
	_, err := r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "ip:192.0.2.1"})
	var unavailable *resilient.UnavailableError
	if !errors.As(err, &unavailable) || !errors.Is(err, resilient.ErrBreakerOpen) || unavailable.RetryAfter != 600*time.Millisecond {
		t.Fatalf("with the breaker open: %v (%+v), want the time until the probe, 600ms", err, unavailable)
	}
}

// Local mode enforces the policy in process memory, exactly, and stricter with WithReplicas.
func TestLocalModeEnforcesInProcess(t *testing.T) {
	for _, tt := range []struct {
		replicas, admitted int
	}{{1, 5}, {2, 2}, {5, 1}, {10, 1}} {
		r := newRig(t, resilient.WithReplicas(tt.replicas))
		r.trip(t, perMinute5)
		admitted := 0
		for i := 0; i < 20; i++ {
			res := r.decide(t, perMinute5, "ip:192.0.2.1")
			if res.Unenforced {
				t.Fatalf("a local decision is enforced: %+v", res)
			}
			if res.Allowed {
				admitted++
			} else if res.RetryAfter <= 0 {
				t.Fatalf("a local refusal without Retry-After: %+v", res)
			}
		}
		if admitted != tt.admitted {
			t.Errorf("replicas %d: admitted %d of 20, want %d", tt.replicas, admitted, tt.admitted)
		}
		// Time recovers the local allowance at 1/replicas of the rate: one token every
		// replicas/5 minutes.
		r.clock.Advance(time.Duration(tt.replicas)*time.Minute/5 - time.Millisecond)
		if res := r.decide(t, perMinute5, "ip:192.0.2.1"); res.Allowed {
			t.Errorf("replicas %d: admitted before a token was earned: %+v", tt.replicas, res)
		}
		r.clock.Advance(time.Millisecond)
		if res := r.decide(t, perMinute5, "ip:192.0.2.1"); !res.Allowed {
			t.Errorf("replicas %d: refused once a token was earned: %+v", tt.replicas, res)
		}
	}
}

// WithDegrade replaces the local policy; a function that changes the name or returns
// an invalid policy fails the decision loudly.
func TestLocalModeDegrade(t *testing.T) {
	half := func(p core.Policy) core.Policy {
		return core.MustPolicy(p.Name(), p.Algorithm(), core.Rate{Limit: 2, Period: p.Period()})
	}
	r := newRig(t, resilient.WithDegrade(half))
	r.trip(t, perMinute5)
	admitted := 0
	for i := 0; i < 10; i++ {
		if r.decide(t, perMinute5, "k").Allowed {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("admitted %d, want 2", admitted)
	}
	bad := newRig(t, resilient.WithDegrade(func(p core.Policy) core.Policy {
		return core.MustPolicy("other", p.Algorithm(), p.Rate())
	}))
	bad.trip(t, perMinute5)
	if _, err := bad.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "k"}); !errors.Is(err, core.ErrInvalidPolicy) || !strings.Contains(err.Error(), `"api"`) {
		t.Fatalf("renaming degrade: %v", err)
	}
}

// A request that costs more than the degraded capacity spends all of it.
func TestLocalModeClampsCost(t *testing.T) {
	p := core.MustPolicy("report", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	r := newRig(t, resilient.WithReplicas(8)) // burst 20/8 = 2 locally
	r.trip(t, p)
	res, err := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Cost: 5})
	if err != nil || !res.Allowed || res.Limit != 2 || res.Remaining != 0 {
		t.Fatalf("cost 5 on a local burst of 2: %+v %v, want admitted, spending all", res, err)
	}
	if res, _ := r.store.Decide(context.Background(), core.Request{Policy: p, Key: "k", Cost: 5}); res.Allowed {
		t.Fatalf("second cost-5 request admitted at once: %+v", res)
	}
}

// The breaker stops calling a failing store, probes it in the background after the
// cooldown, without traffic, and returns to shared enforcement on its own; the
// fallback is logged at warn with its duration and reported to observers.
func TestBreakerRecovery(t *testing.T) {
	r := newRig(t)
	r.trip(t, perMinute5)
	r.decide(t, perMinute5, "k") // enters Local mode
	calls := r.shared.calls.Load()
	for i := 0; i < 10; i++ {
		r.decide(t, perMinute5, "k")
	}
	if got := r.shared.calls.Load(); got != calls {
		t.Fatalf("the open breaker let %d calls through", got-calls)
	}
	r.clock.Advance(time.Second)
	waitFor(t, "the background probe", func() bool { return r.shared.calls.Load() == calls+1 })
	r.probeTimed(t)
	if got := r.shared.calls.Load(); got != calls+1 || r.store.Breaker() != resilient.BreakerOpen {
		t.Fatalf("one failed probe: %d calls, breaker %v", got-calls, r.store.Breaker())
	}
	r.shared.heal()
	r.clock.Advance(1200 * time.Millisecond)
	waitFor(t, "recovery without traffic", func() bool {
		return r.store.Breaker() == resilient.BreakerClosed && !r.store.Fallback("api")
	})
	// The prober logs the return and tells the Monitors after the fallback has ended.
	waitFor(t, "the return reported", func() bool { return len(r.rec.transitions()) >= 2 })
	if res := r.decide(t, perMinute5, "fresh"); !res.Allowed || res.Unenforced {
		t.Fatalf("after recovery: %+v", res)
	}
	if got := r.rec.transitions(); !slices.Equal(got, []string{"api>local", "api>shared"}) {
		t.Fatalf("transitions %v", got)
	}
	if d := r.rec.fallbacks[1].Duration; d != 2200*time.Millisecond {
		t.Fatalf("fallback lasted %v, want 2.2s", d)
	}
	log := r.log.String()
	for _, want := range []string{"policy api falls back to local mode", "circuit breaker open", "policy api back on the shared store after 2.2s", "shared store back after 2.2s"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(log, "level=WARN msg=\"ratelimit: shared store back after 2.2s") {
		t.Errorf("the recovery is not logged at warn:\n%s", log)
	}
}

// waitFor polls cond until it holds, and fails t after 10 seconds of real time: the
// background prober runs on real time while the test's clock is virtual.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// A client that went away (cancelled or expired ctx) is not a store failure: its error
// is returned, nothing is counted, the breaker stays closed, nothing falls back.
func TestClientCancellationIsNotAStoreFailure(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open))
	r.shared.set(nil, true, false) // hangs until ctx ends
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 5; i++ {
		if _, err := r.store.Decide(cancelled, core.Request{Policy: perMinute5, Key: "k"}); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled ctx: %v", err)
		}
		expiring, cancel := context.WithTimeout(context.Background(), testDeadline/4)
		_, err := r.store.Decide(expiring, core.Request{Policy: perMinute5, Key: "k"})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("expired ctx: %v", err)
		}
	}
	if r.store.Breaker() != resilient.BreakerClosed || len(r.rec.errorKinds()) != 0 || len(r.rec.fallbacks) != 0 {
		t.Fatalf("breaker %v, errors %v, fallbacks %v", r.store.Breaker(), r.rec.errorKinds(), r.rec.fallbacks)
	}
}

// A store that hangs, even one that ignores ctx, costs a decision at most the deadline;
// Close waits for the abandoned call.
func TestDeadlineHoldsForClientsIgnoringContext(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open), resilient.WithDeadline(testDeadline))
	r.shared.set(nil, true, true)
	start := time.Now()
	res := r.decide(t, perMinute5, "k")
	if waited := time.Since(start); waited > testDeadline+200*time.Millisecond {
		t.Fatalf("waited %v with a deadline of %v", waited, testDeadline)
	}
	if !res.Unenforced || !slices.Equal(r.rec.errorKinds(), []resilient.ErrorKind{resilient.KindTimeout}) {
		t.Fatalf("result %+v, errors %v", res, r.rec.errorKinds())
	}
	if r.shared.finished.Load() != 0 {
		t.Fatal("the hung call finished early")
	}
	closed := make(chan struct{})
	go func() { r.store.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a call was still running")
	case <-time.After(20 * time.Millisecond):
	}
	close(r.shared.release)
	<-closed
	if r.shared.finished.Load() != 1 || !r.shared.closed.Load() {
		t.Fatalf("after Close: %d calls finished, shared closed %v", r.shared.finished.Load(), r.shared.closed.Load())
	}
}

// Calls beyond WithMaxInFlight are not sent; they fail as overload.
func TestMaxInFlight(t *testing.T) {
	r := newRig(t, resilient.WithMode(resilient.Open), resilient.WithMaxInFlight(1), resilient.WithBreaker(100, time.Second), resilient.WithDeadline(testDeadline))
	r.shared.set(nil, true, true)
	r.decide(t, perMinute5, "k") // abandoned, still in flight
	// The abandoned call runs on its own goroutine, which a loaded machine may not
	// have started by the deadline.
	waitFor(t, "the abandoned call to reach the store", func() bool { return r.shared.calls.Load() > 0 })
	r.decide(t, perMinute5, "k")
	if got := r.shared.calls.Load(); got != 1 {
		t.Fatalf("%d calls reached the store, want 1", got)
	}
	if got := r.rec.errorKinds(); !slices.Equal(got, []resilient.ErrorKind{resilient.KindTimeout, resilient.KindOverload}) {
		t.Fatalf("errors %v", got)
	}
}

// Permanent errors are returned in every mode, never turned into "allowed", never trip
// the breaker, and are logged at error level.
func TestPermanentErrorsAreNeverAllowed(t *testing.T) {
	for _, mode := range []resilient.Mode{resilient.Open, resilient.Closed, resilient.Local} {
		r := newRig(t, resilient.WithMode(mode))
		r.shared.fail(errWrongType)
		for i := 0; i < 5; i++ {
			res, err := r.store.Decide(context.Background(), core.Request{Policy: perMinute5, Key: "k"})
			if !errors.Is(err, resilient.ErrPermanent) || !errors.Is(err, errWrongType) || res.Allowed {
				t.Fatalf("%s: %+v %v, want an error wrapping ErrPermanent", mode, res, err)
			}
			results := make([]core.Result, 1)
			if allowed, err := r.store.DecideStack(context.Background(), []core.Request{{Policy: perMinute5, Key: "k"}}, results); allowed || !errors.Is(err, resilient.ErrPermanent) {
				t.Fatalf("%s stack: %v %v", mode, allowed, err)
			}
		}
		if r.store.Breaker() != resilient.BreakerClosed || len(r.rec.fallbacks) != 0 {
			t.Fatalf("%s: breaker %v, fallbacks %v", mode, r.store.Breaker(), r.rec.fallbacks)
		}
		if log := r.log.String(); strings.Count(log, "level=ERROR") != 1 || !strings.Contains(log, "WRONGTYPE") {
			t.Fatalf("%s: want one error log (one a second) naming the error:\n%s", mode, log)
		}
		if got := r.rec.outcomes(); got[0] != "api:error/shared" {
			t.Fatalf("%s: outcomes %v", mode, got)
		}
	}
}

// A probe answered with an error that is not a decision does not close the breaker:
// only a decision shows that decisions work again.
func TestProbeAnsweredWithAnErrorKeepsTheBreakerOpen(t *testing.T) {
	r := newRig(t)
	r.trip(t, perMinute5)
	r.shared.fail(errWrongType)
	for probe := 0; probe < 2; probe++ { // two in a row close a breaker
		calls := r.shared.calls.Load()
		// The clock moves on inside the wait: a probe's outcome is recorded after its
		// call returns, and on a loaded machine after an advance made for the next
		// probe, whose due time it then sets from the advanced clock.
		waitFor(t, "a probe", func() bool {
			r.clock.Advance(100 * time.Millisecond)
			return r.shared.calls.Load() > calls
		})
	}
	if b := r.store.Breaker(); b == resilient.BreakerClosed {
		t.Fatalf("breaker %v after probes answered %v; want it still open", b, errWrongType)
	}
	r.shared.heal()
	waitFor(t, "recovery", func() bool {
		r.clock.Advance(100 * time.Millisecond) // probes fall due
		return r.store.Breaker() == resilient.BreakerClosed
	})
}
