package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrNoRefund is wrapped by the error of Refund when the shared store cannot give
// cost back (it does not implement core.Refunder).
var ErrNoRefund = errors.New("resilient: the shared store cannot refund")

var _ core.Refunder = (*Store)(nil)

// Refund gives req's effective cost back in the shared store, under the deadline and
// the breakers of req's key, as Decide would call it. The HTTP engine
// (core/httpengine) uses it to undo what an outer limiter charged when a limiter
// nested inside it refuses the request (one decision per request), and for
// WithSettle.
//
// A refund is never made in process memory. While a breaker of req's key is open, or
// when the call fails, the refund is dropped and the error says so, wrapping
// core.ErrStoreUnavailable: the charge stays, so a lost refund can only make the
// store admit less, never more. A cost that Local mode charged in memory is paid to
// the shared store when it comes back (see docs/failure.md), so refunding it there
// is refunding where it ends up. chargedAt is the Result.DecidedAt of the admission:
// the shared store's instant when it charged the request. A result decided in
// process memory (Local mode, or a slow call decided from the last answer) has none,
// because its cost is paid to the shared store later, at an instant it does not know;
// a window algorithm then gives nothing back (less, never more).
func (s *Store) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := req.Check(); err != nil {
		return err
	}
	refunder, ok := s.shared.(core.Refunder)
	if !ok {
		return fmt.Errorf("%w: policy %q", ErrNoRefund, req.Policy.Name())
	}
	start, _ := s.instant()
	slot := s.slots.of(&req)
	if !s.closedFor(slot) {
		return fmt.Errorf("resilient: refund of policy %q dropped: %w: %w", req.Policy.Name(), core.ErrStoreUnavailable, ErrBreakerOpen)
	}
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error { return refunder.Refund(ctx, req, chargedAt) })
	switch o {
	case succeeded:
		return nil
	case canceled:
		return fmt.Errorf("resilient: refund of policy %q: %w", req.Policy.Name(), err)
	case broken:
		s.logPermanent(fmt.Sprintf("policy %q", req.Policy.Name()), err)
		return fmt.Errorf("resilient: refund of policy %q: %w: %w", req.Policy.Name(), ErrPermanent, err)
	}
	return fmt.Errorf("resilient: refund of policy %q dropped: %w: %w", req.Policy.Name(), core.ErrStoreUnavailable, err)
}
