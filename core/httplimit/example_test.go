package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// An app-wide limit on every route, and a report that does five times the work:
// the report costs 5 of the same bucket, not 6, and the response lists the
// policy once.
func Example() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

	mux := http.NewServeMux()
	mux.Handle("GET /api/resource", ok)
	mux.Handle("GET /api/report", nethttp.Middleware(store,
		httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))(ok))
	handler := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))(mux)

	for _, path := range []string{"/api/resource", "/api/report", "/api/report"} {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Printf("%d %s %s Retry-After=%q\n", w.Code, path, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 /api/resource "api";r=9;t=60 Retry-After=""
	// 200 /api/report "api";r=4;t=60 Retry-After=""
	// 429 /api/report "api";r=4;t=60 Retry-After="60"
}

// Three policies decided as one: a refusal by any of them charges none.
func ExampleStack() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now))
	defer store.Close()
	perAccount := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	perIP := core.MustPolicy("ip", core.SlidingWindow, core.PerMinute(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	login := nethttp.Middleware(store, httplimit.Stack(
		httplimit.Limit(perAccount, keyfuncs.FormUsername("user")),
		httplimit.Limit(perIP, clientIP.Key),
	), httplimit.WithKeyFallback(httplimit.RefuseFallback()))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for i := range 6 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("user=alice&password=guess"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		login.ServeHTTP(w, r)
		if i >= 4 {
			fmt.Println(w.Code, w.Header().Get("RateLimit"))
		}
	}
	// Output:
	// 200 "account";r=0;t=60, "ip";r=15;t=60
	// 429 "account";r=0;t=60, "ip";r=15;t=60
}
