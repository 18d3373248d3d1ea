package chimw

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// New returns chi middleware (net/http middleware) enforcing limits on store. It
// is nethttp.New: the options are the engine's and nethttp's (WithDenyHandler,
// WithErrorHandler, also offered here).
func New(store core.Store, limits httplimit.Limits, options ...httplimit.Option) (func(http.Handler) http.Handler, error) {
	return nethttp.New(store, limits, options...)
}

// Middleware is New for static configuration: it panics on an invalid configuration.
//
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
func Middleware(store core.Store, limits httplimit.Limits, options ...httplimit.Option) func(http.Handler) http.Handler {
	return nethttp.Middleware(store, limits, options...)
}

// WithDenyHandler replaces the response to refused requests (see nethttp.DenyHandler).
func WithDenyHandler(h nethttp.DenyHandler) httplimit.Option { return nethttp.WithDenyHandler(h) }

// WithErrorHandler replaces the response to requests that could not be decided
// (see nethttp.ErrorHandler).
func WithErrorHandler(h nethttp.ErrorHandler) httplimit.Option { return nethttp.WithErrorHandler(h) }

// FromLimiter returns chi middleware for an existing Limiter (see nethttp.FromLimiter).
func FromLimiter(l *httplimit.Limiter) (func(http.Handler) http.Handler, error) {
	return nethttp.FromLimiter(l)
}
