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
// the breakers stay closed (one slow call under load) is not an outage and no
// transition: a Local policy is decided from the key's last shared answer, without
// refill (unknownSlow when none is known), an Open one is admitted unenforced and a
// Closed one refused as unavailable, as their modes promise. A cancelled or expired ctx is returned as
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
	if !s.closedFor(&req, slot) {
		return s.fallback(ctx, req, ErrBreakerOpen, now, true)
	}
	s.handOver(ctx, &req, now)
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
	case canceled:
		return core.Result{}, fmt.Errorf("resilient: policy %q: %w", req.Policy.Name(), err)
	case broken:
		return core.Result{}, s.permanent([]core.Request{req}, err)
	}
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

// continuesLastAnswer reports whether req's policy is decided from its key's last
// shared answer while the store is slow: a Local policy, other than a concurrency
// limit, whose leases are not continued.
func (s *Store) continuesLastAnswer(req *core.Request) bool {
	return s.cfg.modeOf(req.Policy.Name()) == Local && req.Policy.Algorithm() != core.Concurrency
}

// fromLastAnswer decides req at now from its key's last shared answer, as a slow
// call is (memo.decideSlow), and records the decision; false when no answer is known.
func (s *Store) fromLastAnswer(req *core.Request, now int64) (core.Result, bool) {
	capQ, ok := s.localCapacity(req)
	if !ok {
		return core.Result{}, false
	}
	res, ok := s.memo.decideSlow(req, capQ, now)
	if ok {
		s.decided(req, outcomeOf(&res), ViaLastShared)
	}
	return res, ok
}

// localCapacity is the capacity of req's policy in Local mode: this replica's share
// (WithReplicas, WithDegrade), of which slow calls spend the same share of a last
// answer. ok is false when WithDegrade made the policy invalid; the key's answer is
// then not used.
func (s *Store) localCapacity(req *core.Request) (int64, bool) {
	q, err := s.degrade.policy(req.Policy)
	return q.Capacity(), err == nil
}

// localCapacities is localCapacity for each member of a stack.
func (s *Store) localCapacities(reqs []core.Request) ([]int64, bool) {
	capQs := make([]int64, len(reqs))
	for i := range reqs {
		var ok bool
		if capQs[i], ok = s.localCapacity(&reqs[i]); !ok {
			return nil, false
		}
	}
	return capQs, true
}

// stackFromLastAnswers is fromLastAnswer for a stack of Local policies, all-or-nothing
// (memo.decideSlowStack): ok is false when a member's answer is not known.
func (s *Store) stackFromLastAnswers(reqs []core.Request, results []core.Result, now int64) (allowed, ok bool) {
	capQs, ok := s.localCapacities(reqs)
	if !ok {
		return false, false
	}
	if allowed, ok = s.memo.decideSlowStack(reqs, capQs, results, now); ok {
		for i := range reqs {
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaLastShared)
		}
	}
	return allowed, ok
}

// unknownSlow decides req, whose call failed while the breakers stayed closed,
// when no shared answer is known for its key: an Open policy admits it unenforced, a
// Closed one refuses it as unavailable, and a Local one refuses it with a Retry-After
// of the deadline's ceiling. Local mode's share of a key the store never answered for
// is for outages; while the store is only slow, nothing is known, and many instances
// each granting a share would over-grant together.
func (s *Store) unknownSlow(ctx context.Context, req core.Request, cause error, now int64) (core.Result, error) {
	if s.cfg.modeOf(req.Policy.Name()) != Local {
		return s.fallback(ctx, req, cause, now, false)
	}
	res := s.unknownRefusal(&req)
	s.decided(&req, OutcomeDenied, ViaLastShared)
	return res, nil
}

// unknownRefusal is the refusal of req by a slow call when no shared answer is known:
// nothing charged, a Retry-After of the deadline's ceiling.
func (s *Store) unknownRefusal(req *core.Request) core.Result {
	return core.Result{Policy: req.Policy.Name(), Limit: req.Policy.Capacity(), RetryAfter: s.deadline.ceiling}
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
// answers (busyFromLastAnswers) or waits for that charge (waitForTurns), never sent
// to the shared store before it lands. On a Cluster, the stack calls the shared
// store while the breakers of every member's slot are closed (stackClosed), and a
// failed call counts in each (membersFailed).
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
		s.handOver(ctx, &reqs[i], now)
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
	case canceled:
		return false, fmt.Errorf("resilient: %s: %w", policyNames(reqs), err)
	case broken:
		return false, s.permanent(reqs, err)
	}
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

// busyFromLastAnswers decides a stack one of whose members' settlement another
// decision is charging (takeTurns) from its members' last answers, as a slow call
// is, when they are all Local and known; ok is false otherwise, and the stack then
// waits for the settlement (waitForTurns). Such a stack never goes to the shared
// store while the charge is on its way: the store does not hold it yet and would
// grant its units again. Sent to the store, logins from addresses Redis had not
// answered for got an account 6–7 attempts of 5 when a stopped Cluster master
// resumed (TestStackThatWaitsForTheSettlement, and examples/server's
// TestClusterLoginStackOnAStuckMaster).
func (s *Store) busyFromLastAnswers(reqs []core.Request, results []core.Result, now int64) (allowed, ok bool) {
	if !s.allLocal(reqs) {
		return false, false
	}
	return s.stackFromLastAnswers(reqs, results, now)
}

