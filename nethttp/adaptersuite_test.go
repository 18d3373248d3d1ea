package nethttp_test

import (
	"net/http"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/httplimit/adaptertest"
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
