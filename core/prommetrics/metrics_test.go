package prommetrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// switchable decides on a memory store, or fails as unreachable while down is set.
type switchable struct {
	*memory.Store
	down atomic.Bool
}

var errDown = fmt.Errorf("fake: %w", core.ErrStoreUnavailable)

func (s *switchable) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if s.down.Load() {
		return core.Result{}, errDown
	}
	return s.Store.Decide(ctx, req)
}

// scrape serves the registry through promhttp and parses the text exposition.
func scrape(t *testing.T, registry *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return families
}

// value is the value of the series of family with exactly labels (name=value pairs).
func value(t *testing.T, families map[string]*dto.MetricFamily, family string, labels ...string) float64 {
	t.Helper()
	f, ok := families[family]
	if !ok {
		t.Fatalf("the scrape lacks %s", family)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("%s has no series %v", family, labels)
	return 0
}

// A known sequence of decisions, failures and a recovery, read back from a scrape.
func TestScrapeAfterKnownSequence(t *testing.T) {
	clock := storetest.NewClock()
	mem, err := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	shared := &switchable{Store: mem}
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry, prommetrics.WithPolicies("api", "login"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithObserver(metrics),
		resilient.WithStoreName("redis"), resilient.WithPolicyMode("login", resilient.Closed),
		resilient.WithDeadline(5*time.Second), resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))
	login := core.MustPolicy("login", core.SlidingLog, core.PerMinute(5))
	decide := func(p core.Policy, key string) error {
		_, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
		return err
	}

	before := scrape(t, registry)
	if v := value(t, before, "ratelimit_fallback_active", "policy", "api"); v != 0 {
		t.Fatalf("fallback_active before anything: %v", v)
	}
	for i := 0; i < 4; i++ { // shared: allowed, allowed, denied; then the pre-limiter refuses
		decide(api, "ip:192.0.2.1")
	}
	shared.down.Store(true)
	for i := 0; i < 3; i++ { // three failures open the breaker; local mode admits 2, refuses 1
		decide(api, "ip:192.0.2.2")
	}
	if err := decide(login, "form:username:alice"); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("closed policy during the outage: %v", err)
	}
	during := scrape(t, registry)
	if v := value(t, during, "ratelimit_fallback_active", "policy", "api"); v != 1 {
		t.Fatalf("fallback_active{api} during the outage: %v", v)
	}
	shared.down.Store(false)
	clock.Advance(resilient.DefaultCooldown)
	decide(api, "ip:192.0.2.3") // the probe: shared again

	after := scrape(t, registry)
	for _, tt := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"ratelimit_decisions_total", []string{"policy", "api", "result", "allowed"}, 5},
		{"ratelimit_decisions_total", []string{"policy", "api", "result", "denied"}, 3},
		{"ratelimit_decisions_total", []string{"policy", "login", "result", "unavailable"}, 1},
		{"ratelimit_store_errors_total", []string{"store", "redis", "kind", "unavailable"}, 3},
		{"ratelimit_store_latency_seconds", nil, 7},
		{"ratelimit_fallback_active", []string{"policy", "api"}, 0},
		{"ratelimit_fallback_active", []string{"policy", "login"}, 0},
		{"ratelimit_fallback_transitions_total", []string{"policy", "api", "to", "local"}, 1},
		{"ratelimit_fallback_transitions_total", []string{"policy", "api", "to", "shared"}, 1},
		{"ratelimit_fallback_transitions_total", []string{"policy", "login", "to", "closed"}, 1},
		{"ratelimit_fallback_transitions_total", []string{"policy", "login", "to", "shared"}, 1},
		{"ratelimit_local_refusals_total", []string{"policy", "api"}, 1},
	} {
		if got := value(t, after, tt.family, tt.labels...); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.family, tt.labels, got, tt.want)
		}
	}
	if typ := after["ratelimit_store_latency_seconds"].GetType(); typ != dto.MetricType_HISTOGRAM {
		t.Errorf("ratelimit_store_latency_seconds is a %v", typ)
	}
}

func TestNewRegistersOnItsRegistry(t *testing.T) {
	registry := prometheus.NewRegistry()
	if _, err := prommetrics.New(registry); err != nil {
		t.Fatal(err)
	}
	if _, err := prommetrics.New(registry); err == nil {
		t.Fatal("registering the same names twice succeeded")
	}
	if _, err := prommetrics.New(nil); err == nil {
		t.Fatal("a nil registerer was accepted")
	}
	if _, err := prommetrics.New(prometheus.NewRegistry(), prommetrics.WithBuckets(nil)); err == nil {
		t.Fatal("empty buckets were accepted")
	}

	// WithoutDecisions leaves the name to the program.
	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: prommetrics.DecisionsName, Help: "h"}, []string{"policy", "result"}))
	m, err := prommetrics.New(own, prommetrics.WithoutDecisions())
	if err != nil {
		t.Fatal(err)
	}
	m.OnDecision(&resilient.DecisionEvent{Policy: "api", Outcome: resilient.OutcomeAllowed})
}
