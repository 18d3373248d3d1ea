package core

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidPolicy is wrapped by every error that rejects a policy's configuration.
var ErrInvalidPolicy = errors.New("ratelimit: invalid policy")

// maxExact is the largest integer that both Go's int64 and the float64 numbers of
// Redis Lua represent exactly (2^53). Every quantity an algorithm computes for an
// accepted policy stays at or below it, so every store decides identically.
const maxExact = int64(1) << 53

// maxPeriod bounds a policy's period (one year) so that window arithmetic on
// millisecond timestamps cannot overflow.
const maxPeriod = 366 * 24 * time.Hour

// Rate is a limit per period: Limit events (or units of cost) every Period.
type Rate struct {
	// Limit is how many units of cost the period admits.
	Limit int64
	// Period is the length of the window, or the time a token bucket takes to earn Limit tokens.
	// It must be a whole number of milliseconds.
	Period time.Duration
}

// PerSecond is a rate of n per second.
func PerSecond(n int64) Rate { return Rate{Limit: n, Period: time.Second} }

// PerMinute is a rate of n per minute.
func PerMinute(n int64) Rate { return Rate{Limit: n, Period: time.Minute} }

// PerHour is a rate of n per hour.
func PerHour(n int64) Rate { return Rate{Limit: n, Period: time.Hour} }

// Every is a rate of one event every interval.
func Every(interval time.Duration) Rate { return Rate{Limit: 1, Period: interval} }

// String renders the rate as "10/1s".
func (r Rate) String() string { return fmt.Sprintf("%d/%v", r.Limit, r.Period) }

// Policy says what is limited and how: a name, an algorithm, a rate, a burst and a
// default cost. A Policy is an immutable value that is valid by construction (use
// NewPolicy or MustPolicy); its zero value is invalid and every store refuses it with
// an error. Policies are handed to each decision, so a limit may be computed per
// request (for example from a tenant's plan) and takes effect on the next request.
//
// State is keyed by the policy's ID: its name plus its algorithm, limit, period and
// burst. Two policies never read each other's state, and a policy whose parameters
// change under the same name (a tenant's plan upgrade) starts from fresh state,
// because state kept in one policy's units would be misread by another.
//
// A Policy is one pointer to its immutable parameters, so requests that carry it
// stay small wherever they are passed by value. Two policies built alike are
// therefore not == to each other; compare their IDs.
type Policy struct {
	*spec
}

// spec holds a policy's parameters. It is written only while a constructor builds
// it, and shared read-only by every copy of the Policy afterwards.
type spec struct {
	name      string
	id        string // name#fingerprint: the key of the policy's state
	algorithm Algorithm
	limit     int64
	period    time.Duration
	burst     int64
	cost      int64

	periodMs int64 // period in milliseconds
	capacity int64 // the most cost the policy holds at once: burst for buckets, limit otherwise
	unit     int64 // token units per token: periodMs / gcd(limit, periodMs)
	refill   int64 // token units earned per millisecond: limit / gcd(limit, periodMs)
}

// Option adjusts a policy under construction.
type Option func(*spec)

// WithBurst sets the bucket capacity of token_bucket, gcra and leaky_bucket policies
// (the queue depth, for the leaky bucket). It defaults to the limit. Window
// algorithms and the concurrency limiter reject it.
func WithBurst(burst int64) Option { return func(p *spec) { p.burst = burst } }

// WithDefaultCost sets what one request costs when it does not say (default 1): the
// cost of a Request whose Cost is zero. It is at least 1 and at most what the policy
// can ever admit.
func WithDefaultCost(cost int64) Option { return func(p *spec) { p.cost = cost } }

// NewPolicy builds and validates a rate policy. The error names the policy and wraps
// ErrInvalidPolicy. For a concurrency limit use NewConcurrencyPolicy.
//
//	api, err := core.NewPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
func NewPolicy(name string, algorithm Algorithm, rate Rate, options ...Option) (Policy, error) {
	p := Policy{&spec{name: name, algorithm: algorithm, limit: rate.Limit, period: rate.Period, cost: 1, burst: -1}}
	for _, option := range options {
		option(p.spec)
	}
	if algorithm == Concurrency {
		return Policy{}, p.invalid("use NewConcurrencyPolicy for the concurrency algorithm")
	}
	return p.finish()
}

