package resilient_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// These tests put the production path, resilient over redisstore.Dial in Local mode,
// under load and partial failure against real redis-server processes, and check the
// admitted count of one key against the policy's bound over the measured time:
//
//	bound = (burst + rate × elapsed) × 1.1
//
// They assert counts, never durations; each logs its count and its bound.

// overgrantTolerance is the 10% above burst + rate × elapsed that a run may admit.
const overgrantTolerance = 1.1

// bound is what policy p (rate per second, burst) may admit over elapsed, with the
// tolerance.
func bound(rate, burst int64, elapsed time.Duration) float64 {
	return (float64(burst) + float64(rate)*elapsed.Seconds()) * overgrantTolerance
}

// dialStores makes n resilient stores over their own Dial clients of addrs, each in
// Local mode with the given options, closed when t ends.
func dialStores(t testing.TB, addrs []string, n int, options ...resilient.Option) []*resilient.Store {
	t.Helper()
	return dialStoresWith(t, addrs, n, nil, options...)
}

// dialStoresWith is dialStores with redisstore options for each instance's Redis store
// (batching, say).
func dialStoresWith(t testing.TB, addrs []string, n int, storeOptions []redisstore.Option, options ...resilient.Option) []*resilient.Store {
	t.Helper()
	return newStores(t, n, func() (*redisstore.Store, error) { return redisstore.Dial(addrs, storeOptions...) }, options...)
}

// newStores makes n resilient stores, each over its own Redis store from dial, in
// Local mode with the given options, closed when t ends.
func newStores(t testing.TB, n int, dial func() (*redisstore.Store, error), options ...resilient.Option) []*resilient.Store {
	t.Helper()
	stores := make([]*resilient.Store, n)
	for i := range stores {
		shared, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		base := []resilient.Option{resilient.WithMode(resilient.Local), resilient.WithLogger(quietLogger()), resilient.WithDecisionLogEvery(0)}
		store, err := resilient.New(shared, append(base, options...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		stores[i] = store
	}
	return stores
}

// eachBatching runs test as two subtests, with the Redis store options of each:
// unbatched, then batching.
func eachBatching(t *testing.T, test func(t *testing.T, storeOptions []redisstore.Option)) {
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched %v", batched), func(t *testing.T) {
			var storeOptions []redisstore.Option
			if batched {
				storeOptions = []redisstore.Option{redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch)}
			}
			test(t, storeOptions)
		})
	}
}

// backOnShared waits, for up to 10 s, until every store's breaker is closed and policy
// is out of its failure mode, and returns how long after since that was; 0 when it
// never was.
func backOnShared(stores []*resilient.Store, policy string, since time.Time) time.Duration {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		back := true
		for _, s := range stores {
			back = back && s.Breaker() == resilient.BreakerClosed && !s.Fallback(policy)
		}
		if back {
			return time.Since(since)
		}
	}
	return 0
}

// run records the decisions of a load run: each admission at its time since start.
type run struct {
	mu       sync.Mutex
	start    time.Time
	admitted []time.Duration
	errors   atomic.Int64
	decided  atomic.Int64
	wg       sync.WaitGroup
	end      time.Time
}

// drive drives decisions of p on key from workers goroutines, worker w on
// stores[w%len(stores)], pausing pause between decisions (0: none, a saturated CPU),
// until stop is closed.
func drive(stores []*resilient.Store, p core.Policy, key string, workers int, pause time.Duration, stop <-chan struct{}) *run {
	return driveWith(workers, pause, stop, func(w int) func() (bool, error) {
		store := stores[w%len(stores)]
		return func() (bool, error) {
			res, err := store.Decide(context.Background(), core.Request{Policy: p, Key: key})
			return res.Allowed, err
		}
	})
}

