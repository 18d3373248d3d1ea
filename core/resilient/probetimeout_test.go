package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// errDialTimeout is a decision that failed on the client's own dial timeout, as
// redisstore wraps it: a net.Error whose Timeout is true, before any deadline of the
// caller's.
var errDialTimeout = fmt.Errorf("policy %q: %w: %w", "api", core.ErrStoreUnavailable,
	&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded})

// probeTimesOut is a store whose traffic calls fail with trafficErr, and whose first
// timeouts probe calls fail at once with the client's own timeout; later probe calls
// are answered. Each probe call's time is kept.
type probeTimesOut struct {
	*fakeShared
	trafficErr error
	timeouts   int64
	probes     atomic.Int64

	mu      sync.Mutex
	probeAt []time.Time
}

func (f *probeTimesOut) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() != resilient.ProbePolicy.Name() {
		return core.Result{}, f.trafficErr
	}
	f.mu.Lock()
	f.probeAt = append(f.probeAt, time.Now())
	f.mu.Unlock()
	if f.probes.Add(1) <= f.timeouts {
		return core.Result{}, errDialTimeout
	}
	return f.fakeShared.Decide(ctx, req)
}

// A confirming probe has all of its budget (five ceilings of the deadline): a timeout
// of the client's own that ends its call sooner, such as a dial timeout noticed late on
// a saturated CPU, is tried again, and the store's answer then keeps the breaker
// closed. A probe that gave up at the first timeout opened the breaker of a healthy
// Redis, and Local mode over-granted (TestRedisSaturatedClientStaysWithinBound).
func TestConfirmingProbeRetriesTheClientsOwnTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		confirm func(t *testing.T, r *rig)
	}{
		{"traffic's failures", func(t *testing.T, r *rig) {
			for i := 0; i < 3; i++ { // WithBreaker(3, …): three in a row ask for the probe
				r.store.Decide(context.Background(), core.Request{Policy: tenPerMinute, Key: fmt.Sprint("k", i)})
			}
		}},
		{"a start-up check", func(t *testing.T, r *rig) { r.store.Check(context.Background()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := storetest.NewClock()
			f := &probeTimesOut{fakeShared: newFakeShared(t, clock), trafficErr: errDialTimeout, timeouts: 2}
			if tc.name == "a start-up check" {
				f.trafficErr = errDown
			}
			r := newRigOver(t, clock, f, resilient.WithDeadline(testDeadline))
			tc.confirm(t, r)
			waitFor(t, "the probe's outcome", func() bool {
				return f.probes.Load() >= 3 && !r.store.Confirming() || r.store.Breaker() == resilient.BreakerOpen
			})
			if got := r.store.Breaker(); got != resilient.BreakerClosed {
				t.Fatalf("breaker %v after %d calls of the probe, the third answered; want closed", got, f.probes.Load())
			}
		})
	}
}

// A probe whose every call ends in the client's own timeout confirms the outage. Its
// calls are spread over its second, at most ProbeAttempts of them: go-redis repeats its
// last dial error at once after many failed dials, and calls back to back would have
// spent none of the second. A refused connection confirms it at the first call.
func TestConfirmingProbeEndsOnAnOutage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		timeouts  int64
		wantCalls int64
	}{
		{"every call times out", errDialTimeout, 1 << 40, resilient.ProbeAttempts},
		{"refused", errDown, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := storetest.NewClock()
			f := &probeTimesOut{fakeShared: newFakeShared(t, clock), trafficErr: tc.err, timeouts: tc.timeouts}
			if tc.timeouts == 0 {
				f.fakeShared.fail(errDown) // the probes fail as the traffic does
			}
			r := newRigOver(t, clock, f, resilient.WithDeadline(testDeadline))
			r.store.Check(context.Background())
			if got := r.store.Breaker(); got != resilient.BreakerOpen {
				t.Fatalf("breaker %v after the probe failed, want open", got)
			}
			calls := f.probes.Load()
			if calls < 1 || calls > tc.wantCalls || tc.wantCalls > 1 && calls < tc.wantCalls-1 {
				t.Fatalf("the probe made %d calls, want %d (one fewer when its timer ran late)", calls, tc.wantCalls)
			}
			// The budget is 5 ceilings of the deadline, 1 s: a tenth of it between
			// the starts of calls, so at least (calls-2) tenths from the first to the last.
			span := f.probeAt[len(f.probeAt)-1].Sub(f.probeAt[0])
			if want := time.Duration(calls-2) * 100 * time.Millisecond; span < want {
				t.Fatalf("the probe's %d calls spanned %v, want at least %v: spread over its second", calls, span, want)
			}
		})
	}
}

