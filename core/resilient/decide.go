package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Decide decides one request: the pre-limiter refuses a key the shared store refused
// until its Retry-After has passed; otherwise the shared store decides, within the
// deadline, unless a breaker (the store's, or that of the key's Cluster slot) is open,
// in which case the policy's failure mode decides (see Mode). A call that fails while
// the breakers stay closed (one slow call under load) does not send the policy to its
// failure mode: the key's last shared answer decides it, without refill, and the
// failure mode only when no answer is known. A cancelled or expired ctx is returned as
// an error wrapping ctx.Err() and is not a store failure. A permanent store error is
// returned wrapping ErrPermanent, in every mode.
func (s *Store) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if s.closed.Load() {
		return core.Result{}, ErrClosed
	}
	if err := req.Check(); err != nil {
		return core.Result{}, err
	}
	start, now := s.instant()
	if res, ok := s.pre.refuses(&req, now); ok {
		s.localRefusal(&req, &res)
		s.decided(&req, OutcomeDenied, ViaPreLimit)
		return res, nil
	}
	slot := s.slots.of(&req)
	if !s.closedFor(slot) {
		return s.fallback(ctx, req, ErrBreakerOpen, now, true)
	}
	var (
		res core.Result
		o   outcome
		err error
	)
	if s.direct {
		res, o, err = s.decideDirect(ctx, slot, start, &req)
	} else {
		res, o, err = s.decideGuarded(ctx, slot, start, req)
	}
	switch o {
	case succeeded:
		s.settle(ctx, &req, &res, now)
		s.memo.remember(&req, &res, now)
		s.pre.remember(&req, &res, now)
		s.decided(&req, outcomeOf(&res), ViaShared)
		return res, nil
	case canceled:
		return core.Result{}, fmt.Errorf("resilient: policy %q: %w", req.Policy.Name(), err)
	case broken:
		return core.Result{}, s.permanent([]core.Request{req}, err)
	}
	if !s.closedFor(slot) { // this failure opened a breaker
		return s.fallback(ctx, req, err, now, true)
	}
	if res, ok := s.memo.decideSlow(&req, now); ok {
		s.decided(&req, outcomeOf(&res), ViaLastShared)
		return res, nil
	}
	return s.fallback(ctx, req, err, now, false)
}

// settle charges the shared store, after its answer res to req, what the key's local
// allowance spent during an outage and the shared store never saw (memo.debt), so that
// returning to the shared store does not grant a second bucket. It adjusts res to the
// charge. It is best effort: a charge that fails is dropped.
func (s *Store) settle(ctx context.Context, req *core.Request, res *core.Result, now int64) {
	if s.cfg.modeOf(req.Policy.Name()) != Local {
		return
	}
	q, err := s.degrade.policy(req.Policy)
	if err != nil {
		return
	}
	owed := min(s.memo.debt(req, res, &q, now), req.Policy.Capacity())
	if owed <= 0 {
		return
	}
	charge := core.Request{Policy: req.Policy, Key: req.Key, Cost: owed}
	err, _ = s.guard.run(ctx, s.deadline.get(), func(ctx context.Context) error {
		_, err := s.shared.Decide(ctx, charge)
		return err
	})
	if err == nil {
		res.Remaining = max(0, res.Remaining-owed)
	}
}

// DecideStack decides the requests as one all-or-nothing decision. The pre-limiter
// refuses the stack when it knows any member refused. Otherwise the shared store
// decides it; when a breaker is open, the failure modes do, as one decision:
//
//   - a stack with a Closed policy fails closed: an *UnavailableError naming the Closed
//     policies, and nothing is charged anywhere;
//   - otherwise the Local policies are decided together, all-or-nothing, in process
//     memory, and the Open ones are unenforced: the stack is admitted when the Local
//     ones admit it (Open policies report Unenforced), refused when they refuse it.
//
// A call that fails while the breakers stay closed is decided from the members' last
// shared answers, all-or-nothing, when every one is known; else by the failure modes.
// The stack's Cluster slot is that of its first request.
func (s *Store) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := core.CheckStack(reqs, results); err != nil {
		return false, err
	}
	start, now := s.instant()
	if s.preRefusesStack(reqs, results, now) {
		return false, nil
	}
	slot := s.slots.of(&reqs[0])
	if !s.closedFor(slot) {
		return s.fallbackStack(ctx, reqs, results, ErrBreakerOpen, now, true)
	}
	// The call may outlive this method (at the deadline), so it works on its own copies.
	own := append([]core.Request(nil), reqs...)
	buf := make([]core.Result, len(reqs))
	var allowed bool
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error {
		var err error
		allowed, err = s.shared.DecideStack(ctx, own, buf)
		return err
	})
	switch o {
	case succeeded:
		copy(results, buf)
		for i := range reqs {
			s.memo.remember(&reqs[i], &results[i], now)
			s.pre.remember(&reqs[i], &results[i], now)
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaShared)
		}
		return allowed, nil
	case canceled:
		return false, fmt.Errorf("resilient: %s: %w", policyNames(reqs), err)
	case broken:
		return false, s.permanent(reqs, err)
	}
	if !s.closedFor(slot) {
		return s.fallbackStack(ctx, reqs, results, err, now, true)
	}
	if allowed, ok := s.memo.decideSlowStack(reqs, results, now); ok {
		for i := range reqs {
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaLastShared)
		}
		return allowed, nil
	}
	return s.fallbackStack(ctx, reqs, results, err, now, false)
}

