package transition

import "github.com/go-ratelimit/ratelimit/core"

// Refund is the pure reverse of an admission of cost under p, charged at charged
// and refunded at now: it returns state as if up to cost had not been spent. Buckets
// get the cost back at now: never above their capacity, never a queue's TAT before
// now. Windows give it back to the window that counted the charge (the one holding
// charged), and nothing once that window no longer counts (a fixed window once
// closed, a sliding window once it is older than the previous one, a log entry once
// it aged out): a refund made after a later charge opened a new window must not add
// to that window. Concurrency leases are released with ReleaseLease instead; Refund
// leaves them unchanged. Stores that implement core.Refunder run it.
func Refund(s State, policy *core.Policy, now, charged, cost int64) State {
	if !s.Seen || cost < 1 || !policy.Valid() {
		return s
	}
	p := paramsOf(policy)
	switch policy.Algorithm() {
	case core.TokenBucket:
		s = refillTokenBucket(s, &p, now)
		s.Tokens = min(p.capacity*p.unit, s.Tokens+cost*p.unit)
	case core.GCRA, core.LeakyBucket:
		queued, far := s.TAT.unitsAhead(now, p.refill, 2*p.capacity*p.unit)
		if far {
			return s
		}
		s.TAT = fixedAfter(now, max(0, queued-cost*p.unit), p.refill)
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
