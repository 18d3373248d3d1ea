package redisstore

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of the options.
const (
	// DefaultPrefix starts every key the store writes.
	DefaultPrefix = "rl:"
	// DefaultServerTimeMargin is added to every TTL when time comes from Redis TIME: the
	// expiry clock of Redis and TIME may straddle a millisecond boundary.
	DefaultServerTimeMargin = time.Millisecond
	// DefaultCallerClockMargin is added to every TTL when time comes from the caller's
	// clock: callers' clocks may be skewed against each other and against Redis, and a
	// key must outlive its state in every caller's time.
	DefaultCallerClockMargin = time.Minute
	// maxMargin bounds WithExpiryMargin.
	maxMargin = 24 * time.Hour
	// maxPrefix bounds WithPrefix.
	maxPrefix = 64
)

type config struct {
	prefix      string
	clock       func() time.Time
	hashTag     HashTagFunc
	margin      time.Duration
	marginSet   bool
	slack       time.Duration  // added to margin: how early an embedded store may expire a key
	closers     []func() error // WithCloser: released by Close after the store's own
	splitStacks bool           // tests: decide every request of a stack in its own call
	batchWindow time.Duration
	batchMax    int // 0: no batching
}

// Option configures a Store. Invalid options fail New with an error.
type Option func(*config) error

// WithPrefix sets the prefix of every key (default DefaultPrefix, "rl:"). It may hold
// at most 64 bytes and no braces, which would change the keys' hash tags.
func WithPrefix(prefix string) Option {
	return func(c *config) error {
		if len(prefix) > maxPrefix || strings.ContainsAny(prefix, "{}") {
			return fmt.Errorf("redisstore: WithPrefix(%q): want at most %d bytes and no braces", prefix, maxPrefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithClock makes decisions at the caller's clock instead of the Redis server's TIME.
// The simulator uses it to replay traces; tests use it with a virtual clock. Every
// caller sharing a Redis should then have a synchronised clock: a clock that runs
// behind cannot mint tokens (timestamps never move backwards), but one that runs ahead
// spends state early. The default, Redis TIME, makes the callers' clocks irrelevant.
func WithClock(clock func() time.Time) Option {
	return func(c *config) error {
		if clock == nil {
			return fmt.Errorf("redisstore: WithClock: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithHashTag chooses the hash tags of the state keys, so that the keys of a stack can
// share a Redis Cluster slot and be decided in one script call (see HashTagFunc,
// TagByKey, TagPolicies). By default every (policy, key) has its own tag.
func WithHashTag(tag HashTagFunc) Option {
	return func(c *config) error {
		if tag == nil {
			return fmt.Errorf("redisstore: WithHashTag: nil function")
		}
		c.hashTag = tag
		return nil
	}
}

// WithExpiryMargin sets how long a key outlives the full recovery of its state
// (default DefaultServerTimeMargin with Redis TIME, DefaultCallerClockMargin with
// WithClock). Every key has a TTL: the time its state needs to recover fully, plus
// this margin. It must be between 1ms and 24h.
func WithExpiryMargin(margin time.Duration) Option {
	return func(c *config) error {
		if margin < time.Millisecond || margin > maxMargin || margin%time.Millisecond != 0 {
			return fmt.Errorf("redisstore: WithExpiryMargin(%v): want whole milliseconds from 1ms to %v", margin, maxMargin)
		}
		c.margin, c.marginSet = margin, true
		return nil
	}
}

// Bounds and suggested values of WithBatching.
const (
	// DefaultBatchWindow is a suggested window for WithBatching. It is short against the
	// server's time on a batch in flight, so the next batch is on its way before the
	// server runs dry; longer windows gave less throughput and no better latency
	// (docs/benchmarks.md, "Batched").
	DefaultBatchWindow = 20 * time.Microsecond
	// DefaultMaxBatch is a suggested maxBatch for WithBatching.
	DefaultMaxBatch = 64
	// MaxBatchWindow bounds the window of WithBatching.
	MaxBatchWindow = 10 * time.Millisecond
	// MaxBatchSize bounds the maxBatch of WithBatching.
	MaxBatchSize = 1024
)

// WithBatching coalesces concurrent Decide calls bound for one Redis node (one per
// Cluster master) into one round trip: a pipeline of one command per group of keys
// that one script call may touch (all keys on a standalone server, one slot on a
// Cluster, one hash tag on a Ring), each group decided by one script call that runs
// every decision as the unbatched store does, in order, atomically.
//
// A decision waits for no one when no batch to its node is in flight or waiting: it
// is then sent alone, from the caller's goroutine, and counts as the batch in flight.
// While one is in flight, the decisions that arrive gather until maxBatch wait or the
// oldest has waited window (0: none, the batch is what gathered meanwhile), then
// leave. window must lie in 0..MaxBatchWindow and maxBatch in 2..MaxBatchSize
// (DefaultBatchWindow and DefaultMaxBatch suit most). Stacks, refunds and releases
// are not batched.
func WithBatching(window time.Duration, maxBatch int) Option {
	return func(c *config) error {
		if window < 0 || window > MaxBatchWindow || maxBatch < 2 || maxBatch > MaxBatchSize {
			return fmt.Errorf("redisstore: WithBatching(%v, %d): want a window from 0 to %v and a batch of 2 to %d decisions",
				window, maxBatch, MaxBatchWindow, MaxBatchSize)
		}
		c.batchWindow, c.batchMax = window, maxBatch
		return nil
	}
}

// withSplitStacks makes every request of a stack its own group, as on a Cluster whose
// keys all lie in different slots, so that tests can exercise the charge-and-refund
// path on any server.
func withSplitStacks() Option {
	return func(c *config) error {
		c.splitStacks = true
		return nil
	}
}

func newConfig(options []Option) (config, error) {
	c := config{prefix: DefaultPrefix}
	for _, option := range options {
		if option == nil {
			return config{}, fmt.Errorf("redisstore: nil option")
		}
		if err := option(&c); err != nil {
			return config{}, err
		}
	}
	if !c.marginSet {
		c.margin = DefaultServerTimeMargin
		if c.clock != nil {
			c.margin = DefaultCallerClockMargin
		}
	}
	c.margin += c.slack
	return c, nil
}
