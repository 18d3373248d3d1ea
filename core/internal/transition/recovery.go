package transition

import (
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// RecoveredAfter is how long until s, under p, decides exactly as the state of a key
// never seen does: a full bucket, an empty queue, window or log, no leases. From then
// on a store may drop the state without changing any decision. It is zero for a
// state that has recovered already (and for the zero Policy).
func RecoveredAfter(s State, p *core.Policy, now int64) time.Duration {
	if !s.Seen || !p.Valid() {
		return 0
	}
	_, r := Peek(s, p, now, 1)
	if p.Algorithm() == core.FixedWindow && r.Remaining == p.Limit() {
		// Nothing is spent in the current window. (ResetAfter is the time to the
		// window's end, which a fixed window reports even when it is empty.)
		return 0
	}
	return r.ResetAfter
}
