package resilient_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// TestRacingSlowCallsShareTheLastAnswer on real Redis: Redis left each key 1 (token
// bucket, 2 a minute), then fails while the breaker stays closed (it may open only
// after a million calls), so every decision is a slow call decided from the key's
// last answer. In each round 8 decisions race on one key, released together and
// lined up again where their calls have failed (see lineUp); each key admits exactly
// 1: 2 or more is the over-grant of deciding and spending under separate locks, 0 an
// under-grant. A hung server (SIGSTOP) fails the calls at the deadline, a dead one
// (SIGKILL) at once.
//
// Back on Redis, the slow admission is charged to Redis by the key's next admission
// there, which is refused when Redis has no room left for it
// (TestRedisSlowAdmissionIsNotGrantedAgainByRedis): a key admits its capacity, 2, in
// all. On the server restarted empty, which forgot the first admission, it admits
// 3; not charging the slow admission would let it admit 4.
func TestRedisRacingSlowCallsShareTheLastAnswer(t *testing.T) {
	// A round costs a deadline (50ms) on a hung server, next to nothing on a dead one.
	rounds := map[string]int{"hung": 30, "dead": 200}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := redistest.StartServer(t)
			keys := make([]string, rounds[f.name])
			for k := range keys {
				keys[k] = keyName(k)
			}
			raceSlowCalls(t, []string{srv.Addr}, keys, func() error { return f.inject(srv) }, func() error { return f.recover(srv) }, f.name == "dead")
		})
	}
}

// TestRedisClusterRacingSlowCallsShareTheLastAnswer is
// TestRedisRacingSlowCallsShareTheLastAnswer on a 3-master Cluster: one master hangs
// (SIGSTOP) and the racing keys live on it. Keys on the healthy masters are
// left out: a decision Redis answers and a slow one on the same key are not
// decided from one answer (the documented bound of a slow call allows both).
func TestRedisClusterRacingSlowCallsShareTheLastAnswer(t *testing.T) {
	c := redistest.StartCluster(t, 3)
	keys := make([]string, 30)
	for k := range keys {
		keys[k] = clusterKey(t, c, slowRacePolicy, 0, fmt.Sprintf("k%d-", k))
	}
	raceSlowCalls(t, c.Addrs(), keys, c.Servers[0].Pause, c.Servers[0].Resume, false)
}

// slowRacePolicy is the racing keys' policy: 2 a minute, so that a first decision
// leaves 1 and nothing refills during a test.
var slowRacePolicy = core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))

// slowRacers is how many decisions race on each key.
const slowRacers = 8

