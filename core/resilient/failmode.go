package resilient

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// fallback decides req by its policy's failure mode, because the shared store could
// not (cause) at now.
func (s *Store) fallback(ctx context.Context, req core.Request, cause error, now int64) (core.Result, error) {
	mode := s.cfg.modeOf(req.Policy.Name())
	s.enterFallback(req.Policy.Name(), mode, cause, now)
	switch mode {
	case Open:
		res := unenforced(&req, true)
		s.grantedLease(&req, &res, false, now)
		s.decided(&req, OutcomeUnenforced, ViaOpen)
		return res, nil
	case Closed:
		s.decided(&req, OutcomeUnavailable, ViaClosed)
		return core.Result{}, &UnavailableError{Policies: []string{req.Policy.Name()}, RetryAfter: s.breaker.retryAfter(now), Err: cause}
	}
	degraded, err := s.degrade.policy(req.Policy)
	if err != nil {
		return core.Result{}, err
	}
	res, err := s.local.Decide(ctx, localRequest(req, degraded))
	if err != nil {
		return core.Result{}, fmt.Errorf("resilient: policy %q: local store: %w", req.Policy.Name(), err)
	}
	s.grantedLease(&req, &res, true, now)
	s.decided(&req, outcomeOf(&res), ViaLocal)
	return res, nil
}

// fallbackStack decides a stack by its policies' failure modes (see DecideStack).
func (s *Store) fallbackStack(ctx context.Context, reqs []core.Request, results []core.Result, cause error, now int64) (bool, error) {
	var closed []string
	var local []int
	for i := range reqs {
		mode := s.cfg.modeOf(reqs[i].Policy.Name())
		s.enterFallback(reqs[i].Policy.Name(), mode, cause, now)
		switch mode {
		case Closed:
			closed = append(closed, reqs[i].Policy.Name())
		case Local:
			local = append(local, i)
		}
	}
	if len(closed) > 0 {
		for i := range reqs {
			results[i] = core.Result{Policy: reqs[i].Policy.Name(), Limit: reqs[i].Policy.Capacity()}
			s.decided(&reqs[i], OutcomeUnavailable, ViaClosed)
		}
		return false, &UnavailableError{Policies: closed, RetryAfter: s.breaker.retryAfter(now), Err: cause}
	}
	allowed := true
	if len(local) > 0 {
		localReqs := make([]core.Request, len(local))
		localResults := make([]core.Result, len(local))
		for j, i := range local {
			degraded, err := s.degrade.policy(reqs[i].Policy)
			if err != nil {
				return false, err
			}
			localReqs[j] = localRequest(reqs[i], degraded)
		}
		var err error
		if allowed, err = s.local.DecideStack(ctx, localReqs, localResults); err != nil {
			return false, fmt.Errorf("resilient: %s: local store: %w", policyNames(reqs), err)
		}
		for j, i := range local {
			results[i] = localResults[j]
		}
	}
	for i := range reqs {
		local := s.cfg.modeOf(reqs[i].Policy.Name()) == Local
		if !local {
			results[i] = unenforced(&reqs[i], allowed)
		}
		if allowed {
			s.grantedLease(&reqs[i], &results[i], local, now)
		}
		switch {
		case local:
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaLocal)
		case allowed:
			s.decided(&reqs[i], OutcomeUnenforced, ViaOpen)
		default:
			s.decided(&reqs[i], OutcomeUncharged, ViaOpen)
		}
	}
	return allowed, nil
}

// unenforced is the result of an Open policy: admitted uncounted when the rest of its
// decision admits, else not admitted and unspent. Remaining is unknown; it reports the
// policy's capacity less the request's cost.
func unenforced(req *core.Request, allowed bool) core.Result {
	res := core.Result{
		Policy:     req.Policy.Name(),
		Allowed:    allowed,
		Limit:      req.Policy.Capacity(),
		Remaining:  max(0, req.Policy.Capacity()-req.EffectiveCost()),
		Unenforced: true,
	}
	if allowed && req.Policy.Algorithm() == core.Concurrency {
		res.Lease = req.Lease
	}
	return res
}

// grantedLease remembers the lease of an admitted concurrency request that a failure
// mode granted, so that Release does not look for it in the shared store.
func (s *Store) grantedLease(req *core.Request, res *core.Result, local bool, now int64) {
	if req.Policy.Algorithm() != core.Concurrency || !res.Allowed {
		return
	}
	s.leases.add(leaseKey{req.Policy.ID(), req.Key, res.Lease}, local, now, req.Policy.Period())
}
