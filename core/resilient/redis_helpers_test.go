package resilient_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
)

// The fault tests' settings: the default deadline, and a short cooldown so that
// recovery is quick.
const (
	faultDeadline = resilient.DefaultDeadline
	faultCooldown = 300 * time.Millisecond
)

// replica is one service instance: a resilient Store over its own Redis client, with
// its own metrics registry and log.
type replica struct {
	store    *resilient.Store
	redis    *redisstore.Store
	registry *prometheus.Registry
	log      *syncBuffer
}

// newReplica dials srv through redisstore.Dial (a client with ContextTimeoutEnabled)
// and wraps it. The Store owns the client; it is closed when t ends, if not before.
func newReplica(t testing.TB, srv *redistest.Server, options ...resilient.Option) *replica {
	t.Helper()
	shared, err := redisstore.Dial([]string{srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{redis: shared, registry: prometheus.NewRegistry(), log: &syncBuffer{}}
	metrics, err := prommetrics.New(r.registry)
	if err != nil {
		t.Fatal(err)
	}
	base := []resilient.Option{
		resilient.WithDeadline(faultDeadline), resilient.WithBreaker(3, faultCooldown),
		resilient.WithMonitor(metrics), resilient.WithStoreName("redis"),
		resilient.WithLogger(slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelInfo}))),
		resilient.WithDecisionLogEvery(0),
	}
	if r.store, err = resilient.New(shared, append(base, options...)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.store.Close() })
	return r
}

// openBreaker decides on a throwaway key until the store-wide breaker of store opens
// (its failures confirmed by a probe), for tests of what the failure modes do once an
// outage is established: before that, a slow call is decided from the key's last
// shared answer, and a key without one is refused in Local mode.
func openBreaker(t testing.TB, store *resilient.Store) {
	t.Helper()
	decideThrowawayUntil(t, store, func() bool { return store.Breaker() != resilient.BreakerClosed })
}

// openBreakerFor is openBreaker for the breaker that decides whether req calls the
// shared store. Where the store has answered before, three failures are too few a
// share of the window's calls for the store-wide breaker: the throwaway key's slot
// opens, and with it every key of its master, which on a standalone server is every
// key.
func openBreakerFor(t testing.TB, store *resilient.Store, req core.Request) {
	t.Helper()
	decideThrowawayUntil(t, store, func() bool { return store.BreakerFor(req) != resilient.BreakerClosed })
}

// decideThrowawayUntil decides on a throwaway key until open reports true, and fails
// t after 10s.
func decideThrowawayUntil(t testing.TB, store *resilient.Store, open func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !open(); {
		if time.Now().After(end) {
			t.Fatal("the breaker did not open within 10s of failures")
		}
		store.Decide(context.Background(), core.Request{Policy: throwaway, Key: "ip:192.0.2.250"})
	}
}

// throwaway is the policy openBreaker decides on.
var throwaway = core.MustPolicy("throwaway", core.GCRA, core.PerSecond(1000))

// admin is a client of srv for the test's own commands (INFO, CLIENT LIST).
func admin(t testing.TB, srv *redistest.Server) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { client.Close() })
	return client
}

// info reads a numeric field of INFO section.
func info(t testing.TB, client *redis.Client, section, field string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text, err := client.Info(ctx, section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, line)
			}
			return n
		}
	}
	return 0
}

// scriptCalls is how many EVALSHA and EVAL calls the server has run since the last
// CONFIG RESETSTAT, from INFO commandstats.
func scriptCalls(t testing.TB, client *redis.Client) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text, err := client.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var calls int64
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "cmdstat_evalsha" && name != "cmdstat_eval" {
			continue
		}
		for _, field := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				calls += n
			}
		}
	}
	return calls
}

// fault is a way for Redis to fail, and the way back.
type fault struct {
	name    string
	inject  func(*redistest.Server) error
	recover func(*redistest.Server) error
}

var faults = []fault{
	// SIGSTOP: the server keeps its port and connections but never answers.
	{"hung", (*redistest.Server).Pause, (*redistest.Server).Resume},
	// SIGKILL: connections are refused until it restarts on the same port.
	{"dead", (*redistest.Server).Kill, (*redistest.Server).Restart},
}

// latencies collects decision latencies from several goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// p99 is the 99th percentile (nearest rank), the maximum and the count.
func (l *latencies) p99() (p99, most time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sorted := slices.Clone(l.d)
	slices.Sort(sorted)
	if len(sorted) == 0 {
		return 0, 0, 0
	}
	return sorted[(len(sorted)*99+99)/100-1], sorted[len(sorted)-1], len(sorted)
}

// quietLogger discards logs, for stores whose logs the test does not read.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// scrapeRegistry serves registry through promhttp and parses the text exposition.
func scrapeRegistry(t testing.TB, registry *prometheus.Registry) map[string]*dto.MetricFamily {
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

// metricValue is the value of the series of family with exactly the labels (name,
// value pairs), or -1 when there is none.
func metricValue(families map[string]*dto.MetricFamily, family string, labels ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range families[family].GetMetric() {
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
	return -1
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
