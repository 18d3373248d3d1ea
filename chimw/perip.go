package chimw

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// PerIP is the one-line limiter: rate per client address (the TCP peer), a token
// bucket on an in-memory store of its own (see httpengine.PerIP). It panics on an
// invalid rate or option.
//
//	r.Use(chimw.PerIP(core.PerSecond(10)))
func PerIP(rate core.Rate, options ...httplimit.Option) func(http.Handler) http.Handler {
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
