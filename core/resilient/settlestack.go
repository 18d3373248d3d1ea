package resilient

import (
	"context"

	"github.com/go-ratelimit/ratelimit/core"
)

// settleStack is settle for a stack the shared store answered with results (allowed:
// all admitted and charged). Each Local member pays what its local allowance
// admitted during an outage, and what slow calls admitted, as settle does for one
// request: the settlement of a member that could pay ends, that of one that could not
// stays open. When a member's allowance cannot pay for the request, or what slow calls
// admitted does not fit in what the shared store has left, the stack is refused as a
// whole, as it would have been in memory: what the shared store charged is given
// back, but that member's charge, which its settlement counts on, where it can be
// (refunds, when it is a core.Refunder, and released leases; a give-back that fails
// leaves a charge, which only admits less). The member that cannot pay reports a
// Retry-After and the others report unspent. It returns whether the stack stays
// admitted.
func (s *Store) settleStack(ctx context.Context, reqs []core.Request, results []core.Result, allowed bool, now int64) bool {
	// Every shared stack decision settles: arrays for the usual stack sizes keep it
	// from allocating.
	var shortOn [8]bool
	short := shortOn[:0]
	refuse := -1
	for i := range reqs {
		// A member that could pay ends its settlement even when another member
		// refuses the stack, which gives the member's charge back.
		sh := s.settleKey(ctx, &reqs[i], &results[i], now)
		if short = append(short, sh); sh && refuse < 0 {
			refuse = i
		}
	}
	if allowed && refuse >= 0 {
		s.giveBack(ctx, reqs, results, short)
		allowed = false
		for i := range reqs {
			results[i].Allowed = false
			results[i].Lease = 0
			if i == refuse {
				results[i].RetryAfter = emission(&reqs[i])
				continue
			}
			results[i].Remaining = min(results[i].Limit, results[i].Remaining+reqs[i].EffectiveCost())
		}
	}
	return allowed
}

// giveBack undoes, in the shared store, what an admitted stack charged: each rate
// member's cost is refunded (when the store is a core.Refunder) and each concurrency
// member's lease released, except the members marked keep. Each call is bounded by
// the deadline; one that fails is dropped.
//
// settleStack keeps the charge of a member whose local allowance cannot pay (never
// a concurrency member): debt's settlement for it assumes the shared store holds
// the request's charge, as it does for a refused single request. Given back, it
// would leave that member one request more than its allowance.
func (s *Store) giveBack(ctx context.Context, reqs []core.Request, results []core.Result, keep []bool) {
	refunder, canRefund := s.shared.(core.Refunder)
	for i := range reqs {
		req, lease, chargedAt := reqs[i], results[i].Lease, results[i].DecidedAt
		var undo func(context.Context) error
		switch {
		case keep[i]:
			continue
		case req.Policy.Algorithm() == core.Concurrency:
			undo = func(ctx context.Context) error { return s.shared.Release(ctx, req, lease) }
		case canRefund:
			undo = func(ctx context.Context) error { return refunder.Refund(ctx, req, chargedAt) }
		default:
			continue
		}
		s.guard.run(ctx, s.deadline.get(), undo)
	}
}