// driveWith runs workers goroutines until stop is closed, worker w calling the
// decision newDecide(w) returns, pausing pause between decisions, and records the
// admissions as drive does.
func driveWith(workers int, pause time.Duration, stop <-chan struct{}, newDecide func(w int) func() (bool, error)) *run {
	r := &run{start: time.Now()}
	for w := 0; w < workers; w++ {
		r.wg.Add(1)
		decide := newDecide(w)
		go func() {
			defer r.wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				allowed, err := decide()
				r.decided.Add(1)
				switch {
				case err != nil:
					r.errors.Add(1)
				case allowed:
					at := time.Since(r.start)
					r.mu.Lock()
					r.admitted = append(r.admitted, at)
					r.mu.Unlock()
				}
				if pause > 0 {
					time.Sleep(pause)
				}
			}
		}()
	}
	return r
}

// wait waits for the workers and returns the admissions and the measured elapsed time.
func (r *run) wait() (admitted int, elapsed time.Duration) {
	r.wg.Wait()
	r.end = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.admitted), r.end.Sub(r.start)
}

// admittedBetween counts the admissions from from to to after the run's start.
func (r *run) admittedBetween(from, to time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, at := range r.admitted {
		if at >= from && at < to {
			n++
		}
	}
	return n
}

// perSecond renders the admissions per second of the run: "10, 29, 29, 10".
func (r *run) perSecond() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := int(r.end.Sub(r.start)/time.Second) + 1
	counts := make([]int, n)
	for _, at := range r.admitted {
		if i := int(at / time.Second); i < n {
			counts[i]++
		}
	}
	parts := make([]string, n)
	for i, c := range counts {
		parts[i] = fmt.Sprint(c)
	}
	return strings.Join(parts, ", ")
}

// check logs the run's admitted count against its bound, and fails t beyond it.
func check(t *testing.T, what string, r *run, rate, burst int64) {
	t.Helper()
	admitted, elapsed := r.wait()
	b := bound(rate, burst, elapsed)
	t.Logf("%s: admitted %d, bound %.1f (burst %d + %d/s × %.2fs, +10%%); per second: %s; %d decisions, %d errors",
		what, admitted, b, burst, rate, elapsed.Seconds(), r.perSecond(), r.decided.Load(), r.errors.Load())
	if float64(admitted) > b {
		t.Errorf("%s: admitted %d, beyond the bound %.1f", what, admitted, b)
	}
}

// after sleeps d, then runs fn and reports its error to t.
func after(t *testing.T, d time.Duration, fn func() error) {
	t.Helper()
	time.Sleep(d)
	if err := fn(); err != nil {
		t.Error(err)
	}
}

// Load is not failure: 64 goroutines hammer one key through the production path on a
// saturated CPU, with a healthy Redis, standalone and a 3-master Cluster (whose slots
// have breakers of their own). Calls slow down, none of it may turn into fresh local
// buckets: at most burst + rate × elapsed + 10%, with one store and with many
// instances of it, unbatched and batched (where a batch's decisions on the hot key are
// charged in memory and written once).
func TestRedisSaturatedClientStaysWithinBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a few seconds of saturated CPU; skipped with -short")
	}
	p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(10))
	batching := []redisstore.Option{redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch)}
	for _, deployment := range []struct {
		name  string
		addrs func(t *testing.T) []string
	}{
		{"standalone", func(t *testing.T) []string { return []string{redistest.StartServer(t).Addr} }},
		{"cluster", func(t *testing.T) []string { return redistest.StartCluster(t, 3).Addrs() }},
	} {
		t.Run(deployment.name, func(t *testing.T) {
			addrs := deployment.addrs(t)
			for _, batched := range []bool{false, true} {
				for _, instances := range []int{1, 64} {
					t.Run(fmt.Sprintf("%d instances, batched %v", instances, batched), func(t *testing.T) {
						var storeOptions []redisstore.Option
						if batched {
							storeOptions = batching
						}
						counter := &fallbackCounter{}
						stores := dialStoresWith(t, addrs, instances, storeOptions, resilient.WithMonitor(counter))
						key := fmt.Sprintf("ip:192.0.2.%d-%v", instances, batched)
						stop := make(chan struct{})
						r := drive(stores, p, key, 64, 0, stop)
						time.Sleep(3 * time.Second)
						close(stop)
						check(t, fmt.Sprintf("%s, 64 goroutines, %d instances, batched %v, GCRA 10/s burst 10", deployment.name, instances, batched), r, 10, 10)
						t.Logf("admitted by: %s; fallback transitions: %d", counter.via(), counter.enter.Load())
					})
				}
			}
		})
	}
}

