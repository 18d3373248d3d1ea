package redisstore

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// The client settings of Dial: a decision against a dead or stuck server ends within
// about 250 ms, instead of go-redis's defaults (5 dial attempts 100ms apart, 3 command
// retries with backoff, 3s reads: 1.65s per decision against a refused port, more
// against a stuck one).
const (
	// dialTimeout bounds establishing a connection.
	dialTimeout = 100 * time.Millisecond
	// dialIOTimeout bounds each read and write; the caller's ctx deadline, when
	// sooner, bounds them instead (ContextTimeoutEnabled).
	dialIOTimeout = 200 * time.Millisecond
	// dialPoolTimeout bounds the wait for a free connection.
	dialPoolTimeout = 200 * time.Millisecond
	// dialRetryBackoff is the pause before the one retry of a command that failed on a
	// broken connection (a pooled connection to a server that restarted).
	dialRetryBackoff = 5 * time.Millisecond
)

// dialOptions are the options of Dial's standalone client for addr.
func dialOptions(addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ContextTimeoutEnabled: true,
		DialTimeout:           dialTimeout,
		DialerRetries:         1,
		DialerRetryTimeout:    dialRetryBackoff,
		ReadTimeout:           dialIOTimeout,
		WriteTimeout:          dialIOTimeout,
		PoolTimeout:           dialPoolTimeout,
		MaxRetries:            1,
		MinRetryBackoff:       dialRetryBackoff,
		MaxRetryBackoff:       dialRetryBackoff,
	}
}

// dialClusterOptions are the options of Dial's Cluster client for addrs. Redirects
// (MOVED, ASK) are followed as go-redis does by default; the retry of a failed command
// is one, as for a standalone server.
func dialClusterOptions(addrs []string) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                 addrs,
		ContextTimeoutEnabled: true,
		DialTimeout:           dialTimeout,
		DialerRetries:         1,
		DialerRetryTimeout:    dialRetryBackoff,
		ReadTimeout:           dialIOTimeout,
		WriteTimeout:          dialIOTimeout,
		PoolTimeout:           dialPoolTimeout,
		MaxRedirects:          3,
		MinRetryBackoff:       dialRetryBackoff,
		MaxRetryBackoff:       dialRetryBackoff,
	}
}
