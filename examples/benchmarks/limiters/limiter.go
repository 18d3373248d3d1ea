package limiters

import (
	"context"
	"time"
)

// Policy is the limit every implementation enforces: Rate decisions per second, with a
// bucket of Burst (window limiters admit Rate per one-second window).
type Policy struct {
	Rate  int64
	Burst int64
}

// Period is the period of every Policy.
const Period = time.Second

// Throughput is the policy of the speed scenarios: so generous that no implementation
// refuses during a measurement, so that every figure is the cost of an admission.
var Throughput = Policy{Rate: 100_000_000, Burst: 100_000_000}

// RedisThroughput is the policy of the Redis speed scenarios: still more than any
// Redis implementation decides in a second here, so none refuses, but slow enough for
// every peer to enforce it. At Throughput's 10^8 per second, redis_rate's emission
// interval (10^-8 s) is below the resolution of its floating-point TAT (about 6×10^-8 s
// at today's epoch offset): its TAT never advances, so it never writes its key and
// its figures would be those of a script that skips the write.
var RedisThroughput = Policy{Rate: 1_000_000, Burst: 1_000_000}

// Tight is the policy of the over-grant check: 100 per second, burst 100.
var Tight = Policy{Rate: 100, Burst: 100}

// Decider decides one request of cost 1 for key. An error is a backend failure.
type Decider func(ctx context.Context, key string) (allowed bool, err error)

// Limiter is one implementation built for one policy.
type Limiter interface {
	// Worker returns a Decider for one goroutine (most are safe for all goroutines,
	// but adapters that need per-call scratch keep it per worker).
	Worker() Decider
	// Close releases the limiter's resources.
	Close()
}

// Env is what implementations need from the run.
type Env struct {
	// RedisAddr is the host:port of the redis-server (Redis implementations only).
	RedisAddr string
	// Prefix keeps the keys of one measurement apart from those of another.
	Prefix string
	// PoolSize is the go-redis connection pool size of every Redis client.
	PoolSize int
}

// Impl is one implementation under comparison.
type Impl struct {
	// Name says which library, store and algorithm ("ratelimit/gcra", "x/time/rate").
	Name string
	// Algorithm is what it enforces ("token bucket", "fixed window", ...).
	Algorithm string
	// Ours marks this library's implementations.
	Ours bool
	// Baseline marks a reference point, not a limiter anyone ships (most admit
	// everything); the over-grant check and the performance guard leave it out.
	Baseline bool
	// Batched marks an implementation that shares round trips between concurrent
	// decisions (redisstore.WithBatching).
	Batched bool
	// New builds the implementation for a policy.
	New func(env Env, p Policy) (Limiter, error)
}

// shared is a Limiter whose Decider is safe for concurrent use.
type shared struct {
	decide Decider
	close  func()
}

func (s shared) Worker() Decider { return s.decide }

func (s shared) Close() {
	if s.close != nil {
		s.close()
	}
}
