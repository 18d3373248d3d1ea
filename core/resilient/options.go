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
	// DefaultDeadline bounds every call to the shared store while its recent answers
	// are fast: the floor of the adaptive deadline (WithAdaptiveDeadline).
	DefaultDeadline = 50 * time.Millisecond
	// DefaultDeadlineMultiple is the multiple of the recent p99 latency the deadline
	// grows to, up to its ceiling.
	DefaultDeadlineMultiple = 4
	// DefaultDeadlineCeiling is the ceiling of the adaptive deadline, unless four
	// times WithDeadline's floor is more: the ceiling is then four times the floor.
	DefaultDeadlineCeiling = 200 * time.Millisecond
	// DefaultFailureThreshold is how many failed calls the breaker's window must hold
	// before it can open.
	DefaultFailureThreshold = 3
	// DefaultFailureRate is the share of failed calls over the window at or above
	// which the breaker opens.
	DefaultFailureRate = 0.5
	// DefaultMinCalls is how many calls the breaker's window must hold before it can
	// open: a few slow calls among few calls are not an outage.
	DefaultMinCalls = 10
	// DefaultFailureWindow is the breaker's window.
	DefaultFailureWindow = time.Second
	// DefaultCooldown is how long an open breaker waits before it probes the shared
	// store in the background, and the interval between probes.
	DefaultCooldown = 250 * time.Millisecond
	// DefaultRecoveryProbes is how many background probes in a row must succeed before
	// decisions return to the shared store: the hysteresis that prevents flapping.
	DefaultRecoveryProbes = 2
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
	// storeWideRate is the failure rate that opens the store-wide breaker when failures
	// are also tracked per Cluster slot: only an outage of (nearly) every node stops
	// every decision; a stuck node opens its slots' breakers.
	storeWideRate = 0.9
)

type config struct {
	mode        Mode
	modes       map[string]Mode
	deadline    time.Duration
	ceiling     time.Duration // 0: derived from deadline
	multiple    int
	threshold   int
	rate        float64
	minCalls    int
	window      time.Duration
	probes      int
	cooldown    time.Duration
	maxInFlight int
	replicas    int64
	degrade     func(core.Policy) core.Policy
	local       core.Store
	preKeys     int
	observers   []Monitor
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

// WithDeadline sets the floor of the deadline of every call to the shared store
// (default DefaultDeadline, 50ms): the deadline while recent answers are fast. A call
// that has not answered by then is a failure (KindTimeout): it counts toward the
// breaker, and the request is decided from the key's last shared answer (see Store).
// Choose it above the store's healthy p99.9 and well below what a request may spend
// on rate limiting. The deadline adapts to observed latency (WithAdaptiveDeadline).
func WithDeadline(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 || d > maxDeadline {
			return fmt.Errorf("resilient: WithDeadline(%v): want a duration in (0, %v]", d, maxDeadline)
		}
		c.deadline = d
		return nil
	}
}

// WithBreaker sets the circuit breaker: its window must hold at least failures
// failed calls before it opens (default DefaultFailureThreshold, 3; see also
// WithFailureRate), and a window too quiet for WithFailureRate's minimum calls opens
// it on that many failed calls in a row, however far apart, so that a quiet service
// does not decide a whole outage as slow calls. An open breaker probes the shared
// store in the background every cooldown (default DefaultCooldown, 250ms), with or
// without traffic. A probe confirms every opening.
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

// WithFailureRate sets when the breaker opens: when, over the last window (default
// DefaultFailureWindow, 1s), at least minCalls calls were made (default
// DefaultMinCalls, 10) and at least rate of them failed (default DefaultFailureRate,
// 0.5), as well as the minimum failures of WithBreaker. A slow call among healthy ones
// is load, not an outage. On a store that names its keys (the Redis store),
// the same rule opens a breaker per Cluster slot, and the store-wide breaker opens
// only when nearly every call fails (90%).
func WithFailureRate(rate float64, minCalls int, window time.Duration) Option {
	return func(c *config) error {
		if !(rate > 0 && rate <= 1) {
			return fmt.Errorf("resilient: WithFailureRate(%v, %d, %v): want a rate in (0, 1]", rate, minCalls, window)
		}
		if minCalls < 1 {
			return fmt.Errorf("resilient: WithFailureRate(%v, %d, %v): want at least 1 call", rate, minCalls, window)
		}
		if window < 10*time.Millisecond || window > time.Hour {
			return fmt.Errorf("resilient: WithFailureRate(%v, %d, %v): want a window in [10ms, 1h]", rate, minCalls, window)
		}
		c.rate, c.minCalls, c.window = rate, minCalls, window
		return nil
	}
}

