package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// releaseLog is a shared store that counts the releases it made, per lease, and
// whose decisions (probes included) can fail while its releases succeed. onRelease,
// when set, runs before each release reaches the store, with its number (from 1).
type releaseLog struct {
	*fakeShared
	decisionsFail atomic.Bool
	armProbe      atomic.Bool  // the next probe the store answers sets probedAt
	probedAt      atomic.Int64 // the releases made before that probe; -1 until then

	mu        sync.Mutex
	released  map[string]int // "key/lease": how many times
	made      int
	onRelease func(n int)
}

func newReleaseLog(t *testing.T, clock *storetest.Clock) *releaseLog {
	l := &releaseLog{fakeShared: newFakeShared(t, clock), released: map[string]int{}}
	l.probedAt.Store(-1)
	return l
}

func (l *releaseLog) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if l.decisionsFail.Load() {
		l.calls.Add(1)
		return core.Result{}, errDown
	}
	if req.Policy.Name() == resilient.ProbePolicy.Name() && l.armProbe.CompareAndSwap(true, false) {
		l.probedAt.Store(int64(l.releases()))
	}
	return l.fakeShared.Decide(ctx, req)
}

func (l *releaseLog) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if l.decisionsFail.Load() {
		l.calls.Add(1)
		return false, errDown
	}
	return l.fakeShared.DecideStack(ctx, reqs, results)
}

// beforeEachRelease sets onRelease.
func (l *releaseLog) beforeEachRelease(hook func(n int)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onRelease = hook
}

// holdFirst is an onRelease that closes first when the first release is on its
// way and holds it until goOn is closed.
func holdFirst(first, goOn chan struct{}) func(n int) {
	return func(n int) {
		if n == 1 {
			close(first)
			<-goOn
		}
	}
}

func (l *releaseLog) Release(ctx context.Context, req core.Request, lease uint64) error {
	l.mu.Lock()
	hook, n := l.onRelease, l.made+1
	l.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	if err := l.fakeShared.Release(ctx, req, lease); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.made++
	l.released[fmt.Sprintf("%s/%d", req.Key, lease)]++
	return nil
}

// releases is how many releases the store made.
func (l *releaseLog) releases() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.made
}

// releasedOnce fails t unless the store released each of leases (key/lease) exactly
// once, and nothing else.
func (l *releaseLog) releasedOnce(t *testing.T, leases []core.Request) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, req := range leases {
		if n := l.released[fmt.Sprintf("%s/%d", req.Key, req.Lease)]; n != 1 {
			t.Errorf("lease %d of %s released %d times, want once", req.Lease, req.Key, n)
		}
	}
	if len(l.released) != len(leases) {
		t.Errorf("%d leases released, want %d", len(l.released), len(leases))
	}
}

// endedInAnOutage grants, on the shared store, both leases of export on each of keys
// keys, then fails the store and ends their requests: each release fails, and the
// lease book remembers the leases, which the shared store still holds. trip opens
// the breaker first (an outage); without it the breaker stays closed (slow calls,
// under neverOpen). It returns the leases.
func endedInAnOutage(t *testing.T, r *rig, keys int, trip bool) []core.Request {
	t.Helper()
	ctx := context.Background()
	var leases []core.Request
	for k := range keys {
		for lease := uint64(1); lease <= 2; lease++ {
			req := core.Request{Policy: export, Key: fmt.Sprintf("user:%d", k), Lease: lease}
			if res, err := r.store.Decide(ctx, req); err != nil || !res.Allowed {
				t.Fatalf("healthy: lease %d of %s: %+v, %v", lease, req.Key, res, err)
			}
			leases = append(leases, req)
		}
	}
	r.shared.fail(errDown)
	if trip {
		tripBreaker(t, r.store, perMinute5)
	}
	for _, req := range leases {
		if err := r.store.Release(ctx, req, req.Lease); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatalf("releasing lease %d of %s on a failing store: %v; want it unavailable", req.Lease, req.Key, err)
		}
	}
	return leases
}

// slotsFree fails t unless both slots of each key of leases are free on the shared
// store itself (another replica's view).
func slotsFree(t *testing.T, r *rig, leases []core.Request) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < len(leases); i += 2 {
		for lease := uint64(100); lease <= 101; lease++ {
			req := core.Request{Policy: export, Key: leases[i].Key, Lease: lease}
			if res, err := r.shared.mem.Decide(ctx, req); err != nil || !res.Allowed {
				t.Fatalf("%s on the shared store: lease %d: %+v, %v; want a free slot", req.Key, lease, res, err)
			}
		}
	}
}

