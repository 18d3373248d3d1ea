package prommetrics_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// send serves one GET from peer through h.
func send(h http.Handler, peer string, headers ...string) int {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = peer
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

var errNoUser = fmt.Errorf("%w: no user", keyfuncs.ErrNoKey)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func ok(http.ResponseWriter, *http.Request) {}

// newMetrics is a Metrics registered on a registry of its own.
func newMetrics(t *testing.T) (*prometheus.Registry, *prommetrics.Metrics) {
	t.Helper()
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry)
	if err != nil {
		t.Fatal(err)
	}
	return registry, metrics
}

// newMemoryStore is a memory store on a clock that stands still, closed when t ends.
func newMemoryStore(t *testing.T) *memory.Store {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	return store
}

// The HTTP observer counts decisions on a memory store, with no resilient store at
// all, and a resilient store observed by the same Metrics does not count them again.
func TestHTTPObserverCountsEveryStoreOnce(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(2))
	key := func(*http.Request) (string, error) { return "k", nil }
	for _, withResilient := range []bool{false, true} {
		registry, metrics := newMetrics(t)
		var store core.Store = newMemoryStore(t)
		if withResilient {
			var err error
			store, err = resilient.New(store, resilient.WithMonitor(metrics), resilient.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
		}
		h := nethttp.Middleware(store, httplimit.Limit(api, key), httplimit.WithObserver(metrics.HTTPObserver()))(http.HandlerFunc(ok))
		for range 3 {
			send(h, "192.0.2.1:1")
		}
		families := scrape(t, registry)
		if got := value(t, families, prommetrics.DecisionsName, "policy", "api", "result", prommetrics.ResultAllowed); got != 2 {
			t.Errorf("resilient %v: allowed %v, want 2", withResilient, got)
		}
		if got := value(t, families, prommetrics.DecisionsName, "policy", "api", "result", prommetrics.ResultDenied); got != 1 {
			t.Errorf("resilient %v: denied %v, want 1", withResilient, got)
		}
	}
}

// A failing policy function and a failing key function are counted by reason, and
// a missing identity that fell back to the client address is counted too.
func TestHTTPObserverCountsErrorsAndFallbacks(t *testing.T) {
	registry, metrics := newMetrics(t)
	store := memory.MustNew(memory.WithSweepInterval(0))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(100))
	observe := httplimit.WithObserver(metrics.HTTPObserver())
	brokenPlan := nethttp.Middleware(store, httplimit.LimitFunc(func(*http.Request) (core.Policy, error) {
		return core.Policy{}, errors.New("plan database down")
	}, func(*http.Request) (string, error) { return "k", nil }), observe, httplimit.WithLogger(quiet))(http.HandlerFunc(ok))
	brokenKey := nethttp.Middleware(store, httplimit.Limit(api, func(*http.Request) (string, error) {
		return "", errors.New("token parser panicked")
	}), observe, httplimit.WithLogger(quiet))(http.HandlerFunc(ok))
	missing := nethttp.Middleware(store, httplimit.Limit(api, func(r *http.Request) (string, error) {
		if v := r.Header.Get("X-User"); v != "" {
			return "user:" + v, nil
		}
		return "", errNoUser
	}), observe)(http.HandlerFunc(ok))

	if code := send(brokenPlan, "192.0.2.1:1"); code != http.StatusInternalServerError {
		t.Fatalf("failing policy function: %d, want 500", code)
	}
	if code := send(brokenKey, "192.0.2.1:1"); code != http.StatusBadRequest {
		t.Fatalf("failing key function: %d, want 400", code)
	}
	send(missing, "192.0.2.1:1")
	send(missing, "192.0.2.1:1", "X-User", "alice")
	families := scrape(t, registry)
	for reason, want := range map[string]float64{httplimit.ReasonPolicy: 1, httplimit.ReasonKey: 1} {
		if got := value(t, families, prommetrics.ErrorsName, "reason", reason); got != want {
			t.Errorf("errors{reason=%q} = %v, want %v", reason, got, want)
		}
	}
	if got := value(t, families, prommetrics.KeyFallbacksName, "policy", "api", "kind", string(httplimit.FallbackIP)); got != 1 {
		t.Errorf("key fallbacks %v, want 1", got)
	}
}

