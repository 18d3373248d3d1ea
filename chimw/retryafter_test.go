package chimw_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// The two ways to weigh a route (docs/composition.md) admit and charge the same,
// but only the table tells the truth when the app-wide layer refuses: it knows the
// route's cost of 5 before the route runs, so a client that waits its Retry-After
// is admitted. Declared on the route, the weight is unseen by the app-wide layer,
// which refuses on its own, for its own cost of 1: its Retry-After is for 1 token
// (1 s at 1 per second), and a client that waits that long is refused again,
// as the package docs say.
func TestRetryAfterOfAnAppWideRefusalOfAWeightedRoute(t *testing.T) {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(1), core.WithBurst(10))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	for _, tc := range []struct {
		form       string
		build      func(r chi.Router, store core.Store)
		retryAfter int // s
		thenStatus int
	}{
		{"table", func(r chi.Router, store core.Store) {
			r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
				httplimit.WithRouteCosts(map[string]int64{"/api/report": 5})))
			r.Get("/api/report", hello)
		}, 5, http.StatusOK},
		{"route", func(r chi.Router, store core.Store) {
			r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
			r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
				Get("/api/report", hello)
		}, 1, http.StatusTooManyRequests},
	} {
		t.Run(tc.form, func(t *testing.T) {
			clock := storetest.NewClock()
			store := memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
			t.Cleanup(func() { _ = store.Close() })
			r := chi.NewRouter()
			tc.build(r, store)
			r.Get("/api/resource", hello)
			for i := range 10 {
				if w := get(t, r, "GET", "/api/resource"); w.Code != http.StatusOK {
					t.Fatalf("request %d of the burst of 10: %d", i+1, w.Code)
				}
			}
			w := get(t, r, "GET", "/api/report")
			if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != strconv.Itoa(tc.retryAfter) {
				t.Fatalf("report on an empty bucket: %d, Retry-After %q; want 429 and %d", w.Code, w.Header().Get("Retry-After"), tc.retryAfter)
			}
			clock.Advance(time.Duration(tc.retryAfter) * time.Second)
			if w := get(t, r, "GET", "/api/report"); w.Code != tc.thenStatus {
				t.Errorf("report after waiting Retry-After: %d, want %d (RateLimit %q)", w.Code, tc.thenStatus, w.Header().Get("RateLimit"))
			}
		})
	}
}