// The standalone server fails under steady traffic on one key from two replicas
// (WithReplicas(2)): stuck (SIGSTOP, then SIGCONT), killed, and killed then restarted
// empty. Entering Local mode continues from the last shared answer, and returning to
// Redis settles what the replicas admitted meanwhile, so that no transition grants a
// second bucket: the whole run stays within burst + rate × elapsed + 10%.
func TestRedisStandaloneFaultsStayWithinBound(t *testing.T) {
	p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20))
	for _, tc := range []struct {
		name     string
		scenario func(t *testing.T, srv *redistest.Server)
	}{
		{"sigstop", func(t *testing.T, srv *redistest.Server) {
			after(t, time.Second, srv.Pause)
			after(t, 1500*time.Millisecond, srv.Resume)
			time.Sleep(1500 * time.Millisecond)
		}},
		{"kill", func(t *testing.T, srv *redistest.Server) {
			after(t, time.Second, srv.Kill)
			time.Sleep(2 * time.Second)
		}},
		{"restart-empty", func(t *testing.T, srv *redistest.Server) {
			after(t, time.Second, srv.Kill)
			after(t, time.Second, srv.Restart) // on the same port, without its data
			time.Sleep(2 * time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			stores := dialStores(t, []string{srv.Addr}, 2, resilient.WithReplicas(2))
			stop := make(chan struct{})
			r := drive(stores, p, "ip:198.51.100.20", 8, 5*time.Millisecond, stop)
			tc.scenario(t, srv)
			close(stop)
			check(t, tc.name+", two replicas, GCRA 10/s burst 20", r, 10, 20)
		})
	}
}

// fallbackCounter counts fallback transitions, and admissions by what decided them.
type fallbackCounter struct {
	enter, leave atomic.Int64
	mu           sync.Mutex
	admittedVia  map[resilient.Via]int
}

func (c *fallbackCounter) OnDecision(e *resilient.DecisionEvent) {
	if e.Outcome != resilient.OutcomeAllowed {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.admittedVia == nil {
		c.admittedVia = make(map[resilient.Via]int)
	}
	c.admittedVia[e.Via]++
}

// via renders the admissions by decider: "map[last-shared:3 shared:40]".
func (c *fallbackCounter) via() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.admittedVia)
}
func (c *fallbackCounter) OnStoreCall(*resilient.StoreCallEvent) {}
func (c *fallbackCounter) OnFallback(e *resilient.FallbackEvent) {
	if e.Active {
		c.enter.Add(1)
	} else {
		c.leave.Add(1)
	}
}
func (c *fallbackCounter) OnLocalRefusal(*resilient.LocalRefusalEvent) {}

// clusterKey is a key whose state for p lives on master i of c (master i serves the
// i-th equal share of the slots).
func clusterKey(t *testing.T, c *redistest.Cluster, p core.Policy, master int, prefix string) string {
	t.Helper()
	shared, err := redisstore.Dial(c.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	key, err := c.KeyOn(master, prefix, func(key string) string { return shared.Key(p, key) })
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// One master of a 3-master Cluster is stuck (SIGSTOP). A key on a healthy master stays
// on Redis and within its bound; a key on the stuck master follows its failure mode
// (Local), within its bound too; and the policy does not flap between local and
// shared. The same holds with batching, where each master has its own queue.
func TestRedisClusterStuckMasterStaysWithinBound(t *testing.T) {
	eachBatching(t, func(t *testing.T, storeOptions []redisstore.Option) {
		c := redistest.StartCluster(t, 3)
		p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20))
		healthyKey := clusterKey(t, c, p, 1, "ip:203.0.113.")
		stuckKey := clusterKey(t, c, p, 0, "ip:198.51.100.")
		counter := &fallbackCounter{}
		stores := dialStoresWith(t, c.Addrs(), 1, storeOptions, resilient.WithMonitor(counter))
		stop := make(chan struct{})
		healthy := drive(stores, p, healthyKey, 4, 5*time.Millisecond, stop)
		stuck := drive(stores, p, stuckKey, 4, 5*time.Millisecond, stop)
		after(t, 500*time.Millisecond, c.Servers[0].Pause)
		time.Sleep(3 * time.Second)
		close(stop)
		defer c.Servers[0].Resume()
		check(t, "key on a healthy master, GCRA 10/s burst 20", healthy, 10, 20)
		check(t, "key on the stuck master, GCRA 10/s burst 20", stuck, 10, 20)
		enter, leave := counter.enter.Load(), counter.leave.Load()
		t.Logf("fallback transitions while a master was stuck: %d into local, %d back to shared (bound: 1 and 0)", enter, leave)
		if enter > 1 || leave > 0 {
			t.Errorf("the policy flapped: %d transitions into local, %d back to shared", enter, leave)
		}
	})
}

