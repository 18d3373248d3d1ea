package resilient

import (
	"context"
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// Release ends a concurrency lease where it was granted: in the local store for a
// lease Local mode granted, nowhere for one Open mode granted unenforced, else in the
// shared store, under the deadline and the breaker. A shared lease that cannot be
// released now (the store fails or the breaker is open) is released there when it
// answers again: before the key's next decision, and in the prober's passes once the
// breakers close (leaseBook.endedAt, releasePass). The error says so and wraps
// core.ErrStoreUnavailable; at the latest, the lease expires with its lease timeout.
// A failure mode's lease whose acquire's call failed after it may have reached the
// shared store is also released there, in the same way: the shared store may hold
// it too (see acquiresUnsure).
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
	if found, local, shared := s.leases.take(leaseKey{req.Policy.ID(), req.Key, lease}); found {
		if shared { // its acquire's call failed late: the shared store may hold it too
			s.endedAt(&req, lease, s.now())
		}
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
	start, now := s.instant()
	slot := s.slots.of(&req)
	if !s.closedFor(&req, slot) {
		s.endedAt(&req, lease, now)
		return fmt.Errorf("resilient: release lease of policy %q (released when the store is back, or expires after %v): %w: %w", req.Policy.Name(), req.Policy.Period(), core.ErrStoreUnavailable, ErrBreakerOpen)
	}
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error { return s.shared.Release(ctx, req, lease) })
	switch o {
	case succeeded:
		return nil
	case canceled: // it may have landed, or not: releasing it again is harmless
		s.endedAt(&req, lease, now)
		return fmt.Errorf("resilient: release lease of policy %q: %w", req.Policy.Name(), err)
	case broken:
		s.logPermanent(fmt.Sprintf("policy %q", req.Policy.Name()), err)
		return fmt.Errorf("resilient: release lease of policy %q: %w: %w", req.Policy.Name(), ErrPermanent, err)
	}
	s.endedAt(&req, lease, now)
	return fmt.Errorf("resilient: release lease of policy %q (released when the store is back, or expires after %v): %w: %w", req.Policy.Name(), req.Policy.Period(), core.ErrStoreUnavailable, err)
}

// releaseEnded releases on the shared store the leases of ended (one key's) whose
// requests ended while their release failed, one call at a time, each a call of the
// key's under the deadline (Store.call: the breakers count it, the observers see it).
// goOn, when not nil, is asked before each release whether to go on. It stops at the
// first release that does not succeed, or when goOn says so, and the book remembers
// that lease and those after it again. released says it released them all; when it
// did not, o and err are how the release it stopped at ended (o is succeeded when
// goOn stopped it).
func (s *Store) releaseEnded(ctx context.Context, ended *endedLeases, goOn func() bool) (released bool, o outcome, err error) {
	req := core.Request{Policy: ended.policy, Key: ended.key}
	slot := s.slots.of(&req)
	for i, l := range ended.leases {
		if goOn != nil && !goOn() {
			s.leases.restoreEnded(ended.policy, ended.key, ended.leases[i:])
			return false, succeeded, nil
		}
		start, _ := s.instant()
		o, err = s.call(ctx, slot, start, func(ctx context.Context) error { return s.shared.Release(ctx, req, l.lease) })
		if o == succeeded {
			continue
		}
		if o == broken {
			s.logPermanent(fmt.Sprintf("policy %q", req.Policy.Name()), err)
		}
		s.leases.restoreEnded(ended.policy, ended.key, ended.leases[i:])
		s.releaseLater()
		return false, o, err
	}
	return true, succeeded, nil
}
