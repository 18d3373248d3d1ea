package transition

import "github.com/go-ratelimit/ratelimit/core"

// stepGCRA is the generic cell rate algorithm: it keeps one number, the theoretical
// arrival time TAT, and admits cost at now when max(TAT, now) + cost×E - now <= burst×E,
// where E = period/limit is the emission interval. It decides exactly as the token
// bucket while time moves forwards. When the clock goes backwards it never mints
// tokens: it sees fewer tokens than the token bucket would, never more.
func stepGCRA(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
	tolerance := p.capacity * p.unit
	need := cost * p.unit
	queued, far := s.TAT.unitsAhead(now, p.refill, p.capacity*p.unit)
	if refused := far || queued+need > tolerance; refused || !charge {
		if refused {
			r.RetryAfter = s.TAT.waitUntil(now, p.refill, tolerance-need)
		}
		r.ResetAfter = s.TAT.waitUntil(now, p.refill, 0)
		if !far { // far looks at whole milliseconds: the queue may still be past the tolerance
			r.Remaining = quotient(max(0, tolerance-queued), p.unit)
		}
		return
	}
	queued += need
	r.Allowed = true
	r.Remaining = quotient(tolerance-queued, p.unit)
	r.ResetAfter = millis(ceilDiv(queued, p.refill))
	s.Seen, s.TAT = true, fixedAfter(now, queued, p.refill) // GCRA's state has no other fields set
}