// While the breaker is open it probes in the background: once Redis is back, two
// replicas return to shared enforcement without any traffic, and the first second of
// traffic after that stays within the bound (no local bucket during a probe).
func TestRedisRecoveryWithoutTraffic(t *testing.T) {
	srv := redistest.StartServer(t)
	p := core.MustPolicy("api", core.GCRA, core.PerSecond(10), core.WithBurst(20))
	stores := dialStores(t, []string{srv.Addr}, 2, resilient.WithReplicas(2))
	key := "ip:192.0.2.77"
	stop := make(chan struct{})
	r := drive(stores, p, key, 8, 5*time.Millisecond, stop)
	after(t, 500*time.Millisecond, srv.Pause)
	paused := time.Now()
	// The outage is confirmed by a probe that has 1 s to find Redis unreachable.
	for end := paused.Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fellBack := true
		for _, s := range stores {
			fellBack = fellBack && s.Breaker() != resilient.BreakerClosed && s.Fallback("api")
		}
		if fellBack {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the replicas did not fall back within 5 s while Redis was stuck (breakers %v, %v)", stores[0].Breaker(), stores[1].Breaker())
		}
	}
	t.Logf("both replicas in Local mode %v after Redis stopped", time.Since(paused).Round(10*time.Millisecond))
	close(stop)
	r.wait()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for end := back.Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if stores[0].Breaker() == resilient.BreakerClosed && stores[1].Breaker() == resilient.BreakerClosed &&
			!stores[0].Fallback("api") && !stores[1].Fallback("api") {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no traffic: still not back on Redis 10s after it returned (breakers %v, %v)", stores[0].Breaker(), stores[1].Breaker())
		}
	}
	t.Logf("both replicas back on Redis %v after it returned, without traffic", time.Since(back).Round(10*time.Millisecond))
	stop = make(chan struct{})
	first := drive(stores, p, key, 8, 5*time.Millisecond, stop)
	time.Sleep(time.Second)
	close(stop)
	check(t, "first second of traffic after recovery, two replicas, GCRA 10/s burst 20", first, 10, 20)
}

// A login stack (account + IP, all-or-nothing) through two replicas while the
// standalone server is killed and restarted empty: Local mode continues each member
// from its last answer, and back on Redis the stack is settled member by member, so
// the account admits within its bound over the whole run, as a single policy does.
func TestRedisStackRestartEmptyStaysWithinBound(t *testing.T) {
	srv := redistest.StartServer(t)
	account := core.MustPolicy("login-account", core.GCRA, core.PerSecond(10), core.WithBurst(20))
	ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerSecond(1000))
	stores := dialStores(t, []string{srv.Addr}, 2, resilient.WithReplicas(2))
	stop := make(chan struct{})
	r := driveWith(8, 5*time.Millisecond, stop, func(w int) func() (bool, error) {
		store := stores[w%len(stores)]
		reqs := []core.Request{{Policy: account, Key: "form:username:alice"}, {Policy: ip, Key: fmt.Sprintf("ip:192.0.2.%d", w)}}
		results := make([]core.Result, len(reqs))
		return func() (bool, error) { return store.DecideStack(context.Background(), reqs, results) }
	})
	after(t, time.Second, srv.Kill)
	after(t, time.Second, srv.Restart)
	time.Sleep(2 * time.Second)
	close(stop)
	check(t, "login stack, kill then restart empty, two replicas, account GCRA 10/s burst 20", r, 10, 20)
}
