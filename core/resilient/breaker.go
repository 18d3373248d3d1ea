package resilient

import (
	"sync"
	"sync/atomic"
	"time"
)

// BreakerState is the state of a circuit breaker in front of the shared store.
type BreakerState int32

// The breaker's states.
const (
	// BreakerClosed: every decision calls the shared store (the healthy state).
	BreakerClosed BreakerState = iota
	// BreakerOpen: too many calls failed over the window; decisions go to the failure
	// modes without calling the shared store, and a background probe tries it again
	// after the cooldown.
	BreakerOpen
	// BreakerHalfOpen: a background probe succeeded, but fewer times in a row than
	// recovery needs (the hysteresis); decisions still go to the failure modes.
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

// windowBuckets splits the breaker's window into this many buckets.
const windowBuckets = 10

// breakerPolicy is what opens and closes a breaker.
type breakerPolicy struct {
	rate        float64 // failed/calls over the window at or above which it opens
	minCalls    int64   // calls the window must hold before it can open
	minFailures int64   // failures the window must hold before it can open
	window      int64   // ns
	cooldown    int64   // ns: from opening (or a failed probe) to the next probe
	probes      int     // successful probes in a row that close it
}

// breaker is a circuit breaker over the shared store, or over one Cluster slot of it.
// Time is a parameter (nanoseconds on the store's monotonic scale), so its state
// machine is tested without sleeping.
//
// Closed: the calls and failures of the last window are counted in buckets; when the
// window holds at least minCalls calls and minFailures failures, and failures are at
// least rate of the calls, or, in a window too quiet for that rate (fewer than
// minCalls calls), when the last minFailures calls all failed, however far apart, the
// breaker asks for a confirming probe (one at a time),
// with a longer deadline: when the store answers it, the failures were load (a
// saturated client, a slow spell), the window starts afresh and the breaker stays
// closed; when it does not, the breaker opens. One slow call among many good ones is
// load, not failure. Open and half-open: decisions do not call the store;
// only background probes do (probeDue, probed), every cooldown, and probes successful
// probes in a row close it. A probe that fails opens it for another cooldown.
// Outcomes of ordinary calls count only while the breaker is closed: a late answer of
// a call sent before it opened says nothing about now.
type breaker struct {
	policy breakerPolicy
	width  int64 // ns per bucket

	state atomic.Int32 // BreakerState; written under mu, read without it on the fast path

	buckets [windowBuckets]windowBucket
	streak  atomic.Int64 // failed calls since the last call the store answered

	mu        sync.Mutex
	suspect   bool  // closed, the window says open, a confirming probe is out
	nextProbe int64 // ns: when the next background probe is due (open, half-open)
	good      int   // successful probes in a row (half-open)
	since     int64 // ns: when the breaker last left the closed state
}

// windowBucket counts the calls of one slice of the window; epoch is the slice's
// number (time / width), and a bucket of an older epoch counts nothing.
type windowBucket struct {
	epoch    atomic.Int64
	calls    atomic.Int64
	failures atomic.Int64
}

func newBreaker(p breakerPolicy) *breaker {
	b := &breaker{policy: p, width: max(1, p.window/windowBuckets)}
	b.clear()
	return b
}

// noEpoch marks a bucket that counts nothing.
const noEpoch = -1 << 62

// clear empties the window.
func (b *breaker) clear() {
	for i := range b.buckets {
		b.buckets[i].epoch.Store(noEpoch)
		b.buckets[i].calls.Store(0)
		b.buckets[i].failures.Store(0)
	}
	b.streak.Store(0)
}

// transition is a change of a breaker's state, for logs.
type transition struct {
	from, to BreakerState
	after    time.Duration // to closed: how long the breaker was not closed
	failures int64         // to open from closed: the failures of the window
	calls    int64         // to open from closed: the calls of the window
	inARow   int64         // to open from closed: the failed calls since the last answered one
	atCheck  bool          // to open from closed: opened by Check, whose calls the window does not count
}

// closed reports whether decisions may call the store.
func (b *breaker) closed() bool { return BreakerState(b.state.Load()) == BreakerClosed }

// record counts the outcome o of an ordinary call that ended at now, and reports
// confirm when the window's failure rate asks for a confirming probe, whose outcome
// goes to confirmed. Cancelled calls count nothing.
func (b *breaker) record(o outcome, now int64) (confirm bool) {
	if o == canceled || !b.closed() {
		return false
	}
	epoch := now / b.width
	// now is negative when a clock of WithClock reads before New, and so is the
	// remainder of a negative epoch: it is made positive to index the ring.
	bk := &b.buckets[(epoch%windowBuckets+windowBuckets)%windowBuckets]
	if bk.epoch.Load() != epoch {
		b.mu.Lock()
		if bk.epoch.Load() != epoch {
			bk.calls.Store(0)
			bk.failures.Store(0)
			bk.epoch.Store(epoch)
		}
		b.mu.Unlock()
	}
	bk.calls.Add(1)
	if o != failed {
		b.streak.Store(0)
		return false
	}
	bk.failures.Add(1)
	streak := b.streak.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed() || b.suspect {
		return false
	}
	calls, failures := b.window(epoch)
	p := &b.policy
	// A service too quiet to fill the window would otherwise never open the breaker:
	// a dead store kept refusing every key it had not answered for, for the whole
	// outage (TestQuietServiceFallsBackOnADeadStore).
	quiet := calls < p.minCalls && streak >= p.minFailures
	if !quiet && (calls < p.minCalls || failures < p.minFailures || float64(failures) < p.rate*float64(calls)) {
		return false
	}
	b.suspect = true
	return true
}

// confirmed records the outcome of the confirming probe that record asked for at now:
// reachable (the store answered) clears the window; anything else opens the breaker.
func (b *breaker) confirmed(reachable bool, now int64) *transition {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.suspect = false
	if !b.closed() {
		return nil
	}
	if reachable {
		b.clear()
		return nil
	}
	calls, failures := b.window(now / b.width)
	b.openAt(now)
	return &transition{from: BreakerClosed, to: BreakerOpen, failures: failures, calls: calls, inARow: b.streak.Load()}
}

// confirming reports whether a confirming probe of traffic's failures is out: its
// outcome decides b.
func (b *breaker) confirming() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.suspect
}

