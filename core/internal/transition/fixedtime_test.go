package transition

import (
	"math"
	"math/rand/v2"
	"testing"
)

// unitsAhead tells a far TAT by a product in 128 bits; it must agree exactly with the
// bound in milliseconds that the Redis scripts compute by division,
// ⌊(horizon+refill)/refill⌋ + 1, at the bound and on either side of it.
func TestUnitsAheadFarMatchesTheBoundInMilliseconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	check := func(diff, frac, refill, horizon int64) {
		t.Helper()
		farMs := (horizon+refill)/refill + 1
		now := int64(1_800_000_000_000)
		f := FixedTime{Millis: now + diff, Frac: frac}
		units, far := f.unitsAhead(now, refill, horizon)
		wantFar := diff > farMs
		if far != wantFar {
			t.Fatalf("diff %d refill %d horizon %d: far %v, want %v (bound %d ms)", diff, refill, horizon, far, wantFar, farMs)
		}
		if !far && diff > 0 && units != diff*refill+frac {
			t.Fatalf("diff %d frac %d refill %d: units %d, want %d", diff, frac, refill, units, diff*refill+frac)
		}
	}
	for i := 0; i < 200_000; i++ {
		refill := 1 + rng.Int64N(1000)
		if rng.IntN(4) == 0 {
			refill = 1 + rng.Int64N(1_000_000_000)
		}
		horizon := rng.Int64N(1 << 53)
		if rng.IntN(2) == 0 {
			horizon = rng.Int64N(100_000)
		}
		bound := (horizon+refill)/refill + 1
		frac := rng.Int64N(refill)
		for _, diff := range []int64{bound - 1, bound, bound + 1, 1 + rng.Int64N(bound+2), 0, -1} {
			check(diff, frac, refill, horizon)
		}
	}
	// A clock that went back decades: the product overflows 64 bits.
	check(math.MaxInt64/2, 0, 1_000_000_000, 1<<53)
}
