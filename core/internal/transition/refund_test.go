package transition

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestRefundOfAWindowCharge charges a request at a window's last millisecond and
// refunds it later: the key must then decide as if that request had never been
// charged. A fixed window's closed window no longer counts; a sliding window's
// does while it is the previous window, so its refund must reach it there.
func TestRefundOfAWindowCharge(t *testing.T) {
	const minute = 60_000
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		p := core.MustPolicy("p", alg, core.PerMinute(10))
		for _, refundAt := range []int64{minute - 1, minute, minute + 1, minute + 30_000, 2*minute - 1, 2 * minute, 3 * minute} {
			var charged, never State
			charged, _ = Step(charged, &p, t0, 1, 0) // one request at the window's start
			never = charged
			charged, _ = Step(charged, &p, t0+minute-1, 1, 0)          // one at its last ms
			charged = Refund(charged, &p, t0+refundAt, t0+minute-1, 1) // refunded at refundAt
			_, got := Step(charged, &p, t0+refundAt, 1, 0)
			_, want := Step(never, &p, t0+refundAt, 1, 0)
			if got != want {
				t.Errorf("%s, refunded at +%dms: %+v; never charged: %+v", alg, refundAt, got, want)
			}
		}
	}
}

// TestRefundAfterANewWindowOpened charges a request at a window's last
// millisecond, lets another request open the next window, then refunds the first:
// the key must decide as if the first had never been charged. A refund that came
// out of the newer window would admit more there than the policy allows.
func TestRefundAfterANewWindowOpened(t *testing.T) {
	const minute = 60_000
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		p := core.MustPolicy("p", alg, core.PerMinute(10))
		var charged, never State
		charged, _ = Step(charged, &p, t0, 3, 0)
		never = charged
		chargedAt := t0 + minute - 1
		charged, _ = Step(charged, &p, chargedAt, 4, 0)
		charged, _ = Step(charged, &p, t0+minute+10, 2, 0) // opens the next window
		never, _ = Step(never, &p, t0+minute+10, 2, 0)
		charged = Refund(charged, &p, t0+minute+20, chargedAt, 4)
		for _, at := range []int64{minute + 20, minute + 30_000, 2*minute - 1, 2*minute + 5, 3 * minute} {
			_, got := Peek(charged, &p, t0+at, 1)
			_, want := Peek(never, &p, t0+at, 1)
			if got != want {
				t.Errorf("%s at +%dms: %+v; never charged: %+v", alg, at, got, want)
			}
		}
	}
}

// TestRefundOfAnUnknownChargeGivesWindowsNothing refunds with an instant at which
// nothing was charged (a zero time, or a charge counted elsewhere): a window keeps
// its count.
func TestRefundOfAnUnknownChargeGivesWindowsNothing(t *testing.T) {
	zero := time.Time{}.UnixMilli()
	for _, p := range []core.Policy{
		core.MustPolicy("fw", core.FixedWindow, core.PerSecond(5)),
		core.MustPolicy("sw", core.SlidingWindow, core.PerSecond(5)),
		core.MustPolicy("log", core.SlidingLog, core.PerSecond(5)),
	} {
		var s State
		s, _ = Step(s, &p, t0, 2, 0)
		_, want := Peek(s, &p, t0+10, 1)
		for _, at := range []int64{zero, -1, t0 - 1_000, t0 - 3_000} {
			if _, got := Peek(Refund(s, &p, t0+10, at, 2), &p, t0+10, 1); got != want {
				t.Errorf("%s: refund of a charge at %d: %+v, want it unchanged: %+v", p.Name(), at, got, want)
			}
		}
	}
}