// NewConcurrencyPolicy builds a policy that admits at most maxInFlight requests at
// once. A lease is held while the request runs; a lease that is never released
// expires after leaseTimeout, so a crashed handler cannot hold a slot forever.
func NewConcurrencyPolicy(name string, maxInFlight int64, leaseTimeout time.Duration, options ...Option) (Policy, error) {
	p := Policy{&spec{name: name, algorithm: Concurrency, limit: maxInFlight, period: leaseTimeout, cost: 1, burst: -1}}
	for _, option := range options {
		option(p.spec)
	}
	return p.finish()
}

// MustPolicy is NewPolicy for static configuration: it panics on an invalid policy.
func MustPolicy(name string, algorithm Algorithm, rate Rate, options ...Option) Policy {
	p, err := NewPolicy(name, algorithm, rate, options...)
	if err != nil {
		panic(err)
	}
	return p
}

// MustConcurrencyPolicy is NewConcurrencyPolicy for static configuration: it panics on an invalid policy.
func MustConcurrencyPolicy(name string, maxInFlight int64, leaseTimeout time.Duration, options ...Option) Policy {
	p, err := NewConcurrencyPolicy(name, maxInFlight, leaseTimeout, options...)
	if err != nil {
		panic(err)
	}
	return p
}

func (p Policy) invalid(format string, args ...any) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidPolicy, p.name, fmt.Sprintf(format, args...))
}

func (p Policy) finish() (Policy, error) {
	if err := checkName(p.name); err != nil {
		return Policy{}, p.invalid("%v", err)
	}
	if !p.algorithm.Valid() {
		return Policy{}, p.invalid("unknown algorithm %q", string(p.algorithm))
	}
	if p.limit < 1 {
		return Policy{}, p.invalid("limit must be at least 1, got %d", p.limit)
	}
	if p.period <= 0 {
		return Policy{}, p.invalid("period must be positive, got %v", p.period)
	}
	if p.period%time.Millisecond != 0 {
		return Policy{}, p.invalid("period must be a whole number of milliseconds, got %v", p.period)
	}
	if p.period > maxPeriod {
		return Policy{}, p.invalid("period must be at most %v, got %v", maxPeriod, p.period)
	}
	p.periodMs = p.period.Milliseconds()
	if p.algorithm.usesBurst() {
		if p.burst == -1 {
			p.burst = p.limit
		}
		if p.burst < 1 {
			return Policy{}, p.invalid("burst must be at least 1, got %d", p.burst)
		}
		p.capacity = p.burst
	} else {
		if p.burst != -1 {
			return Policy{}, p.invalid("burst does not apply to %s", p.algorithm)
		}
		p.burst = p.limit
		p.capacity = p.limit
	}
	if p.cost < 1 {
		return Policy{}, p.invalid("cost must be at least 1, got %d", p.cost)
	}
	if p.cost > p.capacity {
		return Policy{}, p.invalid("cost %d can never be admitted: the policy holds at most %d", p.cost, p.capacity)
	}
	g := gcd(p.limit, p.periodMs)
	p.unit, p.refill = p.periodMs/g, p.limit/g
	if err := p.checkExact(); err != nil {
		return Policy{}, err
	}
	p.id = fmt.Sprintf("%s#%s.%d.%d.%d", p.name, p.algorithm.short(), p.limit, p.periodMs, p.burst)
	return p, nil
}

// checkExact rejects policies whose arithmetic would leave the exactly representable
// range of a float64, which is what Redis Lua computes with.
func (p Policy) checkExact() error {
	var bound float64
	switch p.algorithm {
	case TokenBucket, GCRA, LeakyBucket:
		// level or queue depth in token units, plus one request's cost and a few milliseconds of refill
		bound = 2*float64(p.capacity)*float64(p.unit) + 4*float64(p.refill)
	case SlidingWindow:
		// countBefore multiplies a remainder below min(limit, period) by an offset below period
		bound = float64(min(p.limit, p.periodMs)) * float64(p.periodMs)
	default:
		bound = float64(p.limit) + float64(p.periodMs)
	}
	if bound > float64(maxExact) {
		return p.invalid("%d per %v with burst %d is too fine-grained to decide exactly (needs %.3g > 2^53); "+
			"use a rounder limit, a shorter period or a smaller burst", p.limit, p.period, p.burst, bound)
	}
	return nil
}