// The leases whose requests ended in an outage are released by the prober once the
// breaker closes, between its probes: a breaker that opens again while they are
// being released has its probe before the releases go on. Released all in one go
// on the prober's goroutine, up to the lease book's 100,000, they held the probe of
// a breaker that opened meanwhile until the last one, and went on calling a store
// the breaker had found failing. Every lease is released exactly once in the end.
func TestEndedLeasesYieldToTheProbeOfABreakerThatOpensAgain(t *testing.T) {
	clock := storetest.NewClock()
	shared := newReleaseLog(t, clock)
	r := newRigOver(t, clock, shared)
	r.shared = shared.fakeShared
	leases := endedInAnOutage(t, r, 20, true)

	first, goOn := make(chan struct{}), make(chan struct{})
	var closeGoOn sync.Once
	t.Cleanup(func() { closeGoOn.Do(func() { close(goOn) }) }) // before the Store's Close
	shared.beforeEachRelease(holdFirst(first, goOn))
	r.shared.heal()
	clock.Advance(time.Second)
	<-first // the breaker closed, and the first release is on its way
	// The store fails again, and the breaker opens.
	shared.decisionsFail.Store(true)
	tripBreaker(t, r.store, perMinute5)
	shared.decisionsFail.Store(false)
	shared.armProbe.Store(true)
	closeGoOn.Do(func() { close(goOn) })
	// The pass ends, giving the leases it took back to the book, or releases them all.
	waitFor(t, "the pass", func() bool { return r.store.EndedLeases() > 0 || shared.releases() == len(leases) })
	clock.Advance(time.Second)
	waitFor(t, "the probe", func() bool { return shared.probedAt.Load() >= 0 })
	if got := shared.probedAt.Load(); got != 1 {
		t.Errorf("the breaker opened during the first release: its probe came after %d releases, want 1", got)
	}
	waitFor(t, "every release", func() bool {
		return shared.releases() == len(leases) && r.store.Breaker() == resilient.BreakerClosed
	})
	shared.releasedOnce(t, leases)
	slotsFree(t, r, leases)
}

// A release of an ended lease, made before its key's next decision, is a call to
// the shared store like the decision's: it reaches the observers (the latency and
// error metrics). Made outside Store.call, it was invisible.
func TestReleasesOfEndedLeasesAreReported(t *testing.T) {
	r := newRig(t, neverOpen)
	r.store.ReleasePassesByHand() // the key's decision releases them
	ctx := context.Background()
	endedInAnOutage(t, r, 1, false)
	r.shared.heal()
	calls, events := r.shared.calls.Load(), r.rec.callCount()
	if res, err := r.store.Decide(ctx, core.Request{Policy: export, Key: "user:0", Lease: 3}); err != nil || !res.Allowed {
		t.Fatalf("leases 1 and 2 ended: lease 3: %+v, %v; want admitted", res, err)
	}
	made := r.shared.calls.Load() - calls
	reported := r.rec.callCount() - events
	if made != 3 || int64(reported) != made {
		t.Errorf("the key's decision made %d calls (2 releases and the decision), %d reported; want 3 and 3", made, reported)
	}
}

// callCount is how many store calls the recorder holds.
func (r *recorder) callCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

// newReleaseRig is a rig over a releaseLog whose breaker never opens, and whose
// prober makes no release pass: the test makes them itself.
func newReleaseRig(t *testing.T) (*rig, *releaseLog) {
	t.Helper()
	clock := storetest.NewClock()
	shared := newReleaseLog(t, clock)
	r := newRigOver(t, clock, shared, neverOpen)
	r.shared = shared.fakeShared
	r.store.ReleasePassesByHand()
	return r, shared
}

// pass makes a release pass and returns whether it reports more, with the calls the
// shared store received and the store calls reported to the observers meanwhile.
func (r *rig) pass() (more bool, calls int64, reported int) {
	calls, events := r.shared.calls.Load(), r.rec.callCount()
	more = r.store.ReleasePass()
	return more, r.shared.calls.Load() - calls, r.rec.callCount() - events
}

// A pass releases at most MaxReleasesPerPass leases, each a store call the
// observers see; the passes after it release the rest, each lease exactly once,
// and every slot is free again on the shared store.
func TestReleasePassIsBounded(t *testing.T) {
	r, shared := newReleaseRig(t)
	const extra = 6
	leases := endedInAnOutage(t, r, resilient.MaxReleasesPerPass+extra/2, false)
	r.shared.heal()
	left := int64(len(leases))
	for i, want := range []int64{resilient.MaxReleasesPerPass, resilient.MaxReleasesPerPass, extra} {
		more, calls, reported := r.pass()
		left -= want
		if calls != want || int64(reported) != calls || more != (left > 0) || r.store.EndedLeases() != left {
			t.Fatalf("pass %d: %d calls, %d reported, more %v, %d leases left; want %d, %d, %v, %d",
				i+1, calls, reported, more, r.store.EndedLeases(), want, want, left > 0, left)
		}
	}
	if kinds := r.rec.errorKinds(); len(kinds) != len(leases) { // the outage's releases only
		t.Errorf("%d failed calls reported, want the %d releases of the outage", len(kinds), len(leases))
	}
	shared.releasedOnce(t, leases)
	slotsFree(t, r, leases)
}

