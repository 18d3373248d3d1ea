package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/nethttp"
	"github.com/labstack/echo/v4"
)

// newRouter mounts h's routes behind lims on the router named kind.
func newRouter(kind string, lims limiters, h routes) (http.Handler, error) {
	switch kind {
	case "nethttp":
		return netHTTPRouter(lims, h)
	case "chi":
		return chiRouter(lims, h)
	case "gin":
		return ginRouter(lims, h)
	case "echo":
		return echoRouter(lims, h)
	}
	return nil, fmt.Errorf("-router %q: %w", kind, errUnknownRouter)
}

func netHTTPRouter(lims limiters, h routes) (http.Handler, error) {
	mws, err := adapt(lims, nethttp.New)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", h.healthz)
	mux.Handle("GET /api/resource", mws.api(h.resource))
	mux.Handle("GET /api/report", mws.report(h.report))
	mux.Handle("GET /api/export", mws.export(h.export))
	mux.Handle("POST /login", mws.login(h.login))
	mux.Handle("GET /metrics", h.metrics)
	return mux, nil
}

func chiRouter(lims limiters, h routes) (http.Handler, error) {
	mws, err := adapt(lims, chimw.New)
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	r.Method(http.MethodGet, "/healthz", h.healthz)
	r.With(mws.api).Method(http.MethodGet, "/api/resource", h.resource)
	r.With(mws.report).Method(http.MethodGet, "/api/report", h.report)
	r.With(mws.export).Method(http.MethodGet, "/api/export", h.export)
	r.With(mws.login).Method(http.MethodPost, "/login", h.login)
	r.Method(http.MethodGet, "/metrics", h.metrics)
	return r, nil
}

func ginRouter(lims limiters, h routes) (http.Handler, error) {
	mws, err := adapt(lims, ginmw.New)
	if err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) {
		c.AbortWithStatus(http.StatusInternalServerError)
	}))
	r.GET("/healthz", gin.WrapH(h.healthz))
	r.GET("/api/resource", mws.api, gin.WrapH(h.resource))
	r.GET("/api/report", mws.report, gin.WrapH(h.report))
	r.GET("/api/export", mws.export, gin.WrapH(h.export))
	r.POST("/login", mws.login, gin.WrapH(h.login))
	r.GET("/metrics", gin.WrapH(h.metrics))
	return r, nil
}

func echoRouter(lims limiters, h routes) (http.Handler, error) {
	mws, err := adapt(lims, echomw.New)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/healthz", echo.WrapHandler(h.healthz))
	e.GET("/api/resource", echo.WrapHandler(h.resource), mws.api)
	e.GET("/api/report", echo.WrapHandler(h.report), mws.report)
	e.GET("/api/export", echo.WrapHandler(h.export), mws.export)
	e.POST("/login", echo.WrapHandler(h.login), mws.login)
	e.GET("/metrics", echo.WrapHandler(h.metrics))
	return e, nil
}

// middlewares are one router's adapters of the shared limiters.
type middlewares[M any] struct{ api, report, export, login M }

// adapt makes one router middleware per route's limits with newMiddleware, the
// router package's New.
func adapt[M any](lims limiters, newMiddleware func(core.Store, httplimit.Limits, ...httplimit.Option) (M, error)) (middlewares[M], error) {
	var m middlewares[M]
	var err error
	for _, pair := range []struct {
		dst   *M
		route routeLimit
	}{{&m.api, lims.api}, {&m.report, lims.report}, {&m.export, lims.export}, {&m.login, lims.login}} {
		if *pair.dst, err = newMiddleware(lims.store, pair.route.limits, pair.route.options...); err != nil {
			return m, err
		}
	}
	return m, nil
}
