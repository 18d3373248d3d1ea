package redisstore_test

import (
	"context"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

func benchBatchedStore(b *testing.B) *redisstore.Store {
	store, err := redisstore.New(standaloneClient(b), redisstore.WithPrefix(uniquePrefix()), batching)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return store
}

// BenchmarkBatchedHotKey: 64 goroutines on one key, with batching.
func BenchmarkBatchedHotKey(b *testing.B) {
	store := benchBatchedStore(b)
	p := core.MustPolicy("bench-hot", core.GCRA, core.PerSecond(1_000_000_000))
	runParallel(b, func(int64) error {
		_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "hot"})
		return err
	})
}

// BenchmarkBatchedPerUser: 64 goroutines over 10,000 users' keys, with batching.
func BenchmarkBatchedPerUser(b *testing.B) {
	store := benchBatchedStore(b)
	p := core.MustPolicy("bench-user", core.GCRA, core.PerSecond(100), core.WithBurst(200))
	users := benchKeys(b)
	runParallel(b, func(i int64) error {
		_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: users[i%benchUsers]})
		return err
	})
}
