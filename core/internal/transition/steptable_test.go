package transition

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// t0 is a round instant (a multiple of every period used here), so windows start at offsets 0.
const t0 int64 = 1_800_000_000_000

// call is one row of a step table: a request at t0+at (ms) of cost, and what it must yield.
type call struct {
	at         int64
	cost       int64
	allowed    bool
	remaining  int64
	retryAfter time.Duration
	resetAfter time.Duration
	delay      time.Duration
	lease      uint64 // concurrency: the lease ID to create
	release    uint64 // concurrency: release this lease before the call
}

func runTable(t *testing.T, p core.Policy, calls []call) {
	t.Helper()
	var s State
	for i, c := range calls {
		if c.release != 0 {
			s = ReleaseLease(s, c.release)
		}
		var r core.Result
		s, r = Step(s, &p, t0+c.at, c.cost, c.lease)
		want := core.Result{Policy: p.Name(), Allowed: c.allowed, Limit: p.Capacity(), Remaining: c.remaining,
			RetryAfter: c.retryAfter, ResetAfter: c.resetAfter, Delay: c.delay, DecidedAt: time.UnixMilli(t0 + c.at)}
		if c.allowed {
			want.Lease = c.lease
		}
		if r != want {
			t.Fatalf("row %d (t=+%dms cost %d):\n got %+v\nwant %+v", i, c.at, c.cost, r, want)
		}
	}
}

const ms = time.Millisecond

func TestTokenBucketSteps(t *testing.T) {
	// 10/s, burst 20: one token per 100 ms.
	p := core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	runTable(t, p, []call{
		{at: 0, cost: 1, allowed: true, remaining: 19, resetAfter: 100 * ms},  // starts full
		{at: 0, cost: 19, allowed: true, remaining: 0, resetAfter: 2000 * ms}, // the whole burst at once
		{at: 0, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 2000 * ms},
		{at: 50, cost: 1, remaining: 0, retryAfter: 50 * ms, resetAfter: 1950 * ms}, // half a token
		{at: 100, cost: 1, allowed: true, remaining: 0, resetAfter: 2000 * ms},      // refilled one
		{at: 1100, cost: 5, allowed: true, remaining: 5, resetAfter: 1500 * ms},     // weighted, 10 earned
		{at: 1000, cost: 5, allowed: true, remaining: 0, resetAfter: 2100 * ms},     // clock back: spends, earns nothing; full again at 3100
		{at: 1100, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 2000 * ms},
		{at: 100000, cost: 20, allowed: true, remaining: 0, resetAfter: 2000 * ms}, // long idle: capped at burst
	})
}

func TestTokenBucketSubMillisecondRate(t *testing.T) {
	// 2500/s is 2.5 tokens per ms: unit 2, refill 5.
	p := core.MustPolicy("fast", core.TokenBucket, core.PerSecond(2500), core.WithBurst(5))
	runTable(t, p, []call{
		{at: 0, cost: 5, allowed: true, remaining: 0, resetAfter: 2 * ms},
		{at: 0, cost: 3, remaining: 0, retryAfter: 2 * ms, resetAfter: 2 * ms}, // 1.2 ms, rounded up
		{at: 1, cost: 3, remaining: 2, retryAfter: 1 * ms, resetAfter: 1 * ms}, // 2.5 earned
		{at: 2, cost: 5, allowed: true, remaining: 0, resetAfter: 2 * ms},
	})
}

func TestGCRASteps(t *testing.T) {
	p := core.MustPolicy("gcra", core.GCRA, core.PerSecond(10), core.WithBurst(20))
	runTable(t, p, []call{
		{at: 0, cost: 1, allowed: true, remaining: 19, resetAfter: 100 * ms},
		{at: 0, cost: 19, allowed: true, remaining: 0, resetAfter: 2000 * ms},
		{at: 0, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 2000 * ms},
		{at: 50, cost: 1, remaining: 0, retryAfter: 50 * ms, resetAfter: 1950 * ms},
		{at: 100, cost: 1, allowed: true, remaining: 0, resetAfter: 2000 * ms},
		{at: 1100, cost: 5, allowed: true, remaining: 5, resetAfter: 1500 * ms},
		// The clock goes back 100 ms: GCRA sees the queue from the earlier instant, one
		// token fewer than the token bucket would. It never sees more.
		{at: 1000, cost: 5, remaining: 4, retryAfter: 100 * ms, resetAfter: 1600 * ms},
		{at: 1000, cost: 4, allowed: true, remaining: 0, resetAfter: 2000 * ms},
		{at: 100000, cost: 20, allowed: true, remaining: 0, resetAfter: 2000 * ms},
	})
}

