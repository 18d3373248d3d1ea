package prommetrics

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// The metric names. They are a stable contract: dashboards and alerts use them.
const (
	// DecisionsName counts decisions per policy and result.
	DecisionsName = "ratelimit_decisions_total"
	// StoreErrorsName counts failed shared-store calls per store and kind.
	StoreErrorsName = "ratelimit_store_errors_total"
	// StoreLatencyName is the histogram of shared-store call latencies.
	StoreLatencyName = "ratelimit_store_latency_seconds"
	// FallbackName is the 0/1 gauge of a policy in its failure mode.
	FallbackName = "ratelimit_fallback_active"
	// TransitionsName counts transitions into and out of the failure modes.
	TransitionsName = "ratelimit_fallback_transitions_total"
	// LocalRefusalsName counts requests the pre-limiter refused (hot keys).
	LocalRefusalsName = "ratelimit_local_refusals_total"
	// KeyFallbacksName counts requests whose key function found no identity, per
	// policy and per fallback taken (ip, refuse or skip: httplimit.FallbackKind).
	KeyFallbacksName = "ratelimit_key_fallbacks_total"
	// ErrorsName counts requests that could not be decided, per reason.
	ErrorsName = "ratelimit_errors_total"
)

// DefaultBuckets are the store latency histogram's buckets, in seconds: a healthy
// Redis answers in the first few, a call that hits the deadline lands at the deadline.
func DefaultBuckets() []float64 {
	return []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
}

// Metrics counts in Prometheus what the HTTP layer decides (HTTPObserver, for any
// store) and what a resilient store does (Metrics is a resilient.Monitor). One
// Metrics may observe several Limiters and Stores (the store label tells their
// errors apart). It is safe for concurrent use.
type Metrics struct {
	httpDecisions atomic.Bool // an HTTPObserver counts the decisions
	keyFallbacks  *prometheus.CounterVec
	errors        *prometheus.CounterVec

	decisions     *prometheus.CounterVec
	storeErrors   *prometheus.CounterVec
	latency       prometheus.Histogram
	fallback      *prometheus.GaugeVec
	transitions   *prometheus.CounterVec
	localRefusals *prometheus.CounterVec
}

var _ resilient.Monitor = (*Metrics)(nil)

type config struct {
	buckets     []float64
	policies    []string
	noDecisions bool
}

// Option configures Metrics.
type Option func(*config) error

// WithBuckets sets the store latency histogram's buckets (default DefaultBuckets).
func WithBuckets(buckets []float64) Option {
	return func(c *config) error {
		if len(buckets) == 0 {
			return errors.New("prommetrics: WithBuckets: no buckets")
		}
		c.buckets = append([]float64(nil), buckets...)
		return nil
	}
}

// WithPolicies creates the ratelimit_fallback_active series of the named policies at
// 0, so that dashboards see them before the first failure.
func WithPolicies(names ...string) Option {
	return func(c *config) error {
		c.policies = append(c.policies, names...)
		return nil
	}
}

// WithoutDecisions leaves ratelimit_decisions_total out, for a program that counts
// decisions elsewhere (for example in its HTTP observer, which sees shadow mode) and
// registers that name itself.
func WithoutDecisions() Option {
	return func(c *config) error {
		c.noDecisions = true
		return nil
	}
}

// New makes the metrics and registers them on registry.
func New(registry prometheus.Registerer, options ...Option) (*Metrics, error) {
	if registry == nil {
		return nil, errors.New("prommetrics: New: nil registerer")
	}
	cfg := config{buckets: DefaultBuckets()}
	for _, option := range options {
		if option == nil {
			return nil, errors.New("prommetrics: nil option")
		}
		if err := option(&cfg); err != nil {
			return nil, err
		}
	}
	m := &Metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: DecisionsName,
			Help: "Rate-limit decisions per policy and result (allowed, denied, shadow_denied, uncharged, unenforced, unavailable, error).",
		}, []string{"policy", "result"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: StoreErrorsName,
			Help: "Failed calls to the shared store per store and kind (timeout, unavailable, overload, permanent). Calls the client cancelled are not counted.",
		}, []string{"store", "kind"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    StoreLatencyName,
			Help:    "How long decisions waited for the shared store, in seconds (at most the deadline).",
			Buckets: cfg.buckets,
		}),
		fallback: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: FallbackName,
			Help: "1 while the policy is decided by its failure mode because the shared store fails, else 0.",
		}, []string{"policy"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: TransitionsName,
			Help: "Transitions of policies into their failure mode (to open, closed or local) and back (to shared).",
		}, []string{"policy", "to"}),
		keyFallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: KeyFallbacksName,
			Help: "Requests for which a key function found no identity, per policy and fallback taken (ip, refuse, skip).",
		}, []string{"policy", "kind"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ErrorsName,
			Help: "Requests that could not be decided, per reason (key, policy, cost, store, canceled, other).",
		}, []string{"reason"}),
		localRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: LocalRefusalsName,
			Help: "Requests refused in process by the pre-limiter, without a store round trip: hot keys already over their limit.",
		}, []string{"policy"}),
	}
	collectors := []prometheus.Collector{m.storeErrors, m.latency, m.fallback, m.transitions, m.localRefusals, m.keyFallbacks, m.errors}
	if !cfg.noDecisions {
		collectors = append(collectors, m.decisions)
	}
	for _, c := range collectors {
		if err := registry.Register(c); err != nil {
			return nil, fmt.Errorf("prommetrics: register: %w", err)
		}
	}
	if cfg.noDecisions {
		m.decisions = nil
	}
	for _, policy := range cfg.policies {
		m.fallback.WithLabelValues(policy).Set(0)
	}
	return m, nil
}

// OnDecision counts a resilient store's decision in ratelimit_decisions_total,
// unless an HTTPObserver counts it.
func (m *Metrics) OnDecision(e *resilient.DecisionEvent) {
	if m.decisions != nil && !m.countedByHTTP(e.Outcome) {
		m.decisions.WithLabelValues(e.Policy, string(e.Outcome)).Inc()
	}
}

// OnStoreCall observes the call's latency and counts its error, if any.
func (m *Metrics) OnStoreCall(e *resilient.StoreCallEvent) {
	m.latency.Observe(e.Latency.Seconds())
	if e.Kind != "" {
		m.storeErrors.WithLabelValues(e.Store, string(e.Kind)).Inc()
	}
}

// OnFallback sets ratelimit_fallback_active and counts the transition.
func (m *Metrics) OnFallback(e *resilient.FallbackEvent) {
	active := 0.0
	if e.Active {
		active = 1
	}
	m.fallback.WithLabelValues(e.Policy).Set(active)
	m.transitions.WithLabelValues(e.Policy, e.To()).Inc()
}

// OnLocalRefusal counts a request the pre-limiter refused.
func (m *Metrics) OnLocalRefusal(e *resilient.LocalRefusalEvent) {
	m.localRefusals.WithLabelValues(e.Policy).Inc()
}