// openedByCheck opens b at now: Check's calls and then a confirming probe found the
// store unreachable. It leaves b as it is when b is no longer closed, or a confirming
// probe of traffic's failures is out (whose outcome decides b), and never touches the
// window, which counts traffic's calls only.
func (b *breaker) openedByCheck(now int64) *transition {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed() || b.suspect {
		return nil
	}
	b.openAt(now)
	return &transition{from: BreakerClosed, to: BreakerOpen, atCheck: true}
}

// openAt opens the closed breaker b at now, its first probe a cooldown later.
// Requires b.mu.
func (b *breaker) openAt(now int64) {
	b.state.Store(int32(BreakerOpen))
	b.nextProbe = now + b.policy.cooldown
	b.good = 0
	b.since = now
}

// window sums the buckets of the window that ends in epoch. Requires b.mu.
func (b *breaker) window(epoch int64) (calls, failures int64) {
	for i := range b.buckets {
		bk := &b.buckets[i]
		if e := bk.epoch.Load(); e > epoch-windowBuckets && e <= epoch {
			calls += bk.calls.Load()
			failures += bk.failures.Load()
		}
	}
	return calls, failures
}

// probeDue reports whether a background probe should be sent at now, and reserves
// it: the next one is due a cooldown later unless probed reports sooner.
func (b *breaker) probeDue(now int64) bool {
	if b.closed() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed() || now < b.nextProbe {
		return false
	}
	b.nextProbe = now + b.policy.cooldown
	return true
}

// probed records a background probe's outcome at now: reachable (the store answered)
// counts toward closing; anything else opens the breaker for another cooldown.
func (b *breaker) probed(reachable bool, now int64) *transition {
	b.mu.Lock()
	defer b.mu.Unlock()
	state := BreakerState(b.state.Load())
	if state == BreakerClosed {
		return nil
	}
	if !reachable {
		b.good = 0
		b.nextProbe = now + b.policy.cooldown
		if state == BreakerHalfOpen {
			b.state.Store(int32(BreakerOpen))
			return &transition{from: state, to: BreakerOpen}
		}
		return nil
	}
	b.good++
	if b.good < b.policy.probes {
		b.state.Store(int32(BreakerHalfOpen))
		b.nextProbe = now + b.policy.cooldown
		if state == BreakerOpen {
			return &transition{from: state, to: BreakerHalfOpen}
		}
		return nil
	}
	b.clear() // a fresh window: the outage's failures are history
	b.good = 0
	b.state.Store(int32(BreakerClosed))
	return &transition{from: state, to: BreakerClosed, after: time.Duration(now - b.since)}
}

// retryAfter is how long a client should wait before trying again at now: until the
// next probe when the breaker is not closed, else one cooldown.
func (b *breaker) retryAfter(now int64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed() && b.nextProbe > now {
		return time.Duration(b.nextProbe - now)
	}
	return time.Duration(b.policy.cooldown)
}

// current is the breaker's state.
func (b *breaker) current() BreakerState { return BreakerState(b.state.Load()) }
