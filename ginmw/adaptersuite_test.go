package ginmw_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/httplimit/adaptertest"
	"github.com/go-ratelimit/ratelimit/ginmw"
)

// TestEngineOptionsThroughTheRouter runs the shared adapter suite on a gin engine.
func TestEngineOptionsThroughTheRouter(t *testing.T) {
	adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := newEngine()
		r.GET("/x", ginmw.Middleware(store, limits, options...), func(c *gin.Context) { c.Status(http.StatusOK) })
		return r
	})
}

// BenchmarkMiddleware measures the middleware's overhead on a gin route.
func BenchmarkMiddleware(b *testing.B) {
	bare := newEngine()
	bare.GET("/x", func(c *gin.Context) { c.Status(http.StatusOK) })
	adaptertest.BenchMiddleware(b, bare, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := newEngine()
		r.GET("/x", ginmw.Middleware(store, limits, options...), func(c *gin.Context) { c.Status(http.StatusOK) })
		return r
	})
}
