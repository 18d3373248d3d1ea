package resilient_test

import (
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// TestSeedThatFindsTheLocalStoreFullIsKept as deployed: the key's last answer comes
// from the scripts on a redis-server, which then hangs (SIGSTOP) or dies (SIGKILL),
// and Local mode's memory store, bounded to 4 keys, is full of keys that still
// restrict their clients. The key, 5 a minute, spent on Redis, must not get a fresh
// bucket when a slot frees: its allowance starts from Redis's last answer and earns
// 1 every 12 s, and back on Redis (resumed, or restarted empty) it gets no more than
// the policy allows over the whole test. Seeded on the policy's overflow entry, the
// key's own entry started full once a slot had freed: 5 admitted where the allowance
// had earned 1. Time is the test's clock, for Redis's scripts too.
func TestRedisSeedThatFindsTheLocalStoreFullIsKept(t *testing.T) {
	const keys = 4
	p := perMinute5
	for _, f := range faults {
		for _, tt := range []struct {
			name      string
			spent     int // on Redis, of 5
			whileFull int // admitted while the local store is full (of 3 tries)
		}{
			{name: "nothing left", spent: 5, whileFull: 0},
			{name: "2 left", spent: 3, whileFull: 2},
		} {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				srv := redistest.StartServer(t)
				clock := storetest.NewClock()
				shared, err := redisstore.Dial([]string{srv.Addr}, redisstore.WithClock(clock.Now))
				if err != nil {
					t.Fatal(err)
				}
				local, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(keys), memory.WithShards(1))
				if err != nil {
					t.Fatal(err)
				}
				r := newRigOver(t, clock, shared, resilient.WithLocalStore(local), resilient.WithDeadline(faultDeadline))
				start := clock.Now()
				for i := range tt.spent {
					if res := r.decide(t, p, "k"); !res.Allowed || res.DecidedAt.IsZero() {
						t.Fatalf("healthy: decision %d: %+v; want admitted by Redis", i+1, res)
					}
				}
				if err := f.inject(srv); err != nil {
					t.Fatal(err)
				}
				tripFor(t, r.store, core.Request{Policy: p, Key: "k"})
				fillLocal(t, r, local, p, keys)
				total := tt.spent
				got := admittedOf(t, r, p, "k", 3)
				if got != tt.whileFull {
					t.Errorf("the local store full: %d admitted, want %d of the %d Redis left", got, tt.whileFull, 5-tt.spent)
				}
				total += got
				// 12 s give the flood's keys their unit back: a slot frees. The key's
				// allowance is seeded on its own entry from Redis's last answer, less
				// what it spent since, not refilled: nothing left.
				clock.Advance(12 * time.Second)
				got = admittedOf(t, r, p, "k", 5)
				if got != 0 {
					t.Errorf("once a slot has freed: %d admitted, want 0 (a fresh bucket holds 5)", got)
				}
				total += got
				if keysHeld := local.Stats().Keys; keysHeld > keys {
					t.Errorf("the local store holds %d keys, its bound is %d", keysHeld, keys)
				}
				// Then 1 every 12 s: the policy's rate.
				for step := 1; step <= 2; step++ {
					clock.Advance(12 * time.Second)
					got := admittedOf(t, r, p, "k", 5)
					if got != 1 {
						t.Errorf("Local mode, %d×12 s after the seed: %d admitted, want 1", step, got)
					}
					total += got
				}
				if err := f.recover(srv); err != nil {
					t.Fatal(err)
				}
				r.awaitRecovery(t, func() bool {
					return r.store.BreakerFor(core.Request{Policy: p, Key: "k"}) == resilient.BreakerClosed && !r.store.Fallback(p.Name())
				})
				back := admittedOf(t, r, p, "k", 5)
				total += back
				elapsed := clock.Now().Sub(start)
				if bound := 5 + int(elapsed/(12*time.Second)); total > bound {
					t.Errorf("%d admitted in all in %v (%d back on Redis), want at most %d", total, elapsed, back, bound)
				}
				t.Logf("local store %+v; %d admitted in %v, %d back on Redis", local.Stats(), total, elapsed, back)
			})
		}
	}
}
