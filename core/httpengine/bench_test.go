package httpengine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// constantStore admits everything with a fixed result, so that a benchmark
// measures the engine alone.
type constantStore struct{}

func (constantStore) Decide(_ context.Context, req core.Request) (core.Result, error) {
	return core.Result{Policy: req.Policy.Name(), Allowed: true, Limit: 20, Remaining: 19, ResetAfter: 100e6}, nil
}
func (constantStore) DecideStack(_ context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	for i := range reqs {
		results[i] = core.Result{Policy: reqs[i].Policy.Name(), Allowed: true, Limit: 20, Remaining: 19, ResetAfter: 100e6}
	}
	return true, nil
}
func (constantStore) Release(context.Context, core.Request, uint64) error { return nil }
func (constantStore) Close() error                                        { return nil }

// BenchmarkEngine measures Start and Finish of one admitted request: the engine's
// own cost, without key parsing (a constant key) or a real store.
func BenchmarkEngine(b *testing.B) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	const key = "ip:192.0.2.1"
	constKey := func(*http.Request) (string, error) { return key, nil }
	for _, tc := range []struct {
		name   string
		limits httpengine.Limits
	}{
		{"one_policy", httpengine.Limit(api, constKey)},
		{"stack_of_3", httpengine.Stack(
			httpengine.Limit(api, constKey),
			httpengine.Limit(core.MustPolicy("b", core.FixedWindow, core.PerMinute(100)), constKey),
			httpengine.Limit(core.MustPolicy("c", core.SlidingWindow, core.PerMinute(100)), constKey),
		)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l := httpengine.Must(constantStore{}, tc.limits)
			benchEngine(b, l)
		})
	}
	// Results that never repeat miss the field cache: the cost of building the value.
	b.Run("one_policy_uncached", func(b *testing.B) {
		benchEngine(b, httpengine.Must(&countingStore{}, httpengine.Limit(api, constKey)))
	})
}

func benchEngine(b *testing.B, l *httpengine.Limiter) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		h := make(http.Header, 4)
		for pb.Next() {
			clear(h)
			t := l.Start(r, h)
			if t.Disposition() != httpengine.Admitted {
				b.Fatal(t.Disposition())
			}
			t.Finish(200, true)
		}
	})
}

// countingStore admits everything with a Remaining that never repeats.
type countingStore struct {
	constantStore
	n atomic.Int64
}

func (s *countingStore) Decide(_ context.Context, req core.Request) (core.Result, error) {
	return core.Result{Policy: req.Policy.Name(), Allowed: true, Limit: 1 << 40, Remaining: s.n.Add(1), ResetAfter: 100e6}, nil
}
