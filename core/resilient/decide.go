package resilient

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// Decide decides one request: the pre-limiter refuses a key the shared store refused
// until its Retry-After has passed; otherwise the shared store decides, within the
// deadline, unless a breaker (the store's, or that of the key's Cluster slot) is open,
// in which case the policy's failure mode decides (see Mode). A call that fails while
// the breakers stay closed (one slow call under load) is not an outage and no
// transition: a Local policy is decided from this replica's share of the key's last
// shared answer (WithReplicas), without refill (a key with none known is refused with
// a short Retry-After), an Open one is admitted unenforced and a Closed one refused as
// unavailable, as their modes promise. A cancelled or expired ctx is returned as an
// error wrapping ctx.Err() and is not a store failure. A permanent store error is
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
	if !s.closedFor(&req, slot) {
		return s.fallback(ctx, req, ErrBreakerOpen, now, true)
	}
	switch o, err := s.handOver(ctx, &req, slot, now); o { // a failed call: see handOver
	case succeeded:
	case canceled:
		return core.Result{}, fmt.Errorf("resilient: policy %q: %w", req.Policy.Name(), err)
	case broken:
		return core.Result{}, s.permanent([]core.Request{req}, err)
	default:
		return s.fallback(ctx, req, err, now, !s.closedFor(&req, slot))
	}
	settler, busy, wait := s.takeTurn(&req, now)
	if busy { // never to the store while the key's settlement is on its way
		if !wait {
			if res, ok := s.fromLastAnswer(&req, now); ok {
				return res, nil
			}
		}
		one := [1]core.Request{req}
		turns, waited, at, busy := s.waitForTurns(ctx, one[:])
		if busy {
			return s.unknownSlow(ctx, req, nil, now) // a busy policy is Local: refused
		}
		settler, start, now = turns != 0, waited, at
	}
	if settler {
		defer s.memo.endTurn(&req)
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
	case canceled: // the lease may have landed: see acquiresUnsure
		s.acquiresUnsure([]core.Request{req}, o, err, now)()
		return core.Result{}, fmt.Errorf("resilient: policy %q: %w", req.Policy.Name(), err)
	case broken:
		return core.Result{}, s.permanent([]core.Request{req}, err)
	}
	if settler {
		s.memo.callFailed(&req)
	}
	// The lease may have landed: marked now, released once decided unless granted.
	defer s.acquiresUnsure([]core.Request{req}, o, err, now)()
	if !s.closedFor(&req, slot) { // this failure opened a breaker
		return s.fallback(ctx, req, err, now, true)
	}
	// Open and Closed keep their promise; concurrency leases are not continued.
	if !s.continuesLastAnswer(&req) {
		return s.fallback(ctx, req, err, now, false)
	}
	if res, ok := s.fromLastAnswer(&req, now); ok {
		return res, nil
	}
	return s.unknownSlow(ctx, req, err, now)
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
// A call that fails while the breakers stay closed is decided, for a stack of Local
// policies, from the members' last shared answers, all-or-nothing, when every one is
// known, and refused with a short Retry-After when one is not; a stack with an Open
// or Closed policy is decided by the failure modes, without a transition. While
// another decision charges a member's settlement, the stack is decided from the last
// answers or waits for that charge, and is never sent to the shared store before it
// lands. On a Cluster, the stack calls the shared store while the breakers of every
// member's slot are closed, and a failed call counts in each of them.
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
	if !s.stackClosed(slot, reqs) {
		return s.fallbackStack(ctx, reqs, results, ErrBreakerOpen, now, true)
	}
	for i := range reqs {
		// A failed hand-over ends them: the next would wait out the deadline too.
		switch o, err := s.handOver(ctx, &reqs[i], s.slots.of(&reqs[i]), now); o { // a failed call: see handOver
		case succeeded:
		case canceled:
			return false, fmt.Errorf("resilient: %s: %w", policyNames(reqs), err)
		case broken:
			return false, s.permanent(reqs, err)
		default:
			return s.failedStack(ctx, reqs, results, slot, err, now)
		}
	}
	turns, busy, wait := s.takeTurns(reqs, now)
	if busy {
		s.endTurns(reqs, turns)
		if !wait {
			if allowed, ok := s.busyFromLastAnswers(reqs, results, now); ok {
				return allowed, nil
			}
		}
		if turns, start, now, busy = s.waitForTurns(ctx, reqs); busy {
			return s.unknownSlowStack(reqs, results), nil
		}
	}
	if turns != 0 {
		defer s.endTurns(reqs, turns)
	}
	// The call may outlive this method (at the deadline), so it works on its own copies.
	own := append([]core.Request(nil), reqs...)
	buf := make([]core.Result, len(reqs))
	var allowed bool
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error {
		var err error
		allowed, err = s.shared.DecideStack(ctx, own, buf)
		return err
	}, reqs[1:]...)
	switch o {
	case succeeded:
		copy(results, buf)
		allowed = s.settleStack(ctx, reqs, results, allowed, now)
		for i := range reqs {
			s.memo.remember(&reqs[i], &results[i], now)
			s.pre.remember(&reqs[i], &results[i], now)
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaShared)
		}
		return allowed, nil
	case canceled: // the leases may have landed: see acquiresUnsure
		s.acquiresUnsure(reqs, o, err, now)()
		return false, fmt.Errorf("resilient: %s: %w", policyNames(reqs), err)
	case broken:
		return false, s.permanent(reqs, err)
	}
	s.callFailed(reqs, turns)
	// The leases may have landed: marked now, released once decided unless granted.
	defer s.acquiresUnsure(reqs, o, err, now)()
	return s.failedStack(ctx, reqs, results, slot, err, now)
}

