package reserve_test

import (
	"crypto/rand"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/reserve"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// servers are the real redis-server and 3-master Cluster this test binary shares.
var servers redistest.Shared

func TestMain(m *testing.M) { os.Exit(servers.Run(m)) }

// uniquePrefix keeps tests on the shared servers apart.
func uniquePrefix() string { return "reserve-" + rand.Text()[:12] + ":" }

// redisReplicas returns a replicaSet whose replicas each have their own client and
// Redis store, all on one key prefix, timed by the test's clock.
func redisReplicas(newClient func(t *testing.T) redis.UniversalClient) replicaSet {
	return func(t *testing.T, clock *storetest.Clock, n int, l reserve.Lease) []*reserve.Store {
		prefix := uniquePrefix()
		replicas := make([]*reserve.Store, n)
		for i := range replicas {
			replicas[i] = newReplica(t, newRedisStore(t, newClient, clock, prefix), clock, l)
		}
		return replicas
	}
}

// newRedisStore is a Redis store with a client of its own, on prefix, timed by
// the test's clock.
func newRedisStore(t *testing.T, newClient func(t *testing.T) redis.UniversalClient, clock *storetest.Clock, prefix string) *redisstore.Store {
	client := newClient(t)
	t.Cleanup(func() { client.Close() })
	store, err := redisstore.New(client, redisstore.WithClock(clock.Now), redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// redisBacking returns a backing store on a real server through newClient, on a
// key prefix of its own, timed by the test's clock.
func redisBacking(newClient func(t *testing.T) redis.UniversalClient) func(*testing.T, *storetest.Clock) *shared {
	return func(t *testing.T, clock *storetest.Clock) *shared {
		return &shared{refundingStore: newRedisStore(t, newClient, clock, uniquePrefix())}
	}
}

func standalone(t *testing.T) redis.UniversalClient { return servers.Server(t).NewClient() }

func cluster(t *testing.T) redis.UniversalClient { return servers.Cluster(t).NewClient() }

func TestExactWhenSaturatedRedis(t *testing.T) {
	testExactWhenSaturated(t, redisReplicas(standalone))
}

func TestExactOverTimeRedis(t *testing.T) { testExactOverTime(t, redisReplicas(standalone), 30) }

func TestBoundRedis(t *testing.T) { testBound(t, redisReplicas(standalone), 80) }

func TestExactWhenSaturatedCluster(t *testing.T) {
	testExactWhenSaturated(t, redisReplicas(cluster))
}

func TestBoundCluster(t *testing.T) { testBound(t, redisReplicas(cluster), 40) }
