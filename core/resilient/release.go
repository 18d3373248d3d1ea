package resilient

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// Release ends a concurrency lease where it was granted: in the local store for a
// lease Local mode granted, nowhere for one Open mode granted unenforced, else in the
// shared store, under the deadline and the breaker. A shared lease that cannot be
// released now (the store fails or the breaker is open) expires with its lease
// timeout; the error says so and wraps core.ErrStoreUnavailable.
func (s *Store) Release(ctx context.Context, req core.Request, lease uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := req.Check(); err != nil {
		return err
	}
	if req.Policy.Algorithm() != core.Concurrency {
		return fmt.Errorf("resilient: release: policy %q is %s, not concurrency", req.Policy.Name(), req.Policy.Algorithm())
	}
	if found, local := s.leases.take(leaseKey{req.Policy.ID(), req.Key, lease}); found {
		if !local {
			return nil
		}
		degraded, err := s.degrade.policy(req.Policy)
		if err != nil {
			return err
		}
		if err := s.local.Release(ctx, localRequest(req, degraded), lease); err != nil {
			return fmt.Errorf("resilient: release lease of policy %q: local store: %w", req.Policy.Name(), err)
		}
		return nil
	}
	start, _ := s.instant()
	slot := s.slots.of(&req)
	if !s.closedFor(&req, slot) {
		return fmt.Errorf("resilient: release lease of policy %q (it expires after %v): %w: %w", req.Policy.Name(), req.Policy.Period(), core.ErrStoreUnavailable, ErrBreakerOpen)
	}
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error { return s.shared.Release(ctx, req, lease) })
	switch o {
	case succeeded:
		return nil
	case canceled:
		return fmt.Errorf("resilient: release lease of policy %q: %w", req.Policy.Name(), err)
	case broken:
		s.logPermanent(fmt.Sprintf("policy %q", req.Policy.Name()), err)
		return fmt.Errorf("resilient: release lease of policy %q: %w: %w", req.Policy.Name(), ErrPermanent, err)
	}
	return fmt.Errorf("resilient: release lease of policy %q (it expires after %v): %w: %w", req.Policy.Name(), req.Policy.Period(), core.ErrStoreUnavailable, err)
}
