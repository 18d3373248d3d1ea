package resilient_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// benchKeys is how many distinct keys the benchmarks spread their decisions over.
const benchKeys = 1024

// BenchmarkDecide measures what the wrapper adds to a decision (the bounded call on
// its own goroutine, the breaker, the pre-limiter, the observers), over a memory store
// standing in for Redis; compare with the bare store. A Redis round trip costs tens of
// microseconds on loopback, far more than either.
func BenchmarkDecide(b *testing.B) {
	policy := core.MustPolicy("api", core.TokenBucket, core.PerSecond(1_000_000))
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("ip:10.0.%d.%d", i/256, i%256)
	}
	run := func(b *testing.B, store core.Store) {
		var next atomic.Int64
		seen := make([]atomic.Bool, benchKeys)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1)) % benchKeys
				seen[i].Store(true)
				if _, err := store.Decide(context.Background(), core.Request{Policy: policy, Key: keys[i]}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.StopTimer()
		if used := countTrue(seen); b.N >= benchKeys && used != benchKeys {
			b.Fatalf("used %d distinct keys, want %d", used, benchKeys)
		}
	}
	b.Run("memory", func(b *testing.B) {
		store := memory.MustNew()
		defer store.Close()
		run(b, store)
	})
	b.Run("resilient(memory)", func(b *testing.B) {
		store, err := resilient.New(memory.MustNew(), resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			resilient.WithDecisionLogEvery(0), resilient.WithMonitor(&recorderless{}))
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		run(b, store)
	})
	// What per-slot breakers add: the key's name and its hash slot on every decision,
	// as over a Redis Cluster store.
	b.Run("resilient(memory, per-slot breakers)", func(b *testing.B) {
		store, err := resilient.New(namedMemory{memory.MustNew()}, resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			resilient.WithDecisionLogEvery(0), resilient.WithMonitor(&recorderless{}))
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		run(b, store)
	})
}

// namedMemory is a memory store that names its keys as the Redis store does
// (as resilient looks for), so that resilient keeps breakers per Cluster slot over it.
type namedMemory struct{ *memory.Store }

func (namedMemory) Key(p core.Policy, key string) string { return "rl:{" + p.ID() + "}:" + key }

func countTrue(flags []atomic.Bool) int {
	n := 0
	for i := range flags {
		if flags[i].Load() {
			n++
		}
	}
	return n
}

// recorderless is an observer that counts without keeping, as a metrics observer does.
type recorderless struct{ n atomic.Int64 }

func (r *recorderless) OnDecision(*resilient.DecisionEvent)         { r.n.Add(1) }
func (r *recorderless) OnStoreCall(*resilient.StoreCallEvent)       { r.n.Add(1) }
func (r *recorderless) OnFallback(*resilient.FallbackEvent)         { r.n.Add(1) }
func (r *recorderless) OnLocalRefusal(*resilient.LocalRefusalEvent) { r.n.Add(1) }
