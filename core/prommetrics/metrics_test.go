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
	if _, ok := families[family]; !ok {
		t.Fatalf("the scrape lacks %s", family)
	}
	v, ok := lookup(families, family, labels...)
	if !ok {
		t.Fatalf("%s has no series %v", family, labels)
	}
	return v
}

// lookup is the value of the series of family with exactly labels (name=value pairs),
// and whether the scrape has it.
func lookup(families map[string]*dto.MetricFamily, family string, labels ...string) (float64, bool) {
	f, ok := families[family]
	if !ok {
		return 0, false
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
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// waitFor polls cond until it holds, and fails the test naming what it waited for
// when it does not within a generous bound: the breaker's confirming and recovery
// probes run on the Store's own goroutines.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A known sequence of decisions, failures and a recovery, read back from a scrape.
// The Store's clock is injected and only the test advances it, so the background
// probes happen exactly when the test lets them: one confirming probe before the
// breaker opens, none while it is open and the clock stands still, and one per
// cooldown the test advances during recovery. Every count is therefore exact.
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
	// The breaker opens when, over a minute (the clock stands still, so every call is
	// in it), at least 3 calls were made, at least 3 failed (WithBreaker's default) and
	// at least half failed, and one probe confirms the outage.
	store, err := resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithMonitor(metrics),
		resilient.WithStoreName("redis"), resilient.WithPolicyMode("login", resilient.Closed),
		resilient.WithFailureRate(0.5, 3, time.Minute),
		resilient.WithDeadline(5*time.Second), resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(2))
	login := core.MustPolicy("login", core.SlidingLog, core.PerMinute(5))
	decide := func(p core.Policy, key string, want bool) {
		t.Helper()
		res, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
		if err != nil {
			t.Fatalf("%s %s: %v", p.Name(), key, err)
		}
		if res.Allowed != want {
			t.Fatalf("%s %s: allowed %v, want %v (breaker %v)", p.Name(), key, res.Allowed, want, store.Breaker())
		}
	}

	before := scrape(t, registry)
	if v := value(t, before, "ratelimit_fallback_active", "policy", "api"); v != 0 {
		t.Fatalf("fallback_active before anything: %v", v)
	}
	// Shared store up: 4 store calls, no failure.
	decide(api, "ip:192.0.2.1", true)  // shared
	decide(api, "ip:192.0.2.1", true)  // shared
	decide(api, "ip:192.0.2.1", false) // shared: the bucket is empty
	decide(api, "ip:192.0.2.1", false) // the pre-limiter, without a store call
	decide(api, "ip:192.0.2.2", true)  // shared: 1 left

	// Shared store down. With 4 good calls in the window, the 4th failure makes half of
	// the 8 calls failed; until then the breaker stays closed and the failures are
	// decided from ip:192.0.2.2's last shared answer (1 left), without refill.
	shared.down.Store(true)
	decide(api, "ip:192.0.2.2", true) // calls 5, failures 1: the last answer's 1 left
	decide(api, "ip:192.0.2.2", false)
	decide(api, "ip:192.0.2.2", false)
	if s := store.Breaker(); s != resilient.BreakerClosed {
		t.Fatalf("the breaker is %v after 3 failures of 7 calls; want closed", s)
	}
	// The 4th failure asks for a confirming probe (a 9th store call, failing), which
	// opens the breaker; whether this decision sees it open or not, ip:192.0.2.2 has
	// nothing left, in Local mode too: it continues from the last shared answer.
	decide(api, "ip:192.0.2.2", false)
	waitFor(t, "the confirming probe to open the breaker", func() bool { return store.Breaker() == resilient.BreakerOpen })

	// Open: Local mode for api, Closed for login; no store call, no background probe
	// while the clock stands still.
	decide(api, "ip:192.0.2.2", false) // still nothing left: no fresh bucket
	decide(api, "ip:192.0.2.3", true)  // unknown key: the replica's share (2 of 2)
	decide(api, "ip:192.0.2.3", true)
	decide(api, "ip:192.0.2.3", false)
	if _, err := store.Decide(ctx, core.Request{Policy: login, Key: "form:username:alice"}); !errors.Is(err, core.ErrStoreUnavailable) {
		t.Fatalf("closed policy during the outage: %v", err)
	}
	during := scrape(t, registry)
	for _, p := range []string{"api", "login"} {
		if v := value(t, during, "ratelimit_fallback_active", "policy", p); v != 1 {
			t.Fatalf("fallback_active{%s} during the outage: %v", p, v)
		}
	}

	// Recovery: two good background probes, one cooldown apart, close the breaker;
	// both store calls succeed.
	shared.down.Store(false)
	clock.Advance(resilient.DefaultCooldown)
	waitFor(t, "the first good probe to half-open the breaker", func() bool { return store.Breaker() == resilient.BreakerHalfOpen })
	decide(api, "ip:192.0.2.4", true) // half-open: still Local mode, no store call
	clock.Advance(resilient.DefaultCooldown)
	waitFor(t, "the second good probe to close the breaker and end both fallbacks", func() bool {
		if store.Breaker() != resilient.BreakerClosed {
			return false
		}
		f := scrape(t, registry)
		a, okA := lookup(f, "ratelimit_fallback_transitions_total", "policy", "api", "to", "shared")
		l, okL := lookup(f, "ratelimit_fallback_transitions_total", "policy", "login", "to", "shared")
		return okA && okL && a >= 1 && l >= 1
	})
	decide(api, "ip:192.0.2.5", true) // shared again

	after := scrape(t, registry)
	for _, tt := range []struct {
		family string
		labels []string
		want   float64
	}{
		// allowed: .1 twice, .2 once shared and once from its last answer, .3 twice
		// locally, .4 locally, .5 shared.
		{"ratelimit_decisions_total", []string{"policy", "api", "result", "allowed"}, 8},
		// denied: .1 by the store and by the pre-limiter, .2 four times, .3 once.
		{"ratelimit_decisions_total", []string{"policy", "api", "result", "denied"}, 7},
		{"ratelimit_decisions_total", []string{"policy", "login", "result", "unavailable"}, 1},
		// 4 failed decisions and the failed confirming probe.
		{"ratelimit_store_errors_total", []string{"store", "redis", "kind", "unavailable"}, 5},
		// 4 good calls, 4 failed ones, the confirming probe, 2 recovery probes, 1 good call.
		{"ratelimit_store_latency_seconds", nil, 12},
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
