package limiters

import (
	"context"
	"fmt"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	throttledredis "github.com/throttled/throttled/v2/store/goredisstore.v9"
	ulule "github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// Redis returns the implementations that keep their state in Redis: this library's
// Redis store with token_bucket, gcra, sliding_window and fixed_window (ulule's
// algorithm), and gcra with batching (redisstore.WithBatching), then the peers. Each
// gets its own go-redis client with the same options.
func Redis() []Impl {
	return []Impl{
		{Name: "ratelimit-redis/token_bucket", Algorithm: "token bucket", Ours: true, New: ratelimitRedis(core.TokenBucket)},
		{Name: "ratelimit-redis/gcra", Algorithm: "GCRA", Ours: true, New: ratelimitRedis(core.GCRA)},
		{Name: "ratelimit-redis/sliding_window", Algorithm: "sliding window", Ours: true, New: ratelimitRedis(core.SlidingWindow)},
		{Name: "ratelimit-redis/fixed_window", Algorithm: "fixed window", Ours: true, New: ratelimitRedis(core.FixedWindow)},
		{Name: "ratelimit-redis/gcra batched", Algorithm: "GCRA", Ours: true, Batched: true, New: ratelimitRedis(core.GCRA, batching)},
		{Name: "redis_rate", Algorithm: "GCRA", New: redisRate},
		{Name: "ulule/redis", Algorithm: "fixed window", New: ululeRedis},
		{Name: "throttled/goredisstore", Algorithm: "GCRA", New: throttledRedis},
		{Name: "baseline: EVALSHA return 1", Algorithm: "none", Baseline: true, New: trivialScript},
	}
}

// trivialScript is the ceiling of one round trip per decision: EVALSHA of a script
// that does nothing, through the same client. It is not a limiter.
var trivialScript = ScriptBaseline("return 1")

// ScriptBaseline builds a reference point that is not a limiter: one EVALSHA of
// source per decision, with the decision's key as KEYS[1], through the client every
// Redis implementation uses. It admits every decision.
func ScriptBaseline(source string) func(Env, Policy) (Limiter, error) {
	script := redis.NewScript(source)
	return func(env Env, _ Policy) (Limiter, error) {
		client := newClient(env)
		return shared{
			decide: func(ctx context.Context, key string) (bool, error) {
				return true, script.Run(ctx, client, []string{env.Prefix + key}).Err()
			},
			close: func() { _ = client.Close() },
		}, nil
	}
}

// newClient is the client every Redis implementation uses: one pool as large as the
// number of goroutines, and ctx deadlines honoured.
func newClient(env Env) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:                  env.RedisAddr,
		PoolSize:              max(env.PoolSize, 10),
		ContextTimeoutEnabled: true,
	})
}

// batching is the batched variant's option: concurrent decisions share round trips
// (redisstore.WithBatching with its suggested window and batch size).
var batching = redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch)

func ratelimitRedis(alg core.Algorithm, options ...redisstore.Option) func(Env, Policy) (Limiter, error) {
	return func(env Env, p Policy) (Limiter, error) {
		policy, err := ratelimitPolicy(alg, p)
		if err != nil {
			return nil, err
		}
		client := newClient(env)
		store, err := redisstore.New(client, append([]redisstore.Option{redisstore.WithPrefix(env.Prefix)}, options...)...)
		if err != nil {
			_ = client.Close()
			return nil, err
		}
		return shared{
			decide: func(ctx context.Context, key string) (bool, error) {
				res, err := store.Decide(ctx, core.Request{Policy: policy, Key: key})
				return res.Allowed, err
			},
			close: func() { _ = store.Close(); _ = client.Close() },
		}, nil
	}
}

func redisRate(env Env, p Policy) (Limiter, error) {
	client := newClient(env)
	limiter := redis_rate.NewLimiter(client)
	limit := redis_rate.Limit{Rate: int(p.Rate), Burst: int(p.Burst), Period: Period}
	prefix := env.Prefix
	return shared{
		decide: func(ctx context.Context, key string) (bool, error) {
			res, err := limiter.Allow(ctx, prefix+key, limit)
			if err != nil {
				return false, err
			}
			return res.Allowed > 0, nil
		},
		close: func() { _ = client.Close() },
	}, nil
}

func ululeRedis(env Env, p Policy) (Limiter, error) {
	client := newClient(env)
	store, err := ululeredis.NewStoreWithOptions(client, ulule.StoreOptions{Prefix: env.Prefix})
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("ulule: %w", err)
	}
	l := ulule.New(store, ulule.Rate{Period: Period, Limit: p.Rate})
	return shared{
		decide: func(ctx context.Context, key string) (bool, error) {
			c, err := l.Get(ctx, key)
			return !c.Reached, err
		},
		close: func() { _ = client.Close() },
	}, nil
}

func throttledRedis(env Env, p Policy) (Limiter, error) {
	client := newClient(env)
	store, err := throttledredis.NewCtx(client, env.Prefix)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("throttled: %w", err)
	}
	l, err := throttled.NewGCRARateLimiterCtx(store, throttledQuota(p))
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("throttled: %w", err)
	}
	return shared{
		decide: func(ctx context.Context, key string) (bool, error) {
			limited, _, err := l.RateLimitCtx(ctx, key, 1)
			return !limited, err
		},
		close: func() { _ = client.Close() },
	}, nil
}
