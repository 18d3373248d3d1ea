package core

import "context"

// Refunder is implemented by stores that can give back cost an admitted request
// spent, for costs that are settled after the handler ran (for example nothing is
// charged when the response says the work was not done). It is optional: adapters
// check for it and report an error at construction when a refund is configured on
// a store without it.
type Refunder interface {
	// Refund gives back req's effective cost to req's key at the store's now.
	Refund(ctx context.Context, req Request) error
}

// Refund is the pure reverse of an admission of cost under p at now: it returns
// state as if up to cost had not been spent. It never raises a bucket above its
// capacity, never moves a queue's TAT before now, and gives nothing back to a window
// that has already closed (the charge has expired with it). Concurrency leases are
// released with ReleaseLease instead; Refund leaves them unchanged.
func Refund(s State, p *Policy, now, cost int64) State {
	if !s.Seen || cost < 1 || !p.Valid() {
		return s
	}
	switch p.algorithm {
	case TokenBucket:
		s = refillTokenBucket(s, p, now)
		s.Tokens = min(p.capacity*p.unit, s.Tokens+cost*p.unit)
	case GCRA, LeakyBucket:
		queued, far := s.TAT.unitsAhead(now, p.refill, farMillis(2*p.capacity*p.unit, p.refill))
		if far {
			return s
		}
		s.TAT = fixedAfter(now, max(0, queued-cost*p.unit), p.refill)
	case FixedWindow, SlidingWindow:
		if floorDiv(now, p.periodMs) <= s.Window {
			s.Count = max(0, s.Count-cost)
		}
	case SlidingLog:
		s = refundLog(s, p, now, cost)
	}
	return s
}

// refundLog removes cost from the newest entries still in the window. It copies the
// log, so s stays valid.
func refundLog(s State, p *Policy, now, cost int64) State {
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
