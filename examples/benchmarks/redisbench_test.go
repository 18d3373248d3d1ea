package benchmarks

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// servers is the redis-server of this run, started on first use.
var servers redistest.Shared

func TestMain(m *testing.M) { os.Exit(servers.Run(m)) }

// goroutines is how many goroutines every scenario runs.
const goroutines = 64

// users is how many distinct keys the per-user scenarios spread over.
const users = 10_000

// scenario is one workload, run against every peer.
type scenario struct {
	name string
	// single decides one key per request (nil for stack scenarios).
	single func(i int64) string
	limit  limit
	// stack decides one key per limit of stack.
	stack     func(i int64) []string
	stackOf   []limit
	keysInUse int // distinct keys the scenario touches, asserted before it runs
}

func userKeys() []string {
	keys := make([]string, users)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", i)
	}
	return keys
}

func scenarios() []scenario {
	keys := userKeys()
	generous := limit{name: "api", rate: 1_000_000, period: time.Second} // admits everything: measures the store
	return []scenario{
		{name: "HotKey", limit: generous, keysInUse: 1,
			single: func(int64) string { return "hot" }},
		{name: "PerUser", limit: generous, keysInUse: users,
			single: func(i int64) string { return keys[i%users] }},
		{name: "Stack3", keysInUse: users + users + 1,
			stackOf: []limit{{name: "account", rate: 1_000_000, period: time.Second}, {name: "ip", rate: 1_000_000, period: time.Second}, {name: "subnet", rate: 1_000_000, period: time.Second}},
			stack:   func(i int64) []string { k := keys[i%users]; return []string{k, "ip-" + k, "subnet"} }},
	}
}

// BenchmarkRedis runs every scenario against every peer on one redis-server.
func BenchmarkRedis(b *testing.B) {
	addr := servers.Server(b).Addr
	for _, sc := range scenarios() {
		checkKeys(b, sc)
		for _, p := range peers() {
			if sc.stack != nil && p.stack == nil {
				continue
			}
			name := sc.name + "/" + p.name
			if sc.stack != nil && !p.atomic {
				name += "-not-atomic"
			}
			b.Run(name, func(b *testing.B) {
				client := redis.NewClient(&redis.Options{Addr: addr})
				defer client.Close()
				counter := &commandCounter{}
				client.AddHook(counter)
				var decide func(ctx context.Context, i int64) error
				if sc.stack != nil {
					d := p.stack(b, client, sc.stackOf, p.options)
					decide = func(ctx context.Context, i int64) error { _, err := d(ctx, sc.stack(i)); return err }
				} else {
					d := p.single(b, client, sc.limit, p.options)
					decide = func(ctx context.Context, i int64) error { _, err := d(ctx, sc.single(i)); return err }
				}
				if err := decide(context.Background(), 0); err != nil { // loads scripts
					b.Fatal(err)
				}
				counter.commands.Store(0)
				run(b, decide)
				b.ReportMetric(float64(counter.commands.Load())/float64(b.N), "cmds/decision")
			})
		}
	}
}

// checkKeys asserts that a scenario touches the number of distinct keys it claims.
func checkKeys(b *testing.B, sc scenario) {
	seen := map[string]bool{}
	for i := int64(0); i < 3*users; i++ {
		if sc.stack != nil {
			for j, k := range sc.stack(i) {
				seen[fmt.Sprint(j, k)] = true
			}
		} else {
			seen[sc.single(i)] = true
		}
	}
	if len(seen) != sc.keysInUse {
		b.Fatalf("%s touches %d distinct keys, claims %d", sc.name, len(seen), sc.keysInUse)
	}
}

// run calls decide from goroutines goroutines and reports decisions per second.
func run(b *testing.B, decide func(ctx context.Context, i int64) error) {
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(max(1, goroutines/runtimeProcs()))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if err := decide(ctx, next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
