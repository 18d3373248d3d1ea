package reserve_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// boundCase is a leased policy and the bound leasing must keep.
type boundCase struct {
	lease reserve.Lease
	// exact is the most the policy admits for one key over the closed interval
	// [from, to] (ms), and whether the interval is one the bound speaks of.
	exact func(p core.Policy, from, to int64) (int64, bool)
	// overage is how much leasing may add to exact, per replica.
	overage func(size int64) int64
}

func bucketExact(p core.Policy, from, to int64) (int64, bool) {
	return p.Capacity() + p.Limit()*(to-from)/p.PeriodMillis(), true
}

func slidingLogExact(p core.Policy, from, to int64) (int64, bool) {
	return p.Limit(), to-from < p.PeriodMillis()
}

func fixedWindowExact(p core.Policy, from, to int64) (int64, bool) {
	return p.Limit(), from/p.PeriodMillis() == to/p.PeriodMillis()
}

func leaseOverage(size int64) int64 { return size - 1 }
func noOverage(int64) int64         { return 0 }

// boundCases leases every leasable algorithm with lifetimes shorter than a test
// run, so that leases also expire and are returned.
func boundCases() []boundCase {
	return []boundCase{
		{reserve.Lease{Policy: core.MustPolicy("tb", core.TokenBucket, core.PerSecond(1000), core.WithBurst(100)), Size: 10, Lifetime: 40 * ms}, bucketExact, leaseOverage},
		{reserve.Lease{Policy: core.MustPolicy("gcra", core.GCRA, core.PerSecond(500), core.WithBurst(60)), Size: 8, Lifetime: 25 * ms}, bucketExact, leaseOverage},
		{reserve.Lease{Policy: core.MustPolicy("log", core.SlidingLog, core.Rate{Limit: 120, Period: 100 * ms}), Size: 6, Lifetime: 30 * ms}, slidingLogExact, leaseOverage},
		// A sliding window's current count never exceeds its limit: per aligned
		// window, leasing adds at most what replicas carried over from the last one.
		{reserve.Lease{Policy: core.MustPolicy("sw", core.SlidingWindow, core.Rate{Limit: 80, Period: 60 * ms}), Size: 7, Lifetime: 45 * ms}, fixedWindowExact, leaseOverage},
		{reserve.Lease{Policy: core.MustPolicy("fw", core.FixedWindow, core.Rate{Limit: 90, Period: 50 * ms}), Size: 12, Lifetime: time.Hour}, fixedWindowExact, noOverage},
	}
}

// replicaSet builds n replicas of one leased policy over one shared budget.
type replicaSet func(t *testing.T, clock *storetest.Clock, n int, l reserve.Lease) []*reserve.Store

// memoryReplicas puts n replicas over one memory store.
func memoryReplicas(t *testing.T, clock *storetest.Clock, n int, l reserve.Lease) []*reserve.Store {
	backing := newMemoryBacking(t, clock)
	replicas := make([]*reserve.Store, n)
	for i := range replicas {
		replicas[i] = newReplica(t, backing, clock, l)
	}
	return replicas
}

