package redisstore_test

import (
	"os/exec"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// batching is the option every batched test store gets.
var batching = redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch)

// The conformance suite with batching: its traces decide one request at a time, each
// a batch of one, and its concurrent cases gather decisions on one key into batches.
// On a Cluster, TestBatchesDecideAsAlone, TestBatchOverGrant and the other batch tests
// cover batching (the whole suite there would add 15 s under -race).
func TestBatchingConformanceMiniredis(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err == nil {
		t.Skip("skipped: redis-server is present and TestBatchingConformanceRedis runs the suite on it; on miniredis it takes 15 s")
	}
	storetest.Run(t, newStoreOn(newMiniredisClient(t), batching))
}

func TestBatchingConformanceRedis(t *testing.T) {
	storetest.Run(t, newStoreOn(standaloneClient(t), batching))
}

// newBatchingStore is a batching store on client with its own prefix, closed with t.
func newBatchingStore(t testing.TB, client redis.UniversalClient) *redisstore.Store {
	t.Helper()
	store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()), batching)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}
