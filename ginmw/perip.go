package ginmw

import (
	"github.com/gin-gonic/gin"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// PerIP is the one-line limiter: rate per client address (the TCP peer, never
// c.ClientIP()), a token bucket on an in-memory store of its own (see
// httpengine.PerIP). It panics on an invalid rate or option.
//
//	r.Use(ginmw.PerIP(core.PerSecond(10)))
func PerIP(rate core.Rate, options ...httplimit.Option) gin.HandlerFunc {
	l, err := httpengine.PerIP(rate, options...)
	if err != nil {
		panic(err)
	}
	h, err := FromLimiter(l)
	if err != nil {
		panic(err)
	}
	return h
}
