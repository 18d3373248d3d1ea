package limiters

import (
	"context"
	"fmt"
	"strings"

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
		{Name: "floor: TIME, GET, SET", Algorithm: "none", Baseline: true, New: floorScript},
		{Name: "floor: fixed window, straight-line", Algorithm: "fixed window", Baseline: true, New: straightLineFixedWindow},
	}
}

// trivialScript is the ceiling of one round trip per decision: EVALSHA of a script
// that does nothing, through the same client. It is not a limiter.
var trivialScript = ScriptBaseline("return 1")

// floorScript is the second reference point: TIME, GET and SET with constant
// arguments, the least a limiter that is exact on the server's clock must do.
var floorScript = ScriptBaseline(`redis.call('TIME')
redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], '1767225600000 0', 'PX', '2')
return 1`)

// straightLineFixedWindow is the third: this store's fixed window (aligned windows,
// "window count" state, the same reply string) written as one straight-line script
// with the policy's numbers in, no argument checks and no function. It shows what the
// store's single-decision script would cost without the layout that keeps each
// algorithm in one file (docs/redis-scripts.md#performance). It is not shipped: it
// decides cost 1 only and trusts its state.
func straightLineFixedWindow(env Env, p Policy) (Limiter, error) {
	source := fmt.Sprintf(`local limit, period, margin = %d, %d, 1000
local time = redis.call('TIME')
local micros = time[2] + 0
local now = time[1] * 1000 + (micros - micros %% 1000) / 1000
local index = now / period
local count = 0
index = index - index %% 1
local value = redis.call('GET', KEYS[1])
if value then
  local stored, counted = string.match(value, '^(%%d+) (%%d+)$')
  if stored + 0 >= index then
    index, count = stored + 0, counted + 0
  end
end
local until_end = (index + 1) * period - now
if count + 1 > limit then
  return string.format('%%d 0 %%d %%d %%d 0', now, limit - count, until_end, until_end)
end
count = count + 1
redis.call('SET', KEYS[1], string.format('%%d %%d', index, count), 'PX', string.format('%%d', until_end + margin))
return string.format('%%d 1 %%d 0 %%d 0', now, limit - count, until_end)`, p.Rate, Period.Milliseconds())
	script := redis.NewScript(source)
	client := newClient(env)
	return shared{
		decide: func(ctx context.Context, key string) (bool, error) {
			reply, err := script.Run(ctx, client, []string{env.Prefix + key}).Text()
			_, allowed, _ := strings.Cut(reply, " ") // "now allowed ..."
			return err == nil && strings.HasPrefix(allowed, "1 "), err
		},
		close: func() { _ = client.Close() },
	}, nil
}

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
