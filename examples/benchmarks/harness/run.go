package harness

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/examples/benchmarks/limiters"
)

// Stats is what a run observed besides its timing, for its last b.N.
type Stats struct {
	// Refused counts decisions (or requests) refused; the throughput policy should
	// refuse none.
	Refused int64
	// KeysUsed is how many distinct keys the run decided on.
	KeysUsed int
	// Errors counts decisions that returned an error (a backend failure, or a peer
	// giving up under contention); Err is the first of them.
	Errors int64
	Err    error
}

// span is the keys one goroutine went through: count keys from start, cyclically.
type span struct{ start, count int }

// recorder collects what the goroutines of one run saw.
type recorder struct {
	refused atomic.Int64
	errors  atomic.Int64
	mu      sync.Mutex
	spans   []span
	err     error
}

func (r *recorder) fail(err error) {
	r.errors.Add(1)
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *recorder) finish(sp span) {
	r.mu.Lock()
	r.spans = append(r.spans, sp)
	r.mu.Unlock()
}

// stats counts the distinct keys the spans covered.
func (r *recorder) stats(keys int) Stats {
	covered := make([]bool, keys)
	used := 0
	for _, sp := range r.spans {
		for i := range min(sp.count, keys) {
			k := (sp.start + i) % keys
			if !covered[k] {
				covered[k] = true
				used++
			}
		}
	}
	return Stats{Refused: r.refused.Load(), KeysUsed: used, Errors: r.errors.Load(), Err: r.err}
}

// setParallelism makes b.RunParallel start sc.Goroutines goroutines in all.
func setParallelism(b *testing.B, sc Scenario) {
	if sc.Goroutines > 0 {
		b.SetParallelism(max(1, sc.Goroutines/runtime.GOMAXPROCS(0)))
	}
}

// RunDecider measures sc on one limiter: b.N decisions, serial or spread over the
// scenario's goroutines, each goroutine cycling through the keys from its own offset.
func RunDecider(b *testing.B, sc Scenario, l limiters.Limiter) Stats {
	rec := &recorder{}
	keys := sc.Keys
	b.ReportAllocs()
	if !sc.Parallel {
		decide := l.Worker()
		ctx := context.Background()
		b.ResetTimer()
		k := 0
		for range b.N {
			ok, err := decide(ctx, keys[k])
			if err != nil {
				rec.fail(err)
			} else if !ok {
				rec.refused.Add(1)
			}
			if k++; k == len(keys) {
				k = 0
			}
		}
		b.StopTimer()
		rec.finish(span{0, b.N})
		return rec.stats(len(keys))
	}
	setParallelism(b, sc)
	var workers atomic.Int64
	stride := max(1, len(keys)/max(1, sc.Goroutines, runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		decide := l.Worker()
		ctx := context.Background()
		start := int(workers.Add(1)-1) * stride % len(keys)
		k, n, refused := start, 0, int64(0)
		for pb.Next() {
			ok, err := decide(ctx, keys[k])
			if err != nil {
				rec.fail(err)
			} else if !ok {
				refused++
			}
			n++
			if k++; k == len(keys) {
				k = 0
			}
		}
		rec.refused.Add(refused)
		rec.finish(span{start, n})
	})
	b.StopTimer()
	return rec.stats(len(keys))
}

// Warm decides once on every key of sc, so that a measurement sees the steady state
// of existing keys rather than their creation.
func Warm(sc Scenario, l limiters.Limiter) error {
	decide := l.Worker()
	for _, k := range sc.Keys {
		if _, err := decide(context.Background(), k); err != nil {
			return fmt.Errorf("harness: warming %s: %w", sc.Name, err)
		}
	}
	return nil
}

// RunHTTP measures sc on one handler: b.N requests from the client address
// sc.Keys[0], each on a cleared response writer.
func RunHTTP(b *testing.B, sc Scenario, h http.Handler) Stats {
	rec := &recorder{}
	b.ReportAllocs()
	serve := func(n func() bool) (int, int64) {
		w := limiters.NewResponseWriter()
		r, _ := http.NewRequest(http.MethodGet, "http://api.example/resource", nil)
		r.RemoteAddr = sc.Keys[0]
		count, refused := 0, int64(0)
		for n() {
			w.Reset()
			h.ServeHTTP(w, r)
			if w.Status() != http.StatusOK {
				refused++
			}
			count++
		}
		return count, refused
	}
	if !sc.Parallel {
		i := 0
		b.ResetTimer()
		count, refused := serve(func() bool { i++; return i <= b.N })
		b.StopTimer()
		rec.refused.Add(refused)
		rec.finish(span{0, count})
		return rec.stats(1)
	}
	setParallelism(b, sc)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		count, refused := serve(pb.Next)
		rec.refused.Add(refused)
		rec.finish(span{0, count})
	})
	b.StopTimer()
	return rec.stats(1)
}
