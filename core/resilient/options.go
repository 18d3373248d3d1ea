package resilient

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Defaults of the options.
const (
	// DefaultMode is the failure mode of policies without one of their own.
	DefaultMode = Local
	// DefaultDeadline bounds every call to the shared store.
	DefaultDeadline = 50 * time.Millisecond
	// DefaultFailureThreshold is how many failed calls in a row open the breaker.
	DefaultFailureThreshold = 3
	// DefaultCooldown is how long an open breaker waits before it probes the shared store.
	DefaultCooldown = time.Second
	// DefaultMaxInFlight bounds the shared-store calls running at once.
	DefaultMaxInFlight = 10_000
	// DefaultPreLimitKeys bounds how many refused keys the pre-limiter remembers.
	DefaultPreLimitKeys = 65_536
	// DefaultLogEvery samples the decision logs: one decision in this many is logged.
	DefaultLogEvery = 100
	// DefaultStoreName is the store label of the metrics.
	DefaultStoreName = "shared"
	// maxDeadline bounds WithDeadline.
	maxDeadline = time.Minute
)

type config struct {
	mode        Mode
	modes       map[string]Mode
	deadline    time.Duration
	threshold   int
	cooldown    time.Duration
	maxInFlight int
	replicas    int64
	degrade     func(core.Policy) core.Policy
	local       core.Store
	preKeys     int
	observers   []Observer
	logger      *slog.Logger
	logEvery    uint64
	clock       func() time.Time
	storeName   string
}

// Option configures a Store. Invalid options fail New with an error.
type Option func(*config) error

// WithMode sets the failure mode of every policy that has none of its own (default
// DefaultMode, Local).
func WithMode(mode Mode) Option {
	return func(c *config) error {
		if !mode.Valid() {
			return fmt.Errorf("resilient: WithMode(%q): want open, closed or local", string(mode))
		}
		c.mode = mode
		return nil
	}
}

// WithPolicyMode sets the failure mode of the policy named policy, overriding WithMode.
func WithPolicyMode(policy string, mode Mode) Option {
	return func(c *config) error {
		if !mode.Valid() {
			return fmt.Errorf("resilient: WithPolicyMode(%q, %q): want open, closed or local", policy, string(mode))
		}
		if policy == "" {
			return errors.New("resilient: WithPolicyMode: empty policy name")
		}
		if c.modes == nil {
			c.modes = map[string]Mode{}
		}
		c.modes[policy] = mode
		return nil
	}
}

// WithDeadline bounds every call to the shared store (default DefaultDeadline, 50ms).
// A call that has not answered by then is a failure (KindTimeout) and the failure mode
// decides. Choose it above the store's slowest healthy answers (its p99.9) and well
// below what a request may spend on rate limiting.
func WithDeadline(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 || d > maxDeadline {
			return fmt.Errorf("resilient: WithDeadline(%v): want a duration in (0, %v]", d, maxDeadline)
		}
		c.deadline = d
		return nil
	}
}

// WithBreaker sets the circuit breaker: failures failed calls in a row open it
// (default DefaultFailureThreshold, 3), and an open breaker probes the shared store
// again after cooldown (default DefaultCooldown, 1s), one probe at a time.
func WithBreaker(failures int, cooldown time.Duration) Option {
	return func(c *config) error {
		if failures < 1 {
			return fmt.Errorf("resilient: WithBreaker(%d, %v): want at least 1 failure", failures, cooldown)
		}
		if cooldown <= 0 || cooldown > time.Hour {
			return fmt.Errorf("resilient: WithBreaker(%d, %v): want a cooldown in (0, 1h]", failures, cooldown)
		}
		c.threshold, c.cooldown = failures, cooldown
		return nil
	}
}

// WithMaxInFlight bounds the calls to the shared store running at once (default
// DefaultMaxInFlight). A call beyond it is not sent and counts as a failure
// (KindOverload). It matters for a client that ignores ctx deadlines, whose abandoned
// calls may outlive the deadline.
func WithMaxInFlight(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("resilient: WithMaxInFlight(%d): want at least 1", n)
		}
		c.maxInFlight = n
		return nil
	}
}

