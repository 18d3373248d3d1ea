package nethttp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// TestEngineOptionsThroughTheRouter runs the shared adapter suite on a ServeMux.
func TestEngineOptionsThroughTheRouter(t *testing.T) {
	adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /x", nethttp.Middleware(store, limits, options...)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		return mux
	})
}

// BenchmarkMiddleware measures the middleware's overhead on a ServeMux route.
func BenchmarkMiddleware(b *testing.B) {
	mux := func(wrap func(http.Handler) http.Handler) http.Handler {
		m := http.NewServeMux()
		m.Handle("GET /x", wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })))
		return m
	}
	adaptertest.BenchMiddleware(b, mux(func(h http.Handler) http.Handler { return h }),
		func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
			return mux(nethttp.Middleware(store, limits, options...))
		})
}

// TestCompositionThroughTheRouter runs the nesting scenarios on a ServeMux: app-wide
// middleware around the mux, route middleware in a pattern's handler chain.
func TestCompositionThroughTheRouter(t *testing.T) {
	adaptertest.RunComposition(t, func(layout adaptertest.Layout) http.Handler {
		wrap := func(h http.Handler, limiters []*httpengine.Limiter) http.Handler {
			for i := len(limiters) - 1; i >= 0; i-- {
				mw, err := nethttp.FromLimiter(limiters[i])
				if err != nil {
					t.Fatal(err)
				}
				h = mw(h)
			}
			return h
		}
		ok := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		mux := http.NewServeMux()
		mux.Handle("GET /x", wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(adaptertest.Status(r)) }), layout.Route))
		mux.Handle("GET /y", ok)
		h := wrap(mux, layout.App)
		if layout.ValueKey == "" {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			//lint:ignore SA1029 the suite names its value with a string, the key type gin and echo use
			ctx := context.WithValue(r.Context(), layout.ValueKey, r.Header.Get("X-Value"))
			h.ServeHTTP(w, r.WithContext(ctx))
		})
	})
}

// TestPerIPThroughTheRouter runs the one-line limiter around a ServeMux.
func TestPerIPThroughTheRouter(t *testing.T) {
	adaptertest.RunPerIP(t, func(rate core.Rate) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /x", func(http.ResponseWriter, *http.Request) {})
		return nethttp.PerIP(rate)(mux)
	})
}

// TestRouteCostsWhenMounted runs the route-cost check on a ServeMux wrapped by the
// middleware, alone and mounted under another ServeMux.
func TestRouteCostsWhenMounted(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "GET /api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /api/report", func(http.ResponseWriter, *http.Request) {})
		return nethttp.Middleware(store, limits, options...)(mux)
	})
}

// TestRouteCostsOfANestedServeMux runs the route-cost check with the routes on a
// ServeMux mounted ("/api/") by the one the middleware wraps, the net/http way to
// group routes: the weight is the inner mux's route's, not the mount's default.
func TestRouteCostsOfANestedServeMux(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "GET /api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		api := http.NewServeMux()
		api.HandleFunc("GET /api/report", func(http.ResponseWriter, *http.Request) {})
		mux := http.NewServeMux()
		mux.Handle("/api/", api)
		return nethttp.Middleware(store, limits, options...)(mux)
	})
}

// TestJSONLoginDecoysThroughTheRouter runs the JSON login attack on a ServeMux route.
func TestJSONLoginDecoysThroughTheRouter(t *testing.T) {
	adaptertest.RunJSONLoginDecoys(t, func(store core.Store, limits httplimit.Limits, handler http.HandlerFunc) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("POST /login", nethttp.Middleware(store, limits)(handler))
		return mux
	})
}

// TestLeasesThroughTheRouter runs the lease suite on a ServeMux route.
func TestLeasesThroughTheRouter(t *testing.T) {
	adaptertest.RunLeases(t, func(store core.Store, limits httplimit.Limits, handler http.Handler, options ...httplimit.Option) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("GET /x", nethttp.Middleware(store, limits, options...)(handler))
		return mux
	})
}
