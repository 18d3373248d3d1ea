package transition

import "github.com/go-ratelimit/ratelimit/core"

// stepLeakyBucket is a leaky bucket used as a queue (virtual scheduling). A request
// at now takes the slot s = max(now, TAT) and is admitted when s - now <= burst×period/limit;
// then TAT = s + cost×period/limit and the request waits s - now (Result.Delay) before
// it proceeds. A refused request is told when a slot will be within reach.
//
// Note that an idle queue admits burst+1 requests of cost 1 at one instant: their
// waits are 0, E, …, burst×E, all within the bound.
func stepLeakyBucket(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
	depth := p.capacity * p.unit
	queued, far := s.TAT.unitsAhead(now, p.refill, p.capacity*p.unit)
	if refused := far || queued > depth; refused || !charge {
		if refused {
			r.RetryAfter = s.TAT.waitUntil(now, p.refill, depth)
		} else {
			r.Remaining = (depth-queued)/p.unit + 1
		}
		r.ResetAfter = s.TAT.waitUntil(now, p.refill, 0)
		return
	}
	wait := queued
	queued += cost * p.unit
	r.Allowed = true
	r.Delay = millis(ceilDiv(wait, p.refill))
	if queued <= depth {
		r.Remaining = (depth-queued)/p.unit + 1
	}
	r.ResetAfter = millis(ceilDiv(queued, p.refill))
	s.Seen, s.TAT = true, fixedAfter(now, queued, p.refill) // a leaky bucket's state has no other fields set
}
