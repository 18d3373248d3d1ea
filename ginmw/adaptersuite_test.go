package ginmw_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
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

// TestCompositionThroughTheRouter runs the nesting scenarios on a gin engine:
// app-wide limiters in r.Use, route limiters in the route's handler chain.
func TestCompositionThroughTheRouter(t *testing.T) {
	adaptertest.RunComposition(t, func(layout adaptertest.Layout) http.Handler {
		handlers := func(limiters []*httpengine.Limiter) []gin.HandlerFunc {
			var all []gin.HandlerFunc
			for _, l := range limiters {
				h, err := ginmw.FromLimiter(l)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, h)
			}
			return all
		}
		r := newEngine()
		if layout.ValueKey != "" {
			r.Use(func(c *gin.Context) { c.Set(layout.ValueKey, c.GetHeader("X-Value")) })
		}
		r.Use(handlers(layout.App)...)
		ok := func(c *gin.Context) { c.Status(http.StatusOK) }
		r.GET("/x", append(handlers(layout.Route), func(c *gin.Context) { c.Status(adaptertest.Status(c.Request)) })...)
		r.GET("/y", ok)
		return r
	})
}

// TestPerIPThroughTheRouter runs the one-line limiter in gin's r.Use.
func TestPerIPThroughTheRouter(t *testing.T) {
	adaptertest.RunPerIP(t, func(rate core.Rate) http.Handler {
		r := newEngine()
		r.Use(ginmw.PerIP(rate))
		r.GET("/x", func(c *gin.Context) { c.Status(http.StatusOK) })
		return r
	})
}

// TestRouteCostsWhenMounted runs the route-cost check on a gin engine with the
// middleware in r.Use, alone and mounted under a ServeMux.
func TestRouteCostsWhenMounted(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := newEngine()
		r.Use(ginmw.Middleware(store, limits, options...))
		r.GET("/api/report", func(c *gin.Context) { c.Status(http.StatusOK) })
		return r
	})
}

// TestRouteCostsOfGroupedRoutes runs the route-cost check with the route in a
// group (r.Group) below the middleware in r.Use.
func TestRouteCostsOfGroupedRoutes(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		r := newEngine()
		r.Use(ginmw.Middleware(store, limits, options...))
		r.Group("/api").GET("/report", func(c *gin.Context) { c.Status(http.StatusOK) })
		return r
	})
}

// TestJSONLoginDecoysThroughTheRouter runs the JSON login attack on a gin route.
func TestJSONLoginDecoysThroughTheRouter(t *testing.T) {
	adaptertest.RunJSONLoginDecoys(t, func(store core.Store, limits httplimit.Limits, handler http.HandlerFunc) http.Handler {
		r := newEngine()
		r.POST("/login", ginmw.Middleware(store, limits), gin.WrapF(handler))
		return r
	})
}

// TestLeasesThroughTheRouter runs the lease suite on a gin engine (with its
// recovery, which answers a panic with 500).
func TestLeasesThroughTheRouter(t *testing.T) {
	adaptertest.RunLeases(t, func(store core.Store, limits httplimit.Limits, handler http.Handler, options ...httplimit.Option) http.Handler {
		r := newEngine()
		r.GET("/x", ginmw.Middleware(store, limits, options...), gin.WrapH(handler))
		return r
	})
}
