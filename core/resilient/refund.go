package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	transitions "github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// ErrNoRefund is wrapped by the error of Refund when the shared store cannot give
// cost back (it does not implement core.Refunder).
var ErrNoRefund = errors.New("resilient: the shared store cannot refund")

var _ core.Refunder = (*Store)(nil)

// Refund gives req's effective cost back, as Decide would have charged it. The HTTP
// engine (core/httpengine) uses it to undo what an outer limiter charged when a
// limiter nested inside it refuses the request (one decision per request), and for
// WithSettle.
//
// A bucket (token bucket, GCRA, leaky bucket) gives back no more than the shared
// store would: the cost less what the bucket has refilled since chargedAt
// (core.Refunder), on this Store's clock. That much is given back first where this
// store charged it without the shared store: from what slow calls admitted and the
// shared store has not been charged yet, then from the key's local allowance (Local
// mode), which then owes the shared store that much less when it returns. Whatever
// is left goes to the shared store, under the deadline and the breakers of req's key.
// While a breaker of req's key is open, or when the call fails, that part is dropped
// and the error says so, wrapping core.ErrStoreUnavailable: the charge stays, so a
// lost refund can only make the store admit less, never more.
//
// Once the refund succeeded, the pre-limiter refuses a request of req's key only at
// req's cost more than the refusal it remembers, which the refund may have made the
// shared store admit (preLimiter.refunded).
//
// chargedAt is the Result.DecidedAt of the admission: the shared store's instant
// when it charged the request, or for a bucket decided in process memory (Local
// mode, or a slow call decided from the last answer) this Store's instant. A window
// decided in process memory has none, because its cost is paid to the shared store
// later, in a window it does not know; a window algorithm then gives nothing back
// (less, never more). A zero chargedAt gives a bucket its whole cost back, as the
// stores do.
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
	start, now := s.instant()
	refundable := req.EffectiveCost()
	if !chargedAt.IsZero() {
		refundable = transitions.RefundableCost(&req.Policy, s.wallMillis(now).UnixMilli(), chargedAt.UnixMilli(), refundable)
	}
	given := s.refundInMemory(ctx, &req, refundable, now)
	if given >= refundable { // the bucket has refilled the rest: the shared store would give nothing
		if given > 0 {
			s.pre.refunded(&req)
		}
		return nil
	}
	whole := req
	req.Cost = req.EffectiveCost() - given
	slot := s.slots.of(&req)
	if !s.closedFor(&req, slot) {
		return fmt.Errorf("resilient: refund of policy %q dropped: %w: %w", req.Policy.Name(), core.ErrStoreUnavailable, ErrBreakerOpen)
	}
	o, err := s.call(ctx, slot, start, func(ctx context.Context) error { return refunder.Refund(ctx, req, chargedAt) })
	switch o {
	case succeeded:
		s.pre.refunded(&whole)
		return nil
	case canceled:
		return fmt.Errorf("resilient: refund of policy %q: %w", req.Policy.Name(), err)
	case broken:
		s.logPermanent(fmt.Sprintf("policy %q", req.Policy.Name()), err)
		return fmt.Errorf("resilient: refund of policy %q: %w: %w", req.Policy.Name(), ErrPermanent, err)
	}
	return fmt.Errorf("resilient: refund of policy %q dropped: %w: %w", req.Policy.Name(), core.ErrStoreUnavailable, err)
}

// refundInMemory gives back what it can, up to cost, of req's charge where this store
// charged it without the shared store (see Refund), at now, and returns how much it
// gave. Only buckets: a window's refund must come out of the window that counted the
// charge, which a cost paid to the shared store later does not know.
func (s *Store) refundInMemory(ctx context.Context, req *core.Request, cost, now int64) int64 {
	switch req.Policy.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
	default:
		return 0
	}
	if cost < 1 {
		return 0
	}
	given, allowance := s.memo.cancelUnsettled(req, cost, now)
	local, ok := s.local.(core.Refunder)
	if given == cost || !allowance || !ok {
		return given
	}
	q, err := s.degrade.policy(req.Policy)
	if err != nil {
		return given
	}
	// cost is already what the bucket has not refilled (Refund): the allowance gets
	// it back whole, as its bookkeeping (memo.refundAllowance) counts it.
	return given + s.memo.refundAllowance(req, &q, cost-given, now, func(key string, cost int64) error {
		return local.Refund(ctx, core.Request{Policy: q, Key: key, Cost: cost}, time.Time{})
	})
}
