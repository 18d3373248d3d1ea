package transition

import (
	"testing"

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
			charged, _ = Step(charged, &p, t0+minute-1, 1, 0) // one at its last ms
			charged = Refund(charged, &p, t0+refundAt, 1)     // refunded at refundAt
			_, got := Step(charged, &p, t0+refundAt, 1, 0)
			_, want := Step(never, &p, t0+refundAt, 1, 0)
			if got != want {
				t.Errorf("%s, refunded at +%dms: %+v; never charged: %+v", alg, refundAt, got, want)
			}
		}
	}
}
