package resilient_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
	for _, alg := range oracleAlgorithms {
		for seed := uint64(1); seed <= uint64(*oracleSeeds); seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", alg, seed), func(t *testing.T) {
				r := newRig(t)
				runOracle(t, r, alg, seed, func(down bool) {
					if down {
						r.shared.fail(errDown)
					} else {
						r.shared.heal()
					}
				})
			})
		}
	}
}

// oracleAlgorithms are the algorithms the oracle runs: all but the concurrency limit,
// whose admissions depend on when requests end, not on a rate.
var oracleAlgorithms = []core.Algorithm{core.TokenBucket, core.GCRA, core.LeakyBucket, core.FixedWindow, core.SlidingWindow, core.SlidingLog}

// runOracle runs one random schedule of alg, from seed, on r's Store, whose shared
// store cut cuts off (true) and brings back (false), and replays what it admitted
// through the policies' model.
func runOracle(t *testing.T, r *rig, alg core.Algorithm, seed uint64, cut func(down bool)) {
	o := &oracleRun{
		t: t, r: r, rng: rand.New(rand.NewPCG(seed, uint64(len(alg)))),
		p:  core.MustPolicy("api", alg, core.Rate{Limit: 5, Period: 5 * time.Second}),
		p2: core.MustPolicy("ip", alg, core.Rate{Limit: 8, Period: 5 * time.Second}),
	}
	o.send(15)
	for range 2 {
		cut(true)
		o.send(3) // slow calls: the breakers are still closed
		o.trip()
		o.send(15) // Local mode
		cut(false)
		r.awaitRecovery(t, func() bool {
			return o.breakers(resilient.BreakerClosed) && !r.store.Fallback("api") && !r.store.Fallback("ip")
		})
		o.send(15)
	}
	for _, via := range []string{"/shared", "/last-shared", "/local"} {
		if !slices.ContainsFunc(r.rec.outcomes(), func(o string) bool { return strings.HasSuffix(o, via) }) {
			t.Fatalf("no decision %s: the schedule missed a phase of the outages", via)
		}
	}
	replayThroughModel(t, o.p, o.p2, o.admitted)
}

// awaitRecovery moves the clock a cooldown (1 s) and waits until recovered reports
// the store back, moving it a cooldown more every 50 ms: a probe that failed just
// before the store came back, and read the clock after a move, sets the next probe a
// cooldown past it (see probeTimed), and without traffic nothing else moves the
// clock: 1 schedule in about 3,000 waited out the 10 s.
func (r *rig) awaitRecovery(t testing.TB, recovered func() bool) {
	t.Helper()
	for i := 0; !recovered(); i++ {
		if i == 2000 {
			t.Fatal("recovery: not within 10s")
		}
		if i%10 == 0 {
			r.clock.Advance(time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// trip decides requests of cost 1 on "k", 100 ms apart, until its breaker is open
// (on a Redis store, that of its Cluster slot: a partition opens the slots that fail,
// and the store-wide breaker only once its failure rate is reached), which sends its
// requests and every stack to Local mode. Stacks would not do: once the slot of "ip"
// has opened, they go to Local mode without a call, and that of "k" stays closed.
// The requests are part of the schedule: decided from the last answer, they may
// admit.
func (o *oracleRun) trip() {
	untilOpen(o.t, func() resilient.BreakerState { return o.r.store.BreakerFor(o.req("k")) }, func() {
		o.r.clock.Advance(100 * time.Millisecond)
		o.decide(core.Request{Policy: o.p, Key: "k", Cost: 1}, false, false)
	})
}

// breakers reports whether the breakers of both keys are in state.
func (o *oracleRun) breakers(state resilient.BreakerState) bool {
	return o.r.store.BreakerFor(o.req("k")) == state && o.r.store.BreakerFor(o.req("ip")) == state
}

// req is a request of cost 1 on key: p on "k", p2 on "ip".
func (o *oracleRun) req(key string) core.Request {
	if key == "ip" {
		return core.Request{Policy: o.p2, Key: key}
	}
	return core.Request{Policy: o.p, Key: key}
}

// oracleRun is one random schedule of runOracle.
type oracleRun struct {
	t        *testing.T
	r        *rig
	rng      *rand.Rand
	p, p2    core.Policy // p on key "k"; a stack adds p2 on key "ip"
	admitted []admission
}

// send decides n requests, each after a random pause, and records the admissions.
func (o *oracleRun) send(n int) {
	for range n {
		o.r.clock.Advance(time.Duration(100+o.rng.IntN(800)) * time.Millisecond)
		o.sendOne(1 + o.rng.Int64N(5))
	}
}

// sendOne decides a request of cost on "k": a third of the time as a stack, and a
// quarter of the rest refunded at once.
func (o *oracleRun) sendOne(cost int64) {
	stack := o.rng.IntN(3) == 0
	o.decide(core.Request{Policy: o.p, Key: "k", Cost: cost}, stack, !stack && o.rng.IntN(4) == 0)
}

// decide decides req, alone or as a stack with p2 on "ip", records it when admitted,
// and then refunds it at once when refund is set.
func (o *oracleRun) decide(req core.Request, stack, refund bool) {
	ctx := context.Background()
	res, err := decideAs(ctx, o.r.store, req, o.p2, stack)
	if err != nil {
		o.t.Fatal(err)
	}
	if !res.Allowed {
		return
	}
	a := admission{at: o.r.clock.Now(), cost: req.Cost, stack: stack}
	if refund {
		a.refunded = o.r.store.Refund(ctx, req, res.DecidedAt) == nil
	}
	o.admitted = append(o.admitted, a)
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
	if excess, first := replayExcess(t, p, p2, admitted); excess > 0 {
		t.Fatal(first)
	}
	t.Logf("%d admissions, all within the policy", len(admitted))
}

// replayExcess decides each admission at its instant on a fresh memory store (p on
// "k", and p2 on "ip" for a stack), as replayThroughModel does, and returns the cost
// of those the policies refuse (not charged to the model, so that each counts once),
// and a description of the first.
func replayExcess(t *testing.T, p, p2 core.Policy, admitted []admission) (excess int64, first string) {
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
			if excess == 0 {
				first = fmt.Sprintf("admission %d of %d, cost %d at +%v: the policy refuses it (%d remaining): an over-grant", i+1, len(admitted), a.cost, a.at.Sub(start), res.Remaining)
			}
			excess += a.cost
			continue
		}
		if a.refunded {
			if err := model.Refund(context.Background(), req, res.DecidedAt); err != nil {
				t.Fatal(err)
			}
		}
	}
	return excess, first
}
