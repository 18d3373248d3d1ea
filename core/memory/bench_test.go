package memory_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// benchPolicies are the algorithms measured. The limits are high so that the
// benchmarks measure decisions, not refusals; both paths cost the same.
func benchPolicies() []core.Policy {
	return []core.Policy{
		core.MustPolicy("token_bucket", core.TokenBucket, core.PerSecond(1_000_000_000)),
		core.MustPolicy("gcra", core.GCRA, core.PerSecond(1_000_000_000)),
		core.MustPolicy("fixed_window", core.FixedWindow, core.PerSecond(1_000_000_000)),
		core.MustPolicy("sliding_window", core.SlidingWindow, core.PerSecond(1_000_000_000)),
		core.MustPolicy("leaky_bucket", core.LeakyBucket, core.PerSecond(1_000_000_000)),
	}
}

func newBenchStore(b *testing.B) *memory.Store {
	s, err := memory.New(memory.WithSweepInterval(0), memory.WithMaxKeys(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkDecideSerial: one key, one goroutine.
func BenchmarkDecideSerial(b *testing.B) {
	for _, p := range benchPolicies() {
		b.Run(p.Name(), func(b *testing.B) {
			store := newBenchStore(b)
			req := core.Request{Policy: p, Key: "user-42"}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := store.Decide(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecideHotKeyParallel: one key shared by every goroutine.
func BenchmarkDecideHotKeyParallel(b *testing.B) {
	for _, p := range benchPolicies() {
		b.Run(p.Name(), func(b *testing.B) {
			store := newBenchStore(b)
			req := core.Request{Policy: p, Key: "hot"}
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := store.Decide(ctx, req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkDecideManyKeysParallel: 100,000 distinct keys, created before the timer
// starts so that it measures decisions on existing keys. It asserts how many
// distinct keys it really used.
func BenchmarkDecideManyKeysParallel(b *testing.B) {
	const keys = 100_000
	names := make([]string, keys)
	for i := range names {
		names[i] = "user-" + strconv.Itoa(i)
	}
	for _, p := range benchPolicies() {
		b.Run(p.Name(), func(b *testing.B) {
			store := newBenchStore(b)
			ctx := context.Background()
			for _, k := range names {
				if _, err := store.Decide(ctx, core.Request{Policy: p, Key: k}); err != nil {
					b.Fatal(err)
				}
			}
			var next atomic.Uint64
			var mu sync.Mutex
			used := make([]bool, keys)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mine := make([]bool, keys)   // each goroutine's own record, merged below: no shared writes while timed
				i := next.Add(keys/7) * 7919 // each goroutine starts elsewhere and strides over all keys
				for pb.Next() {
					i = (i + 7919) % keys
					mine[i] = true
					if _, err := store.Decide(ctx, core.Request{Policy: p, Key: names[i]}); err != nil {
						b.Error(err)
						return
					}
				}
				mu.Lock()
				for k, u := range mine {
					used[k] = used[k] || u
				}
				mu.Unlock()
			})
			b.StopTimer()
			distinct := 0
			for _, u := range used {
				if u {
					distinct++
				}
			}
			if b.N >= 10*keys && distinct != keys {
				b.Fatalf("used %d distinct keys, want %d", distinct, keys)
			}
			if st := store.Stats(); st.Keys != keys {
				b.Fatalf("store holds %d keys, want %d", st.Keys, keys)
			}
			b.ReportMetric(float64(distinct), "keys")
		})
	}
}

// BenchmarkDecideStack: the three-policy login stack on one client.
func BenchmarkDecideStack(b *testing.B) {
	store := newBenchStore(b)
	reqs := []core.Request{
		{Policy: core.MustPolicy("account", core.SlidingWindow, core.PerSecond(1_000_000_000)), Key: "alice"},
		{Policy: core.MustPolicy("ip", core.TokenBucket, core.PerSecond(1_000_000_000)), Key: "ip:203.0.113.9"},
		{Policy: core.MustPolicy("subnet", core.FixedWindow, core.PerSecond(1_000_000_000)), Key: "net4:203.0.113.0/24"},
	}
	results := make([]core.Result, len(reqs))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.DecideStack(ctx, reqs, results); err != nil {
			b.Fatal(err)
		}
	}
}

var sink time.Duration

// TestDecideAllocatesNothingOnAnExistingKey is the zero-allocation guarantee.
func TestDecideAllocatesNothingOnAnExistingKey(t *testing.T) {
	store, err := memory.New(memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	policies := append(benchPolicies(),
		core.MustPolicy("sliding_log", core.SlidingLog, core.PerSecond(50)),
		core.MustConcurrencyPolicy("concurrency", 1000, time.Minute))
	for _, p := range policies {
		req := core.Request{Policy: p, Key: "existing", Lease: 1}
		for i := 0; i < 200; i++ { // warm up: create the key, grow the log to its steady size
			if res, err := store.Decide(ctx, req); err == nil && p.Algorithm() == core.Concurrency {
				_ = store.Release(ctx, req, res.Lease)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			res, err := store.Decide(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if p.Algorithm() == core.Concurrency {
				_ = store.Release(ctx, req, res.Lease)
			}
			sink += res.RetryAfter
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per decision on an existing key, want 0", p.Name(), allocs)
		}
	}
	stack := []core.Request{{Policy: policies[0], Key: "a"}, {Policy: policies[2], Key: "b"}}
	results := make([]core.Result, 2)
	if allocs := testing.AllocsPerRun(1000, func() { _, _ = store.DecideStack(ctx, stack, results) }); allocs != 0 {
		t.Errorf("stack: %.1f allocations per decision, want 0", allocs)
	}
}

// BenchmarkDecideSlidingLogSteady: one key under a sliding log at steady traffic,
// one request per millisecond of a virtual clock, so that every admitted decision
// ages one entry out of the front of a log that holds `entries` entries. Its cost
// must not grow with the log's length.
func BenchmarkDecideSlidingLogSteady(b *testing.B) {
	for _, entries := range []int{10, 1_000, 240_000} {
		b.Run(fmt.Sprintf("entries=%d", entries), func(b *testing.B) {
			clock := storetest.NewClock()
			store, err := memory.New(memory.WithSweepInterval(0), memory.WithClock(clock.Now))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			period := time.Duration(entries) * time.Millisecond
			p := core.MustPolicy("log", core.SlidingLog, core.Rate{Limit: int64(entries), Period: period})
			req := core.Request{Policy: p, Key: "user-42"}
			ctx := context.Background()
			decide := func() {
				res, err := store.Decide(ctx, req)
				if err != nil || !res.Allowed {
					b.Fatalf("refused or failed: %+v, %v", res, err)
				}
				clock.Advance(time.Millisecond)
			}
			for range 2 * entries { // fill the window, then age out a whole one
				decide()
			}
			b.ReportAllocs()
			for b.Loop() {
				decide()
			}
			b.ReportMetric(float64(entries), "entries")
		})
	}
}
