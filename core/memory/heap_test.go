package memory_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// realisticKeys are keys as keyfuncs builds them, of the lengths real traffic has.
var realisticKeys = map[string]func(i int) string{
	"ipv4":    func(i int) string { return fmt.Sprintf("ip:10.%d.%d.%d", i>>16&255, i>>8&255, i&255) },
	"ipv6/64": func(i int) string { return fmt.Sprintf("ip6:2001:db8:%x:%x::/64", i>>16, i&0xffff) },
	"user":    func(i int) string { return fmt.Sprintf("form:username:customer.%07d", i) },
	"api key": func(i int) string { return "ak:" + keyfuncs.HashSecret(fmt.Sprint("secret-", i)) },
}

// BenchmarkHeapPerKey measures the heap one key costs in the store (its entry, its
// key string, its share of the table and, for the sliding log, its log), with keys
// of realistic lengths: run it with
//
//	go test -run '^$' -bench HeapPerKey -benchtime 1x ./core/memory
//
// The figure is reported as B/key; b.N only repeats the measurement.
func BenchmarkHeapPerKey(b *testing.B) {
	const keys = 200_000
	policies := []core.Policy{
		core.MustPolicy("token_bucket", core.TokenBucket, core.PerSecond(10)),
		core.MustPolicy("fixed_window", core.FixedWindow, core.PerMinute(100)),
		core.MustPolicy("sliding_window", core.SlidingWindow, core.PerMinute(100)),
		core.MustPolicy("sliding_log_5", core.SlidingLog, core.PerMinute(5)),
	}
	for _, p := range policies {
		for _, kind := range []string{"ipv4", "ipv6/64", "user", "api key"} {
			b.Run(p.Name()+"/"+kind, func(b *testing.B) {
				var perKey float64
				for b.Loop() {
					perKey = heapPerKey(b, p, keys, realisticKeys[kind])
				}
				b.ReportMetric(perKey, "B/key")
			})
		}
	}
}

// heapPerKey inserts n keys with as many decisions as the policy's steady state
// needs (5 for the 5-entry sliding log) and returns the heap growth per key: the
// entry, its share of the table, its state and the key string, which the store
// keeps alive (a server allocates it per request).
func heapPerKey(b *testing.B, p core.Policy, n int, key func(int) string) float64 {
	b.Helper()
	names := make([]string, n) // allocated before the measurement: not the store's

	store, err := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(2*n))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	decisions := 1
	if p.Algorithm() == core.SlidingLog {
		decisions = int(p.Limit())
	}
	before := heapInUse()
	for i := range names {
		names[i] = key(i)
	}
	ctx := context.Background()
	for _, k := range names {
		for range decisions {
			if _, err := store.Decide(ctx, core.Request{Policy: p, Key: k}); err != nil {
				b.Fatal(err)
			}
		}
	}
	after := heapInUse()
	if st := store.Stats(); st.Keys != len(names) {
		b.Fatalf("the store holds %d keys, want %d", st.Keys, len(names))
	}
	keyBytes := 0
	for _, k := range names {
		keyBytes += len(k)
	}
	runtime.KeepAlive(store)
	b.Logf("%s: %d keys of %.0f B on average", p.Name(), len(names), float64(keyBytes)/float64(len(names)))
	return float64(after-before) / float64(len(names))
}

func heapInUse() uint64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	time.Sleep(0) // let finalizers of the previous store's tables run
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
