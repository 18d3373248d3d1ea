package httpengine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// randomStore admits every request with a random Remaining and ResetAfter, drawn
// from a small range so that values repeat (and the tickets' memos of the last value hit).
type randomStore struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (s *randomStore) result(name string) core.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return core.Result{Policy: name, Allowed: true, Limit: 500, Remaining: s.rng.Int64N(8) - 2,
		ResetAfter: time.Duration(s.rng.Int64N(300_000)) * time.Millisecond}
}

func (s *randomStore) Decide(_ context.Context, req core.Request) (core.Result, error) {
	return s.result(req.Policy.Name()), nil
}
func (s *randomStore) DecideStack(_ context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	for i := range reqs {
		results[i] = s.result(reqs[i].Policy.Name())
	}
	return true, nil
}
func (s *randomStore) Release(context.Context, core.Request, uint64) error { return nil }
func (s *randomStore) Close() error                                        { return nil }

// render is the RateLimit value of results, written independently of the engine,
// for policies whose window is w seconds: t is capped at w.
func render(results []core.Result, w int64) string {
	v := ""
	for i, res := range results {
		if i > 0 {
			v += ", "
		}
		v += fmt.Sprintf("%q;r=%d;t=%d", res.Policy, max(0, res.Remaining), min(time.Duration(w), (res.ResetAfter+time.Second-1)/time.Second))
	}
	return v
}

// TestRateLimitFieldCacheIsExact draws thousands of results from concurrent
// requests, many repeating the value before them, and checks every RateLimit value against
// an independent rendering of its own results.
func TestRateLimitFieldCacheIsExact(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	a := core.MustPolicy("a", core.FixedWindow, core.PerMinute(500))
	b := core.MustPolicy("b", core.FixedWindow, core.PerMinute(500))
	for _, limits := range []httpengine.Limits{
		httpengine.Limit(a, key),
		httpengine.Stack(httpengine.Limit(a, key), httpengine.Limit(b, key)),
	} {
		l := httpengine.Must(&randomStore{rng: rand.New(rand.NewPCG(1, 2))}, limits)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3000 {
					h := http.Header{}
					tk := l.Start(request("192.0.2.1:1"), h)
					if got, want := h.Get("RateLimit"), render(tk.Results(), 60); got != want {
						t.Errorf("RateLimit %q, want %q", got, want)
					}
					tk.Finish(200, true)
				}
			}()
		}
		wg.Wait()
	}
}
