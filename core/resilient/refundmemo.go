package resilient

import "github.com/go-ratelimit/ratelimit/core"

// cancelUnsettled gives back up to cost of req's key from what slow-call decisions
// admitted and the shared store has not been charged yet, and returns how much it
// gave, and whether the key's live local allowance (at now) holds charges that
// refundAllowance could give back. A bucket's units are interchangeable, so not
// charging a unit the store never counted is the same as refunding one it did,
// without a call. Refund passes as cost only what the bucket has not refilled since
// the charge, so that a late refund gives back no more than the shared store would.
func (m *memo) cancelUnsettled(req *core.Request, cost, now int64) (given int64, allowance bool) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok {
		return 0, false
	}
	allowance = e.gen != 0 && now < e.localUntil && e.localCharged > 0
	if e.unsettled == 0 {
		return 0, allowance
	}
	given = min(cost, e.unsettled)
	e.unsettled -= given
	e.spent -= min(e.spent, given)
	sh.entries[k] = e
	return given, allowance
}

// refundAllowance gives back up to cost of what the local decisions of req's live
// local allowance (on the degraded policy q) charged, at now, through refund (called
// with the memo's lock held, with the allowance's local key), and returns how much
// it gave. The allowance then holds that much more, so the settlement on the shared
// store's return (debt) does not charge it. A refund of more than the allowance's
// decisions charged, or after a newer shared answer reseeded it, gives the rest
// nothing here: that cost was never taken from this allowance.
func (m *memo) refundAllowance(req *core.Request, q *core.Policy, cost, now int64, refund func(key string, cost int64) error) int64 {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.gen == 0 || now >= e.localUntil || e.localCharged == 0 {
		return 0
	}
	given := min(cost, e.localCharged)
	if err := refund(localKeyName(req.Key, e.gen), given); err != nil {
		return 0
	}
	capQ := q.Capacity()
	// leftAt under-estimates a bucket that refills from higher up, so the debt
	// charged on the return can only be too large (less admitted, never more).
	e.localRemaining, e.localAt = min(capQ, e.leftAt(req.Policy.Algorithm(), capQ, now)+given), now
	if req.Policy.Algorithm() == core.LeakyBucket { // its queue is shorter by given (queueDebt)
		e.localUntil = max(now, e.localUntil-queueMillis(q, given)*1_000_000)
	}
	e.localCharged -= given
	sh.entries[k] = e
	return given
}
