package core

import "time"

// stepSlidingWindow estimates a sliding window from two fixed windows: it admits
// cost at now when cur + prev×(1 - elapsed/period) + cost <= limit, where cur and prev
// are the counts of the current and previous windows and elapsed is how far now lies
// into the current window. The comparison is done in integers:
// prev×(period-elapsed) <= (limit-cur-cost)×period. A refused request is told the
// first millisecond at which the estimate admits it.
func stepSlidingWindow(s State, p *Policy, now, cost int64, charge bool) (State, Result) {
	period := p.periodMs
	window, cur, prev := floorDiv(now, period), int64(0), int64(0)
	if s.Seen {
		switch {
		case s.Window >= window: // same window, or a clock that went backwards
			window, cur, prev = s.Window, s.Count, s.Previous
		case s.Window == window-1:
			prev = s.Count
		}
	}
	start := window * period
	elapsed := now - start
	if elapsed < 0 {
		elapsed = 0
	}
	weighted := prev * (period - elapsed) // prev's share of the window, times period
	spare := p.limit - cur - cost
	r := Result{Policy: p.name, Limit: p.limit}
	if refused := spare < 0 || weighted > spare*period; refused || !charge {
		r.Remaining = remainingEstimate(p.limit, cur, weighted, period)
		if refused {
			r.RetryAfter = millis(start + slidingWindowWait(period, p.limit, cur, prev, cost) - now)
		}
		r.ResetAfter = slidingWindowReset(start, period, cur, prev, now)
		return s, r
	}
	cur += cost
	r.Allowed = true
	r.Remaining = remainingEstimate(p.limit, cur, weighted, period)
	r.ResetAfter = slidingWindowReset(start, period, cur, prev, now)
	return State{Seen: true, Window: window, Count: cur, Previous: prev}, r
}

// slidingWindowWait is the first offset from the current window's start at which a
// request of cost would be admitted, given counts cur and prev. It may lie in the
// current window, the next (where cur becomes the previous count) or the one after.
func slidingWindowWait(period, limit, cur, prev, cost int64) int64 {
	if spare := limit - cur - cost; spare >= 0 {
		// Later in this window, prev's weight falls: need prev×(period-e) <= spare×period.
		if e := ceilDiv(period*(prev-spare), prev); e < period {
			return e
		}
		return period
	}
	// Next window: cur becomes the previous count and nothing is current yet.
	spare := limit - cost
	if cur <= spare {
		return period
	}
	if e := ceilDiv(period*(cur-spare), cur); e < period {
		return period + e
	}
	return 2 * period
}

func slidingWindowReset(start, period, cur, prev, now int64) time.Duration {
	switch {
	case cur > 0:
		return millis(start + 2*period - now)
	case prev > 0:
		return millis(start + period - now)
	}
	return 0
}

func remainingEstimate(limit, cur, weighted, period int64) int64 {
	left := limit - cur - ceilDiv(weighted, period)
	if left < 0 {
		return 0
	}
	return left
}
