package resilient

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// settleStack is settle for a stack the shared store answered with results (allowed:
// all admitted and charged). Each Local member pays what its local allowance
// admitted during an outage, and what slow calls admitted, as settle does for one
// request. When a member's allowance cannot pay for the request, the stack is refused
// as a whole, as it would have been in memory: what the shared store charged is given
// back where it can be (refunds, when it is a core.Refunder, and released leases; a
// give-back that fails leaves a charge, which only admits less), the member that
// cannot pay reports a Retry-After and the others report unspent. It returns whether
// the stack stays admitted.
func (s *Store) settleStack(ctx context.Context, reqs []core.Request, results []core.Result, allowed bool, now int64) bool {
	owed := make([]int64, len(reqs))
	unsettled := make([]int64, len(reqs))
	refuse := -1
	for i := range reqs {
		req := &reqs[i]
		if s.cfg.modeOf(req.Policy.Name()) != Local {
			continue
		}
		q, err := s.degrade.policy(req.Policy)
		if err != nil {
			continue
		}
		var short bool
		owed[i], short = s.memo.debt(req, &results[i], &q, now)
		unsettled[i] = s.memo.takeUnsettled(req)
		owed[i] += unsettled[i]
		if short && refuse < 0 {
			refuse = i
		}
	}
	if allowed && refuse >= 0 {
		s.giveBack(ctx, reqs, results)
		allowed = false
		for i := range reqs {
			results[i].Allowed = false
			results[i].Lease = 0
			if i == refuse {
				cost := reqs[i].EffectiveCost()
				results[i].RetryAfter = max(time.Millisecond, time.Duration(int64(reqs[i].Policy.Period())/max(1, reqs[i].Policy.Limit())*cost))
				continue
			}
			results[i].Remaining = min(results[i].Limit, results[i].Remaining+reqs[i].EffectiveCost())
		}
	}
	for i := range reqs {
		if owed[i] > 0 || unsettled[i] > 0 {
			s.charge(ctx, &reqs[i], &results[i], owed[i], unsettled[i], now)
		} else if s.cfg.modeOf(reqs[i].Policy.Name()) == Local {
			s.memo.settled(&reqs[i], now)
		}
	}
	return allowed
}

// giveBack undoes, in the shared store, what an admitted stack charged: each rate
// member's cost is refunded (when the store is a core.Refunder) and each concurrency
// member's lease released. Each call is bounded by the deadline; one that fails is
// dropped.
func (s *Store) giveBack(ctx context.Context, reqs []core.Request, results []core.Result) {
	refunder, canRefund := s.shared.(core.Refunder)
	for i := range reqs {
		req, lease := reqs[i], results[i].Lease
		var undo func(context.Context) error
		switch {
		case req.Policy.Algorithm() == core.Concurrency:
			undo = func(ctx context.Context) error { return s.shared.Release(ctx, req, lease) }
		case canRefund:
			undo = func(ctx context.Context) error { return refunder.Refund(ctx, req) }
		default:
			continue
		}
		s.guard.run(ctx, s.deadline.get(), undo)
	}
}