// A Check whose ctx ends while its probe retries the client's own timeouts opens the
// breaker: the store did not answer for as long as the caller could wait. (A ctx
// cancelled before any call ended opens nothing: TestCheckHonoursItsCtxWhileConfirming.)
func TestCheckWithAShortDeadlineStillConfirms(t *testing.T) {
	clock := storetest.NewClock()
	f := &probeTimesOut{fakeShared: newFakeShared(t, clock), trafficErr: errDialTimeout, timeouts: 1 << 40}
	r := newRigOver(t, clock, f, resilient.WithDeadline(testDeadline))
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	if err := r.store.Check(ctx); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("Check: %v, want unavailable", err)
	}
	if got := r.store.Breaker(); got != resilient.BreakerOpen {
		t.Fatalf("breaker %v after %d probe calls that timed out until Check's deadline, want open", got, f.probes.Load())
	}
}

// twoMastersOneTimesOut is twoMasters whose stuck master's calls end in the client's
// own timeout, counting the probe calls on checkKey.
type twoMastersOneTimesOut struct {
	*twoMasters
	checkKeyProbes atomic.Int64
}

func (f *twoMastersOneTimesOut) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() == resilient.ProbePolicy.Name() && req.Key == resilient.CheckKey {
		f.checkKeyProbes.Add(1)
	}
	if f.stuck(req.Policy, req.Key) {
		return core.Result{}, errDialTimeout
	}
	return f.fakeShared.Decide(ctx, req)
}

// The store-wide probe asks two keys on two masters at once; when one answers, the
// other's probe ends, instead of retrying a stuck master's timeouts for the rest of
// its second.
func TestStoreWideProbeEndsWhenEitherKeyAnswers(t *testing.T) {
	clock := storetest.NewClock()
	f := &twoMastersOneTimesOut{twoMasters: &twoMasters{fakeShared: newFakeShared(t, clock)}}
	first := resilient.CheckPolicies()[0]
	f.stuckHalf = resilient.SlotOf(f.Key(first, resilient.CheckKey)) >= 8192 // checkKey's master is stuck
	s, err := resilient.New(f, resilient.WithClock(clock.Now), resilient.WithDeadline(testDeadline), resilient.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Check(context.Background())
	if got := s.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("one stuck master of two opened the store-wide breaker (%v)", got)
	}
	if got := f.checkKeyProbes.Load(); got > 2 {
		t.Fatalf("the store-wide probe called checkKey's stuck master %d times after the other master answered, want at most 2", got)
	}
}

// hangsTraffic is a store whose traffic calls hang, ignoring their context, until
// release is closed, holding their in-flight slots; probe calls are answered.
type hangsTraffic struct {
	*fakeShared
	release chan struct{}
}

func (f *hangsTraffic) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() != resilient.ProbePolicy.Name() {
		<-f.release
		return core.Result{}, errDown
	}
	return f.fakeShared.Decide(ctx, req)
}

// The traffic's calls hang and hold every in-flight slot (WithMaxInFlight): a bound
// full says nothing of the store, and the confirming probe, bounded apart, reaches
// the store, whose answer keeps the breaker closed. Counted with the traffic, the
// probe was not sent, and the breaker of a store that answers opened.
func TestConfirmingProbeIsNotBlockedByTheTraffic(t *testing.T) {
	clock := storetest.NewClock()
	f := &hangsTraffic{fakeShared: newFakeShared(t, clock), release: make(chan struct{})}
	defer close(f.release)
	r := newRigOver(t, clock, f, resilient.WithMaxInFlight(3), resilient.WithDeadline(testDeadline))
	// Three failures in a row ask for the probe. A call noticed late on a loaded
	// machine does not count, so call until the probe is out: once the three slots
	// are held, each call fails at once as overload.
	probing := func() bool { return r.store.Confirming() || r.store.Breaker() != resilient.BreakerClosed }
	for i := 0; i < 50 && !probing(); i++ {
		r.store.Decide(context.Background(), core.Request{Policy: tenPerMinute, Key: fmt.Sprint("k", i)})
	}
	waitFor(t, "the confirming probe", probing)
	waitFor(t, "the probe's outcome", func() bool { return !r.store.Confirming() })
	if got := r.store.Breaker(); got != resilient.BreakerClosed {
		t.Fatalf("breaker %v after the probe, want closed: the store answers it", got)
	}
}

