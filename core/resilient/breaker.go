package resilient

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is the state of the circuit breaker in front of the shared store.
type BreakerState int32

// The breaker's states.
const (
	// BreakerClosed: every decision calls the shared store (the healthy state).
	BreakerClosed BreakerState = iota
	// BreakerOpen: the shared store failed repeatedly; decisions go to the failure
	// modes without calling it until the cooldown has passed.
	BreakerOpen
	// BreakerHalfOpen: the cooldown has passed; one decision at a time is sent to the
	// shared store as a probe, the others go to the failure modes. A probe that
	// succeeds closes the breaker; one that fails opens it for another cooldown.
	BreakerHalfOpen
)

// String names the state: "closed", "open" or "half-open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half-open"
	}
	return "unknown"
}

// breaker is a circuit breaker over the shared store. Time is a parameter (nanoseconds
// on the store's monotonic scale), so its state machine is tested without sleeping.
//
// Closed: failures in a row are counted; threshold of them open it. Open: nothing is
// allowed until openUntil; then the first caller becomes the probe (half-open). Half
// open: one probe at a time; the probe's success closes it, its failure opens it again,
// its cancellation (the caller went away) frees the slot for the next caller. Outcomes
// of calls that were not probes change nothing unless the breaker is closed: a late
// answer of a call sent before the breaker opened says nothing about now.
type breaker struct {
	threshold int
	cooldown  int64 // ns

	state atomic.Int32 // BreakerState; written under mu, read without it on the fast path

	mu        sync.Mutex
	failures  atomic.Int32 // failures in a row while closed; written under mu
	openUntil int64        // ns: when an open breaker lets a probe through
	probing   bool         // a probe is in flight (half-open)
	since     int64        // ns: when the breaker last left the closed state
}

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: int64(cooldown)}
}

// transition is a change of the breaker's state, for logs.
type transition struct {
	from, to BreakerState
	after    time.Duration // to closed: how long the breaker was not closed
	failures int           // to open from closed: the failures in a row that opened it
}

// ticket is a caller's permission to call the shared store.
type ticket struct {
	allowed bool
	probe   bool
}

// allow reports whether a caller may call the shared store at now. A caller that gets
// a probe ticket must report its outcome with done.
func (b *breaker) allow(now int64) (ticket, *transition) {
	if BreakerState(b.state.Load()) == BreakerClosed {
		return ticket{allowed: true}, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch BreakerState(b.state.Load()) {
	case BreakerClosed:
		return ticket{allowed: true}, nil
	case BreakerOpen:
		if now < b.openUntil {
			return ticket{}, nil
		}
		b.state.Store(int32(BreakerHalfOpen))
		b.probing = true
		return ticket{allowed: true, probe: true}, &transition{from: BreakerOpen, to: BreakerHalfOpen}
	default: // half-open
		if b.probing {
			return ticket{}, nil
		}
		b.probing = true
		return ticket{allowed: true, probe: true}, nil
	}
}

// done records the outcome of a call made with t at now. succeeded and broken (the
// store answered, with a permanent error) count as the store being reachable.
func (b *breaker) done(t ticket, o outcome, now int64) *transition {
	if !t.allowed {
		return nil
	}
	reachable := o == succeeded || o == broken
	if !t.probe { // fast paths: nothing to change
		switch {
		case o == canceled:
			return nil
		case reachable && b.failures.Load() == 0:
			return nil
		case !reachable && b.current() != BreakerClosed:
			return nil
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	state := BreakerState(b.state.Load())
	if !t.probe {
		if state != BreakerClosed {
			return nil
		}
		switch o {
		case succeeded, broken:
			b.failures.Store(0)
		case failed:
			n := int(b.failures.Add(1))
			if n >= b.threshold {
				tr := &transition{from: BreakerClosed, to: BreakerOpen, failures: n}
				b.open(now)
				b.since = now
				return tr
			}
		}
		return nil
	}
	b.probing = false
	switch o {
	case succeeded, broken:
		b.state.Store(int32(BreakerClosed))
		b.failures.Store(0)
		return &transition{from: state, to: BreakerClosed, after: time.Duration(now - b.since)}
	case failed:
		b.open(now)
		return &transition{from: state, to: BreakerOpen}
	}
	return nil // canceled: the next caller probes
}

// open opens the breaker for a cooldown. Requires b.mu.
func (b *breaker) open(now int64) {
	b.state.Store(int32(BreakerOpen))
	b.openUntil = now + b.cooldown
	b.failures.Store(0)
}

// retryAfter is how long a client should wait before trying again at now: until the
// next probe when the breaker is open, else one cooldown.
func (b *breaker) retryAfter(now int64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if BreakerState(b.state.Load()) == BreakerOpen && b.openUntil > now {
		return time.Duration(b.openUntil - now)
	}
	return time.Duration(b.cooldown)
}

// current is the breaker's state.
func (b *breaker) current() BreakerState { return BreakerState(b.state.Load()) }