// WithReplicas makes Local mode stricter for a service of n replicas: each replica
// enforces 1/n of every policy's rate and capacity (rounded down, and never below the
// policy's default cost or one request), so that the replicas together admit about
// the policy's limit while each counts alone. Default 1: each replica enforces the
// whole policy.
func WithReplicas(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return fmt.Errorf("resilient: WithReplicas(%d): want at least 1", n)
		}
		c.replicas = int64(n)
		return nil
	}
}

// WithDegrade sets the policy Local mode enforces in place of each policy, after
// WithReplicas. It must return a valid policy with the same name and algorithm; a
// decision for which it does not fails with an error wrapping core.ErrInvalidPolicy.
// Results are computed once per policy ID.
func WithDegrade(degrade func(core.Policy) core.Policy) Option {
	return func(c *config) error {
		if degrade == nil {
			return errors.New("resilient: WithDegrade: nil function")
		}
		c.degrade = degrade
		return nil
	}
}

// WithLocalStore sets the in-process store of Local mode (default: a core/memory
// store on the Store's clock). The Store owns it and closes it.
func WithLocalStore(local core.Store) Option {
	return func(c *config) error {
		if local == nil {
			return errors.New("resilient: WithLocalStore: nil store")
		}
		c.local = local
		return nil
	}
}

// WithPreLimit sets how many refused keys the local pre-limiter remembers (default
// DefaultPreLimitKeys); 0 turns it off.
func WithPreLimit(maxKeys int) Option {
	return func(c *config) error {
		if maxKeys < 0 {
			return fmt.Errorf("resilient: WithPreLimit(%d): want 0 (off) or more", maxKeys)
		}
		c.preKeys = maxKeys
		return nil
	}
}

// WithObserver adds an observer of decisions, store calls, fallbacks and local
// refusals (core/prommetrics provides the Prometheus one). Several may be added.
func WithObserver(o Observer) Option {
	return func(c *config) error {
		if o == nil {
			return errors.New("resilient: WithObserver: nil observer")
		}
		c.observers = append(c.observers, o)
		return nil
	}
}

// WithLogger sets the logger (default slog.Default()). The Store logs fallback
// transitions and breaker changes at warn, permanent errors at error, and a sample of
// decisions at debug (WithDecisionLogEvery), never at info. Logs name the policy and the key's type,
// never the key.
func WithLogger(logger *slog.Logger) Option {
	return func(c *config) error {
		if logger == nil {
			return errors.New("resilient: WithLogger: nil logger")
		}
		c.logger = logger
		return nil
	}
}

// WithDecisionLogEvery logs one decision in every n at debug level (default
// DefaultLogEvery, 100): policy, key type, cost, result and mode. 1 logs every
// decision; 0 turns decision logs off.
func WithDecisionLogEvery(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("resilient: WithDecisionLogEvery(%d): want 0 (off) or more", n)
		}
		c.logEvery = uint64(n)
		return nil
	}
}

// WithClock sets the clock of the breaker's cooldown, the pre-limiter's expiry and
// the default local store (default time.Now, whose monotonic reading is used). Tests
// inject a virtual clock. The deadline of shared-store calls is always real time.
func WithClock(clock func() time.Time) Option {
	return func(c *config) error {
		if clock == nil {
			return errors.New("resilient: WithClock: nil clock")
		}
		c.clock = clock
		return nil
	}
}

// WithStoreName names the shared store in metrics and logs (default
// DefaultStoreName, "shared"; for example "redis").
func WithStoreName(name string) Option {
	return func(c *config) error {
		if name == "" || len(name) > 64 {
			return fmt.Errorf("resilient: WithStoreName(%q): want 1 to 64 bytes", name)
		}
		c.storeName = name
		return nil
	}
}

func newConfig(options []Option) (config, error) {
	c := config{
		mode:        DefaultMode,
		deadline:    DefaultDeadline,
		threshold:   DefaultFailureThreshold,
		cooldown:    DefaultCooldown,
		maxInFlight: DefaultMaxInFlight,
		replicas:    1,
		preKeys:     DefaultPreLimitKeys,
		logEvery:    DefaultLogEvery,
		storeName:   DefaultStoreName,
	}
	for _, option := range options {
		if option == nil {
			return config{}, errors.New("resilient: nil option")
		}
		if err := option(&c); err != nil {
			return config{}, err
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c, nil
}

// modeOf is the failure mode of the policy named name.
func (c *config) modeOf(name string) Mode {
	if m, ok := c.modes[name]; ok {
		return m
	}
	return c.mode
}