func TestLeakyBucketSteps(t *testing.T) {
	// 10/s: one slot every 100 ms; burst 2: up to 200 ms of queueing.
	p := core.MustPolicy("leaky", core.LeakyBucket, core.PerSecond(10), core.WithBurst(2))
	runTable(t, p, []call{
		{at: 0, cost: 1, allowed: true, remaining: 2, resetAfter: 100 * ms},
		{at: 0, cost: 1, allowed: true, remaining: 1, resetAfter: 200 * ms, delay: 100 * ms},
		{at: 0, cost: 1, allowed: true, remaining: 0, resetAfter: 300 * ms, delay: 200 * ms}, // s-t = burst×E: still admitted
		{at: 0, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 300 * ms},           // queue full
		{at: 100, cost: 1, allowed: true, remaining: 0, resetAfter: 300 * ms, delay: 200 * ms},
		{at: 250, cost: 2, allowed: true, remaining: 0, resetAfter: 350 * ms, delay: 150 * ms}, // weighted
		{at: 251, cost: 1, remaining: 0, retryAfter: 149 * ms, resetAfter: 349 * ms},
		{at: 5000, cost: 1, allowed: true, remaining: 2, resetAfter: 100 * ms}, // drained
	})
}

func TestFixedWindowSteps(t *testing.T) {
	p := core.MustPolicy("fixed", core.FixedWindow, core.PerSecond(3))
	runTable(t, p, []call{
		{at: 100, cost: 1, allowed: true, remaining: 2, resetAfter: 900 * ms},
		{at: 200, cost: 2, allowed: true, remaining: 0, resetAfter: 800 * ms},
		{at: 999, cost: 1, remaining: 0, retryAfter: 1 * ms, resetAfter: 1 * ms}, // until the window ends
		{at: 1000, cost: 1, allowed: true, remaining: 2, resetAfter: 1000 * ms},  // a new window
		{at: 500, cost: 1, allowed: true, remaining: 1, resetAfter: 1500 * ms},   // clock back: stays in the newest window
		{at: 1999, cost: 2, remaining: 1, retryAfter: 1 * ms, resetAfter: 1 * ms},
		{at: 5000, cost: 3, allowed: true, remaining: 0, resetAfter: 1000 * ms},
	})
}

// The boundary burst DESIGN.md warns about: a fixed window admits twice its limit
// within one period when the burst straddles a boundary.
func TestFixedWindowBoundaryBurst(t *testing.T) {
	p := core.MustPolicy("fixed", core.FixedWindow, core.PerSecond(3))
	runTable(t, p, []call{
		{at: 999, cost: 3, allowed: true, remaining: 0, resetAfter: 1 * ms},
		{at: 1000, cost: 3, allowed: true, remaining: 0, resetAfter: 1000 * ms},
	})
}

func TestSlidingLogSteps(t *testing.T) {
	p := core.MustPolicy("log", core.SlidingLog, core.PerSecond(3))
	runTable(t, p, []call{
		{at: 0, cost: 1, allowed: true, remaining: 2, resetAfter: 1000 * ms},
		{at: 400, cost: 2, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 900, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 500 * ms}, // until the entry at 0 ages out
		{at: 1000, cost: 1, allowed: true, remaining: 0, resetAfter: 1000 * ms},      // window (0, 1000]: the entry at 0 is out
		{at: 1000, cost: 2, remaining: 0, retryAfter: 400 * ms, resetAfter: 1000 * ms},
		{at: 1399, cost: 2, remaining: 0, retryAfter: 1 * ms, resetAfter: 601 * ms},
		{at: 1400, cost: 2, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 1300, cost: 1, remaining: 0, retryAfter: 700 * ms, resetAfter: 1100 * ms}, // clock back: decided at 1400; the entry at 1000 leaves at 2000
	})
}

// The sliding log has no boundary burst: the same straddling burst is refused.
func TestSlidingLogHasNoBoundaryBurst(t *testing.T) {
	p := core.MustPolicy("log", core.SlidingLog, core.PerSecond(3))
	runTable(t, p, []call{
		{at: 999, cost: 3, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 1000, cost: 3, remaining: 0, retryAfter: 999 * ms, resetAfter: 999 * ms},
	})
}

func TestSlidingWindowSteps(t *testing.T) {
	p := core.MustPolicy("sliding", core.SlidingWindow, core.PerSecond(10))
	runTable(t, p, []call{
		{at: 0, cost: 4, allowed: true, remaining: 6, resetAfter: 2000 * ms},
		{at: 500, cost: 6, allowed: true, remaining: 0, resetAfter: 1500 * ms},
		// Next window: the previous 10 weigh 10×(1-0) = 10.
		{at: 1000, cost: 1, remaining: 0, retryAfter: 100 * ms, resetAfter: 1000 * ms},
		// 100 ms in, they weigh 9: one fits.
		{at: 1100, cost: 1, allowed: true, remaining: 0, resetAfter: 1900 * ms},
		// cost 5 needs the previous window's weight down to 4: at 600 ms in.
		{at: 1100, cost: 5, remaining: 0, retryAfter: 500 * ms, resetAfter: 1900 * ms},
		// cost 10 cannot fit until neither window counts: the start of window 3.
		{at: 1100, cost: 10, remaining: 0, retryAfter: 1900 * ms, resetAfter: 1900 * ms},
		{at: 1600, cost: 5, allowed: true, remaining: 0, resetAfter: 1400 * ms},
		{at: 3500, cost: 1, allowed: true, remaining: 9, resetAfter: 1500 * ms}, // two windows later: all forgotten
		{at: 2500, cost: 1, allowed: true, remaining: 8, resetAfter: 2500 * ms}, // clock back: stays in window 3
	})
}

