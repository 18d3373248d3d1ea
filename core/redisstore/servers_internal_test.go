package redisstore

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// onBothServers runs test as two subtests: on miniredis, and on a real redis-server
// (skipped, or failed when CI requires it, without one; see redistest.Require). Each
// gets a client of its own, closed when it ends.
func onBothServers(t *testing.T, test func(t *testing.T, client *redis.Client)) {
	run := func(t *testing.T, addr string) {
		client := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { client.Close() })
		test(t, client)
	}
	t.Run("miniredis", func(t *testing.T) { run(t, miniredis.RunT(t).Addr()) })
	t.Run("redis-server", func(t *testing.T) { run(t, redistest.StartServer(t).Addr) })
}
