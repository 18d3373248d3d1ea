package transition

import "github.com/go-ratelimit/ratelimit/core"

// maxConcurrencyHint caps the Retry-After of a refused concurrency request: leases
// usually end long before they expire, so the hint is short.
const maxConcurrencyHint = 1000 // ms

// acquireLease admits cost at now when the cost of the unexpired leases plus cost is
// at most the limit, and records a lease with the given ID that lapses after the
// policy's period unless released. A refused request gets a short hint: the time until
// the next lease lapses, at most one second.
//
// An acquire of an ID (not 0) that a live lease holds already is admitted, and that
// lease stands as it was: a retry of an acquire whose reply was lost, or a lease
// handed back to a store that may hold it, holds one lease, not two.
//
// The returned state may share s.Leases' backing array; s itself stays valid.
func acquireLease(s *State, p *params, now, cost int64, id uint64, charge bool, r *core.Result) {
	leases, inFlight := s.Leases, int64(0)
	expired, held := false, false
	for _, l := range leases {
		if l.Expires <= now {
			expired = true
			continue
		}
		inFlight += l.Cost
		held = held || charge && id != 0 && l.ID == id
	}
	if expired {
		live := make([]Lease, 0, len(leases))
		for _, l := range leases {
			if l.Expires > now {
				live = append(live, l)
			}
		}
		leases = live
		if !charge {
			s.Leases = live
		}
	}
	if refused := inFlight+cost > p.limit; refused || !charge || held {
		r.Remaining = p.limit - inFlight
		hint, last := int64(maxConcurrencyHint), int64(0)
		for _, l := range leases {
			hint = min(hint, l.Expires-now)
			last = max(last, l.Expires-now)
		}
		r.ResetAfter = millis(last)
		switch {
		case held:
			r.Allowed, r.Lease = true, id
			*s = State{Seen: true, Leases: leases}
		case refused:
			r.RetryAfter = millis(max(hint, 1))
		}
		return
	}
	leases = append(leases, Lease{ID: id, Cost: cost, Expires: now + p.periodMs})
	inFlight += cost
	r.Allowed = true
	r.Remaining = p.limit - inFlight
	r.Lease = id
	r.ResetAfter = millis(p.periodMs)
	*s = State{Seen: true, Leases: leases}
}

// ReleaseLease removes the lease with the given ID, if it is still held. It reuses
// s.Leases' backing array: s must not be used afterwards.
func ReleaseLease(s State, id uint64) State {
	for i, l := range s.Leases {
		if l.ID == id {
			s.Leases = append(s.Leases[:i], s.Leases[i+1:]...)
			break
		}
	}
	return s
}
