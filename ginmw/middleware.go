package ginmw

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
)

// DenyHandler writes the response to a refused request; the rate-limit fields and
// Retry-After are already set. The chain is aborted after it returns. The default
// answers 429 with the problem body of httplimit.Denial.Problem.
type DenyHandler func(c *gin.Context, d *httplimit.Denial)

// ErrorHandler writes the response to a request that could not be decided; the
// chain is aborted after it returns. The default answers as httpengine.ErrorResponse
// says (503 with Retry-After for store failures), never with err's text.
type ErrorHandler func(c *gin.Context, err error)

type denyHandler DenyHandler
type errorHandler ErrorHandler

// WithDenyHandler replaces the response to refused requests.
func WithDenyHandler(h DenyHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("ginmw: WithDenyHandler: nil handler"))
	}
	return httpengine.AdapterOption(denyHandler(h))
}

// WithErrorHandler replaces the response to requests that could not be decided.
func WithErrorHandler(h ErrorHandler) httplimit.Option {
	if h == nil {
		return httpengine.ErrorOption(errors.New("ginmw: WithErrorHandler: nil handler"))
	}
	return httpengine.AdapterOption(errorHandler(h))
}

// New returns gin middleware enforcing limits on store. The options are the
// httplimit's (httplimit.WithCost, httplimit.WithShadow, …) and this package's deny
// and error handlers. Errors name the offending policy or option.
func New(store core.Store, limits httplimit.Limits, options ...httplimit.Option) (gin.HandlerFunc, error) {
	l, err := httpengine.New(store, limits, options...)
	if err != nil {
		return nil, err
	}
	return FromLimiter(l)
}

// Middleware is New for static configuration: it panics on an invalid configuration.
func Middleware(store core.Store, limits httplimit.Limits, options ...httplimit.Option) gin.HandlerFunc {
	h, err := New(store, limits, options...)
	if err != nil {
		panic(err)
	}
	return h
}

// FromLimiter returns gin middleware for a Limiter built with core/httpengine.
func FromLimiter(l *httpengine.Limiter) (gin.HandlerFunc, error) {
	m := &middleware{limiter: l, deny: writeDenial, onError: writeError}
	for _, v := range l.AdapterOptions() {
		switch h := v.(type) {
		case denyHandler:
			m.deny = DenyHandler(h)
		case errorHandler:
			m.onError = ErrorHandler(h)
		default:
			return nil, fmt.Errorf("ginmw: option %T belongs to another adapter", v)
		}
	}
	return m.handle, nil
}

// writeDenial writes the body itself: c.Data would box a renderer and set
// Content-Type a second time, three allocations per refused request.
func writeDenial(c *gin.Context, d *httplimit.Denial) {
	d.SetContentType(c.Writer.Header())
	c.Status(http.StatusTooManyRequests)
	if _, err := c.Writer.Write(d.Problem()); err != nil {
		_ = c.Error(err) // as c.Data records a failed write
	}
}

func writeError(c *gin.Context, err error) {
	status, retryAfter, body := httpengine.ErrorResponse(err)
	if retryAfter > 0 {
		c.Writer.Header()["Retry-After"] = []string{strconv.FormatInt(retryAfter, 10)}
	}
	c.Data(status, httpengine.ProblemContentType, []byte(body))
}

type middleware struct {
	limiter *httpengine.Limiter
	deny    DenyHandler
	onError ErrorHandler
}

func (m *middleware) handle(c *gin.Context) {
	r := c.Request
	if len(c.Keys) > 0 { // keyfuncs.Tenant("tenant") reads c.Set("tenant", …)
		r = httpengine.WithRouterValues(r, c)
		c.Request = r
	}
	// gin's route wins over a pattern set before it: under a ServeMux that
	// mounts the engine ("/api/"), r.Pattern is the mount's, not the endpoint's.
	if p := c.FullPath(); p != "" {
		r.Pattern = p
	}
	t := m.limiter.Start(r, c.Writer.Header())
	switch t.Disposition() {
	case httpengine.Skipped:
		c.Next()
		return
	case httpengine.Denied:
		m.deny(c, t.Denial())
		c.Abort()
		t.Finish(http.StatusTooManyRequests, true)
		return
	case httpengine.Failed:
		m.onError(c, t.Err())
		c.Abort()
		t.Finish(0, true)
		return
	}
	if err := t.Wait(r.Context()); err != nil {
		// The wait ended before its slot: the client went away, or a deadline set
		// before this middleware passed: 499 for the one, 503 for the other.
		m.onError(c, err)
		c.Abort()
		t.Finish(0, false)
		return
	}
	c.Request = t.Request() // lets a limiter further down the chain merge its decision with this one
	completed := false
	defer func() { t.Finish(c.Writer.Status(), completed) }() // also on panic, which then continues
	c.Next()
	completed = true
}
