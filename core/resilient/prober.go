package resilient

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxProbeTick bounds the interval at which the prober looks for due probes.
const maxProbeTick = 50 * time.Millisecond

// probePolicy is the policy of background probes: generous, so that probes from many
// replicas are admitted, and quick to expire.
var probePolicy = core.MustPolicy("ratelimit-probe", core.GCRA, core.PerSecond(1000))

// prober sends background probes while a breaker is not closed, so that shared
// enforcement returns on its own, with or without traffic, and then releases in
// passes the shared leases whose requests ended while their release failed
// (releasePass). Its goroutine starts when a breaker opens or such a lease is
// remembered, and ends when every breaker is closed and no such lease is left, or
// at Close.
type prober struct {
	running  atomic.Bool
	stop     chan struct{}
	mu       sync.Mutex // orders wg.Add before Close's wg.Wait
	wg       sync.WaitGroup
	nextPass atomic.Int64 // ns: no release pass before this (a pass failed)
	byHand   atomic.Bool  // the goroutine makes no release pass: a test makes them
}

func newProber() *prober { return &prober{stop: make(chan struct{})} }

// wake starts the prober's goroutine unless it runs. Requires that s is not closed.
func (s *Store) wake() {
	p := s.prober
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.closed.Load() || !p.running.CompareAndSwap(false, true) {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(min(maxProbeTick, s.cfg.cooldown/2+1))
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			if s.probeDue() || !p.byHand.Load() && s.releasePass() {
				continue
			}
			p.running.Store(false)
			// A lease ended after the pass looked finds the goroutine running and does
			// not wake it (endedAt): it goes on for that lease.
			if !s.anyOpen() && (p.byHand.Load() || s.leases.nEnded.Load() == 0) || !p.running.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// untilStopped is parent, also ended when the prober stops (Close), for the calls of
// its probes and release passes; cancel frees its goroutine.
func (p *prober) untilStopped(parent context.Context) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(parent)
	go func() {
		select {
		case <-p.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// stopProber stops the prober and waits for it.
func (s *Store) stopProber() {
	s.prober.mu.Lock() // s.closed is set: no goroutine starts after this
	close(s.prober.stop)
	s.prober.mu.Unlock()
	s.prober.wg.Wait()
}

// anyOpen reports whether a breaker is not closed.
func (s *Store) anyOpen() bool {
	return !s.breaker.closed() || s.slots != nil && s.slots.notClosed.Load() > 0
}

// probeDue sends the probes that are due, one at a time, and reports whether a
// breaker is still not closed.
func (s *Store) probeDue() bool {
	if s.closed.Load() {
		return false
	}
	if s.breaker.probeDue(s.now()) {
		s.probe(s.breaker, -1, checkKey)
	}
	for _, slot := range s.slots.openSlots() {
		b := s.slots.get(slot)
		if b == nil || !b.probeDue(s.now()) {
			continue
		}
		key, ok := s.slots.probeKey(slot, probePolicy)
		if !ok {
			continue
		}
		s.probe(b, slot, key)
	}
	return s.anyOpen()
}

// confirmMultiple is the deadline of a confirming probe, in ceilings of the adaptive
// deadline (1 s by default): generous, because it decides between load and an outage.
// At 2 (400 ms), 64 instances on a saturated 2-core client opened their breakers and
// admitted 49-55 against a bound of 44 in 3 of 4 runs; at 5, 39-43 in 4 of 4
// (TestRedisSaturatedClientStaysWithinBound). A real outage is confirmed later, and
// until then its calls are decided as slow ones, from the last shared answer.
const confirmMultiple = 5

// confirm sends, in the background, the probe that decides whether b (slot's breaker,
// or the store's for -1) opens: its failures were an outage when the shared store does
// not answer it within confirmMultiple ceilings of the deadline, load when it does.
func (s *Store) confirm(b *breaker, slot int) {
	p := s.prober
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.closed.Load() {
		b.confirmed(true, s.now())
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		s.confirmNow(b, slot)
	}()
}

// confirmNow is confirm's probe, sent and recorded before it returns.
func (s *Store) confirmNow(b *breaker, slot int) {
	reachable, ok, key := s.confirmingProbe(context.Background(), slot)
	if !ok {
		b.confirmed(true, s.now())
		return
	}
	s.breakerOpened(b.confirmed(reachable, s.now()), slot, key)
}

// confirmingProbe sends the probe that confirms the failures of slot's breaker (the
// store's for -1), bounded by ctx and confirmMultiple ceilings of the deadline: on a
// key of slot, whose Redis key it returns, or store-wide. ok is false when it could
// not tell (see probeCall), or slot has no probe key.
func (s *Store) confirmingProbe(ctx context.Context, slot int) (reachable, ok bool, key string) {
	d := confirmMultiple * s.deadline.ceiling
	if slot < 0 {
		reachable, ok = s.probeStoreWide(ctx, d)
		return reachable, ok, ""
	}
	key, found := s.slots.probeKey(slot, probePolicy)
	if !found {
		return false, false, ""
	}
	reachable, ok = s.probeCall(ctx, key, d)
	return reachable, ok, key
}

// breakerOpened reports tr, a change of slot's breaker (the store's for -1), found by
// a probe on key; when it opened the breaker, it marks slot's master stuck and wakes
// the prober.
func (s *Store) breakerOpened(tr *transition, slot int, key string) {
	if tr == nil {
		return
	}
	s.breakerChanged(tr, slot)
	if slot >= 0 {
		s.stuckMaster(s.slots.opened(slot, s.slots.namer.Key(probePolicy, key)), slot)
	}
	s.wake()
}

// probeStoreWide is the confirming probe of the store-wide breaker, within d. Where
// slots are tracked it also probes, at the same time, a key in the slot half the
// slot space away from checkKey's, which a Cluster's masters place on another master
// than checkKey's: the store is reachable when either answers. With checkKey alone,
// a quiet service's 3 failed calls in a row on the keys of one stuck master opened
// the store-wide breaker whenever that master served checkKey, and sent the healthy
// masters' keys to their failure modes for as long as it was stuck
// (TestQuietServiceOnAClusterWithAStuckMasterKeepsTheOthersShared).
func (s *Store) probeStoreWide(ctx context.Context, d time.Duration) (reachable, ok bool) {
	if s.slots == nil {
		return s.probeCall(ctx, checkKey, d)
	}
	opposite := (slotOf(s.slots.namer.Key(probePolicy, checkKey)) + clusterSlots/2) % clusterSlots
	other, found := s.slots.probeKey(opposite, probePolicy)
	if !found {
		return s.probeCall(ctx, checkKey, d)
	}
	probes, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct{ reachable, ok bool }
	answers := make(chan answer, 2)
	for _, key := range []string{checkKey, other} {
		go func() {
			reachable, ok := s.probeCall(probes, key, d)
			answers <- answer{reachable, ok}
		}()
	}
	ok = true
	for range 2 {
		a := <-answers
		if a.reachable && a.ok {
			reachable = true
			cancel() // the other key's answer would add nothing: a stuck master's takes all of d
		}
		ok = ok && a.ok
	}
	if reachable {
		return true, true
	}
	return false, ok
}

// probe decides one request of the probe policy on key with the shared store, under
// the deadline's ceiling, and reports its outcome to b (slot's breaker, or the
// store's for -1).
func (s *Store) probe(b *breaker, slot int, key string) {
	reachable, ok := s.probeCall(context.Background(), key, s.deadline.ceiling)
	if !ok {
		return
	}
	now := s.now()
	tr := b.probed(reachable, now)
	s.breakerChanged(tr, slot)
	if tr != nil && tr.to == BreakerClosed {
		if slot >= 0 {
			s.slots.closedSlot(slot)
		}
		if !s.anyOpen() {
			s.recovered(now) // the prober's next pass releases the leases ended meanwhile
		}
	}
}

// probeCall decides one request of the probe policy on key with the shared store
// within d, reports the calls to the observers, and reports whether the store decided
// it; ok is false when Close or parent cancelled it, or when it timed out late (see
// late): the client was too busy to tell. An answer that is not a decision (a
// permanent error) does not close a breaker: a client in trouble can report errors it
// does not know as permanent ones, and only a decision shows that decisions work
// again.
//
// The probe has all of d. A timeout of the client's own that ends a call sooner (a
// Redis client's dial or read timeout, 100 and 200 ms from redisstore.Dial) is tried
// again, in at most probeAttempts calls spread over d: after many failed dials,
// go-redis repeats the last dial error at once, and calls back to back would spend
// none of d. On a saturated CPU such a timeout is the client's: a confirming probe's
// dial timed out 459 ms into its 1 s, opened the breaker of a healthy Redis, and Local
// mode granted 16–19 on top of Redis's 38–40 against a bound of 45
// (TestRedisSaturatedClientStaysWithinBound, 2 runs of about 150). Probes are not held
// back by the traffic's in-flight bound (guard.runProbe). One that finds their own
// full (ErrOverload) cannot tell: on a Cluster, a stuck master's probes fill it, and
// taken for an outage, a healthy master's confirming probe opened its slot and
// marked it stuck (TestProbesOfAStuckMasterCannotOpenAHealthyOne). A refused
// connection, or any other answer, ends the probe at once. When parent's deadline ends
// a probe whose calls had timed out, ok is true: the store did not answer for as long
// as the caller could wait (a Check with a short ctx).
func (s *Store) probeCall(parent context.Context, key string, d time.Duration) (reachable, ok bool) {
	req := core.Request{Policy: probePolicy, Key: key}
	ctx, cancel := s.prober.untilStopped(parent)
	defer cancel()
	start := time.Now()
	spacing := d / probeAttempts
	var o outcome
	var kind ErrorKind
	var latency time.Duration
	for attempt := 1; attempt <= probeAttempts; attempt++ {
		remaining := d
		if attempt > 1 {
			if !sleepUntil(ctx, start.Add(time.Duration(attempt-1)*spacing)) {
				return false, errors.Is(parent.Err(), context.DeadlineExceeded)
			}
			if remaining = d - time.Since(start); remaining <= 0 {
				break
			}
		}
		callStart := time.Now()
		err, timedOut := s.guard.runProbe(ctx, remaining, func(ctx context.Context) error {
			_, err := s.shared.Decide(ctx, req)
			return err
		})
		if errors.Is(err, ErrOverload) {
			return false, false // the calls before this one timed out early: the client's
		}
		o, kind = classify(ctx, err, timedOut)
		if o == canceled || errors.Is(err, ErrClosed) {
			// attempt > 1: the calls before this one timed out
			return false, attempt > 1 && errors.Is(parent.Err(), context.DeadlineExceeded)
		}
		s.storeCall(time.Since(callStart), kind, err)
		latency = time.Since(start)
		if o != failed || kind != KindTimeout || timedOut {
			break // an answer, another error, or the end of d
		}
	}
	return o == succeeded, !(o == failed && kind == KindTimeout && late(latency, d))
}

// sleepUntil waits until t, or until ctx ends, and reports whether it reached t.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// probeAttempts bounds the calls of one probe, spread over its budget (see
// probeCall): at most one starts in each tenth of it.
const probeAttempts = 10
