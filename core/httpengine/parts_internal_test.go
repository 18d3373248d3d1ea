package httpengine

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestUnrefilledCountsEachMillisecondsRefillOnce: what a bucket's parts hold at
// the newest part's instant, the refill between parts earning back the older ones
// first, rounded down to whole units.
func TestUnrefilledCountsEachMillisecondsRefillOnce(t *testing.T) {
	bucket := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10)) // a unit per 100 ms
	t0 := time.UnixMilli(1_000_000)
	at := func(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, c := range []struct {
		name   string
		parts  []chargePart
		want   int64
		wantAt time.Time
	}{
		{"one millisecond", []chargePart{{1, at(0)}, {2, at(0)}}, 3, at(0)},
		{"half a unit between", []chargePart{{1, at(0)}, {2, at(50)}}, 2, at(50)}, // 2.5, rounded down
		{"the older part refilled", []chargePart{{1, at(0)}, {2, at(100)}}, 2, at(100)},
		{"long refilled", []chargePart{{5, at(0)}, {2, at(60_000)}}, 2, at(60_000)},
		{"three layers", []chargePart{{1, at(0)}, {2, at(100)}, {3, at(150)}}, 4, at(150)}, // 1 → 0, +2 → 2, −0.5 → 1.5, +3
		{"given back already", []chargePart{{1, at(0)}, {0, at(10)}}, 0, at(10)},           // 0.9 left: rounded down
		{"a clock that went back", []chargePart{{1, at(100)}, {2, at(0)}}, 3, at(0)},
	} {
		got, gotAt := unrefilled(&bucket, c.parts)
		if got != c.want || !gotAt.Equal(c.wantAt) {
			t.Errorf("%s: unrefilled = %d at %v, want %d at %v", c.name, got, gotAt.Sub(t0), c.want, c.wantAt.Sub(t0))
		}
	}
}
