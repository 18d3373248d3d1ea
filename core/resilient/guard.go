package resilient

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// guard bounds the shared store's calls in time. Each call runs on its own goroutine
// under ctx plus the deadline, and the caller returns at the deadline even when the
// call does not: a client that ignores ctx deadlines (a go-redis client without
// ContextTimeoutEnabled) cannot hold a request longer than the deadline. Such a call
// finishes in the background, on buffers the caller no longer reads; at most
// maxInFlight calls run at once, so abandoned calls cannot pile up without bound, and
// Close waits for the last of them.
type guard struct {
	deadline    time.Duration
	maxInFlight int64

	inFlight atomic.Int64
	probing  atomic.Int64 // probes in flight, bounded apart (runProbe)

	mu      sync.RWMutex // orders wg.Add before Close's wg.Wait
	closed  bool
	running sync.WaitGroup
}

func newGuard(deadline time.Duration, maxInFlight int) *guard {
	return &guard{deadline: deadline, maxInFlight: int64(maxInFlight)}
}

// run calls fn under ctx bounded by the deadline d (the guard's when d is zero). It
// returns fn's error, or the bounded context's error and timedOut when the deadline
// (or ctx) ended first. fn must write only to memory that the caller reads after a
// nil-or-error return without timedOut, never to the caller's own buffers.
func (g *guard) run(ctx context.Context, d time.Duration, fn func(context.Context) error) (err error, timedOut bool) {
	return g.runIn(&g.inFlight, g.maxInFlight, ctx, d, fn)
}

// maxProbesInFlight bounds the probes running at once: a few per breaker at most,
// and abandoned ones no more than this.
const maxProbesInFlight = 16

// runProbe is run for a probe, bounded by maxProbesInFlight rather than by the
// traffic's calls: a bound the traffic holds full says nothing of the store, and
// a probe that could not be sent left a breaker to open on a healthy one
// (TestConfirmingProbeIsNotBlockedByTheTraffic).
func (g *guard) runProbe(ctx context.Context, d time.Duration, fn func(context.Context) error) (err error, timedOut bool) {
	return g.runIn(&g.probing, maxProbesInFlight, ctx, d, fn)
}

// runIn is run with the calls counted in slots, at most limit at once.
func (g *guard) runIn(slots *atomic.Int64, limit int64, ctx context.Context, d time.Duration, fn func(context.Context) error) (err error, timedOut bool) {
	if d == 0 {
		d = g.deadline
	}
	if slots.Add(1) > limit {
		slots.Add(-1)
		return ErrOverload, false
	}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		slots.Add(-1)
		return ErrClosed, false
	}
	g.running.Add(1)
	g.mu.RUnlock()

	callCtx, cancel := context.WithTimeout(ctx, d)
	done := make(chan error, 1)
	go func() {
		defer g.running.Done()
		err := protect(callCtx, fn)
		slots.Add(-1)
		done <- err // before cancel: a caller that sees callCtx end finds the answer
		cancel()
	}()
	select {
	case err := <-done:
		return err, false
	case <-callCtx.Done():
		select {
		case err := <-done: // answered at the deadline: take the answer
			return err, false
		default:
		}
		return callCtx.Err(), true
	}
}

// enter admits a call that runs on the caller's goroutine (a store bounded by its
// context), as run admits one: it returns the call's context, bounded by the deadline
// d, or ErrOverload or ErrClosed. A call that entered must leave.
func (g *guard) enter(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc, error) {
	if g.inFlight.Add(1) > g.maxInFlight {
		g.inFlight.Add(-1)
		return nil, nil, ErrOverload
	}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		g.inFlight.Add(-1)
		return nil, nil, ErrClosed
	}
	g.running.Add(1)
	g.mu.RUnlock()
	callCtx, cancel := context.WithTimeout(ctx, d)
	return callCtx, cancel, nil
}

// leave ends a call that entered, with the call's error err. It returns what run
// would: the bounded context's error and timedOut when that context ended before the
// call succeeded.
func (g *guard) leave(callCtx context.Context, cancel context.CancelFunc, err error) (error, bool) {
	timedOut := false
	if err != nil && callCtx.Err() != nil {
		err, timedOut = callCtx.Err(), true
	}
	cancel()
	g.inFlight.Add(-1)
	g.running.Done()
	return err, timedOut
}

// stop refuses new calls.
func (g *guard) stop() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// wait waits for the running calls, each bounded by its deadline (or, for a client
// that ignores deadlines, by its own timeouts). Call stop first.
func (g *guard) wait() { g.running.Wait() }

// protect runs fn and turns a panic into an error (a permanent one, to the
// classifier): on the call's own goroutine, a panic would end the process, where on
// the request's goroutine the HTTP server would have recovered it.
func protect(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("resilient: the shared store panicked: %v", v)
		}
	}()
	return fn(ctx)
}