// hammer has every replica's goroutines decide cost-1 requests for key at the
// clock's current instant, concurrently: demand[r][g] requests for goroutine g of
// replica r, or until the first refusal when it is negative. It returns how many
// were admitted.
func hammer(t *testing.T, replicas []*reserve.Store, p core.Policy, key string, demand [][]int) int64 {
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for r, s := range replicas {
		for _, n := range demand[r] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; n < 0 || i < n; i++ {
					res, err := s.Decide(context.Background(), core.Request{Policy: p, Key: key})
					if err != nil {
						t.Error(err)
						return
					}
					if !res.Allowed {
						if n < 0 {
							return
						}
						continue
					}
					admitted.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	return admitted.Load()
}

// untilRefused is demand that runs every goroutine until it is refused.
func untilRefused(replicas, goroutines int) [][]int {
	d := make([][]int, replicas)
	for r := range d {
		d[r] = make([]int, goroutines)
		for g := range d[r] {
			d[r][g] = -1
		}
	}
	return d
}

const (
	boundReplicas   = 3
	boundGoroutines = 4
)

// testExactWhenSaturated: with the clock still, replicas that run until refused
// admit exactly the policy's capacity, not one unit more or less: leases move the
// budget around, never create or lose it.
func testExactWhenSaturated(t *testing.T, replicas replicaSet) {
	for _, c := range boundCases() {
		t.Run(c.lease.Policy.Name(), func(t *testing.T) {
			clock := storetest.NewClock()
			set := replicas(t, clock, boundReplicas, c.lease)
			got := hammer(t, set, c.lease.Policy, "hot", untilRefused(boundReplicas, boundGoroutines))
			if want := c.lease.Policy.Capacity(); got != want {
				t.Fatalf("admitted %d at one instant, want the capacity %d", got, want)
			}
		})
	}
}

// testBound steps the clock through random intervals while every replica's
// goroutines send random demand, and checks every interval of steps:
//
//	admitted([from, to]) <= exact([from, to]) + replicas × (size − 1)
//
// Busy steps drain the budget; quiet ones (long jumps, little demand) let it
// recover while replicas hold leases, which is where leasing admits more.
func testBound(t *testing.T, replicas replicaSet, steps int) {
	for _, c := range boundCases() {
		t.Run(c.lease.Policy.Name(), func(t *testing.T) {
			p := c.lease.Policy
			clock := storetest.NewClock()
			clock.Set(storetest.Start - storetest.Start%p.PeriodMillis()) // windows start at 0
			set := replicas(t, clock, boundReplicas, c.lease)
			rng := rand.New(rand.NewPCG(uint64(len(p.Name())), 11))
			at := make([]int64, steps)
			admitted := make([]int64, steps)
			for i := range steps {
				quiet := rng.IntN(4) == 0
				if quiet {
					clock.Advance(time.Duration(rng.IntN(150)) * ms)
				} else {
					clock.Advance(time.Duration(rng.IntN(12)) * ms)
				}
				for _, s := range set {
					if err := s.ReturnExpired(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				demand := make([][]int, boundReplicas)
				for r := range demand {
					demand[r] = make([]int, boundGoroutines)
					for g := range demand[r] {
						demand[r][g] = rng.IntN(int(c.lease.Size))
						if quiet {
							demand[r][g] = rng.IntN(2)
						}
					}
				}
				at[i], admitted[i] = clock.Millis(), hammer(t, set, p, "hot", demand)
			}
			allowance := boundReplicas * c.overage(c.lease.Size)
			worst := int64(-1 << 62)
			for from := range steps {
				var sum int64
				for to := from; to < steps; to++ {
					sum += admitted[to]
					exact, applies := c.exact(p, at[from], at[to])
					if !applies {
						continue
					}
					if sum > exact+allowance {
						t.Fatalf("steps %d..%d (%dms): admitted %d > exact %d + allowance %d", from, to, at[to]-at[from], sum, exact, allowance)
					}
					worst = max(worst, sum-exact)
				}
			}
			t.Logf("%s: worst interval admitted %+d beyond the exact bound (allowance %d = %d replicas × %d)", p.Name(), worst, allowance, boundReplicas, c.overage(c.lease.Size))
		})
	}
}

// testExactOverTime steps the clock through random intervals and runs every
// replica's goroutines until they are refused at each step, and compares what they
// admit with what one exact store admits to one requester doing the same: under
// saturation leasing loses nothing and adds nothing.
func testExactOverTime(t *testing.T, replicas replicaSet, steps int) {
	for _, c := range boundCases() {
		t.Run(c.lease.Policy.Name(), func(t *testing.T) {
			p := c.lease.Policy
			clock := storetest.NewClock()
			set := replicas(t, clock, boundReplicas, c.lease)
			exact := newMemoryBacking(t, clock)
			rng := rand.New(rand.NewPCG(uint64(len(p.Name())), 5))
			var got, want int64
			for range steps {
				clock.Advance(time.Duration(rng.IntN(20)) * ms)
				got += hammer(t, set, p, "hot", untilRefused(boundReplicas, boundGoroutines))
				for decide(t, exact, p, "hot", 1).Allowed {
					want++
				}
			}
			if got != want {
				t.Fatalf("replicas admitted %d over %d saturated steps, one exact store %d", got, steps, want)
			}
		})
	}
}

// TestOverageReachesTheBound: the bound is tight. Three replicas take a lease of 5
// from a bucket of 15 and spend one unit each; the bucket refills to full while
// they hold 4 each; then, at one instant, the policy admits its 15 and the leases
// their 12: 3 × (5 − 1) beyond what the policy admits at once.
func TestOverageReachesTheBound(t *testing.T) {
	clock := storetest.NewClock()
	p := core.MustPolicy("p", core.TokenBucket, core.PerSecond(15))
	set := memoryReplicas(t, clock, 3, reserve.Lease{Policy: p, Size: 5, Lifetime: time.Hour})
	for _, s := range set {
		decide(t, s, p, "hot", 1)
	}
	clock.Advance(time.Second)
	got := hammer(t, set, p, "hot", untilRefused(3, 2))
	if want := p.Capacity() + 3*(5-1); got != want {
		t.Fatalf("admitted %d at one instant, want %d = capacity 15 + 3 × (5 − 1)", got, want)
	}
}

func TestExactWhenSaturatedMemory(t *testing.T) { testExactWhenSaturated(t, memoryReplicas) }

func TestExactOverTimeMemory(t *testing.T) { testExactOverTime(t, memoryReplicas, 60) }

func TestBoundMemory(t *testing.T) { testBound(t, memoryReplicas, 150) }
