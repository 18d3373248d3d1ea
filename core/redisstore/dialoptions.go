package redisstore

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// The client settings of Dial and DialUniversal: a decision against a dead server
// ends within about 250 ms, against a stuck one within about 400 ms, instead of go-redis's defaults (5 dial attempts
// 100ms apart, 3 command retries with backoff, 3s reads: 1.65s per decision against a
// refused port, more against a stuck one).
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

// bounded returns a copy of o with ContextTimeoutEnabled set and every timeout,
// retry count and backoff that o leaves zero set to Dial's bounds. A Cluster keeps
// its own retries (MaxRedirects, 3 by default): go-redis disables the command
// retries of a Cluster client, as it retries moved and failed commands itself.
func bounded(o *redis.UniversalOptions) *redis.UniversalOptions {
	c := *o
	c.ContextTimeoutEnabled = true
	setIfZero(&c.DialTimeout, dialTimeout)
	setIfZero(&c.DialerRetries, 1)
	setIfZero(&c.DialerRetryTimeout, dialRetryBackoff)
	setIfZero(&c.ReadTimeout, dialIOTimeout)
	setIfZero(&c.WriteTimeout, dialIOTimeout)
	setIfZero(&c.PoolTimeout, dialPoolTimeout)
	setIfZero(&c.MinRetryBackoff, dialRetryBackoff)
	setIfZero(&c.MaxRetryBackoff, dialRetryBackoff)
	if !isCluster(&c) {
		setIfZero(&c.MaxRetries, 1)
	}
	return &c
}

// isCluster reports whether redis.NewUniversalClient makes a Cluster client of o.
func isCluster(o *redis.UniversalOptions) bool {
	return o.MasterName == "" && (len(o.Addrs) > 1 || o.IsClusterMode)
}

// setIfZero sets *field to value when it is zero.
func setIfZero[T comparable](field *T, value T) {
	var zero T
	if *field == zero {
		*field = value
	}
}
