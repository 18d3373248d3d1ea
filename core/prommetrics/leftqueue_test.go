package prommetrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// Through nethttp: a request whose deadline ends its wait in the leaky-bucket
// queue gets 503, is given its slot back and never served. It counts as an error
// of reason canceled (docs/metrics.md), not as a decision that allowed it.
func TestLeftQueueCountsAsCanceledNotAllowed(t *testing.T) {
	registry, metrics := newMetrics(t)
	store := newMemoryStore(t)
	queue := core.MustPolicy("queue", core.LeakyBucket, core.Every(time.Hour), core.WithBurst(1))
	key := func(*http.Request) (string, error) { return "k", nil }
	h := nethttp.Middleware(store, httplimit.Limit(queue, key), httplimit.WithObserver(metrics.HTTPObserver()), httplimit.WithLogger(quiet))(http.HandlerFunc(ok))
	send(h, "192.0.2.1:1") // head of the queue
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	families := scrape(t, registry)
	allowed, _ := lookup(families, prommetrics.DecisionsName, "policy", "queue", "result", "allowed")
	canceled, _ := lookup(families, prommetrics.ErrorsName, "reason", "canceled")
	if allowed != 1 || canceled != 1 {
		t.Errorf("left the queue with %d: decisions{allowed}=%v (want 1: only the head was served), errors{canceled}=%v (want 1)", w.Code, allowed, canceled)
	}
}
