package resilient_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// heldLease is a concurrency lease the store under test granted: the request holds
// it from at until it ends and releases it, before the lease's timeout.
type heldLease struct {
	id        uint64
	cost      int64
	at, until time.Time
}

// The oracle of TestOutagesNeverAdmitMoreThanThePolicy for the concurrency limit,
// whose admissions depend on when requests end: random requests of costs 1–2, each
// running 1–4 s, through two outages (refused as slow calls, Local mode seeded
// from the leases the last answer held, the return that hands Local mode's leases
// to the shared store). Each request releases its lease when it ends, and a release
// that fails (the lease then lapses at its timeout) only makes the store admit less.
// At every admission, the requests still running on admitted leases, this one
// included, must fit the policy: 3 in flight.
//
// Each seed runs with a lease timeout of 10 s, where each outage's Local mode
// admits, and of 30 s, where the first outage's seed outlives the second outage's
// start: at 10 s it had lapsed by then, and no schedule saw a second outage keep
// it (against a Local mode that did, 2 schedules of 100 admitted a fourth). At
// 30 s, Local mode may admit nothing: the seed counts the leases the last answer
// held until they lapse, and the releases of those that ended meanwhile reach no
// one (it admits less, never more).
func TestOutagesNeverHoldMoreLeasesThanThePolicy(t *testing.T) {
	for _, timeout := range []time.Duration{10 * time.Second, 30 * time.Second} {
		for seed := uint64(1); seed <= uint64(*oracleSeeds); seed++ {
			t.Run(fmt.Sprintf("%v/seed%d", timeout, seed), func(t *testing.T) {
				r := newRig(t)
				runLeaseOracle(t, r, seed, timeout, func(down bool) {
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

// leaseRun is one random schedule of runLeaseOracle.
type leaseRun struct {
	t               *testing.T
	r               *rig
	rng             *rand.Rand
	p               core.Policy
	nextID          uint64
	leases          []heldLease // the requests running
	admitted, local int         // admissions, and those in Local mode
	decidedLocally  int         // decisions in Local mode, admitted or not
}

// runLeaseOracle runs one random schedule of the concurrency limit, with the given
// lease timeout, from seed on r's Store, whose shared store cut cuts off and brings
// back, checking each admission. With a lease timeout of 10 s, Local mode must
// admit; with a longer one, decide.
func runLeaseOracle(t *testing.T, r *rig, seed uint64, timeout time.Duration, cut func(down bool)) {
	o := &leaseRun{t: t, r: r, rng: rand.New(rand.NewPCG(seed, 17)), p: core.MustConcurrencyPolicy("export", 3, timeout)}
	o.send(15)
	for range 2 {
		cut(true)
		o.send(3) // slow calls: refused, the leases are not continued
		untilOpen(t, func() resilient.BreakerState { return r.store.BreakerFor(core.Request{Policy: o.p, Key: "k"}) }, func() { o.send(1) })
		o.send(15) // Local mode
		cut(false)
		r.awaitRecovery(t, func() bool {
			return r.store.BreakerFor(core.Request{Policy: o.p, Key: "k"}) == resilient.BreakerClosed && !r.store.Fallback("export")
		})
		o.send(15)
	}
	for _, l := range o.leases {
		o.release(l)
	}
	if o.decidedLocally == 0 || o.local == 0 && timeout <= 10*time.Second {
		t.Fatalf("Local mode decided %d, admitted %d: the schedule missed the outages", o.decidedLocally, o.local)
	}
	t.Logf("%d leases granted, %d in Local mode, never more than 3 in flight", o.admitted, o.local)
}

// send runs n steps: each a random pause, the ends of the requests due by then, and a
// new request.
func (o *leaseRun) send(n int) {
	for range n {
		o.r.clock.Advance(time.Duration(100+o.rng.IntN(800)) * time.Millisecond)
		now := o.r.clock.Now()
		running := o.leases[:0]
		for _, l := range o.leases {
			if now.Before(l.until) {
				running = append(running, l)
			} else {
				o.release(l)
			}
		}
		o.leases = running
		o.nextID++
		req := core.Request{Policy: o.p, Key: "k", Cost: 1 + o.rng.Int64N(2), Lease: o.nextID}
		res, err := o.r.store.Decide(context.Background(), req)
		if err != nil {
			o.t.Fatal(err)
		}
		if res.DecidedAt.IsZero() {
			o.decidedLocally++
		}
		if !res.Allowed {
			continue
		}
		inFlight := req.Cost
		for _, l := range o.leases {
			inFlight += l.cost
		}
		if inFlight > o.p.Capacity() {
			o.t.Fatalf("lease %d (cost %d) admitted at %s with %d in flight: %s", req.Lease, req.Cost, now.Format(time.TimeOnly+".000"), inFlight, o.running())
		}
		o.admitted++
		if res.DecidedAt.IsZero() {
			o.local++
		}
		until := now.Add(time.Duration(1+o.rng.IntN(4)) * time.Second) // shorter than the lease timeout
		o.leases = append(o.leases, heldLease{id: req.Lease, cost: req.Cost, at: now, until: until})
	}
}

// release ends l's request: its lease is given back, or lapses at its timeout when
// the store cannot take it back.
func (o *leaseRun) release(l heldLease) {
	_ = o.r.store.Release(context.Background(), core.Request{Policy: o.p, Key: "k", Cost: l.cost}, l.id)
}

// running lists the requests running, as "lease×cost from–until".
func (o *leaseRun) running() string {
	var b strings.Builder
	for _, l := range o.leases {
		fmt.Fprintf(&b, " %d×%d %s–%s", l.id, l.cost, l.at.Format(time.TimeOnly+".000"), l.until.Format(time.TimeOnly+".000"))
	}
	return b.String()
}
