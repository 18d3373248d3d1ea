package echomw

import (
	"github.com/labstack/echo/v4"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// PerIP is the one-line limiter: rate per client address (the TCP peer, never
// c.RealIP()), a token bucket on an in-memory store of its own (see
// httpengine.PerIP). It panics on an invalid rate or option.
//
//	e.Use(echomw.PerIP(core.PerSecond(10)))
func PerIP(rate core.Rate, options ...httplimit.Option) echo.MiddlewareFunc {
	l, err := httpengine.PerIP(rate, options...)
	if err != nil {
		panic(err)
	}
	mw, err := FromLimiter(l)
	if err != nil {
		panic(err)
	}
	return mw
}
