package chimw

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// New returns chi middleware (net/http middleware) enforcing limits on store. It
// is nethttp.New, plus chi's route pattern: in r.Use, before chi has routed the
// request, a Limiter that reads r.Pattern (httplimit.WithRouteCosts) finds the
// pattern chi will match. The options are httplimit's and nethttp's
// (WithDenyHandler, WithErrorHandler, also offered here).
func New(store core.Store, limits httplimit.Limits, options ...httplimit.Option) (func(http.Handler) http.Handler, error) {
	l, err := httpengine.New(store, limits, options...)
	if err != nil {
		return nil, err
	}
	return FromLimiter(l)
}

// Middleware is New for static configuration: it panics on an invalid configuration.
//
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
func Middleware(store core.Store, limits httplimit.Limits, options ...httplimit.Option) func(http.Handler) http.Handler {
	mw, err := New(store, limits, options...)
	if err != nil {
		panic(err)
	}
	return mw
}

// WithDenyHandler replaces the response to refused requests (see nethttp.DenyHandler).
func WithDenyHandler(h nethttp.DenyHandler) httplimit.Option { return nethttp.WithDenyHandler(h) }

// WithErrorHandler replaces the response to requests that could not be decided
// (see nethttp.ErrorHandler).
func WithErrorHandler(h nethttp.ErrorHandler) httplimit.Option { return nethttp.WithErrorHandler(h) }

// FromLimiter returns chi middleware for a Limiter built with core/httpengine
// (see nethttp.FromLimiter).
func FromLimiter(l *httpengine.Limiter) (func(http.Handler) http.Handler, error) {
	mw, err := nethttp.FromLimiter(l)
	if err != nil || !l.NeedsPattern() {
		return mw, err
	}
	routes := new(routeFinder)
	return func(next http.Handler) http.Handler {
		h := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// chi sets r.Pattern again when it routes the request. Until then it may
			// be empty, a mount's ("/admin/*"), or a ServeMux's that mounts chi ("/api/").
			if p := routes.pattern(r); p != "" {
				r.Pattern = p
			}
			h.ServeHTTP(w, r)
		})
	}, nil
}
