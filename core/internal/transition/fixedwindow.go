package transition

import "github.com/go-ratelimit/ratelimit/core"

// stepFixedWindow counts cost in windows [k×period, (k+1)×period) aligned to the
// Unix epoch and admits cost when count + cost <= limit. A refused request is told
// to wait until the window ends. A clock that goes backwards stays in the newest
// window seen, so it cannot reopen an older one.
//
// Near a boundary a fixed window admits up to twice its limit within one period:
// the end of one window and the start of the next. Use sliding_window or
// sliding_log where that matters.
func stepFixedWindow(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
	window, count := floorDiv(now, p.periodMs), int64(0)
	if s.Seen && s.Window >= window {
		window, count = s.Window, s.Count
	}
	untilEnd := millis((window+1)*p.periodMs - now)
	r.ResetAfter = untilEnd
	if refused := count+cost > p.limit; refused || !charge {
		r.Remaining = p.limit - count
		if refused {
			r.RetryAfter = untilEnd
		}
		return
	}
	count += cost
	r.Allowed = true
	r.Remaining = p.limit - count
	s.Seen, s.Window, s.Count = true, window, count // a fixed window's state has no other fields set
}
