package chimw_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// TestEngineOptionsThroughTheRouter runs the shared adapter suite on a chi router.
func TestEngineOptionsThroughTheRouter(t *testing.T) {
	adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.Middleware(store, limits, options...))
		r.Get("/x", func(http.ResponseWriter, *http.Request) {})
		return r
	})
}

// BenchmarkMiddleware measures the middleware's overhead on a chi route.
func BenchmarkMiddleware(b *testing.B) {
	bare := chi.NewRouter()
	bare.Get("/x", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	adaptertest.BenchMiddleware(b, bare, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.Middleware(store, limits, options...))
		r.Get("/x", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
		return r
	})
}

// TestCompositionThroughTheRouter runs the nesting scenarios on a chi router:
// app-wide limiters in r.Use, route limiters in r.With.
func TestCompositionThroughTheRouter(t *testing.T) {
	adaptertest.RunComposition(t, func(layout adaptertest.Layout) http.Handler {
		mws := func(limiters []*httpengine.Limiter) []func(http.Handler) http.Handler {
			var all []func(http.Handler) http.Handler
			for _, l := range limiters {
				mw, err := chimw.FromLimiter(l)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, mw)
			}
			return all
		}
		r := chi.NewRouter()
		if layout.ValueKey != "" {
			r.Use(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					//lint:ignore SA1029 the suite names its value with a string, the key type gin and echo use
					ctx := context.WithValue(r.Context(), layout.ValueKey, r.Header.Get("X-Value"))
					next.ServeHTTP(w, r.WithContext(ctx))
				})
			})
		}
		r.Use(mws(layout.App)...)
		r.With(mws(layout.Route)...).Get("/x", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(adaptertest.Status(r)) })
		r.Get("/y", func(http.ResponseWriter, *http.Request) {})
		return r
	})
}

// TestPerIPThroughTheRouter runs the one-line limiter in chi's r.Use.
func TestPerIPThroughTheRouter(t *testing.T) {
	adaptertest.RunPerIP(t, func(rate core.Rate) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.PerIP(rate))
		r.Get("/x", func(http.ResponseWriter, *http.Request) {})
		return r
	})
}

// TestRouteCostsWhenMounted runs the route-cost check on a chi router with the
// middleware in r.Use, alone and mounted under a ServeMux.
func TestRouteCostsWhenMounted(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.Middleware(store, limits, options...))
		r.Get("/api/report", func(http.ResponseWriter, *http.Request) {})
		return r
	})
}

// TestRouteCostsOfGroupedRoutes runs the route-cost check with the route in a
// subrouter (r.Route) below the middleware in r.Use.
func TestRouteCostsOfGroupedRoutes(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.Middleware(store, limits, options...))
		r.Route("/api", func(r chi.Router) {
			r.Get("/report", func(http.ResponseWriter, *http.Request) {})
		})
		return r
	})
}

// TestJSONLoginDecoysThroughTheRouter runs the JSON login attack on a chi route.
func TestJSONLoginDecoysThroughTheRouter(t *testing.T) {
	adaptertest.RunJSONLoginDecoys(t, func(store core.Store, limits httplimit.Limits, handler http.HandlerFunc) http.Handler {
		r := chi.NewRouter()
		r.With(chimw.Middleware(store, limits)).Post("/login", handler)
		return r
	})
}

// TestLeasesThroughTheRouter runs the lease suite on a chi router.
func TestLeasesThroughTheRouter(t *testing.T) {
	adaptertest.RunLeases(t, func(store core.Store, limits httplimit.Limits, handler http.Handler, options ...httplimit.Option) http.Handler {
		r := chi.NewRouter()
		r.Use(chimw.Middleware(store, limits, options...))
		r.Get("/x", handler.ServeHTTP)
		return r
	})
}
