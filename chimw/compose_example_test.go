package chimw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-chi/chi/v5"

	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// An app-wide limit and a heavier route in the same bucket: the report costs 5,
// not 1 + 5, and the response lists the policy once.
func ExampleMiddleware() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key))) // before the routes
	r.Get("/api/resource", func(http.ResponseWriter, *http.Request) {})
	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
		Get("/api/report", func(http.ResponseWriter, *http.Request) {})

	for _, path := range []string{"/api/report", "/api/resource", "/api/report"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// /api/report 200 "api";r=5;t=60
	// /api/resource 200 "api";r=4;t=60
	// /api/report 429 "api";r=4;t=60
}

// Per-route weights declared once, in the app-wide middleware.
func ExampleMiddleware_routeCosts() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
		httplimit.WithRouteCosts(map[string]int64{"/api/reports/{id}": 5})))
	r.Get("/api/resource", func(http.ResponseWriter, *http.Request) {})
	r.Get("/api/reports/{id}", func(http.ResponseWriter, *http.Request) {})

	for _, path := range []string{"/api/reports/7", "/api/resource"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Println(path, w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// /api/reports/7 200 "api";r=5;t=60
	// /api/resource 200 "api";r=4;t=60
}
