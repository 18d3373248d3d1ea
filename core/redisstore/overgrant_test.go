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
// three stores ("replicas") with their own connections, unbatched and batching
// (WithBatching: batches then hold many decisions on the key). The bucket may admit at
// most 10 + 10×elapsed, and exact enforcement admits no fewer than that minus a token
// or two.
func TestOverGrant(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: hammers Redis in real time for three seconds per case")
	}
	standalone := func(t testing.TB) redis.UniversalClient { return standaloneClient(t) }
	cluster := func(t testing.TB) redis.UniversalClient { return clusterClient(t) }
	cases := []struct {
		name     string
		replicas int
		client   func(t testing.TB) redis.UniversalClient
		options  []redisstore.Option
	}{
		{"Redis", 1, standalone, nil},
		{"RedisThreeReplicas", 3, standalone, nil},
		{"ClusterThreeReplicas", 3, cluster, nil},
		{"RedisBatching", 1, standalone, []redisstore.Option{batching}},
		{"ClusterThreeReplicasBatching", 3, cluster, []redisstore.Option{batching}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := uniquePrefix()
			stores := make([]*redisstore.Store, c.replicas)
			for i := range stores {
				s, err := redisstore.New(c.client(t), append([]redisstore.Option{redisstore.WithPrefix(prefix)}, c.options...)...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				stores[i] = s
			}
			policy := core.MustPolicy("overgrant", core.TokenBucket, core.PerSecond(10), core.WithBurst(10))
			h := hammer(t, stores, policy, 64, hammerDuration)
			// Redis decided every request within [start, end], and decided requests
			// continuously within [first answer, last request sent].
			most := 10 + 10*h.end.Sub(h.start).Seconds()
			least := 10 + 10*h.lastSent.Sub(h.firstAnswer).Seconds() - 1.5 // whole tokens, whole milliseconds
			t.Logf("64 goroutines over %d stores admitted %d in %v (bounds %.1f..%.1f)", c.replicas, h.admitted, h.end.Sub(h.start), least, most)
			if float64(h.admitted) > most {
				t.Fatalf("admitted %d: more than 10 + 10×elapsed = %.1f", h.admitted, most)
			}
			if float64(h.admitted) < least {
				t.Fatalf("admitted %d: fewer than the %.1f the bucket earned while requests kept coming", h.admitted, least)
			}
		})
	}
}

// hammered is what hammer saw.
type hammered struct {
	admitted                          int64
	start, firstAnswer, lastSent, end time.Time
}

// hammer sends decisions for one key from goroutines spread over stores until d has
// passed, and reports how many were admitted and when the traffic ran.
func hammer(t *testing.T, stores []*redisstore.Store, policy core.Policy, goroutines int, d time.Duration) hammered {
	t.Helper()
	var admitted, failures, firstAnswer, lastSent atomic.Int64
	firstAnswer.Store(1 << 62)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(store *redisstore.Store) {
			defer wg.Done()
			for {
				sent := time.Now()
				if !sent.Before(deadline) {
					return
				}
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
				atomicMax(&lastSent, sent.UnixNano())
				atomicMin(&firstAnswer, time.Now().UnixNano())
			}
		}(stores[g%len(stores)])
	}
	wg.Wait()
	end := time.Now()
	if failures.Load() > 0 {
		t.FailNow()
	}
	return hammered{admitted: admitted.Load(), start: start, firstAnswer: time.Unix(0, firstAnswer.Load()), lastSent: time.Unix(0, lastSent.Load()), end: end}
}

func atomicMax(v *atomic.Int64, x int64) {
	for old := v.Load(); x > old && !v.CompareAndSwap(old, x); old = v.Load() {
	}
}

func atomicMin(v *atomic.Int64, x int64) {
	for old := v.Load(); x < old && !v.CompareAndSwap(old, x); old = v.Load() {
	}
}
