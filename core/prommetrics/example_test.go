package prommetrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// Metrics observe a resilient store; the registry is the caller's, served at /metrics
// with promhttp.HandlerFor(registry, promhttp.HandlerOpts{}).
func Example() {
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry, prommetrics.WithPolicies("api"))
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := resilient.New(memory.MustNew(), resilient.WithMonitor(metrics),
		resilient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerMinute(1))
	for i := 0; i < 2; i++ {
		store.Decide(context.Background(), core.Request{Policy: api, Key: "ip:192.0.2.1"})
	}
	printDecisions(registry)
	// Output:
	// ratelimit_decisions_total api allowed 1
	// ratelimit_decisions_total api denied 1
}

// HTTPObserver counts the decisions of Limiters on any store, here the memory store.
func ExampleMetrics_HTTPObserver() {
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry)
	if err != nil {
		fmt.Println(err)
		return
	}
	store := memory.MustNew()
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerHour(2))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	limited := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key),
		httplimit.WithObserver(metrics.HTTPObserver()))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for range 3 {
		limited.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	printDecisions(registry)
	// Output:
	// ratelimit_decisions_total api allowed 2
	// ratelimit_decisions_total api denied 1
}

// printDecisions prints the ratelimit_decisions_total series of registry.
func printDecisions(registry *prometheus.Registry) {
	families, _ := registry.Gather()
	for _, f := range families {
		if f.GetName() != prommetrics.DecisionsName {
			continue
		}
		for _, m := range f.GetMetric() {
			fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetLabel()[1].GetValue(), m.Counter.GetValue())
		}
	}
}
