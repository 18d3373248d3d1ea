package prommetrics_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/resilient"
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
	store, err := resilient.New(memory.MustNew(), resilient.WithObserver(metrics),
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
	families, _ := registry.Gather()
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.Counter != nil {
				fmt.Println(f.GetName(), m.GetLabel()[1].GetValue(), m.Counter.GetValue())
			}
		}
	}
	// Output:
	// ratelimit_decisions_total allowed 1
	// ratelimit_decisions_total denied 1
}
