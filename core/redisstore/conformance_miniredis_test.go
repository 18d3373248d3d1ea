package redisstore_test

import (
	"crypto/rand"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
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
// charge-in-order-and-refund path of a Cluster whose keys lie in different slots.
func TestConformanceMiniredisSplitStacks(t *testing.T) {
	storetest.Run(t, newStoreOn(newMiniredisClient(t), redisstore.WithSplitStacks()))
}

// uniquePrefix is a fresh key prefix: "t", 16 random base32 digits and a colon.
func uniquePrefix() string { return "t" + rand.Text()[:16] + ":" }