// stoppedMaster is twoMasters whose stuck master fails the traffic's calls at once
// but holds probes until their deadline, as a stopped master holds them until the
// client's read timeout.
type stoppedMaster struct {
	*twoMasters
	held atomic.Int64
}

func (f *stoppedMaster) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if f.stuck(req.Policy, req.Key) && req.Policy.Name() == resilient.ProbePolicy.Name() {
		f.held.Add(1)
		defer f.held.Add(-1)
		<-ctx.Done()
		return core.Result{}, fmt.Errorf("fake: %w", ctx.Err())
	}
	return f.twoMasters.Decide(ctx, req)
}

// Sixteen keys in sixteen slots of a stuck master fail three times each: their
// confirming probes fill the probes' own in-flight bound for a second. Three logins
// then fail, whose stacks hold an address on the healthy master, so that address's
// slot asks for a confirming probe too, which finds the bound full. Taken for an
// outage, that opened the healthy slot and marked its master stuck: a Closed policy
// there answered 503. A probe that cannot be sent cannot tell.
func TestProbesOfAStuckMasterCannotOpenAHealthyOne(t *testing.T) {
	clock := storetest.NewClock()
	fake := &stoppedMaster{twoMasters: &twoMasters{fakeShared: newFakeShared(t, clock), stuckHalf: true}}
	fake.answering.Store(true)
	// A deadline of 200 ms holds each confirming probe a second: all 16 are out at
	// once even under the race detector (at 20 ms, the first had ended, and marked
	// the master stuck, before the last slot failed, in one CI run).
	s, err := resilient.New(fake, resilient.WithClock(clock.Now), resilient.WithDeadline(200*time.Millisecond),
		resilient.WithLogger(quietLogger()), resilient.WithPolicyMode("closed-api", resilient.Closed))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(100))
	account := core.MustPolicy("login-account", core.TokenBucket, core.PerMinute(100))
	loginIP := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(100))
	closedAPI := core.MustPolicy("closed-api", core.TokenBucket, core.PerMinute(100))
	on := func(p core.Policy, node string, n int) []string { // n keys of node, each in a slot of its own
		var keys []string
		slots := map[int]bool{}
		for i := 0; len(keys) < n; i++ {
			key := fmt.Sprintf("%s-%d", node, i)
			if slot := resilient.SlotOf(fake.Key(p, key)); fake.Node(fake.Key(p, key)) == node && !slots[slot] {
				keys, slots[slot] = append(keys, key), true
			}
		}
		return keys
	}
	hot, accounts := on(api, "stuck", 16), on(account, "stuck", 3)
	address, healthy := on(loginIP, "healthy", 1)[0], core.Request{Policy: closedAPI, Key: on(closedAPI, "healthy", 1)[0]}
	ctx := context.Background()
	for _, key := range hot {
		s.Decide(ctx, core.Request{Policy: api, Key: key})
	}
	if res, err := s.Decide(ctx, healthy); err != nil || !res.Allowed {
		t.Fatalf("on the healthy master before the stop: %+v, %v", res, err)
	}

	fake.answering.Store(false)
	for range 3 {
		for _, key := range hot {
			s.Decide(ctx, core.Request{Policy: api, Key: key})
		}
	}
	waitFor(t, "16 probes held by the stuck master", func() bool { return fake.held.Load() == 16 })
	for _, key := range accounts {
		s.DecideStack(ctx, []core.Request{{Policy: account, Key: key}, {Policy: loginIP, Key: address}}, make([]core.Result, 2))
	}
	addressReq := core.Request{Policy: loginIP, Key: address}
	waitFor(t, "the address slot's confirming probe, which finds no room", func() bool { return !s.ConfirmingFor(addressReq) })
	if st := s.BreakerFor(healthy); st != resilient.BreakerClosed {
		t.Fatalf("a key of the healthy master: breaker %v, want closed", st)
	}
	if res, err := s.Decide(ctx, healthy); err != nil || !res.Allowed || res.DecidedAt.IsZero() {
		t.Fatalf("a key of the healthy master: %+v, %v; want decided by the store", res, err)
	}
}