// WithRecoveryProbes sets how many background probes in a row must succeed before an
// open breaker closes (default DefaultRecoveryProbes, 2): the hysteresis that keeps a
// flapping store from flipping decisions between local and shared.
func WithRecoveryProbes(n int) Option {
	return func(c *config) error {
		if n < 1 || n > 100 {
			return fmt.Errorf("resilient: WithRecoveryProbes(%d): want 1 to 100", n)
		}
		c.probes = n
		return nil
	}
}

// WithAdaptiveDeadline lets the deadline grow to multiple times the recent p99
// latency of successful calls (default DefaultDeadlineMultiple, 4), never below
// WithDeadline's floor nor above ceiling (default DefaultDeadlineCeiling, 200ms, or
// four times the floor when that is more). A saturated client sees its healthy
// store's answers take longer; its deadline follows, instead of declaring the store
// dead. A ceiling equal to the floor turns adaptation off.
func WithAdaptiveDeadline(multiple int, ceiling time.Duration) Option {
	return func(c *config) error {
		if multiple < 1 || multiple > 100 {
			return fmt.Errorf("resilient: WithAdaptiveDeadline(%d, %v): want a multiple of 1 to 100", multiple, ceiling)
		}
		if ceiling <= 0 || ceiling > maxDeadline {
			return fmt.Errorf("resilient: WithAdaptiveDeadline(%d, %v): want a ceiling in (0, %v]", multiple, ceiling, maxDeadline)
		}
		c.multiple, c.ceiling = multiple, ceiling
		return nil
	}
}

// WithMaxInFlight bounds the calls to the shared store running at once (default
// DefaultMaxInFlight). A call beyond it is not sent and counts as a failure
// (KindOverload). It matters for a client that ignores ctx deadlines, whose abandoned
// calls may outlive the deadline. The breakers' probes have a small bound of their
// own, so that traffic holding this one full cannot keep a probe from the store.
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
// the policy's limit while each counts alone. A key's last shared answer is divided
// the same way: a slow call, while the breaker is still closed, spends only this
// replica's share of it, and Local mode continues from what is left of that share.
// Back on the shared store, a replica charges it as if every replica had spent what
// this one spent: exact when a load balancer spreads each client alike
// (docs/failure.md bounds the rest). Default 1: each replica enforces the whole
// policy; set it whenever the replica count is known.
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
// DefaultPreLimitKeys); 0 turns it off. The store remembers the last shared answers
// of as many keys, and at least DefaultPreLimitKeys: a key whose answer found no room
// is one never answered, should the store fail.
func WithPreLimit(maxKeys int) Option {
	return func(c *config) error {
		if maxKeys < 0 {
			return fmt.Errorf("resilient: WithPreLimit(%d): want 0 (off) or more", maxKeys)
		}
		c.preKeys = maxKeys
		return nil
	}
}

// WithMonitor adds a Monitor of decisions, store calls, fallbacks and local
// refusals (core/prommetrics provides the Prometheus one). Several may be added.
func WithMonitor(o Monitor) Option {
	return func(c *config) error {
		if o == nil {
			return errors.New("resilient: WithMonitor: nil monitor")
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
		multiple:    DefaultDeadlineMultiple,
		threshold:   DefaultFailureThreshold,
		rate:        DefaultFailureRate,
		minCalls:    DefaultMinCalls,
		window:      DefaultFailureWindow,
		probes:      DefaultRecoveryProbes,
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
	if c.ceiling == 0 {
		c.ceiling = max(DefaultDeadlineCeiling, 4*c.deadline)
	}
	if c.ceiling < c.deadline {
		return config{}, fmt.Errorf("resilient: WithAdaptiveDeadline: ceiling %v is below the deadline %v", c.ceiling, c.deadline)
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
