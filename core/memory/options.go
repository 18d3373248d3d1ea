package memory

import (
	"fmt"
	"time"
)

// Defaults of the options.
const (
	DefaultMaxKeys       = 1_000_000
	DefaultSweepInterval = 10 * time.Second
	DefaultShards        = 256
)

type config struct {
	clock         func() time.Time
	maxKeys       int
	shards        int
	sweepInterval time.Duration
}

// Option configures a Store.
type Option func(*config) error

// WithClock sets the clock decisions are taken at. Tests and the simulator inject a
// virtual clock. The default is the wall clock at construction advanced by the
// monotonic clock: cheap to read, and never stepped backwards.
func WithClock(clock func() time.Time) Option {
	return func(c *config) error {
		if clock == nil {
			return fmt.Errorf("memory: WithClock: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithMaxKeys caps how many keys the store holds (default DefaultMaxKeys). The cap is
// split evenly over the shards, rounded down. A shard at its cap evicts a recovered
// key for each new one; when it finds none, it never evicts a key that still
// restricts its client, and decides the new key against its policy's shared
// overflow entry instead (see the package documentation).
func WithMaxKeys(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("memory: WithMaxKeys: need at least 1, got %d", n)
		}
		c.maxKeys = n
		return nil
	}
}

// WithShards sets the number of shards, rounded up to a power of two (default DefaultShards).
func WithShards(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 1<<16 {
			return fmt.Errorf("memory: WithShards: need 1..65536, got %d", n)
		}
		c.shards = n
		return nil
	}
}

// WithSweepInterval sets how often the janitor evicts recovered keys (default
// DefaultSweepInterval). Zero disables the janitor; call Sweep yourself.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("memory: WithSweepInterval: negative interval %v", d)
		}
		c.sweepInterval = d
		return nil
	}
}
