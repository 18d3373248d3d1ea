package transition

import "github.com/go-ratelimit/ratelimit/core"

// Refund is the pure reverse of an admission of cost under p, charged at charged
// and refunded at now: it returns state as if up to cost had not been spent. Buckets
// get back what of the cost they have not refilled since charged (bucketRefund), at
// now: never above their capacity, never a queue's TAT before now. Windows give it
// back to the window that counted the charge (the one holding charged), and nothing
// once that window no longer counts (a fixed window once closed, a sliding window
// once it is older than the previous one, a log entry once it aged out): a refund
// made after a later charge opened a new window must not add to that window.
// Concurrency leases are released with ReleaseLease instead; Refund leaves them
// unchanged. Stores that implement core.Refunder run it.
func Refund(s State, policy *core.Policy, now, charged, cost int64) State {
	if !s.Seen || cost < 1 || !policy.Valid() {
		return s
	}
	p := paramsOf(policy)
	switch policy.Algorithm() {
	case core.TokenBucket:
		s = refillTokenBucket(s, &p, now)
		s.Tokens = min(p.capacity*p.unit, s.Tokens+bucketRefund(&p, now, charged, cost))
	case core.GCRA, core.LeakyBucket:
		queued, far := s.TAT.unitsAhead(now, p.refill, 2*p.capacity*p.unit)
		if far {
			return s
		}
		s.TAT = fixedAfter(now, max(0, queued-bucketRefund(&p, now, charged, cost)), p.refill)
	case core.FixedWindow:
		if w := floorDiv(charged, p.periodMs); w == s.Window && floorDiv(now, p.periodMs) <= w {
			s.Count = max(0, s.Count-cost)
		}
	case core.SlidingWindow:
		// A closed window still weighs in the estimate while it is the previous one.
		switch w, current := floorDiv(charged, p.periodMs), floorDiv(now, p.periodMs); {
		case w == s.Window && current <= w+1:
			s.Count = max(0, s.Count-cost)
		case w == s.Window-1 && current <= s.Window:
			s.Previous = max(0, s.Previous-cost)
		}
	case core.SlidingLog:
		s = refundLog(s, &p, now, charged, cost)
	}
	return s
}

// refundLog takes cost from the entries logged at charged while they are in the
// window. Entries of one instant age out together, so which of them gives it back
// does not matter; an emptied entry is removed. It copies the log, so s stays
// valid.
func refundLog(s State, p *params, now, charged, cost int64) State {
	newest := now
	if n := len(s.Log); n > 0 {
		newest = max(now, s.Log[n-1].At)
	}
	if charged <= newest-p.periodMs {
		return s
	}
	log := append([]LogEntry(nil), s.Log...)
	for i := len(log) - 1; i >= 0 && cost > 0; i-- {
		if log[i].At == charged {
			take := min(cost, log[i].Cost)
			log[i].Cost -= take
			s.Count -= take
			cost -= take
		}
	}
	kept := log[:0]
	for _, e := range log {
		if e.Cost > 0 {
			kept = append(kept, e)
		}
	}
	s.Log = kept
	return s
}

// bucketRefund is how much of a bucket's (or a queue's) charge of cost, taken at
// charged, a refund at now gives back, in token units: the cost less what the bucket
// has refilled since. A charge's tokens come back by refilling, and a full bucket
// earns no more: a charge given back whole after the bucket refilled past it
// returns tokens the client had again already, to be spent twice. The state keeps
// no history to tell the refill that went back into the bucket from the refill
// spent meanwhile, so it counts all of it as refilled: a late refund gives back
// less, never more. GCRA drains a charge from its decision, as the token bucket it
// mirrors does; a leaky bucket drains a queued request's charge from when its slot
// began, which the caller passes as charged (Result.DecidedAt plus Result.Delay,
// rounded down to the millisecond), so that a slot waited for comes back whole when
// the request is refused right after its wait. A slot that moved up after a slot
// ahead of it was given back began earlier than that: its refund may return up to
// what those give-backs returned, never more than its cost. An unknown instant
// (charged < 0: a zero time, as core/resilient passes to its local store for a cost
// it has already reduced with RefundableCost) and a clock behind charged give the
// whole cost back.
func bucketRefund(p *params, now, charged, cost int64) int64 {
	units := cost * p.unit
	if charged < 0 || now <= charged {
		return units
	}
	// elapsed < ⌈units/refill⌉ keeps elapsed×refill below units + refill: no overflow.
	if elapsed := now - charged; elapsed < ceilDiv(units, p.refill) {
		return units - elapsed*p.refill
	}
	return 0
}

// RefundableCost is how much of a charge of cost under policy, taken at charged and
// refunded at now (ms), a bucket still gives back, in whole units of cost: its
// bucketRefund rounded down. It lets a caller that charged part of the cost outside
// the store (core/resilient's process memory) give back no more than the store
// would. A window's refund does not depend on refill: its whole cost, which Refund
// gives back or not by the window that counted it.
func RefundableCost(policy *core.Policy, now, charged, cost int64) int64 {
	switch policy.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
	default:
		return cost
	}
	if cost < 1 || !policy.Valid() {
		return max(cost, 0)
	}
	p := paramsOf(policy)
	return quotient(bucketRefund(&p, now, charged, cost), p.unit)
}
