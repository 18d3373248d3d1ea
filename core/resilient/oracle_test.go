package resilient_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// admission is a request the store under test admitted: when, at what cost, and
// whether it was then refunded (as when a route's limit refuses a request that an
// app-wide limit admitted).
type admission struct {
	at       time.Time
	cost     int64
	stack    bool // with the second policy's key, as one all-or-nothing stack
	refunded bool
}

// oracleSeeds is how many random schedules TestOutagesNeverAdmitMoreThanThePolicy
// runs per algorithm: go test -run TestOutagesNeverAdmitMoreThanThePolicy
// ./core/resilient -args -oracle-seeds=500 hunts longer.
var oracleSeeds = flag.Int("oracle-seeds", 12, "random schedules per algorithm in TestOutagesNeverAdmitMoreThanThePolicy")

// Whatever the outages, the requests a resilient store admits are requests its
// policies admit: replayed at their instants through a fresh memory store, the
// policies' own exact model, every one is admitted again, and those the store gave
// back (a quarter of the single ones, refunded at once, as when a route refuses what
// an app-wide limit admitted) are given back in the model too. Each algorithm gets
// random traffic, 100–900 ms apart, of costs 1–5, a third of it as a stack with a
// second key, through two outages: slow calls decided from the last answer, Local
// mode once the breaker opens, and the return with its settlement. Less is allowed
// (an outage under-grants); more is an over-grant, and the first request the model
// refuses is reported.
func TestOutagesNeverAdmitMoreThanThePolicy(t *testing.T) {
	for _, alg := range []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog} {
		for seed := uint64(1); seed <= uint64(*oracleSeeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", alg, seed), func(t *testing.T) {
				o := &oracleRun{
					t: t, r: newRig(t), rng: rand.New(rand.NewPCG(seed, uint64(len(alg)))),
					p:  core.MustPolicy("api", alg, core.Rate{Limit: 5, Period: 5 * time.Second}),
					p2: core.MustPolicy("ip", alg, core.Rate{Limit: 8, Period: 5 * time.Second}),
				}
				o.send(15)
				for range 2 {
					o.r.shared.fail(errDown)
					o.send(3) // slow calls: the breaker is still closed
					o.r.trip(t, o.p)
					o.send(15) // Local mode
					o.r.shared.heal()
					o.r.clock.Advance(time.Second)
					waitFor(t, "recovery", func() bool { return o.r.store.Breaker() == resilient.BreakerClosed && !o.r.store.Fallback("api") })
					o.send(15)
				}
				replayThroughModel(t, o.p, o.p2, o.admitted)
			})
		}
	}
}

// oracleRun is one random schedule of TestOutagesNeverAdmitMoreThanThePolicy.
type oracleRun struct {
	t        *testing.T
	r        *rig
	rng      *rand.Rand
	p, p2    core.Policy // p on key "k"; a stack adds p2 on key "ip"
	admitted []admission
}

// send decides n requests, each after a random pause, and records the admissions.
func (o *oracleRun) send(n int) {
	ctx := context.Background()
	for range n {
		o.r.clock.Advance(time.Duration(100+o.rng.IntN(800)) * time.Millisecond)
		req := core.Request{Policy: o.p, Key: "k", Cost: 1 + o.rng.Int64N(5)}
		a := admission{cost: req.Cost, stack: o.rng.IntN(3) == 0}
		res, err := decideAs(ctx, o.r.store, req, o.p2, a.stack)
		if err != nil {
			o.t.Fatal(err)
		}
		if !res.Allowed {
			continue
		}
		a.at = o.r.clock.Now()
		if !a.stack && o.rng.IntN(4) == 0 {
			a.refunded = o.r.store.Refund(ctx, req, res.DecidedAt) == nil
		}
		o.admitted = append(o.admitted, a)
	}
}

// decideAs decides req on store alone, or, for a stack, with p2 on key "ip" at the
// same cost, all-or-nothing; the result is req's, admitted when the stack is.
func decideAs(ctx context.Context, store core.Store, req core.Request, p2 core.Policy, stack bool) (core.Result, error) {
	if !stack {
		return store.Decide(ctx, req)
	}
	results := make([]core.Result, 2)
	allowed, err := store.DecideStack(ctx, []core.Request{req, {Policy: p2, Key: "ip", Cost: req.Cost}}, results)
	results[0].Allowed = allowed
	return results[0], err
}

// replayThroughModel decides each admission at its instant on a fresh memory store
// (p on "k", and p2 on "ip" for a stack) and fails at the first one the policies
// refuse.
func replayThroughModel(t *testing.T, p, p2 core.Policy, admitted []admission) {
	t.Helper()
	clock := storetest.NewClock()
	model, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	if len(admitted) == 0 {
		t.Fatal("nothing was admitted")
	}
	start := admitted[0].at
	for i, a := range admitted {
		clock.Set(a.at.UnixMilli())
		req := core.Request{Policy: p, Key: "k", Cost: a.cost}
		res, err := decideAs(context.Background(), model, req, p2, a.stack)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Allowed {
			t.Fatalf("admission %d of %d, cost %d at +%v: the policy refuses it (%d remaining): an over-grant", i+1, len(admitted), a.cost, a.at.Sub(start), res.Remaining)
		}
		if a.refunded {
			if err := model.Refund(context.Background(), req, res.DecidedAt); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d admissions, all within the policy", len(admitted))
}
