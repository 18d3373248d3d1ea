package nethttp

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// DenyHandler writes the response to a refused request. The rate-limit fields and
// Retry-After are already set on w's header. The default is httpengine.WriteDenial:
// 429 with an RFC 9457 problem body.
type DenyHandler func(w http.ResponseWriter, r *http.Request, d *httplimit.Denial)

// ErrorHandler writes the response to a request that could not be decided. The
// default is httpengine.WriteError (see httpengine.ErrorResponse): 503 with
// Retry-After for store failures and for identities that cannot be checked now, 400
// for requests without the identity they are limited by, 413 for a body too large to
// find it in, 500 otherwise; never err's text.
type ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)

type denyHandler DenyHandler
type errorHandler ErrorHandler

// WithDenyHandler replaces the response to refused requests.
func WithDenyHandler(h DenyHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("nethttp: WithDenyHandler: nil handler"))
	}
	return httpengine.AdapterOption(denyHandler(h))
}

// WithErrorHandler replaces the response to requests that could not be decided.
func WithErrorHandler(h ErrorHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("nethttp: WithErrorHandler: nil handler"))
	}
	return httpengine.AdapterOption(errorHandler(h))
}

// New returns middleware that enforces limits on store for every request of the
// handler it wraps. The options are httplimit's (httplimit.WithCost,
// httplimit.WithShadow, …) and this package's deny and error handlers. Errors name
// the offending policy or option. With httplimit.WithRouteCosts the middleware must
// wrap the *http.ServeMux itself (it looks up the pattern the mux will match); it
// panics when it wraps anything else, whose routes it cannot see.
//
//	mw, err := nethttp.New(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))
func New(store core.Store, limits httplimit.Limits, options ...httplimit.Option) (func(http.Handler) http.Handler, error) {
	l, err := httpengine.New(store, limits, options...)
	if err != nil {
		return nil, err
	}
	return fromLimiter(l, true)
}

// Middleware is New for static configuration: it panics on an invalid configuration.
func Middleware(store core.Store, limits httplimit.Limits, options ...httplimit.Option) func(http.Handler) http.Handler {
	mw, err := New(store, limits, options...)
	if err != nil {
		panic(err)
	}
	return mw
}

// FromLimiter returns middleware for a Limiter built with core/httpengine (for
// an adapter built on this one), applying the deny and error handlers passed to
// it with WithDenyHandler and WithErrorHandler.
func FromLimiter(l *httpengine.Limiter) (func(http.Handler) http.Handler, error) {
	return fromLimiter(l, false)
}

// fromLimiter is FromLimiter; with ownRoutes, a Limiter that reads route patterns
// (WithRouteCosts) must find them on the ServeMux it wraps, as no adapter above
// supplies them.
func fromLimiter(l *httpengine.Limiter, ownRoutes bool) (func(http.Handler) http.Handler, error) {
	deny, onError := DenyHandler(writeDenial), ErrorHandler(writeError)
	for _, v := range l.AdapterOptions() {
		switch h := v.(type) {
		case denyHandler:
			deny = DenyHandler(h)
		case errorHandler:
			onError = ErrorHandler(h)
		default:
			return nil, fmt.Errorf("nethttp: option %T belongs to another adapter", v)
		}
	}
	return func(next http.Handler) http.Handler {
		if next == nil {
			panic("nethttp: nil next handler")
		}
		m := &middleware{limiter: l, next: next, deny: deny, onError: onError}
		if mux, ok := next.(*http.ServeMux); ok && l.NeedsPattern() {
			m.pattern = func(r *http.Request) string { return muxPattern(mux, r) }
		} else if ownRoutes && l.NeedsPattern() {
			panic(fmt.Sprintf("nethttp: WithRouteCosts needs the middleware directly around a *http.ServeMux, "+
				"whose pattern it looks up before the mux routes the request; it wraps a %T, where every route "+
				"would cost the default (for one route, use httplimit.WithCost on its handler)", next))
		}
		return m
	}, nil
}

// maxMuxDepth bounds how deep muxPattern follows ServeMuxes mounted in ServeMuxes,
// against a mux that mounts itself.
const maxMuxDepth = 16

// redirectType is the type of the handler a ServeMux answers with when it
// redirects a request to the clean path or to the path with a trailing slash.
var redirectType = reflect.TypeOf(http.RedirectHandler("/", http.StatusTemporaryRedirect))

// muxPattern is the pattern of the route mux sends r to, followed through the
// ServeMuxes it mounts as handlers: under a mux whose "/api/" is another mux with
// "GET /api/report", it is "GET /api/report", the pattern the inner mux routes r
// by (and sets last), not the mount's. A mux behind another handler
// (http.StripPrefix) cannot be seen: its routes cost the mount's.
//
// A request the mux redirects ("//api/report" to "/api/report") is not the route
// the mux names for it: it matches no route, and costs the default, as a 404
// does, so that a client following the redirect is charged the route's weight
// once, not twice. A route whose handler is itself an http.RedirectHandler is told
// apart from those by nothing, and costs the default too.
func muxPattern(mux *http.ServeMux, r *http.Request) string {
	h, pattern := mux.Handler(r)
	for range maxMuxDepth {
		inner, ok := h.(*http.ServeMux)
		if !ok || pattern == "" {
			break
		}
		h, pattern = inner.Handler(r)
	}
	if reflect.TypeOf(h) == redirectType {
		return ""
	}
	return pattern
}

func writeDenial(w http.ResponseWriter, _ *http.Request, d *httplimit.Denial) {
	httpengine.WriteDenial(w, d)
}

func writeError(w http.ResponseWriter, _ *http.Request, err error) { httpengine.WriteError(w, err) }

// middleware is the handler New's middleware returns.
type middleware struct {
	limiter *httpengine.Limiter
	next    http.Handler
	deny    DenyHandler
	onError ErrorHandler
	pattern func(*http.Request) string // the route the ServeMux below will match
}

// ServeHTTP decides r and then refuses it, reports an error, or runs the next
// handler (after a leaky-bucket wait, holding its leases until it returns).
func (m *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.pattern != nil { // the ServeMux below wins over a mount's pattern set before it
		if p := m.pattern(r); p != "" {
			r.Pattern = p
		}
	}
	t := m.limiter.Start(r, w.Header())
	switch t.Disposition() {
	case httpengine.Skipped:
		m.next.ServeHTTP(w, r)
		return
	case httpengine.Denied:
		m.deny(w, r, t.Denial())
		t.Finish(http.StatusTooManyRequests, true)
		return
	case httpengine.Failed:
		m.onError(w, r, t.Err())
		t.Finish(0, true)
		return
	}
	if err := t.Wait(r.Context()); err != nil {
		// The wait ended before its slot: the client went away, or a deadline set
		// before this middleware passed: 499 for the one, 503 for the other.
		m.onError(w, r, err)
		t.Finish(0, false)
		return
	}
	r = t.Request() // lets a limiter further in merge its decision with this one
	if t.RecordsStatus() {
		m.serveRecorded(w, r, t)
		return
	}
	completed := false
	defer func() { t.Finish(0, completed) }() // also on panic, which then continues
	m.next.ServeHTTP(w, r)
	completed = true
}

// serveRecorded runs the handler with a writer that records the status, for
// costs settled after the handler.
func (m *middleware) serveRecorded(w http.ResponseWriter, r *http.Request, t *httpengine.Ticket) {
	sw := &statusWriter{ResponseWriter: w}
	completed := false
	defer func() { t.Finish(sw.Status(), completed) }()
	m.next.ServeHTTP(sw, r)
	completed = true
}
