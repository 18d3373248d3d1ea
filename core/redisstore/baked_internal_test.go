package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// TestBakedScriptsAreBounded decides with more policies than maxBakedPolicies: the
// first ones get scripts of their own, the rest run the shared lean script, and every
// decision is right either way, with the server's clock and with the caller's.
func TestBakedScriptsAreBounded(t *testing.T) {
	onBothServers(t, func(t *testing.T, client *redis.Client) {
		for _, clock := range []struct {
			name    string
			options []Option
		}{
			{"server clock", nil},
			{"caller clock", []Option{WithClock(time.Now)}},
		} {
			t.Run(clock.name, func(t *testing.T) {
				ctx := context.Background()
				if err := client.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				store, err := New(client, append(clock.options, WithPrefix(t.Name()+":"))...)
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				// The reference: the same decisions in memory. Periods of a day keep a
				// window's end from falling between the two stores' decisions.
				want, err := memory.New()
				if err != nil {
					t.Fatal(err)
				}
				defer want.Close()
				algorithms := []core.Algorithm{core.GCRA, core.TokenBucket, core.LeakyBucket, core.FixedWindow, core.SlidingWindow}
				for i := 0; i < maxBakedPolicies+10; i++ {
					p := core.MustPolicy(fmt.Sprintf("p%d", i), algorithms[i%len(algorithms)], core.Rate{Limit: int64(10 + i), Period: 24 * time.Hour})
					for n := 1; n <= 2; n++ {
						req := core.Request{Policy: p, Key: "k", Cost: 1}
						res, err := store.Decide(ctx, req)
						if err != nil {
							t.Fatalf("%s, decision %d: %v", p.Name(), n, err)
						}
						ref, _ := want.Decide(ctx, req)
						if res.Allowed != ref.Allowed || res.Remaining != ref.Remaining {
							t.Fatalf("%s, decision %d: allowed %v, remaining %d, want %v and %d", p.Name(), n, res.Allowed, res.Remaining, ref.Allowed, ref.Remaining)
						}
					}
					lean := store.specs.get(&p).lean
					if baked := i < maxBakedPolicies; baked != (lean != nil) {
						t.Fatalf("%s: baked script %v, want one: %v", p.Name(), lean != nil, baked)
					}
					if lean != nil && !scriptExists(t, client, lean) {
						t.Fatalf("%s: its own script is not on the server", p.Name())
					}
				}
				if n := store.specs.baked.Load(); n != maxBakedPolicies {
					t.Fatalf("%d policies baked, want %d", n, maxBakedPolicies)
				}
				for i := maxBakedPolicies; i < maxBakedPolicies+len(algorithms); i++ {
					p := core.MustPolicy(fmt.Sprintf("p%d", i), algorithms[i%len(algorithms)], core.Rate{Limit: int64(10 + i), Period: 24 * time.Hour})
					if !scriptExists(t, client, store.scripts.leanFor(&p)) {
						t.Fatalf("%s, beyond the bound, did not run its algorithm's shared lean script", p.Name())
					}
				}
			})
		}
	})
}

func scriptExists(t *testing.T, client *redis.Client, s *script) bool {
	t.Helper()
	exists, err := client.ScriptExists(context.Background(), s.Hash()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return exists[0]
}

// TestBakedScriptsBoundedUnderConcurrency makes goroutines race to first use more
// policies than maxBakedPolicies: never more than that many get a script of their
// own, and the count matches the scripts kept. A policy that first appears while
// other goroutines hold a reservation for a policy they lose to a racing caller may
// go without: at most one per other goroutine.
func TestBakedScriptsBoundedUnderConcurrency(t *testing.T) {
	policies := make([]core.Policy, maxBakedPolicies+100)
	for i := range policies {
		policies[i] = core.MustPolicy(fmt.Sprintf("p%d", i), core.GCRA, core.PerSecond(int64(i+1)))
	}
	cache := &specCache{margin: 1}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range policies {
				cache.get(&policies[(i*7+g*31)%len(policies)])
			}
		}()
	}
	wg.Wait()
	kept := 0
	cache.specs.Range(func(_, v any) bool {
		if v.(*policyArgs).lean != nil {
			kept++
		}
		return true
	})
	if n := cache.baked.Load(); n != int64(kept) || n > maxBakedPolicies || n < maxBakedPolicies-7 {
		t.Fatalf("counted %d baked scripts and kept %d, want %d (or up to 7 fewer)", n, kept, maxBakedPolicies)
	}
}