// failedStack decides reqs at now after a call to the shared store for them failed
// with err: by their failure modes when that failure opened a breaker, else as slow
// calls, from their last answers.
func (s *Store) failedStack(ctx context.Context, reqs []core.Request, results []core.Result, slot int, err error, now int64) (bool, error) {
	if !s.stackClosed(slot, reqs) {
		return s.fallbackStack(ctx, reqs, results, err, now, true)
	}
	if !s.allLocal(reqs) {
		return s.slowMixedStack(ctx, reqs, results, err, now)
	}
	if allowed, ok := s.stackFromLastAnswers(reqs, results, now); ok {
		return allowed, nil
	}
	return s.unknownSlowStack(reqs, results), nil
}

// allLocal reports whether every policy of reqs is in Local mode.
func (s *Store) allLocal(reqs []core.Request) bool {
	for i := range reqs {
		if s.cfg.modeOf(reqs[i].Policy.Name()) != Local {
			return false
		}
	}
	return true
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

// closedFor reports whether the breakers let req, whose state lives in slot (-1:
// none), call the shared store: the store's, its slot's, and its master's (stuckNodes).
func (s *Store) closedFor(req *core.Request, slot int) bool {
	return s.breaker.closed() && s.slots.closedFor(req, slot)
}

// stackClosed is closedFor for a stack whose first member's state lives in slot:
// while the breaker of any slot is open, the stack calls the shared store only when
// every member's slot is closed. On a Cluster a stack's call reaches the master of
// each member, and a stuck master holding the addresses of a login stack, not its
// account, never sent the stack to Local mode: logins from addresses Redis had not
// answered for were refused for the whole outage
// (examples/server's TestClusterLoginStackOnAStuckMaster).
func (s *Store) stackClosed(slot int, reqs []core.Request) bool {
	if !s.closedFor(&reqs[0], slot) {
		return false
	}
	if s.slots == nil || s.slots.notClosed.Load() == 0 {
		return true
	}
	for i := 1; i < len(reqs); i++ {
		if !s.slots.closedFor(&reqs[i], s.slots.of(&reqs[i])) {
			return false
		}
	}
	return true
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
