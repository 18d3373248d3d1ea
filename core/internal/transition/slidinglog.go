package transition

import "github.com/go-ratelimit/ratelimit/core"

// stepSlidingLog remembers each admitted request (time, cost) and admits cost at now
// when the cost admitted in the window (now-period, now] plus cost is at most the
// limit. A refused request is told when enough entries will have aged out. It is
// exact, and its memory grows with the requests admitted per period: up to limit
// entries per key.
//
// A clock that goes backwards decides at the newest time already logged.
//
// The returned state may share s.Log's backing array: entries are only dropped from
// the front and appended past its end, so s itself stays valid.
func stepSlidingLog(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
	log, sum := s.Log, s.Count
	at := now
	if n := len(log); n > 0 && log[n-1].At > at {
		at = log[n-1].At
	}
	drop := 0
	for drop < len(log) && log[drop].At <= at-p.periodMs {
		sum -= log[drop].Cost
		drop++
	}
	log = log[drop:]
	if refused := sum+cost > p.limit; refused || !charge {
		r.Remaining = p.limit - sum
		freed, excess := int64(0), sum+cost-p.limit
		for _, e := range log {
			freed += e.Cost
			if refused && freed >= excess {
				r.RetryAfter = millis(e.At + p.periodMs - now)
				break
			}
		}
		if len(log) > 0 {
			r.ResetAfter = millis(log[len(log)-1].At + p.periodMs - now)
		}
		return
	}
	log = append(log, LogEntry{At: at, Cost: cost})
	sum += cost
	r.Allowed = true
	r.Remaining = p.limit - sum
	r.ResetAfter = millis(at + p.periodMs - now)
	*s = State{Seen: true, Log: log, Count: sum}
}
