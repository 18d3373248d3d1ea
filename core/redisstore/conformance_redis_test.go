package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

func standaloneClient(t testing.TB) *redis.Client {
	client := servers.Server(t).NewClient()
	t.Cleanup(func() { client.Close() })
	return client
}

func clusterClient(t testing.TB) *redis.ClusterClient {
	client := servers.Cluster(t).NewClient()
	t.Cleanup(func() { client.Close() })
	return client
}

// testClients are the servers a test runs on, by name: a miniredis and a real
// redis-server, and a 3-master Cluster when withCluster.
func testClients(withCluster bool) map[string]func(testing.TB) redis.UniversalClient {
	clients := map[string]func(testing.TB) redis.UniversalClient{
		"Miniredis": func(t testing.TB) redis.UniversalClient { return newMiniredisClient(t) },
		"Redis":     func(t testing.TB) redis.UniversalClient { return standaloneClient(t) },
	}
	if withCluster {
		clients["Cluster"] = func(t testing.TB) redis.UniversalClient { return clusterClient(t) }
	}
	return clients
}

func TestConformanceRedis(t *testing.T) {
	storetest.Run(t, newStoreOn(standaloneClient(t)))
}

// Stacks split into one call per request take the Cluster's charge-and-refund path.
func TestConformanceRedisSplitStacks(t *testing.T) {
	storetest.Run(t, newStoreOn(standaloneClient(t), redisstore.WithSplitStacks()))
}

// On a 3-master Cluster every stack's keys lie in different slots by default.
func TestConformanceCluster(t *testing.T) {
	storetest.Run(t, newStoreOn(clusterClient(t)))
}

// With TagByKey and TagPolicies, stacks whose keys share a tag are one call on a Cluster.
func TestConformanceClusterSharedSlots(t *testing.T) {
	tags := func(policy, key string) string {
		if tag := redisstore.TagPolicies("login", "login-account", "login-ip", "login-subnet")(policy, key); tag != "" {
			return tag
		}
		return redisstore.TagByKey(policy, key)
	}
	storetest.Run(t, newStoreOn(clusterClient(t), redisstore.WithHashTag(tags)))
}