// A pass ends at its first release that fails, which the observers see: a store
// that fails again gets one call, not one per lease, and none before a cooldown has
// passed. Every lease stays in the book, and once the store answers the next pass
// releases them all.
func TestReleasePassStopsAtTheFirstFailure(t *testing.T) {
	r, shared := newReleaseRig(t)
	leases := endedInAnOutage(t, r, 10, false) // the store still fails
	kinds := len(r.rec.errorKinds())
	if more, calls, reported := r.pass(); !more || calls != 1 || reported != 1 || r.store.EndedLeases() != int64(len(leases)) {
		t.Fatalf("failing store: more %v, %d calls, %d reported, %d leases left; want true, 1, 1, %d",
			more, calls, reported, r.store.EndedLeases(), len(leases))
	}
	if got := r.rec.errorKinds()[kinds:]; len(got) != 1 || got[0] != resilient.KindUnavailable {
		t.Errorf("the failed release reported as %v, want [unavailable]", got)
	}
	if more, calls, _ := r.pass(); !more || calls != 0 {
		t.Fatalf("right after a failed pass: more %v, %d calls; want true and none (a cooldown first)", more, calls)
	}
	r.clock.Advance(resilient.DefaultCooldown)
	if more, calls, _ := r.pass(); !more || calls != 1 {
		t.Fatalf("a cooldown later, the store still failing: more %v, %d calls; want true, 1", more, calls)
	}
	r.shared.heal()
	r.clock.Advance(resilient.DefaultCooldown)
	if more, calls, _ := r.pass(); more || calls != int64(len(leases)) || r.store.EndedLeases() != 0 {
		t.Fatalf("the store back: more %v, %d calls, %d leases left; want false, %d, 0", more, calls, r.store.EndedLeases(), len(leases))
	}
	shared.releasedOnce(t, leases)
	slotsFree(t, r, leases)
}

// A pass ends once releasePassBudget of the Store's time has passed: releases that
// each take 20 ms of it end the pass after 3 (at 0, 20 and 40 ms of 50).
func TestReleasePassIsBoundedInTime(t *testing.T) {
	r, shared := newReleaseRig(t)
	leases := endedInAnOutage(t, r, 5, false)
	r.shared.heal()
	const step = 20 * time.Millisecond
	shared.beforeEachRelease(func(int) { r.clock.Advance(step) })
	want := int64((resilient.ReleasePassBudget + step - 1) / step)
	if more, calls, _ := r.pass(); !more || calls != want {
		t.Fatalf("releases of %v each: more %v, %d calls; want true, %d", step, more, calls, want)
	}
	for i := 0; r.store.ReleasePass(); i++ {
		if i == len(leases) {
			t.Fatalf("%d leases left after %d more passes", r.store.EndedLeases(), i)
		}
	}
	shared.releasedOnce(t, leases)
}

// A lease that lapsed is not released: the shared store has let it go. Its slot was
// taken until its lease timeout, no longer.
func TestReleasePassDropsLapsedLeases(t *testing.T) {
	r, shared := newReleaseRig(t)
	leases := endedInAnOutage(t, r, 3, false)
	r.shared.heal()
	r.clock.Advance(export.Period())
	if more, calls, _ := r.pass(); more || calls != 0 || r.store.EndedLeases() != 0 {
		t.Fatalf("a lease timeout later: more %v, %d calls, %d leases left; want false, none, 0", more, calls, r.store.EndedLeases())
	}
	shared.releasedOnce(t, nil)
	slotsFree(t, r, leases)
}

