package resilient_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// clientTimeout is a timeout of the Redis client's own, as a dial that did not finish
// within its DialTimeout reports it: a net.Error whose Timeout is true.
type clientTimeout struct{}

func (clientTimeout) Error() string   { return "dial tcp 127.0.0.1:6379: i/o timeout" }
func (clientTimeout) Timeout() bool   { return true }
func (clientTimeout) Temporary() bool { return true }

// errDialTimeout is a decision that failed on the client's dial timeout, wrapped as
// redisstore wraps it.
var errDialTimeout = fmt.Errorf("policy %q: %w: %w", "api", core.ErrStoreUnavailable, clientTimeout{})

// probeTimesOut is a store whose traffic calls fail with trafficErr, and whose probes
// fail with the client's own timeout, at once, until timeouts of them have; then the
// probes are answered.
type probeTimesOut struct {
	*fakeShared
	trafficErr error
	timeouts   int64
	probes     atomic.Int64
}

func (f *probeTimesOut) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if req.Policy.Name() != resilient.ProbePolicy.Name() {
		return core.Result{}, f.trafficErr
	}
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
			waitFor(t, "the probe's third call, or an open breaker", func() bool {
				return f.probes.Load() >= 3 || r.store.Breaker() == resilient.BreakerOpen
			})
			if got := r.store.Breaker(); got != resilient.BreakerClosed {
				t.Fatalf("breaker %v after %d calls of the probe, the third answered; want closed", got, f.probes.Load())
			}
		})
	}
}

// A probe whose every call ends in the client's own timeout confirms the outage, and
// a client that reports such timeouts at once does not spin: a bounded number of calls.
// A refused connection confirms it at the first call.
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
			if got := f.probes.Load(); got != tc.wantCalls {
				t.Fatalf("the probe made %d calls, want %d", got, tc.wantCalls)
			}
		})
	}
}