// raceSlowCalls runs TestRedisRacingSlowCallsShareTheLastAnswer on the Redis at
// addrs, which inject makes fail for keys and restore brings back (emptied: with
// none of the keys' state).
func raceSlowCalls(t *testing.T, addrs, keys []string, inject, restore func() error, emptied bool) {
	p := slowRacePolicy
	counter := &fallbackCounter{}
	line := &lineUp{}
	store := dialStores(t, addrs, 1, resilient.WithFailureRate(0.5, 1_000_000, time.Minute), neverOpen,
		resilient.WithMonitor(counter), resilient.WithMonitor(line))[0]
	ctx := context.Background()
	for k, key := range keys {
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
		if err != nil || !res.Allowed || res.Remaining != 1 {
			t.Fatalf("healthy, key %d: %+v, %v; want admitted with 1 left", k, res, err)
		}
	}
	if err := inject(); err != nil {
		t.Fatal(err)
	}
	admitted := make([]atomic.Int64, len(keys))
	var errs atomic.Int64
	var firstErr atomic.Value
	for k := range keys { // a round per key
		line.arm(slowRacers)
		start := make(chan struct{})
		var done sync.WaitGroup
		for i := 0; i < slowRacers; i++ {
			done.Add(1)
			go func() {
				defer done.Done()
				<-start
				res, err := store.Decide(ctx, core.Request{Policy: p, Key: keys[k]})
				switch {
				case err != nil:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				case res.Allowed:
					admitted[k].Add(1)
				}
			}()
		}
		close(start)
		done.Wait()
	}
	line.disarm()
	slow := admittedVia(counter)[resilient.ViaLastShared]
	t.Logf("%d keys × %d racers: %d admitted from the last answer; %d errors (%v); %d of %d rounds lined up; breaker %v",
		len(keys), slowRacers, slow, errs.Load(), firstErr.Load(), line.full.Load(), len(keys), store.Breaker())
	if errs.Load() != 0 {
		t.Errorf("%d racing decisions failed (%v), want every one decided", errs.Load(), firstErr.Load())
	}
	over, under, raced := 0, 0, 0
	for k := range admitted {
		n := admitted[k].Load()
		raced += int(n)
		switch {
		case n > 1:
			if over++; over <= 5 {
				t.Errorf("key %d: %d of %d racing slow calls admitted from an answer that left 1", k, n, slowRacers)
			}
		case n == 0:
			if under++; under <= 5 {
				t.Errorf("key %d: none of %d racing slow calls admitted, from an answer that left 1", k, slowRacers)
			}
		}
	}
	if over+under > 0 {
		t.Errorf("%d keys over-granted, %d under-granted, of %d", over, under, len(keys))
	}
	// Slow calls, not Local mode: the breaker stayed closed and nothing fell back.
	if store.Breaker() != resilient.BreakerClosed || store.Fallback(p.Name()) || counter.enter.Load() != 0 || slow != raced {
		t.Errorf("not all slow calls: breaker %v, fallback %v, %d transitions, %d of %d admissions from the last answer",
			store.Breaker(), store.Fallback(p.Name()), counter.enter.Load(), slow, raced)
	}
	if t.Failed() {
		return
	}

	if err := restore(); err != nil {
		t.Fatal(err)
	}
	// A restarted server's pool may refuse to dial for a second after failed dials:
	// wait until decisions reach Redis again.
	waitFor(t, "Redis answers the store again", func() bool { return store.Check(ctx) == nil })
	back := 0
	for k, key := range keys {
		total := 1 + admitted[k].Load()
		for i := 0; i < 3; i++ {
			res, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
			if err != nil {
				t.Fatalf("back on Redis, key %d: %v", k, err)
			}
			if res.Allowed {
				total++
				back++
			}
		}
		limit := p.Capacity()
		if emptied {
			limit++ // the first admission, forgotten
		}
		if total > limit {
			t.Errorf("key %d admitted %d in all, want at most %d", k, total, limit)
		}
	}
	t.Logf("back on Redis: %d admitted over %d keys", back, len(keys))
}

// lineUp is a Monitor that holds each failed store call of a round, once armed, until
// the round's calls have all failed, then lets them go together: they reach the
// key's last answer at once. Held calls yield their processor in a loop rather than
// block, so that at the release each processor is running one of them: the calls
// then race in parallel, as on a machine with more cores than the test's; blocked,
// they would be woken onto one processor and run one after another. A call held
// longer than a second goes on: lineUp never deadlocks a test.
type lineUp struct {
	mu       sync.Mutex
	want     int
	failed   int
	armed    bool
	released *atomic.Bool // set when the round's calls may go on
	full     atomic.Int64 // rounds whose calls were all held and let go together
}

// arm starts a round of n failing calls.
func (l *lineUp) arm(n int) {
	l.mu.Lock()
	l.want, l.failed, l.armed, l.released = n, 0, true, &atomic.Bool{}
	l.mu.Unlock()
}

// disarm ends the rounds: failed calls are no longer held.
func (l *lineUp) disarm() {
	l.mu.Lock()
	l.armed = false
	l.mu.Unlock()
}

func (l *lineUp) OnStoreCall(e *resilient.StoreCallEvent) {
	if e.Kind == "" {
		return
	}
	l.mu.Lock()
	armed, release := l.armed, l.released
	if armed {
		if l.failed++; l.failed == l.want {
			release.Store(true)
			l.armed = false
			l.full.Add(1)
		}
	}
	l.mu.Unlock()
	for end := time.Now().Add(time.Second); armed && !release.Load() && time.Now().Before(end); {
		runtime.Gosched()
	}
}

func (*lineUp) OnDecision(*resilient.DecisionEvent)         {}
func (*lineUp) OnFallback(*resilient.FallbackEvent)         {}
func (*lineUp) OnLocalRefusal(*resilient.LocalRefusalEvent) {}

// admittedVia is how many admissions counter saw, by what decided them.
func admittedVia(counter *fallbackCounter) map[resilient.Via]int {
	counter.mu.Lock()
	defer counter.mu.Unlock()
	out := make(map[resilient.Via]int, len(counter.admittedVia))
	for via, n := range counter.admittedVia {
		out[via] = n
	}
	return out
}
