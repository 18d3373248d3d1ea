package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// checkKey is the reserved key the start-up check decides on, under policies named
// "ratelimit-check-" + algorithm. Their state is a few bytes per algorithm and expires
// within seconds.
const checkKey = "ratelimit-check"

// checkTimeout bounds each call of Check: longer than the decision deadline, because
// the first calls may dial and load scripts.
const checkTimeout = 5 * time.Second

// checkPolicies are the policies of the start-up check: one per algorithm, generous
// enough that checks from many replicas are admitted, and quick to expire.
func checkPolicies() []core.Policy {
	var policies []core.Policy
	for _, a := range core.Algorithms() {
		name := "ratelimit-check-" + string(a)
		if a == core.Concurrency {
			policies = append(policies, core.MustConcurrencyPolicy(name, 1000, time.Second))
			continue
		}
		policies = append(policies, core.MustPolicy(name, a, core.PerSecond(1000)))
	}
	return policies
}

// Check runs real decisions on the shared store at start-up, on the key
// "ratelimit-check": one per algorithm, a stack of all the rate algorithms, and a
// concurrency lease and its release. It bypasses the failure modes and the breaker, so
// that a store that cannot work is found before traffic arrives. Each call is bounded
// by 5 seconds, and the whole check by ctx: a ctx that expires first counts as a store
// that did not answer (ErrTimeout, wrapping core.ErrStoreUnavailable); a cancelled one
// is returned as such.
//
// An error wraps ErrPermanent when the store answered but cannot serve these decisions
// (a missing command or script feature, a Redis too old, CROSSSLOT, a reply of the
// wrong shape): fix the deployment; it is logged at error level. It wraps
// core.ErrStoreUnavailable when the store did not answer: the failure modes will
// decide until it does; it is logged at warn level. A server may choose to start in
// that case. Check then sends the probe that failures in traffic ask for, within ctx
// and at most five times the deadline's ceiling (1 s by default), and when it finds
// the store, or on a Cluster the failed call's master, unreachable too (or still
// timing out when ctx's deadline comes), opens the breaker that decides that call,
// so that the first requests are decided in the failure modes, as in any confirmed
// outage. A call that was never sent because the client was saturated (ErrOverload)
// opens nothing.
func (s *Store) Check(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	failed, err := s.checkCalls(ctx)
	if errors.Is(err, core.ErrStoreUnavailable) && !errors.Is(err, ErrOverload) {
		s.confirmUnreachable(ctx, failed)
	}
	return err
}

// confirmUnreachable sends, before it returns, the confirming probes that failures
// of failed's calls in traffic would ask for: the store-wide one, then, when the store
// answers elsewhere, that of failed's Cluster slot, whose master may be down alone
// (it is then marked stuck, and every key it holds follows its failure mode). Left
// closed after a failed Check, the breakers waited for traffic to fail: a server
// started while Redis was down refused its first clients' keys in Local mode, as
// slow calls refuse a key no answer is known for, with 429s to clients that had spent
// nothing (found by a run of the reference server against a dead Redis).
func (s *Store) confirmUnreachable(ctx context.Context, failed *core.Request) {
	s.openIfUnreachable(ctx, s.breaker, -1)
	if slot := s.slots.of(failed); slot >= 0 && s.breaker.closed() {
		s.openIfUnreachable(ctx, s.slots.breakerOf(slot), slot)
	}
}

// openIfUnreachable opens b, slot's breaker (the store's for -1), when its confirming
// probe finds the store unreachable. A breaker that is not closed, or whose
// confirmation traffic has already asked for, is left to that: Check's probe would
// add nothing (and many Checks in an outage would each send one).
func (s *Store) openIfUnreachable(ctx context.Context, b *breaker, slot int) {
	if !b.closed() || b.confirming() {
		return
	}
	if reachable, ok, key := s.confirmingProbe(ctx, slot); ok && !reachable {
		s.breakerOpened(b.openedByCheck(s.now()), slot, key)
	}
}

// checkCalls makes Check's calls, stopping at the first that fails, and returns its
// request (for a stack, its first member) and error.
func (s *Store) checkCalls(ctx context.Context) (*core.Request, error) {
	lease := uint64(time.Now().UnixNano())
	var rates []core.Request
	for _, p := range checkPolicies() {
		req := core.Request{Policy: p, Key: checkKey, Lease: lease}
		if p.Algorithm() != core.Concurrency {
			rates = append(rates, req)
		}
		if err := s.check(ctx, "decide "+p.Name(), func(ctx context.Context) error {
			res, err := s.shared.Decide(ctx, req)
			if err == nil {
				err = checkResult(&req, &res)
			}
			if err == nil && p.Algorithm() == core.Concurrency && res.Allowed {
				err = s.shared.Release(ctx, req, res.Lease)
			}
			return err
		}); err != nil {
			return &req, err
		}
	}
	return &rates[0], s.check(ctx, "stack", func(ctx context.Context) error {
		results := make([]core.Result, len(rates))
		if _, err := s.shared.DecideStack(ctx, rates, results); err != nil {
			return err
		}
		for i := range rates {
			if err := checkResult(&rates[i], &results[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// check runs one call of Check and classifies its error.
func (s *Store) check(ctx context.Context, what string, fn func(context.Context) error) error {
	err, timedOut := s.guard.run(ctx, checkTimeout, fn)
	o, kind := classify(ctx, err, timedOut)
	if o == canceled && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// The caller's bound on the check ran out: the store did not answer within it.
		o, kind, timedOut = failed, KindTimeout, false
		err = fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())
	}
	switch o {
	case succeeded:
		return nil
	case canceled:
		return fmt.Errorf("resilient: check: %s: %w", what, err)
	case failed:
		if timedOut {
			err = fmt.Errorf("%w (%v)", ErrTimeout, checkTimeout)
		}
		s.cfg.logger.Warn("ratelimit: start-up check: the shared store cannot serve now (down, loading, full, read-only); the failure modes decide until it can",
			"store", s.cfg.storeName, "call", what, "kind", string(kind), "error", err.Error())
		if !errors.Is(err, core.ErrStoreUnavailable) {
			err = fmt.Errorf("%w: %w", core.ErrStoreUnavailable, err)
		}
		return fmt.Errorf("resilient: check: %s: %w", what, err)
	}
	s.cfg.logger.Error("ratelimit: start-up check: the shared store cannot decide; fix the deployment",
		"store", s.cfg.storeName, "call", what, "error", err.Error())
	return fmt.Errorf("resilient: check: %s: %w: %w", what, ErrPermanent, err)
}

// checkResult verifies that a check decision came back as the policy says.
func checkResult(req *core.Request, res *core.Result) error {
	if res.Policy != req.Policy.Name() || res.Limit != req.Policy.Capacity() || res.Remaining < 0 || res.Remaining > res.Limit {
		return fmt.Errorf("policy %q: unexpected result %+v (want limit %d)", req.Policy.Name(), *res, req.Policy.Capacity())
	}
	return nil
}
