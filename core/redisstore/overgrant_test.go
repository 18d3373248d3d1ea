package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// hammerDuration is how long the over-grant test hammers one key, in real time.
const hammerDuration = 3 * time.Second

// TestOverGrant hammers one token-bucket key (burst 10, 10/s) from 64 goroutines for
// three seconds of real time, with time from Redis TIME, through one store and through
// three stores ("replicas") with their own connections. The bucket may admit at most
// 10 + 10×elapsed, and exact enforcement admits no fewer than that minus a token or two.
func TestOverGrant(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: hammers Redis in real time for three seconds per case")
	}
	cases := []struct {
		name     string
		replicas int
		client   func(t testing.TB) redis.UniversalClient
	}{
		{"Redis", 1, func(t testing.TB) redis.UniversalClient { return standaloneClient(t) }},
		{"RedisThreeReplicas", 3, func(t testing.TB) redis.UniversalClient { return standaloneClient(t) }},
		{"ClusterThreeReplicas", 3, func(t testing.TB) redis.UniversalClient { return clusterClient(t) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := uniquePrefix()
			stores := make([]*redisstore.Store, c.replicas)
			for i := range stores {
				s, err := redisstore.New(c.client(t), redisstore.WithPrefix(prefix))
				if err != nil {
					t.Fatal(err)
				}
				stores[i] = s
			}
			policy := core.MustPolicy("overgrant", core.TokenBucket, core.PerSecond(10), core.WithBurst(10))
			admitted, elapsed := hammer(t, stores, policy, 64, hammerDuration)
			most := 10 + 10*elapsed.Seconds()
			t.Logf("%d goroutines over %d stores admitted %d in %v (bound %.1f)", 64, c.replicas, admitted, elapsed, most)
			if float64(admitted) > most {
				t.Fatalf("admitted %d in %v: more than 10 + 10×elapsed = %.1f", admitted, elapsed, most)
			}
			if float64(admitted) < most-2 {
				t.Fatalf("admitted %d in %v: far below 10 + 10×elapsed = %.1f", admitted, elapsed, most)
			}
		})
	}
}

// hammer sends decisions for one key from goroutines spread over stores until d has
// passed, and returns how many were admitted and how long it took from the first
// request to the last answer.
func hammer(t *testing.T, stores []*redisstore.Store, policy core.Policy, goroutines int, d time.Duration) (int64, time.Duration) {
	t.Helper()
	var admitted, failures atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(store *redisstore.Store) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				res, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: "hot"})
				if err != nil {
					if failures.Add(1) == 1 {
						t.Error(err)
					}
					return
				}
				if res.Allowed {
					admitted.Add(1)
				}
			}
		}(stores[g%len(stores)])
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failures.Load() > 0 {
		t.FailNow()
	}
	return admitted.Load(), elapsed
}
