package main

import (
	"log/slog"
	"net/http"

	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
)

// observer counts every decision with prommetrics (ratelimit_decisions_total,
// ratelimit_key_fallbacks_total, ratelimit_errors_total) and logs it with slog.
// Keys are logged as the key functions made them: client addresses, and hashes of
// API keys, never the keys themselves. The Limiters log undecided requests
// themselves (httplimit.WithLogger).
type observer struct {
	logger  *slog.Logger
	metrics httplimit.Observer
}

func newObserver(logger *slog.Logger, metrics *prommetrics.Metrics) *observer {
	return &observer{logger: logger, metrics: metrics.HTTPObserver()}
}

// OnDecision counts and logs one decision.
func (o *observer) OnDecision(e *httplimit.Event) {
	o.metrics.OnDecision(e)
	attrs := make([]any, 0, 4+len(e.Results))
	attrs = append(attrs, "method", e.Request.Method, "path", e.Request.URL.Path, "allowed", e.Allowed)
	for i := range e.Results {
		res := &e.Results[i]
		attrs = append(attrs, slog.Group(res.Policy,
			"key", e.Requests[i].Key,
			"cost", e.Requests[i].EffectiveCost(),
			"result", string(e.Verdict(i)),
			"remaining", res.Remaining,
			"retry_after", res.RetryAfter,
		))
	}
	if e.FellBack {
		attrs = append(attrs, "fell_back", true)
	}
	o.logger.Info("rate limit decision", attrs...)
}

// OnError counts a request that could not be decided, or a lease or refund that
// could not be given back.
func (o *observer) OnError(r *http.Request, err error) { o.metrics.OnError(r, err) }
