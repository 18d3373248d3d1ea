package core

// stepTokenBucket admits cost at now when min(burst, tokens + (now-updated)*limit/period) >= cost.
// The bucket starts full. Token counts are kept in token units (Policy.TokenUnit per
// token, Policy.RefillPerMilli earned per millisecond), so the arithmetic is exact.
// A clock that goes backwards earns nothing: refill uses max(now, updated).
func stepTokenBucket(s *State, p *Policy, now, cost int64, charge bool) Result {
	full := p.capacity * p.unit
	level, updated := full, now
	if s.Seen {
		refilled := refillTokenBucket(*s, p, now)
		level, updated = refilled.Tokens, refilled.Updated
	}
	need := cost * p.unit
	r := Result{Policy: p.name, Limit: p.capacity}
	if !charge || level < need {
		r.Remaining = level / p.unit
		if level < need {
			r.RetryAfter = millis(ceilDiv(need-level, p.refill))
		}
		r.ResetAfter = millis(ceilDiv(full-level, p.refill))
		return r
	}
	level -= need
	r.Allowed = true
	r.Remaining = level / p.unit
	r.ResetAfter = millis(ceilDiv(full-level, p.refill))
	*s = State{Seen: true, Tokens: level, Updated: updated}
	return r
}

// refillTokenBucket brings a seen bucket's level up to now.
func refillTokenBucket(s State, p *Policy, now int64) State {
	full := p.capacity * p.unit
	if now > s.Updated {
		if elapsed := now - s.Updated; elapsed >= ceilDiv(full-s.Tokens, p.refill) {
			s.Tokens = full
		} else {
			s.Tokens += elapsed * p.refill
		}
		s.Updated = now
	}
	return s
}
