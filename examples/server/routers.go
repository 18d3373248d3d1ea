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
	for _, method := range getAndHead {
		r.Method(method, "/healthz", h.healthz)
		r.With(mws.api).Method(method, "/api/resource", h.resource)
		r.With(mws.report).Method(method, "/api/report", h.report)
		r.With(mws.export).Method(method, "/api/export", h.export)
		r.Method(method, "/metrics", h.metrics)
	}
	r.With(mws.login).Method(http.MethodPost, "/login", h.login)
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
	for _, method := range getAndHead {
		r.Handle(method, "/healthz", gin.WrapH(h.healthz))
		r.Handle(method, "/api/resource", mws.api, gin.WrapH(h.resource))
		r.Handle(method, "/api/report", mws.report, gin.WrapH(h.report))
		r.Handle(method, "/api/export", mws.export, gin.WrapH(h.export))
		r.Handle(method, "/metrics", gin.WrapH(h.metrics))
	}
	r.POST("/login", mws.login, gin.WrapH(h.login))
	return r, nil
}

func echoRouter(lims limiters, h routes) (http.Handler, error) {
	mws, err := adapt(lims, echomw.New)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	for _, method := range getAndHead {
		e.Add(method, "/healthz", echo.WrapHandler(h.healthz))
		e.Add(method, "/api/resource", echo.WrapHandler(h.resource), mws.api)
		e.Add(method, "/api/report", echo.WrapHandler(h.report), mws.report)
		e.Add(method, "/api/export", echo.WrapHandler(h.export), mws.export)
		e.Add(method, "/metrics", echo.WrapHandler(h.metrics))
	}
	e.POST("/login", echo.WrapHandler(h.login), mws.login)
	return e, nil
}

// getAndHead are the methods of the GET routes. net/http's ServeMux serves HEAD with a
// GET pattern; the other routers are told to, so that a HEAD is limited, and charged,
// as its GET is on every router (it was a 405 or a 404, never limited, on chi, gin
// and echo).
var getAndHead = []string{http.MethodGet, http.MethodHead}

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
