package main

import (
	"log/slog"
	"net/http"

	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/prometheus/client_golang/prometheus"
)

// observer logs every decision with slog and counts it in
// ratelimit_decisions_total{policy,result}. Keys are logged as the key functions
// made them: client addresses, and hashes of API keys, never the keys themselves.
type observer struct {
	logger    *slog.Logger
	decisions *prometheus.CounterVec
}

func newObserver(logger *slog.Logger, registry prometheus.Registerer) (*observer, error) {
	decisions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ratelimit_decisions_total",
		Help: "Rate-limit decisions per policy and result (allowed, denied, shadow_denied, uncharged).",
	}, []string{"policy", "result"})
	if err := registry.Register(decisions); err != nil {
		return nil, err
	}
	return &observer{logger: logger, decisions: decisions}, nil
}

// OnDecision counts and logs one decision.
func (o *observer) OnDecision(e *httplimit.Event) {
	attrs := make([]any, 0, 4+len(e.Results))
	attrs = append(attrs, "method", e.Request.Method, "path", e.Request.URL.Path, "allowed", e.Allowed)
	for i := range e.Results {
		res := &e.Results[i]
		verdict := e.Verdict(i)
		o.decisions.WithLabelValues(res.Policy, string(verdict)).Inc()
		attrs = append(attrs, slog.Group(res.Policy,
			"key", e.Requests[i].Key,
			"cost", e.Requests[i].EffectiveCost(),
			"result", string(verdict),
			"remaining", res.Remaining,
			"retry_after", res.RetryAfter,
		))
	}
	if e.FellBack {
		attrs = append(attrs, "fell_back", true)
	}
	o.logger.Info("rate limit decision", attrs...)
}

// OnError logs a request that could not be decided, or a lease or refund that
// could not be given back.
func (o *observer) OnError(r *http.Request, err error) {
	o.logger.Error("rate limit error", "method", r.Method, "path", r.URL.Path, "error", err)
}
