package reserve_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/reserve"
)

// benchReplicas and benchGoroutines shape the hot-key benchmark: three replicas,
// each with its own Redis client, sixty-four goroutines between them.
const (
	benchReplicas   = 3
	benchGoroutines = 64
)

// BenchmarkHotKey sends one key's traffic through three replicas over one real
// redis-server, unleased (every decision a round trip) and leased, for a policy with
// room for all of it ("roomy") and one that refuses most of it ("tight"), and for
// comparison unleased with the Redis store's batching ("batched"). Besides
// ns/op it reports decisions/s, admitted/s, and for the tight policy how far the
// admissions went beyond what the policy admits exactly over the run (capacity +
// rate × elapsed): "overage", against "bound" = replicas × (size − 1).
func BenchmarkHotKey(b *testing.B) {
	roomy := core.MustPolicy("roomy", core.TokenBucket, core.PerSecond(10_000_000), core.WithBurst(10_000_000))
	tight := core.MustPolicy("tight", core.TokenBucket, core.PerSecond(100_000), core.WithBurst(10_000))
	for _, c := range []struct {
		name   string
		policy core.Policy
		size   int64 // 0: unleased
		batch  bool  // unleased decisions batched per round trip (redisstore.WithBatching)
	}{
		{"roomy/unleased", roomy, 0, false},
		{"roomy/batched", roomy, 0, true},
		{"roomy/leased", roomy, 1000, false},
		{"tight/unleased", tight, 0, false},
		{"tight/leased", tight, 100, false},
	} {
		b.Run(c.name, func(b *testing.B) { benchHotKey(b, c.policy, c.size, c.batch) })
	}
}

func benchHotKey(b *testing.B, p core.Policy, size int64, batch bool) {
	srv := servers.Server(b) // skips, saying why, without redis-server
	prefix := uniquePrefix()
	var leases []reserve.Lease
	if size > 0 {
		leases = []reserve.Lease{{Policy: p, Size: size}}
	}
	replicas := make([]*reserve.Store, benchReplicas)
	for i := range replicas {
		client := srv.NewClient()
		options := []redisstore.Option{redisstore.WithPrefix(prefix)}
		if batch {
			options = append(options, redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch))
		}
		backing, err := redisstore.New(client, options...)
		if err != nil {
			b.Fatal(err)
		}
		replicas[i] = reserve.MustNew(backing, leases)
		b.Cleanup(func() {
			replicas[i].Close()
			client.Close()
		})
	}
	var next, admitted atomic.Int64
	b.SetParallelism(max(1, benchGoroutines/runtime.GOMAXPROCS(0))) // 64 goroutines on 1, 2, 4... procs
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		s := replicas[next.Add(1)%benchReplicas]
		req := core.Request{Policy: p, Key: "hot"}
		var mine int64
		for pb.Next() {
			res, err := s.Decide(context.Background(), req)
			if err != nil {
				b.Error(err)
				return
			}
			if res.Allowed {
				mine++
			}
		}
		admitted.Add(mine)
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(admitted.Load())/elapsed.Seconds(), "admitted/s")
	if p.Name() == "tight" {
		// Redis counts whole milliseconds: allow the one the run may straddle.
		exact := p.Capacity() + p.Limit()*(elapsed.Milliseconds()+1)/p.PeriodMillis()
		b.ReportMetric(float64(admitted.Load()-exact), "overage")
		b.ReportMetric(float64(benchReplicas*max(0, size-1)), "bound")
	}
}