// preRefusesStack fills results and reports true when the pre-limiter knows a member
// of the stack refused. The other members report not admitted and unspent, with what
// their last shared answer left (their capacity when none is known), as a store
// reports the members of a refused stack.
func (s *Store) preRefusesStack(reqs []core.Request, results []core.Result, now int64) bool {
	if s.pre == nil {
		return false
	}
	refused := false
	for i := range reqs {
		res, ok := s.pre.refuses(&reqs[i], now)
		if !ok {
			res = core.Result{Policy: reqs[i].Policy.Name(), Limit: reqs[i].Policy.Capacity()}
		}
		results[i] = res
		refused = refused || ok
	}
	if !refused {
		return false
	}
	for i := range reqs {
		if results[i].RetryAfter > 0 {
			s.localRefusal(&reqs[i], &results[i])
			s.decided(&reqs[i], OutcomeDenied, ViaPreLimit)
			continue
		}
		results[i].Remaining, results[i].ResetAfter = s.memo.remaining(&reqs[i], now)
		s.decided(&reqs[i], OutcomeUncharged, ViaPreLimit)
	}
	return true
}

// closedFor reports whether the breakers let a decision of slot (-1: none) call the
// shared store.
func (s *Store) closedFor(slot int) bool {
	return s.breaker.closed() && s.slots.closed(slot)
}

// call runs fn against the shared store under the deadline, for a decision of slot,
// and reports how it ended. start is the real time the decision began (from instant),
// which the latency is measured from. It reports the call to the observers (unless the
// caller's ctx ended it) and to the breakers.
func (s *Store) call(ctx context.Context, slot int, start time.Time, fn func(context.Context) error) (outcome, error) {
	d := s.deadline.get()
	err, timedOut := s.guard.run(ctx, d, fn)
	return s.finish(ctx, slot, start, d, err, timedOut)
}

// finish classifies how a call to the shared store under deadline d ended (err, and
// timedOut when its deadline or ctx ended it first) and reports it, for call and
// decideDirect.
func (s *Store) finish(ctx context.Context, slot int, start time.Time, d time.Duration, err error, timedOut bool) (outcome, error) {
	end, now := s.instant()
	latency := end.Sub(start)
	if errors.Is(err, ErrClosed) && !timedOut {
		return canceled, err
	}
	o, kind := classify(ctx, err, timedOut)
	if o == failed && kind == KindTimeout {
		err = fmt.Errorf("%w (%v): %w", ErrTimeout, d, err)
	}
	if o == succeeded {
		s.deadline.observe(latency)
	}
	if tr := s.breaker.record(o, now); tr != nil {
		s.breakerChanged(tr, -1)
		s.wake()
	}
	if tr := s.slots.record(slot, o, now); tr != nil {
		s.breakerChanged(tr, slot)
		s.wake()
	}
	if o != canceled {
		s.storeCall(latency, kind, err)
	}
	if (o == succeeded || o == broken) && s.falls.active.Load() > 0 && !s.anyOpen() {
		s.recovered(now)
	}
	return o, err
}

// permanent reports a permanent error loudly and returns it, wrapping ErrPermanent.
func (s *Store) permanent(reqs []core.Request, err error) error {
	names := policyNames(reqs)
	for i := range reqs {
		s.decided(&reqs[i], OutcomeError, ViaShared)
	}
	s.logPermanent(names, err)
	return fmt.Errorf("resilient: %s: %w: %w", names, ErrPermanent, err)
}

// outcomeOf is the outcome of one policy's result.
func outcomeOf(res *core.Result) Outcome {
	if res.Allowed {
		return OutcomeAllowed
	}
	return OutcomeDenied
}

// stackOutcome is the outcome of a stack member's result: a member of a refused stack
// that did not refuse itself is uncharged.
func stackOutcome(res *core.Result, allowed bool) Outcome {
	switch {
	case allowed:
		return OutcomeAllowed
	case res.RetryAfter > 0:
		return OutcomeDenied
	}
	return OutcomeUncharged
}

// policyNames names the policies of a call for an error message: `policy "api"` or
// `policies "login-account", "login-ip"`.
func policyNames(reqs []core.Request) string {
	if len(reqs) == 1 {
		return fmt.Sprintf("policy %q", reqs[0].Policy.Name())
	}
	b := []byte("policies ")
	for i := range reqs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%q", reqs[i].Policy.Name())
	}
	return string(b)
}