// slowMixedStack decides a stack that holds Open or Closed policies beside Local
// ones, whose call failed while the breakers stayed closed, member by member as a
// single slow call is: a Closed member fails the stack closed, the Local members
// decide from their last shared answers (all-or-nothing, without refill; the stack
// is refused when one is not known), and the Open members are unenforced. Deciding
// the Local members from a fresh local allowance instead let a second instance
// admit 5 more attempts at an account its first had spent.
func (s *Store) slowMixedStack(ctx context.Context, reqs []core.Request, results []core.Result, cause error, now int64) (bool, error) {
	var local []int
	for i := range reqs {
		switch s.cfg.modeOf(reqs[i].Policy.Name()) {
		case Closed:
			return s.fallbackStack(ctx, reqs, results, cause, now, false)
		case Local:
			local = append(local, i)
		}
	}
	localReqs := make([]core.Request, len(local))
	localResults := make([]core.Result, len(local))
	for j, i := range local {
		localReqs[j] = reqs[i]
	}
	var allowed bool
	capQs, known := s.localCapacities(localReqs)
	if known {
		allowed, known = s.memo.decideSlowStack(localReqs, capQs, localResults, now)
	}
	if !known {
		return s.unknownSlowStack(reqs, results), nil
	}
	for j, i := range local {
		results[i] = localResults[j]
	}
	s.finishStack(reqs, results, allowed, ViaLastShared, now)
	return allowed, nil
}

// unknownSlowStack refuses a stack of Local policies whose call failed while the
// breakers stayed closed and whose members' answers are not all known, as
// unknownSlow refuses a single request: without an answer, each instance granting
// its share in memory would over-grant together (a login admitted a sixth attempt
// of five a minute, its first one having been slow). Nothing is charged; each
// member reports a Retry-After of the deadline's ceiling.
func (s *Store) unknownSlowStack(reqs []core.Request, results []core.Result) bool {
	for i := range reqs {
		results[i] = s.unknownRefusal(&reqs[i])
		s.decided(&reqs[i], OutcomeDenied, ViaLastShared)
	}
	return false
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

// membersFailed counts a failed stack call, already counted in the slot of its
// first member, in the slots of its other members: the master that failed may hold
// any of them. The breaker of a slot whose master is healthy is cleared by its
// confirming probe.
func (s *Store) membersFailed(first int, members []core.Request, now int64) {
	for i := range members {
		slot := s.slots.of(&members[i])
		if slot == first {
			continue
		}
		if b := s.slots.record(slot, failed, now); b != nil {
			s.confirm(b, slot)
		}
	}
}

// call runs fn against the shared store under the deadline, for a decision of slot,
// and reports how it ended. start is the real time the decision began (from instant),
// which the latency is measured from. It reports the call to the observers (unless the
// caller's ctx ended it) and to the breakers; a failure also to those of the slots of
// members, a stack's other requests (membersFailed).
func (s *Store) call(ctx context.Context, slot int, start time.Time, fn func(context.Context) error, members ...core.Request) (outcome, error) {
	return s.callWithin(ctx, slot, start, s.deadline.get(), fn, members...)
}

// callWithin is call with the deadline d. fn must write only to memory that the
// caller reads after it succeeded (see guard.run).
func (s *Store) callWithin(ctx context.Context, slot int, start time.Time, d time.Duration, fn func(context.Context) error, members ...core.Request) (outcome, error) {
	err, timedOut := s.guard.run(ctx, d, fn)
	return s.finish(ctx, slot, start, d, err, timedOut, members...)
}

// finish classifies how a call to the shared store under deadline d ended (err, and
// timedOut when its deadline or ctx ended it first) and reports it, for call and
// decideDirect.
func (s *Store) finish(ctx context.Context, slot int, start time.Time, d time.Duration, err error, timedOut bool, members ...core.Request) (outcome, error) {
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
	counted := o
	if o == failed && kind == KindTimeout && late(latency, d) {
		counted = canceled // the client was late, not the store: load, not failure
	}
	if s.breaker.record(counted, now) {
		s.confirm(s.breaker, -1)
	}
	if b := s.slots.record(slot, counted, now); b != nil {
		s.confirm(b, slot)
	}
	if counted == failed && s.slots != nil {
		s.membersFailed(slot, members, now)
	}
	if o != canceled {
		s.storeCall(latency, kind, err)
	}
	if (o == succeeded || o == broken) && s.falls.active.Load() > 0 && !s.anyOpen() {
		s.recovered(now)
	}
	return o, err
}

// late reports whether a call that timed out under deadline d after latency was
// noticed late: its goroutine ran well after the deadline fired, because the client's
// CPU is saturated. Such a timeout says nothing about the store (its answer may have
// been waiting in the socket), so it does not count toward the breakers; the call is
// still decided as a slow one.
func late(latency, d time.Duration) bool {
	return latency-d > max(2*time.Millisecond, d/20)
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
