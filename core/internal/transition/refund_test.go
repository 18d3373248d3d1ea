package transition

import (
	"math/rand/v2"
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

// TestLateRefundsOfABucketNeverAdmitMore refunds bucket charges some time after
// they were taken, often after the bucket (or the queue) has recovered past them
// and other requests spent it again: the requests it kept admitted (every admission
// not refunded), replayed in order on a fresh key, must each be admitted. A refund
// that gave a charge back whole at the refund's instant returned tokens the bucket
// had earned again by refilling, to be spent twice. A leaky bucket's charge is
// refunded from when its slot began, as the adapters name it, unless a slot ahead
// of it was given back since: that moved it up (see Refund).
func TestLateRefundsOfABucketNeverAdmitMore(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket} {
		for _, p := range referencePolicies(alg) {
			for trial := 0; trial < 20; trial++ {
				type charge struct {
					admission
					slot     int64 // when it began to drain: its decision, or its slot in a queue
					refunded bool
					moved    bool // a queue's slot moved up: one ahead of it was given back
				}
				var s State
				var charges []charge
				times, costs := randomTrace(rng, p, 300)
				for i := range times {
					if len(charges) > 0 && rng.IntN(3) == 0 {
						k := len(charges) - 1 - rng.IntN(min(len(charges), 8))
						if c := &charges[k]; !c.refunded && !c.moved {
							s, c.refunded = Refund(s, &p, times[i], c.slot, c.cost), true
							for j := k + 1; j < len(charges) && alg == core.LeakyBucket; j++ {
								charges[j].moved = true
							}
						}
						continue
					}
					var r core.Result
					if s, r = Step(s, &p, times[i], costs[i], 0); r.Allowed {
						// The slot's start, rounded down, as the adapters name it (Delay is rounded up).
						slot := times[i] + max(0, r.Delay.Milliseconds()-1)
						charges = append(charges, charge{admission: admission{times[i], costs[i]}, slot: slot})
					}
				}
				var fresh State
				for _, c := range charges {
					if c.refunded {
						continue
					}
					var r core.Result
					if fresh, r = Step(fresh, &p, c.at, c.cost, 0); !r.Allowed {
						t.Fatalf("%v, trial %d: the admission of %d at %+dms, kept, is refused on a key that never saw the refunded ones",
							p, trial, c.cost, c.at-t0)
					}
				}
			}
		}
	}
}

// TestABucketRefundGivesBackWhatItHasNotRefilled: two charges of 5 empty a bucket
// of 10 refilling 10 a second; the first, refunded some time later, gives back what
// the bucket has not refilled since: the bucket then holds the 5 it held after that
// charge, however far it refilled (all of it may have been spent), and once it has
// refilled 5, nothing more. Refunded at once, the charge comes back whole.
func TestABucketRefundGivesBackWhatItHasNotRefilled(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket} {
		p := core.MustPolicy("p", alg, core.PerSecond(10))
		for _, step := range []struct{ after, want int64 }{{0, 5}, {300, 5}, {499, 5}, {500, 5}, {700, 7}, {1_000, 10}} {
			var s State
			s, _ = Step(s, &p, t0, 5, 0)
			s, _ = Step(s, &p, t0, 5, 0)
			at := t0 + step.after
			_, got := Peek(Refund(s, &p, at, t0, 5), &p, at, 1)
			if alg == core.LeakyBucket {
				got.Remaining-- // an idle queue admits one more than it holds
			}
			if got.Remaining != step.want {
				t.Errorf("%s, refunded %dms after the charge: %d left, want %d", alg, step.after, got.Remaining, step.want)
			}
		}
	}
}

// TestRefundableCostIsWhatABucketRefundGivesBack holds RefundableCost to Refund: for
// each bucket, what it says a late refund gives back in whole requests is what the
// state gets back, and a window's refund is the whole cost.
func TestRefundableCostIsWhatABucketRefundGivesBack(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket} {
		p := core.MustPolicy("p", alg, core.PerSecond(10)) // a request refills in 100 ms
		for _, step := range []struct{ after, want int64 }{
			{-50, 5}, {0, 5}, {1, 4}, {99, 4}, {100, 4}, {101, 3}, {450, 0}, {499, 0}, {500, 0}, {5_000, 0},
		} {
			if got := RefundableCost(&p, t0+step.after, t0, 5); got != step.want {
				t.Errorf("%s, refunded %dms after a charge of 5: %d refundable, want %d", alg, step.after, got, step.want)
			}
		}
		if got := RefundableCost(&p, t0, -1, 5); got != 5 {
			t.Errorf("%s, unknown charge instant: %d refundable, want the whole cost 5", alg, got)
		}
		// An empty bucket refunded at a step: what comes back is what it admits.
		for _, after := range []int64{0, 30, 250} {
			var s State
			s, _ = Step(s, &p, t0, 10, 0)
			at := t0 + after
			_, before := Peek(s, &p, at, 1)
			_, got := Peek(Refund(s, &p, at, t0, 5), &p, at, 1)
			if back := got.Remaining - before.Remaining; back < RefundableCost(&p, at, t0, 5) {
				t.Errorf("%s, %dms: the state got %d back, fewer than the %d RefundableCost names", alg, after, back, RefundableCost(&p, at, t0, 5))
			}
		}
	}
	window := core.MustPolicy("w", core.FixedWindow, core.PerSecond(10))
	if got := RefundableCost(&window, t0+5_000, t0, 5); got != 5 {
		t.Errorf("fixed window: %d refundable, want the whole cost 5", got)
	}
}
