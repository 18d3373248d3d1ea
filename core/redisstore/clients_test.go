package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// On a Ring of two servers, each call holds the keys of one hash tag: stacks across
// tags take the charge-and-refund path.
func TestConformanceRing(t *testing.T) {
	a, b := redistest.StartServer(t), redistest.StartServer(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}, ContextTimeoutEnabled: true})
	t.Cleanup(func() { ring.Close() })
	storetest.Run(t, newStoreOn(ring))
	// Both shards hold state: the ring spread the keys.
	for _, s := range []*redistest.Server{a, b} {
		client := s.NewClient()
		n, err := client.DBSize(context.Background()).Result()
		client.Close()
		if err != nil || n == 0 {
			t.Errorf("shard %s holds %d keys (%v)", s.Addr, n, err)
		}
	}
}

// A Sentinel failover client finds the master through the Sentinel and decides on it.
func TestSentinelFailoverClient(t *testing.T) {
	master := redistest.StartServer(t)
	sentinel := redistest.StartSentinel(t, master, "ratelimit", 5*time.Second)
	client := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName: "ratelimit", SentinelAddrs: []string{sentinel.Addr}, ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p := core.MustPolicy("sentinel", core.FixedWindow, core.PerMinute(3))
	login := []core.Policy{
		core.MustPolicy("sentinel-account", core.SlidingLog, core.PerMinute(2)),
		core.MustPolicy("sentinel-ip", core.TokenBucket, core.PerMinute(20)),
	}
	for i, want := range []bool{true, true, true, false} {
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: "k"})
		if err != nil || res.Allowed != want {
			t.Fatalf("decision %d: %+v %v, want allowed=%v", i, res, err, want)
		}
		reqs := []core.Request{{Policy: login[0], Key: "alice"}, {Policy: login[1], Key: "203.0.113.9"}}
		allowed, err := store.DecideStack(ctx, reqs, make([]core.Result, 2))
		if err != nil || allowed != (i < 2) {
			t.Fatalf("stack %d: allowed=%v %v", i, allowed, err)
		}
	}
	masterClient := master.NewClient()
	defer masterClient.Close()
	if n, err := masterClient.Exists(ctx, store.Key(p, "k")).Result(); err != nil || n != 1 {
		t.Fatalf("the master does not hold the state: %d %v", n, err)
	}
}
