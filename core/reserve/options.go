package reserve

import (
	"fmt"
	"time"
)

// DefaultSweepInterval is how often the background sweeper returns expired leases.
const DefaultSweepInterval = 100 * time.Millisecond

// DefaultReturnTimeout bounds each call that returns a balance to the backing store
// from the sweeper and from Close.
const DefaultReturnTimeout = time.Second

// DefaultMaxKeys bounds how many (policy, key) balances one Store keeps.
const DefaultMaxKeys = 100_000

// Option configures a Store. Invalid options fail New with an error.
type Option func(*config) error

type config struct {
	clock         func() time.Time
	sweepInterval time.Duration
	returnTimeout time.Duration
	maxKeys       int
}

func defaultConfig() config {
	return config{
		clock:         time.Now,
		sweepInterval: DefaultSweepInterval,
		returnTimeout: DefaultReturnTimeout,
		maxKeys:       DefaultMaxKeys,
	}
}

// WithClock sets the clock that times leases' lifetimes and remembered refusals
// (default time.Now). Decisions themselves are made by the backing store, on its
// own clock.
func WithClock(clock func() time.Time) Option {
	return func(c *config) error {
		if clock == nil {
			return fmt.Errorf("reserve: WithClock: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithSweepInterval sets how often a background goroutine returns the balances of
// expired leases (default DefaultSweepInterval). Zero disables it: an expired lease
// is then returned by the next request for its key, by ReturnExpired, or by Close.
func WithSweepInterval(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("reserve: WithSweepInterval: negative interval %v", d)
		}
		c.sweepInterval = d
		return nil
	}
}

// WithReturnTimeout bounds each call that returns a balance from the sweeper or
// Close (default DefaultReturnTimeout). A balance whose return fails is lost to the
// key until its policy recovers: fewer admissions, never more.
func WithReturnTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("reserve: WithReturnTimeout: %v is not positive", d)
		}
		c.returnTimeout = d
		return nil
	}
}

// WithMaxKeys bounds how many (policy, key) balances the Store keeps (default
// DefaultMaxKeys). When it is full, requests for new keys pass through to the
// backing store unleased (exactly, one round trip each) until idle keys are swept.
func WithMaxKeys(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("reserve: WithMaxKeys: %d is below 1", n)
		}
		c.maxKeys = n
		return nil
	}
}
