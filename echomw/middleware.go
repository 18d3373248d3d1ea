package echomw

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/labstack/echo/v4"
)

// DenyHandler writes the response to a refused request; the rate-limit fields and
// Retry-After are already set. The default answers 429 with the problem body of
// httplimit.Denial.Problem.
type DenyHandler func(c echo.Context, d *httplimit.Denial) error

// ErrorHandler writes the response to a request that could not be decided. The
// default answers as httpengine.ErrorResponse says (503 with Retry-After for store
// failures), never with err's text.
type ErrorHandler func(c echo.Context, err error) error

type denyHandler DenyHandler
type errorHandler ErrorHandler

// WithDenyHandler replaces the response to refused requests.
func WithDenyHandler(h DenyHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("echomw: WithDenyHandler: nil handler"))
	}
	return httpengine.AdapterOption(denyHandler(h))
}

// WithErrorHandler replaces the response to requests that could not be decided.
func WithErrorHandler(h ErrorHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("echomw: WithErrorHandler: nil handler"))
	}
	return httpengine.AdapterOption(errorHandler(h))
}

// New returns echo middleware enforcing limits on store. The options are the
// httplimit's (httplimit.WithCost, httplimit.WithShadow, …) and this package's deny
// and error handlers. Errors name the offending policy or option.
func New(store core.Store, limits httplimit.Limits, options ...httplimit.Option) (echo.MiddlewareFunc, error) {
	l, err := httpengine.New(store, limits, options...)
	if err != nil {
		return nil, err
	}
	return FromLimiter(l)
}

// Middleware is New for static configuration: it panics on an invalid configuration.
func Middleware(store core.Store, limits httplimit.Limits, options ...httplimit.Option) echo.MiddlewareFunc {
	mw, err := New(store, limits, options...)
	if err != nil {
		panic(err)
	}
	return mw
}

// FromLimiter returns echo middleware for a Limiter built with core/httpengine.
func FromLimiter(l *httpengine.Limiter) (echo.MiddlewareFunc, error) {
	deny, onError := DenyHandler(writeDenial), ErrorHandler(writeError)
	for _, v := range l.AdapterOptions() {
		switch h := v.(type) {
		case denyHandler:
			deny = DenyHandler(h)
		case errorHandler:
			onError = ErrorHandler(h)
		default:
			return nil, fmt.Errorf("echomw: option %T belongs to another adapter", v)
		}
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			return serve(l, deny, onError, next, c)
		}
	}, nil
}

func writeDenial(c echo.Context, d *httplimit.Denial) error {
	res := c.Response()
	d.SetContentType(res.Header())
	res.WriteHeader(http.StatusTooManyRequests)
	_, err := res.Write(d.Problem())
	return err
}

func writeError(c echo.Context, err error) error {
	status, retryAfter, body := httpengine.ErrorResponse(err)
	if retryAfter > 0 {
		c.Response().Header()["Retry-After"] = []string{strconv.FormatInt(retryAfter, 10)}
	}
	return c.Blob(status, httpengine.ProblemContentType, []byte(body))
}

func serve(l *httpengine.Limiter, deny DenyHandler, onError ErrorHandler, next echo.HandlerFunc, c echo.Context) (err error) {
	r := httpengine.WithRouterValues(c.Request(), routerValues{c}) // keyfuncs.Tenant("tenant") reads c.Set("tenant", …)
	// echo's route wins over a pattern set before it: under a ServeMux that
	// mounts the server ("/api/"), r.Pattern is the mount's, not the endpoint's.
	// A method the route does not serve (echo's 405, which records the Allow
	// header) matched no route, though c.Path() names the path's.
	if p := c.Path(); p != "" && c.Get(echo.ContextKeyHeaderAllow) == nil {
		r.Pattern = p
	}
	c.SetRequest(r)
	t := l.Start(r, c.Response().Header())
	switch t.Disposition() {
	case httpengine.Skipped:
		return next(c)
	case httpengine.Denied:
		err = deny(c, t.Denial())
		t.Finish(http.StatusTooManyRequests, true)
		return err
	case httpengine.Failed:
		err = onError(c, t.Err())
		t.Finish(0, true)
		return err
	}
	if werr := t.Wait(r.Context()); werr != nil {
		// The wait ended before its slot: the client went away, or a deadline set
		// before this middleware passed: 499 for the one, 503 for the other.
		err = onError(c, werr)
		t.Finish(0, false)
		return err
	}
	c.SetRequest(t.Request()) // lets a limiter further in merge its decision with this one
	completed := false
	defer func() { t.Finish(status(c, err), completed) }() // also on panic, which then continues
	err = next(c)
	completed = true
	return err
}

// status is the response status of a handler that returned err: the written
// status, or the one echo's error handler will write for err.
func status(c echo.Context, err error) int {
	if err == nil || c.Response().Committed {
		return c.Response().Status
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	return http.StatusInternalServerError
}

// routerValues are the values of echo's c.Set, whose keys are strings.
type routerValues struct{ c echo.Context }

func (v routerValues) Get(key any) (any, bool) {
	name, ok := key.(string)
	if !ok {
		return nil, false
	}
	value := v.c.Get(name)
	return value, value != nil
}