// A key decided while a pass releases its leases finds none to release: each lease
// is released once, by the pass. Until the pass has released them, the shared
// store still holds them and refuses the key (fewer admissions, never more).
func TestReleasePassAndTheKeysDecisionReleaseEachLeaseOnce(t *testing.T) {
	r, shared := newReleaseRig(t)
	leases := endedInAnOutage(t, r, 3, false)
	r.shared.heal()
	first, goOn := make(chan struct{}), make(chan struct{})
	shared.beforeEachRelease(holdFirst(first, goOn))
	passed := make(chan bool, 1)
	go func() { passed <- r.store.ReleasePass() }()
	<-first
	ctx := context.Background()
	calls := r.shared.calls.Load()
	for i := 0; i < len(leases); i += 2 {
		req := core.Request{Policy: export, Key: leases[i].Key, Lease: 3}
		if res, err := r.store.Decide(ctx, req); err != nil || res.Allowed {
			t.Fatalf("%s while the pass releases its leases: %+v, %v; want refused (both still held)", req.Key, res, err)
		}
	}
	if made := r.shared.calls.Load() - calls; made != int64(len(leases)/2) {
		t.Errorf("the keys' decisions made %d calls, want %d: none releases a lease the pass took", made, len(leases)/2)
	}
	close(goOn)
	if more := <-passed; more {
		t.Fatalf("the pass left %d leases", r.store.EndedLeases())
	}
	shared.releasedOnce(t, leases)
	slotsFree(t, r, leases)
}

// endedOnOneKey makes the releases of leases from..from+n-1 of key fail on the
// failing shared store: the book remembers them as ended. It returns them.
func endedOnOneKey(t *testing.T, r *rig, key string, from, n uint64) []core.Request {
	t.Helper()
	var ended []core.Request
	for lease := from; lease < from+n; lease++ {
		req := core.Request{Policy: export, Key: key, Lease: lease}
		if err := r.store.Release(context.Background(), req, lease); !errors.Is(err, core.ErrStoreUnavailable) {
			t.Fatalf("releasing lease %d of %s on a failing store: %v; want it unavailable", lease, key, err)
		}
		ended = append(ended, req)
	}
	return ended
}

// A key with more live ended leases than a pass takes is split between passes: the
// book's count of ended leases stays that of the leases left, lapsed ones dropped,
// and each live lease is released once.
func TestReleasePassSplitsAKeyBetweenPasses(t *testing.T) {
	r, shared := newReleaseRig(t)
	r.shared.fail(errDown)
	endedOnOneKey(t, r, "one", 1, 10) // lapse before the passes
	r.clock.Advance(export.Period() / 2)
	live := endedOnOneKey(t, r, "one", 1000, resilient.MaxReleasesPerPass+45)
	live = append(live, endedOnOneKey(t, r, "two", 5000, 3)...)
	r.clock.Advance(export.Period()/2 + time.Millisecond)
	r.shared.heal()
	if got, want := r.store.EndedLeases(), int64(len(live)+10); got != want {
		t.Fatalf("before the passes: %d ended leases, want %d", got, want)
	}
	released := int64(0)
	for pass := 1; ; pass++ {
		more, calls, _ := r.pass()
		released += calls
		if calls > resilient.MaxReleasesPerPass {
			t.Fatalf("pass %d made %d calls, more than %d", pass, calls, resilient.MaxReleasesPerPass)
		}
		if got, want := r.store.EndedLeases(), int64(len(live))-released; got != want {
			t.Fatalf("after pass %d: the book counts %d ended leases, %d are left", pass, got, want)
		}
		if !more {
			break
		}
		if pass > 3 {
			t.Fatal("more than 3 passes for 304 leases")
		}
	}
	shared.releasedOnce(t, live)
}

// A release that fails while the breaker stays closed (one failed call) is released
// by the prober once the store answers, with no further decision of the key: its
// slot was held on the shared store, for every replica, until its lease timeout.
func TestEndedLeaseIsReleasedWithoutAnOutage(t *testing.T) {
	r := newRig(t, neverOpen)
	ctx := context.Background()
	req := core.Request{Policy: export, Key: "quiet", Lease: 1}
	if res, err := r.store.Decide(ctx, req); err != nil || !res.Allowed {
		t.Fatalf("healthy: %+v, %v", res, err)
	}
	r.shared.fail(errDown)
	if err := r.store.Release(ctx, req, 1); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("releasing on a failing store: %v; want it unavailable", err)
	}
	if got := r.store.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("breaker %v after one failed release; want it closed", got)
	}
	r.shared.heal()
	// A pass that met the failing store waits a cooldown of the Store's clock.
	waitFor(t, "the ended lease's release", func() bool {
		r.clock.Advance(time.Second)
		return r.store.EndedLeases() == 0
	})
	for lease := uint64(2); lease <= 3; lease++ {
		other := core.Request{Policy: export, Key: "quiet", Lease: lease}
		if res, err := r.shared.mem.Decide(ctx, other); err != nil || !res.Allowed {
			t.Fatalf("lease %d on the shared store: %+v, %v; want a free slot", lease, res, err)
		}
	}
}
