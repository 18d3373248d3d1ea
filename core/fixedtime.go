package core

import "time"

// unitsAhead is how far f lies after now in token units (1/refill ms), or 0 when f
// is not after now. far reports that f lies so far ahead (a clock that went far
// backwards) that the distance exceeds horizon; units is then meaningless.
func (f FixedTime) unitsAhead(now, refill, horizon int64) (units int64, far bool) {
	diff := f.Millis - now
	if diff < 0 || diff == 0 && f.Frac == 0 {
		return 0, false
	}
	if diff > (horizon+refill)/refill+1 {
		return 0, true
	}
	return diff*refill + f.Frac, false
}

// waitUntil is how long from now until f lies at most allowance token units ahead,
// rounded up to whole milliseconds: the earliest instant a request could succeed.
func (f FixedTime) waitUntil(now, refill, allowance int64) time.Duration {
	// f - allowance - now, in ms, rounded up: (Millis-now) + ⌈(Frac-allowance)/refill⌉.
	wait := f.Millis - now + ceilDivSigned(f.Frac-allowance, refill)
	if wait < 0 {
		wait = 0
	}
	return millis(wait)
}

// fixedAfter is the instant units token units (1/refill ms) after now.
func fixedAfter(now, units, refill int64) FixedTime {
	return FixedTime{Millis: now + units/refill, Frac: units % refill}
}

// ceilDivSigned is ⌈a/b⌉ for b > 0 and any sign of a.
func ceilDivSigned(a, b int64) int64 { return -floorDiv(-a, b) }
