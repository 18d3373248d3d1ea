package transition

import "github.com/go-ratelimit/ratelimit/core"

// Refund is the pure reverse of an admission of cost under p at now: it returns
// state as if up to cost had not been spent. It never raises a bucket above its
// capacity, never moves a queue's TAT before now, and gives nothing back to a window
// that no longer counts (a fixed window once closed, a sliding window once it is
// older than the previous one). Concurrency leases are
// released with ReleaseLease instead; Refund leaves them unchanged. Stores that
// implement core.Refunder run it.
func Refund(s State, policy *core.Policy, now, cost int64) State {
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
		if floorDiv(now, p.periodMs) <= s.Window {
			s.Count = max(0, s.Count-cost)
		}
	case core.SlidingWindow:
		// The state's window, closed, still weighs in the estimate while it is the
		// previous one: the refund reaches it there too. Refund does not know when
		// the charge was made: once a later charge has opened a new window, the
		// refund comes out of that one.
		if floorDiv(now, p.periodMs) <= s.Window+1 {
			s.Count = max(0, s.Count-cost)
		}
	case core.SlidingLog:
		s = refundLog(s, &p, now, cost)
	}
	return s
}

// refundLog removes cost from the newest entries still in the window. It copies the
// log, so s stays valid.
func refundLog(s State, p *params, now, cost int64) State {
	log := append([]LogEntry(nil), s.Log...)
	for i := len(log) - 1; i >= 0 && cost > 0; i-- {
		if log[i].At <= max(now, log[len(log)-1].At)-p.periodMs {
			break
		}
		take := min(cost, log[i].Cost)
		log[i].Cost -= take
		s.Count -= take
		cost -= take
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
