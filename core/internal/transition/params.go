package transition

import (
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// params are the numbers of a valid policy that the transitions compute with, read
// from its accessors once per decision. (The policy's name goes straight into the
// result: without it, paramsOf is small enough to be inlined.)
type params struct {
	limit    int64 // units of cost per period (leases in flight, for concurrency)
	periodMs int64 // the period (lease timeout) in milliseconds
	capacity int64 // the most cost the policy holds at once: burst for buckets, limit otherwise
	unit     int64 // token units per token (core.Policy.TokenUnit)
	refill   int64 // token units earned per millisecond (core.Policy.RefillPerMilli)
}

// paramsOf reads p's numbers. p must be valid.
func paramsOf(p *core.Policy) params {
	return params{
		limit:    p.Limit(),
		periodMs: p.PeriodMillis(),
		capacity: p.Capacity(),
		unit:     p.TokenUnit(),
		refill:   p.RefillPerMilli(),
	}
}

func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// ceilDiv is ⌈a/b⌉ for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 {
	if b == 1 { // a refill of one unit per ms: most rates whose period is a multiple of the limit
		return a
	}
	return (a + b - 1) / b
}

// quotient is a / b for a >= 0, b > 0, without the division when b is 1 (a token unit
// of one: most rates whose limit is a multiple of the period in ms).
func quotient(a, b int64) int64 {
	if b == 1 {
		return a
	}
	return a / b
}

// floorDiv is ⌊a/b⌋ for b > 0 and any sign of a.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}
