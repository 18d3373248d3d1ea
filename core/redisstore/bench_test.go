package redisstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// benchGoroutines is how many goroutines the parallel benchmarks run.
const benchGoroutines = 64

// benchUsers is how many distinct keys the per-user benchmarks spread over.
const benchUsers = 10_000

func benchStore(b *testing.B) *redisstore.Store {
	store, err := redisstore.New(standaloneClient(b), redisstore.WithPrefix(uniquePrefix()))
	if err != nil {
		b.Fatal(err)
	}
	return store
}

// runParallel runs decide from benchGoroutines goroutines and reports decisions per second.
func runParallel(b *testing.B, decide func(i int64) error) {
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism((benchGoroutines + 1) / 2) // GOMAXPROCS is at least 2 here; see the README for the figures
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := decide(next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkDecideHotKey: 64 goroutines on one key of a token bucket that admits them
// all.
func BenchmarkDecideHotKey(b *testing.B) {
	store := benchStore(b)
	p := core.MustPolicy("bench-hot", core.TokenBucket, core.PerSecond(1_000_000))
	runParallel(b, func(int64) error {
		_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: "hot"})
		return err
	})
}

// BenchmarkDecidePerUser: 64 goroutines over 10,000 users' keys.
func BenchmarkDecidePerUser(b *testing.B) {
	store := benchStore(b)
	p := core.MustPolicy("bench-user", core.TokenBucket, core.PerSecond(100), core.WithBurst(200))
	users := benchKeys(b)
	runParallel(b, func(i int64) error {
		_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: users[i%benchUsers]})
		return err
	})
}

// BenchmarkDecideStack: 64 goroutines deciding a 3-policy login stack per user.
func BenchmarkDecideStack(b *testing.B) {
	store := benchStore(b)
	policies := []core.Policy{
		core.MustPolicy("bench-account", core.SlidingLog, core.PerSecond(1000)),
		core.MustPolicy("bench-ip", core.TokenBucket, core.PerSecond(1000)),
		core.MustPolicy("bench-subnet", core.FixedWindow, core.PerSecond(1000)),
	}
	users := benchKeys(b)
	runParallel(b, func(i int64) error {
		user := users[i%benchUsers]
		reqs := [3]core.Request{{Policy: policies[0], Key: user}, {Policy: policies[1], Key: user}, {Policy: policies[2], Key: "subnet"}}
		var results [3]core.Result
		_, err := store.DecideStack(context.Background(), reqs[:], results[:])
		return err
	})
}

// benchKeys are the distinct user keys of the per-user benchmarks.
func benchKeys(b *testing.B) []string {
	users := make([]string, benchUsers)
	seen := make(map[string]bool, benchUsers)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
		seen[users[i]] = true
	}
	if len(seen) != benchUsers {
		b.Fatalf("%d distinct keys, want %d", len(seen), benchUsers)
	}
	return users
}
