package transition

import (
	"math/bits"

	"github.com/go-ratelimit/ratelimit/core"
)

// stepTokenBucket admits cost at now when min(burst, tokens + (now-updated)*limit/period) >= cost.
// The bucket starts full. Token counts are kept in token units (core.Policy.TokenUnit per
// token, core.Policy.RefillPerMilli earned per millisecond), so the arithmetic is exact.
// A clock that goes backwards earns nothing: refill uses max(now, updated). The
// bucket then refills from updated, not from now, so its waits (Retry-After and
// ResetAfter) count the time from now to updated too.
func stepTokenBucket(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
	full := p.capacity * p.unit
	level, updated := full, now
	if s.Seen {
		level, updated = refilledLevel(s.Tokens, s.Updated, p, now)
	}
	behind := updated - now // > 0 when the clock is behind the state
	need := cost * p.unit
	if !charge || level < need {
		r.Remaining = level / p.unit
		if level < need {
			r.RetryAfter = millis(behind + ceilDiv(need-level, p.refill))
		}
		if level < full {
			r.ResetAfter = millis(behind + ceilDiv(full-level, p.refill))
		}
		return
	}
	level -= need
	r.Allowed = true
	r.Remaining = quotient(level, p.unit)
	r.ResetAfter = millis(behind + ceilDiv(full-level, p.refill))
	s.Seen, s.Tokens, s.Updated = true, level, updated // a bucket's state has no other fields set
}

// refillTokenBucket brings a seen bucket's level up to now.
func refillTokenBucket(s State, p *params, now int64) State {
	s.Tokens, s.Updated = refilledLevel(s.Tokens, s.Updated, p, now)
	return s
}

// refilledLevel is a seen bucket's level and refill time brought up to now: a clock
// behind updated earns nothing.
func refilledLevel(tokens, updated int64, p *params, now int64) (int64, int64) {
	if now > updated {
		full := p.capacity * p.unit
		// elapsed >= ⌈(full-tokens)/refill⌉ ⇔ elapsed×refill >= full-tokens, with the
		// product in 128 bits: a multiplication instead of a division.
		hi, lo := bits.Mul64(uint64(now-updated), uint64(p.refill))
		if elapsed := now - updated; full-tokens <= 0 || hi > 0 || lo >= uint64(full-tokens) {
			tokens = full
		} else {
			tokens += elapsed * p.refill
		}
		updated = now
	}
	return tokens, updated
}
