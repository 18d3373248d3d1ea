package benchmarks

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// limit is what every peer enforces: a rate per period, with a burst of the same size.
type limit struct {
	name   string
	rate   int64
	period time.Duration
}

// decider decides one request for key under a limit it was built for.
type decider func(ctx context.Context, key string) (allowed bool, err error)

// stackDecider decides one request per key, one per limit of the stack.
type stackDecider func(ctx context.Context, keys []string) (allowed bool, err error)

// peer is one library under comparison.
type peer struct {
	name string
	// single returns a decider for l on client.
	single func(tb testing.TB, client *redis.Client, l limit, options []redisstore.Option) decider
	// stack returns a decider for a stack of limits, or nil when the library has none
	// (the scenario then skips it); atomic reports whether it is all-or-nothing.
	stack  func(tb testing.TB, client *redis.Client, ls []limit, options []redisstore.Option) stackDecider
	atomic bool
	// options configure this library's store, for variants of it.
	options []redisstore.Option
}

// peers are the libraries every scenario runs against.
func peers() []peer {
	return []peer{
		{name: "ratelimit", single: ratelimitSingle, stack: ratelimitStack, atomic: true},
		// Keys outlive their state by a second, as redis_rate's whole-second EX does:
		// fewer keys expire and are created again between a user's requests.
		{name: "ratelimit-margin1s", single: ratelimitSingle, stack: ratelimitStack, atomic: true,
			options: []redisstore.Option{redisstore.WithExpiryMargin(time.Second)}},
		// Concurrent decisions share round trips (stacks are not batched).
		{name: "ratelimit-batched", single: ratelimitSingle, stack: ratelimitStack, atomic: true,
			options: []redisstore.Option{redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch)}},
		{name: "redis_rate", single: redisRateSingle, stack: redisRateStack},
		{name: "baseline-EVALSHA-return-1", single: evalshaBaseline},
	}
}

// evalshaBaseline is the ceiling of one round trip per decision: EVALSHA of a script
// that does nothing, unpipelined, through the same client. It is not a limiter.
func evalshaBaseline(_ testing.TB, client *redis.Client, l limit, _ []redisstore.Option) decider {
	script := redis.NewScript("return 1")
	prefix := l.name + ":"
	return func(ctx context.Context, key string) (bool, error) {
		n, err := script.Run(ctx, client, []string{prefix + key}).Int64()
		return n == 1, err
	}
}

func ratelimitStore(tb testing.TB, client *redis.Client, options []redisstore.Option) *redisstore.Store {
	options = append([]redisstore.Option{redisstore.WithPrefix(fmt.Sprintf("bench%d:", time.Now().UnixNano()))}, options...)
	store, err := redisstore.New(client, options...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return store
}

func ratelimitPolicy(l limit) core.Policy {
	return core.MustPolicy(l.name, core.GCRA, core.Rate{Limit: l.rate, Period: l.period})
}

func ratelimitSingle(tb testing.TB, client *redis.Client, l limit, options []redisstore.Option) decider {
	store, p := ratelimitStore(tb, client, options), ratelimitPolicy(l)
	return func(ctx context.Context, key string) (bool, error) {
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
		return res.Allowed, err
	}
}

func ratelimitStack(tb testing.TB, client *redis.Client, ls []limit, options []redisstore.Option) stackDecider {
	store := ratelimitStore(tb, client, options)
	policies := make([]core.Policy, len(ls))
	for i, l := range ls {
		policies[i] = ratelimitPolicy(l)
	}
	return func(ctx context.Context, keys []string) (bool, error) {
		var inline [4]core.Request
		var results [4]core.Result
		reqs := inline[:0]
		for i, p := range policies {
			reqs = append(reqs, core.Request{Policy: p, Key: keys[i]})
		}
		return store.DecideStack(ctx, reqs, results[:len(reqs)])
	}
}

func redisRateLimit(l limit) redis_rate.Limit {
	return redis_rate.Limit{Rate: int(l.rate), Burst: int(l.rate), Period: l.period}
}

func redisRateSingle(_ testing.TB, client *redis.Client, l limit, _ []redisstore.Option) decider {
	limiter, rl := redis_rate.NewLimiter(client), redisRateLimit(l)
	prefix := l.name + ":"
	return func(ctx context.Context, key string) (bool, error) {
		res, err := limiter.Allow(ctx, prefix+key, rl)
		if err != nil {
			return false, err
		}
		return res.Allowed > 0, nil
	}
}

// redisRateStack checks each limit in turn: redis_rate has no stacks, so this is not
// all-or-nothing (a later refusal does not refund earlier limits).
func redisRateStack(_ testing.TB, client *redis.Client, ls []limit, _ []redisstore.Option) stackDecider {
	limiter := redis_rate.NewLimiter(client)
	limits := make([]redis_rate.Limit, len(ls))
	prefixes := make([]string, len(ls))
	for i, l := range ls {
		limits[i], prefixes[i] = redisRateLimit(l), l.name+":"
	}
	return func(ctx context.Context, keys []string) (bool, error) {
		for i, rl := range limits {
			res, err := limiter.Allow(ctx, prefixes[i]+keys[i], rl)
			if err != nil || res.Allowed == 0 {
				return false, err
			}
		}
		return true, nil
	}
}
