package chimw_test

import (
	"net/http"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/httplimit/adaptertest"
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