func TestConcurrencySteps(t *testing.T) {
	p := core.MustConcurrencyPolicy("inflight", 2, time.Second)
	runTable(t, p, []call{
		{at: 0, cost: 1, lease: 1, allowed: true, remaining: 1, resetAfter: 1000 * ms},
		{at: 10, cost: 1, lease: 2, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 20, cost: 1, lease: 3, remaining: 0, retryAfter: 980 * ms, resetAfter: 990 * ms},
		{at: 30, cost: 1, lease: 4, release: 1, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 40, cost: 1, lease: 5, release: 99, remaining: 0, retryAfter: 970 * ms, resetAfter: 990 * ms}, // unknown lease: nothing freed
		{at: 1010, cost: 1, lease: 6, allowed: true, remaining: 0, resetAfter: 1000 * ms},                  // lease 2 lapsed
		{at: 1020, cost: 2, lease: 7, remaining: 0, retryAfter: 10 * ms, resetAfter: 990 * ms},             // weighted
	})
}

// An acquire of an ID that a live lease holds is admitted, even on a full key, and
// changes nothing: a retry after a lost reply holds one lease. ID 0 is no ID.
func TestConcurrencyRetriedAcquireHoldsOneLease(t *testing.T) {
	p := core.MustConcurrencyPolicy("inflight", 2, time.Second)
	runTable(t, p, []call{
		{at: 0, cost: 1, lease: 1, allowed: true, remaining: 1, resetAfter: 1000 * ms},
		{at: 100, cost: 1, lease: 1, allowed: true, remaining: 1, resetAfter: 900 * ms}, // still one lease, still lapsing at 1000
		{at: 200, cost: 1, lease: 2, allowed: true, remaining: 0, resetAfter: 1000 * ms},
		{at: 300, cost: 1, lease: 1, allowed: true, remaining: 0, resetAfter: 900 * ms}, // full, but it holds its slot
		{at: 400, cost: 1, lease: 3, remaining: 0, retryAfter: 600 * ms, resetAfter: 800 * ms},
		{at: 500, cost: 1, lease: 3, release: 1, allowed: true, remaining: 0, resetAfter: 1000 * ms}, // one release frees it
		{at: 1300, cost: 1, lease: 2, allowed: true, remaining: 0, resetAfter: 1000 * ms},            // lease 2 lapsed: taken afresh
		{at: 1400, cost: 1, lease: 4, remaining: 0, retryAfter: 100 * ms, resetAfter: 900 * ms},
	})
	runTable(t, p, []call{
		{at: 0, cost: 1, lease: 0, allowed: true, remaining: 1, resetAfter: 1000 * ms},
		{at: 0, cost: 1, lease: 0, allowed: true, remaining: 0, resetAfter: 1000 * ms}, // two leases without an ID
		{at: 0, cost: 1, lease: 0, remaining: 0, retryAfter: 1000 * ms, resetAfter: 1000 * ms},
	})
	runTable(t, p, []call{
		{at: 0, cost: 1, lease: 5, allowed: true, remaining: 1, resetAfter: 1000 * ms},
		{at: 0, cost: 1, lease: 5, allowed: true, remaining: 1, resetAfter: 1000 * ms}, // at the same instant too
	})
}

func TestInfeasibleCostIsRefusedWithoutSpending(t *testing.T) {
	for _, p := range []core.Policy{
		core.MustPolicy("tb", core.TokenBucket, core.PerSecond(10)),
		core.MustPolicy("fw", core.FixedWindow, core.PerSecond(10)),
		core.MustPolicy("lb", core.LeakyBucket, core.PerSecond(10), core.WithBurst(3)),
	} {
		s, r := Step(State{}, &p, t0, p.Capacity()+1, 0)
		if r.Allowed || s.Seen {
			t.Errorf("%s: a cost above capacity was admitted or spent: %+v %+v", p.Name(), r, s)
		}
		if err := p.CheckCost(p.Capacity() + 1); err == nil {
			t.Errorf("%s: CheckCost accepted a cost above capacity", p.Name())
		}
		if err := p.CheckCost(0); err == nil {
			t.Errorf("%s: CheckCost accepted cost 0", p.Name())
		}
	}
}
