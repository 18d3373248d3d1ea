package core

// stepTokenBucket admits cost at now when min(burst, tokens + (now-updated)*limit/period) >= cost.
// The bucket starts full. Token counts are kept in token units (Policy.TokenUnit per
// token, Policy.RefillPerMilli earned per millisecond), so the arithmetic is exact.
// A clock that goes backwards earns nothing: refill uses max(now, updated).
func stepTokenBucket(s State, p *Policy, now, cost int64, charge bool) (State, Result) {
	full := p.capacity * p.unit
	level, updated := full, now
	if s.Seen {
		level, updated = s.Tokens, s.Updated
		if now > updated {
			elapsed := now - updated
			if elapsed >= ceilDiv(full-level, p.refill) {
				level = full
			} else {
				level += elapsed * p.refill
			}
			updated = now
		}
	}
	need := cost * p.unit
	r := Result{Policy: p.name, Limit: p.capacity}
	if !charge || level < need {
		r.Remaining = level / p.unit
		if level < need {
			r.RetryAfter = millis(ceilDiv(need-level, p.refill))
		}
		r.ResetAfter = millis(ceilDiv(full-level, p.refill))
		return s, r
	}
	level -= need
	r.Allowed = true
	r.Remaining = level / p.unit
	r.ResetAfter = millis(ceilDiv(full-level, p.refill))
	return State{Seen: true, Tokens: level, Updated: updated}, r
}
