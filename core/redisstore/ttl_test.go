package redisstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// ttlPolicies covers every algorithm, each with the longest time a key may need. Every
// key lives for seconds after its last decision. With periods of a second (a leaky
// bucket's key then lives 200 ms after an admission), a loaded machine that stalled
// the test between its last decisions and its scan found 23 keys of 24: one had
// rightly expired.
func ttlPolicies() []core.Policy {
	return []core.Policy{
		core.MustPolicy("ttl-token", core.TokenBucket, core.PerMinute(10), core.WithBurst(30)),
		core.MustPolicy("ttl-gcra", core.GCRA, core.PerMinute(7)),
		core.MustPolicy("ttl-leaky", core.LeakyBucket, core.PerMinute(5), core.WithBurst(3)),
		core.MustPolicy("ttl-fixed", core.FixedWindow, core.PerMinute(50)),
		core.MustPolicy("ttl-sliding", core.SlidingWindow, core.PerMinute(20)),
		core.MustPolicy("ttl-log", core.SlidingLog, core.PerMinute(9)),
		core.MustConcurrencyPolicy("ttl-inflight", 4, 30*time.Second),
	}
}

// longestTTL is the longest TTL a key of p may have under requests of cost 1: the
// time its state takes to recover fully, plus the margin. A sliding window's previous
// window counts for a second period; a leaky bucket's queue holds one request more
// than its burst.
func longestTTL(p core.Policy, margin time.Duration) time.Duration {
	switch p.Algorithm() {
	case core.SlidingWindow:
		return 2*p.Period() + margin
	case core.LeakyBucket:
		emission := (p.Period() + time.Duration(p.Limit()) - 1) / time.Duration(p.Limit())
		return p.Window() + emission.Round(time.Millisecond) + margin
	}
	return p.Window() + margin
}

// TestEveryKeyHasTTL sends traffic through every algorithm, with Redis TIME, and then
// scans the keyspace: every key must expire, and no later than its state recovers.
func TestEveryKeyHasTTL(t *testing.T) {
	for name, client := range testClients(true) {
		t.Run(name, func(t *testing.T) {
			client := client(t)
			prefix := uniquePrefix()
			store, err := redisstore.New(client, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			policies := ttlPolicies()
			for i := 0; i < 40; i++ {
				for _, p := range policies {
					req := core.Request{Policy: p, Key: []string{"alice", "bob", "203.0.113.9"}[i%3], Lease: uint64(i + 1)}
					res, err := store.Decide(ctx, req)
					if err != nil {
						t.Fatal(err)
					}
					if res.Allowed && p.Algorithm() == core.Concurrency && i%2 == 0 {
						if err := store.Release(ctx, req, res.Lease); err != nil {
							t.Fatal(err)
						}
					}
				}
				reqs := []core.Request{{Policy: policies[5], Key: "carol"}, {Policy: policies[0], Key: "carol"}, {Policy: policies[3], Key: "carol"}}
				if _, err := store.DecideStack(ctx, reqs, make([]core.Result, len(reqs))); err != nil {
					t.Fatal(err)
				}
			}
			keys := scanTTLs(t, client, prefix)
			if want := 3*len(policies) + 3; len(keys) != want { // and the stack's three for carol
				t.Errorf("found %d keys, want %d", len(keys), want)
			}
			for key, ttl := range keys {
				var policy core.Policy
				for _, p := range policies {
					if strings.Contains(key, p.ID()) {
						policy = p
					}
				}
				if ttl <= 0 || ttl > longestTTL(policy, redisstore.DefaultServerTimeMargin) {
					t.Errorf("key %s: TTL %v, want within (0, %v]", key, ttl, longestTTL(policy, redisstore.DefaultServerTimeMargin))
				}
			}
		})
	}
}

// scanTTLs returns the TTL of every key under prefix, on every master of a Cluster. A
// key without a TTL reports a negative one.
func scanTTLs(t *testing.T, client redis.UniversalClient, prefix string) map[string]time.Duration {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	ttls := map[string]time.Duration{}
	scan := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			ttl, err := node.PTTL(ctx, iter.Val()).Result()
			if err != nil {
				return err
			}
			mu.Lock()
			ttls[iter.Val()] = ttl
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	switch c := client.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, scan)
	case *redis.Client:
		err = scan(ctx, c)
	default:
		t.Fatalf("cannot scan %T", client)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ttls
}

// TestSingleDecisionKeepsItsStoresMargin: the single-decision scripts hold their
// store's TTL margin, so two stores on one server with one policy and different
// margins each write their own.
func TestSingleDecisionKeepsItsStoresMargin(t *testing.T) {
	for name, client := range testClients(false) {
		t.Run(name, func(t *testing.T) {
			client := client(t)
			p := core.MustPolicy("margin", core.GCRA, core.PerSecond(10))
			ctx := context.Background()
			for _, margin := range []time.Duration{time.Millisecond, time.Hour} {
				prefix := uniquePrefix()
				store, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithExpiryMargin(margin))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := store.Decide(ctx, core.Request{Policy: p, Key: "k"}); err != nil {
					t.Fatal(err)
				}
				keys, err := client.Keys(ctx, prefix+"*").Result()
				if err != nil || len(keys) != 1 {
					t.Fatalf("margin %v: keys %v, %v; want one", margin, keys, err)
				}
				ttl, err := client.PTTL(ctx, keys[0]).Result()
				if err != nil || ttl <= 0 || ttl > 100*time.Millisecond+margin || ttl < margin-time.Minute {
					t.Fatalf("margin %v: TTL %v, %v; want the 100ms GCRA needs to recover plus the margin", margin, ttl, err)
				}
			}
		})
	}
}
