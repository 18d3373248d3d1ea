package redisstore_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// newStoreOn returns a conformance-suite factory for stores on client. Every store
// gets its own random key prefix, so stores sharing a server never see each other's state.
func newStoreOn(client redis.UniversalClient, options ...redisstore.Option) storetest.NewStore {
	return func(t testing.TB, clock *storetest.Clock) core.Store {
		opts := append([]redisstore.Option{redisstore.WithClock(clock.Now), redisstore.WithPrefix(uniquePrefix())}, options...)
		s, err := redisstore.New(client, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func newMiniredisClient(t testing.TB) *redis.Client {
	server := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: server.Addr()})
	t.Cleanup(func() { client.Close() })
	return client
}

func TestConformanceMiniredis(t *testing.T) {
	storetest.Run(t, newStoreOn(newMiniredisClient(t)))
}

// With every request of a stack in its own call, stacks go through the
// charge-in-order-and-refund path of a Cluster whose keys lie in different slots. The
// whole suite runs that way on a real server (conformance_redis_test.go); here, in
// every run, mixed stacks are replayed against transition.StepStack.
func TestSplitStacksMiniredis(t *testing.T) {
	clock := storetest.NewClock()
	store := newStoreOn(newMiniredisClient(t), redisstore.WithSplitStacks())(t, clock)
	policies := []core.Policy{
		core.MustPolicy("split-log", core.SlidingLog, core.PerMinute(5)),
		core.MustPolicy("split-gcra", core.GCRA, core.PerSecond(4), core.WithBurst(6)),
		core.MustPolicy("split-window", core.SlidingWindow, core.Rate{Limit: 9, Period: 2 * time.Second}),
		core.MustPolicy("split-fixed", core.FixedWindow, core.PerSecond(7)),
		core.MustPolicy("split-leaky", core.LeakyBucket, core.PerSecond(5), core.WithBurst(4)),
		core.MustPolicy("split-token", core.TokenBucket, core.PerSecond(3), core.WithBurst(5)),
		core.MustConcurrencyPolicy("split-inflight", 3, 700*time.Millisecond),
		// The last policy refuses most stacks after the others have been charged.
		core.MustPolicy("split-scarce", core.FixedWindow, core.Rate{Limit: 4, Period: 5 * time.Second}),
	}
	states := map[string]transition.State{}
	at := storetest.Start
	for i := 0; i < 300; i++ {
		at += int64((i * 7919) % 700)
		clock.Set(at)
		reqs := make([]core.Request, len(policies))
		current := make([]transition.State, len(policies))
		for j, p := range policies {
			reqs[j] = core.Request{Policy: p, Key: []string{"alice", "bob", "carol"}[(i+j)%3], Lease: uint64(i + 1)}
			if j == len(policies)-1 {
				reqs[j].Key = "everyone"
			}
			current[j] = states[p.Name()+reqs[j].Key]
		}
		got := make([]core.Result, len(reqs))
		allowed, err := store.DecideStack(context.Background(), reqs, got)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		want := make([]core.Result, len(reqs))
		next, wantAllowed := transition.StepStack(current, reqs, at, want)
		if allowed != wantAllowed {
			t.Fatalf("step %d: allowed=%v, core says %v", i, allowed, wantAllowed)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("step %d policy %s:\n got %+v\nwant %+v", i, policies[j].Name(), got[j], want[j])
			}
			if wantAllowed {
				states[policies[j].Name()+reqs[j].Key] = next[j]
			}
		}
	}
}

// uniquePrefix is a fresh key prefix: "t", 16 random base32 digits and a colon.
func uniquePrefix() string { return "t" + rand.Text()[:16] + ":" }