// The result label values are the same in the code, the help text and docs/metrics.md.
func TestResultValuesAreDocumented(t *testing.T) {
	results := []string{prommetrics.ResultAllowed, prommetrics.ResultDenied, prommetrics.ResultShadowDenied,
		prommetrics.ResultUncharged, prommetrics.ResultUnenforced, prommetrics.ResultUnavailable, prommetrics.ResultError}
	registry, metrics := newMetrics(t)
	metrics.HTTPObserver().OnDecision(&httplimit.Event{Results: []core.Result{{Policy: "api", Allowed: true}}, Allowed: true})
	help := scrape(t, registry)[prommetrics.DecisionsName].GetHelp()
	if want := "(" + strings.Join(results, ", ") + ")"; !strings.Contains(help, want) {
		t.Errorf("help %q does not list %s", help, want)
	}
	docs, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{prommetrics.DecisionsName, prommetrics.StoreErrorsName, prommetrics.StoreLatencyName,
		prommetrics.FallbackName, prommetrics.TransitionsName, prommetrics.LocalRefusalsName, prommetrics.KeyFallbacksName, prommetrics.ErrorsName} {
		if !strings.Contains(string(docs), "`"+name) {
			t.Errorf("docs/metrics.md does not name %s", name)
		}
	}
	for _, r := range results {
		if !strings.Contains(string(docs), "| `"+r+"` |") {
			t.Errorf("docs/metrics.md has no row for result %q", r)
		}
	}
	for _, r := range []string{httplimit.ReasonKey, httplimit.ReasonPolicy, httplimit.ReasonCost, httplimit.ReasonStore, httplimit.ReasonCanceled, httplimit.ReasonOther} {
		if !strings.Contains(string(docs), "| `"+r+"` |") {
			t.Errorf("docs/metrics.md has no row for reason %q", r)
		}
	}
}

// One policy declared app-wide per address and on a route per account is two
// buckets in one merged decision: each request is counted once for the policy,
// by the bucket its RateLimit field shows, as the fields list it once.
func TestHTTPObserverCountsAPolicyUnderTwoKeysOnce(t *testing.T) {
	registry, metrics := newMetrics(t)
	store := newMemoryStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(10))
	address := func(*http.Request) (string, error) { return "ip:192.0.2.1", nil }
	account := func(r *http.Request) (string, error) { return "user:" + r.Header.Get("X-User"), nil }
	observe := httplimit.WithObserver(metrics.HTTPObserver())
	route := nethttp.Middleware(store, httplimit.Limit(api, account), httplimit.WithCost(5), observe)(http.HandlerFunc(ok))
	h := nethttp.Middleware(store, httplimit.Limit(api, address), observe)(route)
	for i, want := range []int{http.StatusOK, http.StatusOK, http.StatusTooManyRequests} {
		if code := send(h, "192.0.2.1:1", "X-User", "alice"); code != want {
			t.Fatalf("request %d: %d, want %d", i+1, code, want)
		}
	}
	families := scrape(t, registry)
	for result, want := range map[string]float64{prommetrics.ResultAllowed: 2, prommetrics.ResultDenied: 1} {
		if got := value(t, families, prommetrics.DecisionsName, "policy", "api", "result", result); got != want {
			t.Errorf("api %s: %v, want %v", result, got, want)
		}
	}
	if got, ok := lookup(families, prommetrics.DecisionsName, "policy", "api", "result", prommetrics.ResultUncharged); ok {
		t.Errorf("api uncharged: %v, want none: the refused request counted twice", got)
	}
}
