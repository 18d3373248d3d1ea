package reserve

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestSpentChargeNeverGivesABucketMoreThanEitherLease holds the rule for an
// admission whose units may be of the lease charged before the spend or of the one
// charged after it: a bucket names the earlier known instant, so its refund gives
// back no more than either lease's units would, and never the whole cost a zero
// instant gives however late the refund; a window names none.
func TestSpentChargeNeverGivesABucketMoreThanEitherLease(t *testing.T) {
	tb := core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10), core.WithBurst(10))
	gcra := core.MustPolicy("gcra", core.GCRA, core.PerSecond(10), core.WithBurst(10))
	fw := core.MustPolicy("fw", core.FixedWindow, core.PerSecond(10))
	sw := core.MustPolicy("sw", core.SlidingWindow, core.PerSecond(10))
	log := core.MustPolicy("log", core.SlidingLog, core.PerSecond(10))
	for _, c := range []struct {
		policy        core.Policy
		before, after int64
		want          int64 // ms since the epoch; 0 for the zero time
	}{
		{tb, 1000, 2000, 1000},
		{tb, 2000, 1000, 1000}, // a backing clock that went back
		{gcra, 1000, 2000, 1000},
		{tb, 0, 2000, 2000}, // no lease before: the units are the new lease's
		{tb, 1000, 0, 1000},
		{tb, 0, 0, 0},
		{fw, 1000, 2000, 0},
		{sw, 1000, 2000, 0},
		{log, 1000, 2000, 0},
	} {
		got := spentCharge(c.policy, c.before, c.after)
		want := time.Time{}
		if c.want != 0 {
			want = time.UnixMilli(c.want)
		}
		if !got.Equal(want) {
			t.Errorf("%s: spentCharge(%d, %d) = %v, want %v", c.policy.Name(), c.before, c.after, got, want)
		}
	}
}
