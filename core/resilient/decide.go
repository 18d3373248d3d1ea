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
// deadline, unless its breaker is open; when it cannot, the policy's failure mode
// decides (see Mode). A cancelled or expired ctx is returned as an error wrapping
// ctx.Err() and is not a store failure. A permanent store error is returned wrapping
// ErrPermanent, in every mode.
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
	cause := ErrBreakerOpen
	if t := s.allow(now); t.allowed {
		var (
			res core.Result
			o   outcome
			err error
		)
		if s.direct {
			res, o, err = s.decideDirect(ctx, t, start, &req)
		} else {
			res, o, err = s.decideGuarded(ctx, t, start, req)
		}
		switch o {
		case succeeded:
			s.pre.remember(&req, &res, now)
			s.decided(&req, outcomeOf(&res), ViaShared)
			return res, nil
		case canceled:
			return core.Result{}, fmt.Errorf("resilient: policy %q: %w", req.Policy.Name(), err)
		case broken:
			return core.Result{}, s.permanent([]core.Request{req}, err)
		}
		cause = err
	}
	return s.fallback(ctx, req, cause, now)
}

// DecideStack decides the requests as one all-or-nothing decision. The pre-limiter
// refuses the stack when it knows any member refused. Otherwise the shared store
// decides it; when it cannot, the failure modes do, as one decision:
//
//   - a stack with a Closed policy fails closed: an *UnavailableError naming the Closed
//     policies, and nothing is charged anywhere;
//   - otherwise the Local policies are decided together, all-or-nothing, in process
//     memory, and the Open ones are unenforced: the stack is admitted when the Local
//     ones admit it (Open policies report Unenforced), refused when they refuse it.
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
	cause := ErrBreakerOpen
	if t := s.allow(now); t.allowed {
		// The call may outlive this method (at the deadline), so it works on its own copies.
		own := append([]core.Request(nil), reqs...)
		buf := make([]core.Result, len(reqs))
		var allowed bool
		o, err := s.call(ctx, t, start, func(ctx context.Context) error {
			var err error
			allowed, err = s.shared.DecideStack(ctx, own, buf)
			return err
		})
		switch o {
		case succeeded:
			copy(results, buf)
			for i := range reqs {
				s.pre.remember(&reqs[i], &results[i], now)
				s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaShared)
			}
			return allowed, nil
		case canceled:
			return false, fmt.Errorf("resilient: %s: %w", policyNames(reqs), err)
		case broken:
			return false, s.permanent(reqs, err)
		}
		cause = err
	}
	return s.fallbackStack(ctx, reqs, results, cause, now)
}

// preRefusesStack fills results and reports true when the pre-limiter knows a member
// of the stack refused. The other members report not admitted and unspent; their
// Remaining is unknown and reported as 0.
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
		} else {
			s.decided(&reqs[i], OutcomeUncharged, ViaPreLimit)
		}
	}
	return true
}

// allow asks the breaker whether to call the shared store at now.
func (s *Store) allow(now int64) ticket {
	t, tr := s.breaker.allow(now)
	s.breakerChanged(tr)
	return t
}

// call runs fn against the shared store under the deadline, with the breaker's
// ticket t, and reports how it ended. start is the real time the decision began
// (from instant), which the latency is measured from. It reports the call to the
// observers (unless the caller's ctx ended it) and, when the store answered with
// the breaker closed, ends the policies' fallbacks.
func (s *Store) call(ctx context.Context, t ticket, start time.Time, fn func(context.Context) error) (outcome, error) {
	err, timedOut := s.guard.run(ctx, 0, fn)
	return s.finish(ctx, t, start, err, timedOut)
}

// finish classifies how a call to the shared store ended (err, and timedOut when its
// deadline or ctx ended it first) and reports it, for call and decideDirect.
func (s *Store) finish(ctx context.Context, t ticket, start time.Time, err error, timedOut bool) (outcome, error) {
	end, now := s.instant()
	latency := end.Sub(start)
	if errors.Is(err, ErrClosed) && !timedOut {
		s.breaker.done(t, canceled, now)
		return canceled, err
	}
	o, kind := classify(ctx, err, timedOut)
	if o == failed && kind == KindTimeout {
		err = fmt.Errorf("%w (%v): %w", ErrTimeout, s.cfg.deadline, err)
	}
	s.breakerChanged(s.breaker.done(t, o, now))
	if o != canceled {
		s.storeCall(latency, kind, err)
	}
	if (o == succeeded || o == broken) && s.breaker.current() == BreakerClosed {
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
