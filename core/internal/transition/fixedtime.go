package transition

import (
	"math/bits"
	"time"
)

// unitsAhead is how far f lies after now in token units (1/refill ms), or 0 when f
// is not after now. far reports that f lies more than ⌊horizon/refill⌋+2 whole
// milliseconds ahead (a clock that went far backwards), beyond horizon units and
// any fraction and rounding; units is then meaningless. horizon is the largest
// distance in units the caller needs. The test multiplies in 128 bits, so it
// neither overflows nor divides.
func (f FixedTime) unitsAhead(now, refill, horizon int64) (units int64, far bool) {
	diff := f.Millis - now
	if diff < 0 || diff == 0 && f.Frac == 0 {
		return 0, false
	}
	// diff > ⌊horizon/refill⌋ + 2 ⇔ diff-2 > ⌊horizon/refill⌋ ⇔ (diff-2)×refill > horizon
	if diff > 2 {
		hi, lo := bits.Mul64(uint64(diff-2), uint64(refill))
		if hi > 0 || lo > uint64(horizon) {
			return 0, true
		}
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
