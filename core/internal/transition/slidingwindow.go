package transition

import (
	"math"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// stepSlidingWindow estimates a sliding window from two fixed windows: it admits
// cost at now when cur + prev×(1 - elapsed/period) + cost <= limit, where cur and prev
// are the counts of the current and previous windows and elapsed is how far now lies
// into the current window. A refused request is told the first millisecond at which
// the estimate admits it.
//
// The arithmetic is exact without large products: since limit-cur-cost is an
// integer, the test is ⌈prev×(period-elapsed)/period⌉ <= limit-cur-cost, and
// ⌈prev×(period-e)/period⌉ = prev - ⌊prev×e/period⌋ (see countBefore).
func stepSlidingWindow(s *State, p *params, now, cost int64, charge bool, r *core.Result) {
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
	elapsed := max(0, now-start)
	weighted := prev - countBefore(prev, elapsed, period) // ⌈prev×(period-elapsed)/period⌉
	spare := p.limit - cur - cost
	if refused := weighted > spare; refused || !charge {
		r.Remaining = max(0, p.limit-cur-weighted)
		if refused {
			r.RetryAfter = millis(start + slidingWindowWait(period, p.limit, cur, prev, cost) - now)
		}
		r.ResetAfter = slidingWindowReset(start, period, cur, prev, now)
		return
	}
	cur += cost
	r.Allowed = true
	r.Remaining = max(0, p.limit-cur-weighted)
	r.ResetAfter = slidingWindowReset(start, period, cur, prev, now)
	s.Seen, s.Window, s.Count = true, window, cur // a sliding window's state has no other fields set
	if s.Previous != prev {
		s.Previous = prev // only when the window moves: stores may keep Previous off the hot cache line
	}
}

// countBefore is ⌊count×e/period⌋ for 0 <= e <= period, computed as ch×e + ⌊cl×e/period⌋
// with count = ch×period + cl, so no intermediate exceeds min(count, period)×period.
func countBefore(count, e, period int64) int64 {
	return count/period*e + count%period*e/period
}

// firstOffset is the smallest e in [0, period] with ⌊count×e/period⌋ >= need: the
// offset into a window at which a previous count has lost need of its weight. A
// floating-point estimate is corrected exactly, so the result is exact.
func firstOffset(count, need, period int64) int64 {
	if need <= 0 {
		return 0
	}
	e := int64(math.Ceil(float64(need) * float64(period) / float64(count)))
	e = min(max(e, 0), period)
	for e > 0 && countBefore(count, e-1, period) >= need {
		e--
	}
	for e < period && countBefore(count, e, period) < need {
		e++
	}
	return e
}

// slidingWindowWait is the first offset from the current window's start at which a
// request of cost would be admitted, given counts cur and prev. It may lie in the
// current window, the next (where cur becomes the previous count) or the one after.
func slidingWindowWait(period, limit, cur, prev, cost int64) int64 {
	if spare := limit - cur - cost; spare >= 0 {
		// Later in this window prev's weight falls: need ⌊prev×e/period⌋ >= prev-spare.
		if e := firstOffset(prev, prev-spare, period); e < period {
			return e
		}
		return period // the next window: cur+cost <= limit fits at once
	}
	// The next window: cur becomes the previous count and nothing is current yet.
	if e := firstOffset(cur, cur-(limit-cost), period); e < period {
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