func checkName(name string) error {
	if name == "" {
		return errors.New("name must not be empty")
	}
	if len(name) > 64 {
		return fmt.Errorf("name must be at most 64 bytes, got %d", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':'
		if !ok {
			return fmt.Errorf("name may hold only letters, digits and _ - . : (byte %d is %q)", i, c)
		}
	}
	return nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Valid reports whether p was built by a constructor (the zero Policy is not). The
// accessors of the zero Policy return zero values.
func (p Policy) Valid() bool { return p.spec != nil }

// Name is the policy's name; it keys the policy's state and names it in headers and errors.
func (p Policy) Name() string {
	if p.spec == nil {
		return ""
	}
	return p.name
}

// ID keys the policy's state: "name#alg.limit.period_ms.burst", for example
// "api#tb.10.1000.20". Policies with one name but different parameters have different IDs.
func (p Policy) ID() string {
	if p.spec == nil {
		return ""
	}
	return p.id
}

// Algorithm is the policy's algorithm.
func (p Policy) Algorithm() Algorithm {
	if p.spec == nil {
		return ""
	}
	return p.algorithm
}

// Limit is how many units of cost one period admits (the most in flight, for concurrency).
func (p Policy) Limit() int64 {
	if p.spec == nil {
		return 0
	}
	return p.limit
}

// Period is the policy's period (the lease timeout, for concurrency).
func (p Policy) Period() time.Duration {
	if p.spec == nil {
		return 0
	}
	return p.period
}

// Rate is the policy's limit per period.
func (p Policy) Rate() Rate { return Rate{Limit: p.Limit(), Period: p.Period()} }

// Burst is the bucket capacity (the queue depth for the leaky bucket). For window
// algorithms and concurrency it equals the limit.
func (p Policy) Burst() int64 {
	if p.spec == nil {
		return 0
	}
	return p.burst
}

// DefaultCost is what a request costs when it does not say (WithDefaultCost).
func (p Policy) DefaultCost() int64 {
	if p.spec == nil {
		return 0
	}
	return p.cost
}

// Capacity is the most cost the policy admits at once: its quota.
func (p Policy) Capacity() int64 {
	if p.spec == nil {
		return 0
	}
	return p.capacity
}

// Window is the time the policy takes to recover its whole capacity from empty: the
// period for window algorithms, capacity×period/limit for buckets. It is the "w" of
// the RateLimit-Policy header field.
func (p Policy) Window() time.Duration {
	if p.spec == nil {
		return 0
	}
	if !p.algorithm.usesBurst() {
		return p.period
	}
	return time.Duration(ceilDiv(p.capacity*p.unit, p.refill)) * time.Millisecond
}

// PeriodMillis is the period in milliseconds, the unit of the stores' arithmetic.
func (p Policy) PeriodMillis() int64 {
	if p.spec == nil {
		return 0
	}
	return p.periodMs
}

// TokenUnit is how many token units make one token in the exact arithmetic of the
// bucket algorithms (token_bucket, gcra, leaky_bucket): period_ms / gcd(limit, period_ms).
// Stores that run the algorithms elsewhere (Redis Lua) need it.
func (p Policy) TokenUnit() int64 {
	if p.spec == nil {
		return 0
	}
	return p.unit
}

// RefillPerMilli is how many token units the bucket algorithms earn per millisecond:
// limit / gcd(limit, period_ms). Stores that run the algorithms elsewhere (Redis
// Lua) need it, with TokenUnit.
func (p Policy) RefillPerMilli() int64 {
	if p.spec == nil {
		return 0
	}
	return p.refill
}

// String describes the policy for logs: `api: token_bucket 10/1s burst 20`.
func (p Policy) String() string {
	if !p.Valid() {
		return "invalid policy"
	}
	if p.algorithm.usesBurst() {
		return fmt.Sprintf("%s: %s %d/%v burst %d", p.name, p.algorithm, p.limit, p.period, p.burst)
	}
	return fmt.Sprintf("%s: %s %d/%v", p.name, p.algorithm, p.limit, p.period)
}

// CheckCost reports whether a request of the given cost can ever be admitted by p.
// It wraps ErrInvalidCost and names the policy.
func (p Policy) CheckCost(cost int64) error {
	if !p.Valid() {
		return fmt.Errorf("%w: the zero Policy; build policies with NewPolicy", ErrInvalidPolicy)
	}
	if cost < 1 || cost > p.capacity {
		return fmt.Errorf("%w: policy %q admits costs from 1 to %d, got %d", ErrInvalidCost, p.name, p.capacity, cost)
	}
	return nil
}

// ErrInvalidCost is returned for a request whose cost is below 1 or above what its
// policy can ever admit.
var ErrInvalidCost = errors.New("ratelimit: invalid cost")

// ceilDiv is ⌈a/b⌉ for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 {
	if b == 1 { // a refill of one unit per ms: most rates whose period is a multiple of the limit
		return a
	}
	return (a + b - 1) / b
}
