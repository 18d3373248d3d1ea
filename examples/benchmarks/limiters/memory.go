package limiters

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/throttled/throttled/v2"
	"github.com/throttled/throttled/v2/store/memstore"
	ulule "github.com/ulule/limiter/v3"
	ululememory "github.com/ulule/limiter/v3/drivers/store/memory"
	"golang.org/x/time/rate"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// Memory returns the in-process implementations: this library's memory store with
// token_bucket, gcra and sliding_window, then the peers.
func Memory() []Impl {
	return []Impl{
		{Name: "ratelimit/token_bucket", Algorithm: "token bucket", Ours: true, New: ratelimitMemory(core.TokenBucket)},
		{Name: "ratelimit/gcra", Algorithm: "GCRA", Ours: true, New: ratelimitMemory(core.GCRA)},
		{Name: "ratelimit/sliding_window", Algorithm: "sliding window", Ours: true, New: ratelimitMemory(core.SlidingWindow)},
		{Name: "x/time/rate (sync.Map)", Algorithm: "token bucket", New: xTimeRate},
		{Name: "go-limiter/memorystore", Algorithm: "fixed window", New: goLimiterMemory},
		{Name: "ulule/memory", Algorithm: "fixed window", New: ululeMemory},
		{Name: "throttled/memstore", Algorithm: "GCRA", New: throttledMemory},
		{Name: "httprate", Algorithm: "sliding window", New: httprateMemory},
	}
}

// ratelimitPolicy is p for alg: window algorithms take no burst (their capacity is
// the limit).
func ratelimitPolicy(alg core.Algorithm, p Policy) (core.Policy, error) {
	var options []core.Option
	switch alg {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		options = append(options, core.WithBurst(p.Burst))
	}
	return core.NewPolicy("bench", alg, core.Rate{Limit: p.Rate, Period: Period}, options...)
}

func ratelimitMemory(alg core.Algorithm) func(Env, Policy) (Limiter, error) {
	return func(_ Env, p Policy) (Limiter, error) {
		policy, err := ratelimitPolicy(alg, p)
		if err != nil {
			return nil, err
		}
		store, err := memory.New()
		if err != nil {
			return nil, err
		}
		return shared{
			decide: func(ctx context.Context, key string) (bool, error) {
				res, err := store.Decide(ctx, core.Request{Policy: policy, Key: key})
				return res.Allowed, err
			},
			close: func() { _ = store.Close() },
		}, nil
	}
}

// xTimeRate keeps one rate.Limiter per key in a sync.Map, the usual way to key it.
func xTimeRate(_ Env, p Policy) (Limiter, error) {
	var limiters sync.Map
	every := rate.Limit(float64(p.Rate) / Period.Seconds())
	burst := int(p.Burst)
	return shared{decide: func(_ context.Context, key string) (bool, error) {
		l, ok := limiters.Load(key)
		if !ok {
			l, _ = limiters.LoadOrStore(key, rate.NewLimiter(every, burst))
		}
		return l.(*rate.Limiter).Allow(), nil
	}}, nil
}

func goLimiterMemory(_ Env, p Policy) (Limiter, error) {
	store, err := memorystore.New(&memorystore.Config{Tokens: uint64(p.Rate), Interval: Period})
	if err != nil {
		return nil, fmt.Errorf("go-limiter: %w", err)
	}
	return shared{
		decide: func(ctx context.Context, key string) (bool, error) {
			_, _, _, ok, err := store.Take(ctx, key)
			return ok, err
		},
		close: func() { _ = store.Close(context.Background()) },
	}, nil
}

func ululeMemory(_ Env, p Policy) (Limiter, error) {
	l := ulule.New(ululememory.NewStore(), ulule.Rate{Period: Period, Limit: p.Rate})
	return shared{decide: func(ctx context.Context, key string) (bool, error) {
		c, err := l.Get(ctx, key)
		return !c.Reached, err
	}}, nil
}

// throttledQuota is p for throttled, whose bucket holds MaxBurst+1.
func throttledQuota(p Policy) throttled.RateQuota {
	return throttled.RateQuota{MaxRate: throttled.PerDuration(int(p.Rate), Period), MaxBurst: int(p.Burst) - 1}
}

func throttledMemory(_ Env, p Policy) (Limiter, error) {
	store, err := memstore.NewCtx(0)
	if err != nil {
		return nil, fmt.Errorf("throttled: %w", err)
	}
	l, err := throttled.NewGCRARateLimiterCtx(store, throttledQuota(p))
	if err != nil {
		return nil, fmt.Errorf("throttled: %w", err)
	}
	return shared{decide: func(ctx context.Context, key string) (bool, error) {
		limited, _, err := l.RateLimitCtx(ctx, key, 1)
		return !limited, err
	}}, nil
}

// httprateMemory decides through httprate's RateLimiter.OnLimit, its decision without
// the HTTP handler around it; it writes its header fields, so each worker has its own
// response writer and request.
func httprateMemory(_ Env, p Policy) (Limiter, error) {
	l := httprate.NewRateLimiter(int(p.Rate), Period)
	return workers(func() Decider {
		w := newDiscardWriter()
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		return func(_ context.Context, key string) (bool, error) {
			clear(w.header)
			return !l.OnLimit(w, r, key), nil
		}
	}, nil), nil
}

// perWorker is a Limiter that builds a Decider for each goroutine.
type perWorker struct {
	worker func() Decider
	close  func()
}

func workers(worker func() Decider, close func()) Limiter {
	return perWorker{worker: worker, close: close}
}

func (p perWorker) Worker() Decider { return p.worker() }

func (p perWorker) Close() {
	if p.close != nil {
		p.close()
	}
}
