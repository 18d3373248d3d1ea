package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	p := core.MustPolicy("bench-hot", core.GCRA, core.PerSecond(1_000_000)) // as BenchmarkDecideHotKey
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

// BenchmarkLatency measures what batching adds to a decision's latency: g goroutines
// decide per-user keys through an unbatched and a batching store, and each reports the
// median and the 99th percentile of its decisions' latencies.
func BenchmarkLatency(b *testing.B) {
	for _, batched := range []bool{false, true} {
		for _, g := range []int{1, 8, 64} {
			name := fmt.Sprintf("alone/goroutines-%d", g)
			if batched {
				name = fmt.Sprintf("batched/goroutines-%d", g)
			}
			b.Run(name, func(b *testing.B) {
				store := benchStore(b)
				if batched {
					store = benchBatchedStore(b)
				}
				p := core.MustPolicy("bench-latency", core.GCRA, core.PerSecond(1_000_000)) // admits all
				users := benchKeys(b)
				measureLatency(b, g, func(i int64) error {
					_, err := store.Decide(context.Background(), core.Request{Policy: p, Key: users[i%benchUsers]})
					return err
				})
			})
		}
	}
}

// measureLatency runs b.N calls of decide from g goroutines and reports the median
// and 99th percentile latency in microseconds, and decisions per second.
func measureLatency(b *testing.B, g int, decide func(i int64) error) {
	b.ReportAllocs()
	var next atomic.Int64
	latencies := make([][]time.Duration, g)
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				start := time.Now()
				if err := decide(i); err != nil {
					b.Error(err)
					return
				}
				latencies[w] = append(latencies[w], time.Since(start))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
