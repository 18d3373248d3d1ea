package echomw_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httpengine/adaptertest"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/echomw"
)

// TestEngineOptionsThroughTheRouter runs the shared adapter suite on an echo router.
func TestEngineOptionsThroughTheRouter(t *testing.T) {
	adaptertest.RunOptions(t, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		e := echo.New()
		e.GET("/x", func(c echo.Context) error { return c.NoContent(http.StatusOK) }, echomw.Middleware(store, limits, options...))
		return e
	})
}

// BenchmarkMiddleware measures the middleware's overhead on an echo route.
func BenchmarkMiddleware(b *testing.B) {
	ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	bare := echo.New()
	bare.GET("/x", ok)
	adaptertest.BenchMiddleware(b, bare, func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		e := echo.New()
		e.GET("/x", ok, echomw.Middleware(store, limits, options...))
		return e
	})
}

// TestCompositionThroughTheRouter runs the nesting scenarios on an echo router:
// app-wide limiters in e.Use, route limiters as the route's middleware.
func TestCompositionThroughTheRouter(t *testing.T) {
	adaptertest.RunComposition(t, func(layout adaptertest.Layout) http.Handler {
		mws := func(limiters []*httpengine.Limiter) []echo.MiddlewareFunc {
			var all []echo.MiddlewareFunc
			for _, l := range limiters {
				mw, err := echomw.FromLimiter(l)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, mw)
			}
			return all
		}
		e := echo.New()
		if layout.ValueKey != "" {
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					c.Set(layout.ValueKey, c.Request().Header.Get("X-Value"))
					return next(c)
				}
			})
		}
		e.Use(mws(layout.App)...)
		ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
		e.GET("/x", func(c echo.Context) error { return c.NoContent(adaptertest.Status(c.Request())) }, mws(layout.Route)...)
		e.GET("/y", ok)
		return e
	})
}

// TestPerIPThroughTheRouter runs the one-line limiter in echo's e.Use.
func TestPerIPThroughTheRouter(t *testing.T) {
	adaptertest.RunPerIP(t, func(rate core.Rate) http.Handler {
		e := echo.New()
		e.Use(echomw.PerIP(rate))
		e.GET("/x", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		return e
	})
}

// TestRouteCostsWhenMounted runs the route-cost check on an echo router with the
// middleware in e.Use, alone and mounted under a ServeMux.
func TestRouteCostsWhenMounted(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		e := echo.New()
		e.Use(echomw.Middleware(store, limits, options...))
		e.GET("/api/report", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		return e
	})
}

// TestRouteCostsOfGroupedRoutes runs the route-cost check with the route in a
// group (e.Group) below the middleware in e.Use.
func TestRouteCostsOfGroupedRoutes(t *testing.T) {
	adaptertest.RunMountedRouteCosts(t, "/api/report", func(store core.Store, limits httplimit.Limits, options ...httplimit.Option) http.Handler {
		e := echo.New()
		e.Use(echomw.Middleware(store, limits, options...))
		e.Group("/api").GET("/report", func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		return e
	})
}

// TestJSONLoginDecoysThroughTheRouter runs the JSON login attack on an echo route.
func TestJSONLoginDecoysThroughTheRouter(t *testing.T) {
	adaptertest.RunJSONLoginDecoys(t, func(store core.Store, limits httplimit.Limits, handler http.HandlerFunc) http.Handler {
		e := echo.New()
		e.POST("/login", echo.WrapHandler(handler), echomw.Middleware(store, limits))
		return e
	})
}

// TestLeasesThroughTheRouter runs the lease suite on an echo server.
func TestLeasesThroughTheRouter(t *testing.T) {
	adaptertest.RunLeases(t, func(store core.Store, limits httplimit.Limits, handler http.Handler, options ...httplimit.Option) http.Handler {
		e := echo.New()
		e.GET("/x", echo.WrapHandler(handler), echomw.Middleware(store, limits, options...))
		return e
	})
}
