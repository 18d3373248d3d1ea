package chimw_test

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// chi's GetHead, StripSlashes and CleanPath rewrite the method and path chi routes
// on. A limiter in r.Use finds the route they lead to: HEAD /api/report and
// GET /api/report/ cost the report's 5 and share its route key, as GET /api/report
// does, on the root router and in a mounted one.
func TestRouteFollowsChiRewrites(t *testing.T) {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(10))
	costs := map[string]int64{"/api/report": 5}
	rewrites := []func(http.Handler) http.Handler{middleware.GetHead, middleware.StripSlashes, middleware.CleanPath}
	requests := []struct{ method, target string }{
		{"GET", "/api/report"}, {"HEAD", "/api/report"}, {"GET", "/api/report/"}, {"GET", "/api//report"},
	}
	for _, mounted := range []bool{false, true} {
		store := newStore(t)
		limiter := chimw.Middleware(store, httplimit.Limit(api, keyfuncs.Join(ip.Key, chimw.Route())), httplimit.WithRouteCosts(costs))
		r := chi.NewRouter()
		if mounted {
			sub := chi.NewRouter()
			sub.Use(rewrites...)
			sub.Use(limiter)
			sub.Get("/report", hello)
			r.Mount("/api", sub)
		} else {
			r.Use(rewrites...)
			r.Use(limiter)
			r.Get("/api/report", hello)
		}
		for i, want := range []int{200, 200, 429, 429} {
			req := requests[i]
			if mounted && i == 3 { // chi cleans a path in a mounted router only from the root
				req.method, req.target = "HEAD", "/api/report/"
			}
			w := get(t, r, req.method, req.target)
			if w.Code != want {
				t.Fatalf("mounted %v: %s %s: %d, want %d (RateLimit %q)", mounted, req.method, req.target, w.Code, want, w.Header().Get("RateLimit"))
			}
		}
	}
}
