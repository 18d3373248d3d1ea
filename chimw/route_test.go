package chimw_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// chi names a route whose pattern ends in "/" without it: the index of a mounted
// router (r.Route("/reports", …) with r.Get("/", …)) is "/reports" whether the
// request asks for "/reports" or "/reports/", and r.Get("/b/", …) is "/b". A
// limiter in r.Use names the route as chi does, so the spelling a client picks
// neither lowers the route's cost nor earns the route a second key.
func TestRouteInUseNamesTheRouteAsChiDoes(t *testing.T) {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(5))
	costs := map[string]int64{"/reports": 5, "/b": 5}
	for _, tc := range []struct{ first, second string }{
		{"/reports", "/reports/"},
		{"/reports/", "/reports"},
		{"/b/", "/b/"},
	} {
		obs := &keys{}
		var handlerPattern string
		record := func(_ http.ResponseWriter, r *http.Request) { handlerPattern = r.Pattern }
		r := chi.NewRouter()
		r.Use(chimw.Middleware(newStore(t), httplimit.Limit(api, keyfuncs.Join(ip.Key, chimw.Route())),
			httplimit.WithRouteCosts(costs), httplimit.WithObserver(obs)))
		r.Route("/reports", func(r chi.Router) { r.Get("/", record) })
		r.Get("/b/", record)

		if w := get(t, r, "GET", tc.first); w.Code != http.StatusOK {
			t.Fatalf("%s: %d, want 200", tc.first, w.Code)
		}
		if want := "203.0.113.5|route:" + handlerPattern; len(obs.keys) != 1 || obs.keys[0] != "ip:"+want {
			t.Errorf("%s: key %q, want the handler's route %q", tc.first, obs.keys, "ip:"+want)
		}
		// The first request spent the whole budget at the route's cost of 5.
		if w := get(t, r, "GET", tc.second); w.Code != http.StatusTooManyRequests {
			t.Errorf("%s after %s: %d, want 429 (RateLimit %q, keys %q)", tc.second, tc.first, w.Code, w.Header().Get("RateLimit"), obs.keys)
		}
	}
}

// chi routes a request without a path (a CONNECT in authority form:
// "CONNECT example.com:443") as "/". A limiter in r.Use finds the route chi
// serves it from, rather than no route (the fallback key and the default cost).
func TestRouteInUseOfARequestWithoutAPath(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(5))
	obs := &keys{}
	r := chi.NewRouter()
	r.Use(chimw.Middleware(newStore(t), httplimit.Limit(api, chimw.Route()),
		httplimit.WithRouteCosts(map[string]int64{"/*": 5}), httplimit.WithObserver(obs)))
	r.Handle("/*", http.HandlerFunc(hello))

	connect := httptest.NewRequest(http.MethodGet, "/", nil)
	connect.Method, connect.URL = http.MethodConnect, &url.URL{Host: "example.com:443"}
	connect.RemoteAddr = "203.0.113.5:4000"
	w := httptest.NewRecorder()
	r.ServeHTTP(w, connect)
	if w.Code != http.StatusOK || len(obs.keys) != 1 || obs.keys[0] != "route:/*" {
		t.Fatalf("CONNECT: %d, keys %q; want 200 under route:/*", w.Code, obs.keys)
	}
	if w := get(t, r, "GET", "/anything"); w.Code != http.StatusTooManyRequests {
		t.Errorf("GET after the CONNECT spent the route's budget at its cost of 5: %d, want 429", w.Code)
	}
}

// chi hands the index of r.Mount("/reports", sub) to sub for every method, and
// Mux.Find names "/reports" for every method, also one sub answers 405. A limiter
// in r.Use charged that 405 the index's weight, and keyed it under the route. It
// now costs the default and is keyed as a request of no route (the fallback key),
// as a 405 is on the other routers; so is a mount without an index (404), at any
// depth of mounts. What sub answers still costs the weight.
func TestMountedIndexCostsOnlyWhatItAnswers(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(20))
	for _, tc := range []struct {
		method, target string
		status         int
		cost           int64
		key            string
	}{
		{"GET", "/reports", http.StatusOK, 5, "route:/reports"},
		{"GET", "/reports/", http.StatusOK, 5, "route:/reports"},
		{"DELETE", "/reports", http.StatusMethodNotAllowed, 1, "fallback"},
		{"POST", "/reports/", http.StatusMethodNotAllowed, 1, "fallback"},
		{"GET", "/api/reports", http.StatusOK, 5, "route:/api/reports"},
		{"PUT", "/api/reports/", http.StatusMethodNotAllowed, 1, "fallback"},
		{"GET", "/noindex", http.StatusNotFound, 1, "fallback"},
		{"GET", "/noindex/7", http.StatusOK, 1, "route:/noindex/{id}"},
	} {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			obs := &keys{}
			r := chi.NewRouter()
			r.Use(chimw.Middleware(newStore(t), httplimit.Limit(api, chimw.Route()),
				httplimit.WithRouteCosts(map[string]int64{"/reports": 5, "/api/reports": 5}),
				httplimit.WithObserver(obs), httplimit.WithKeyFallback(httplimit.ClientIPFallback(keyfuncs.Const("fallback")))))
			r.Route("/reports", func(r chi.Router) { r.Get("/", hello) })
			r.Route("/api", func(r chi.Router) {
				r.Route("/reports", func(r chi.Router) { r.Get("/", hello) })
			})
			r.Route("/noindex", func(r chi.Router) { r.Get("/{id}", hello) })

			w := get(t, r, tc.method, tc.target)
			if w.Code != tc.status {
				t.Fatalf("%d, want %d", w.Code, tc.status)
			}
			if want := fmt.Sprintf(`"api";r=%d;t=60`, 20-tc.cost); w.Header().Get("RateLimit") != want {
				t.Errorf("RateLimit %q, want %q (a cost of %d)", w.Header().Get("RateLimit"), want, tc.cost)
			}
			if len(obs.keys) != 1 || obs.keys[0] != tc.key {
				t.Errorf("keys %q, want [%s]", obs.keys, tc.key)
			}
		})
	}
}
