package echomw_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/labstack/echo/v4"
)

func newStore(t testing.TB) *memory.Store {
	t.Helper()
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func hello(c echo.Context) error { return c.String(http.StatusOK, "hello") }

func do(t *testing.T, h http.Handler, method, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "203.0.113.5:4000"
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var peer = keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

func TestMiddlewareOnEcho(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(6))
	e := echo.New()
	e.GET("/healthz", hello)
	e.GET("/api/resource", hello, echomw.Middleware(store, httplimit.Limit(api, peer.Key)))
	e.GET("/api/report", hello, echomw.Middleware(store, httplimit.Limit(api, peer.Key), httplimit.WithCost(5)))

	if w := do(t, e, "GET", "/api/report"); w.Code != 200 || w.Body.String() != "hello" || w.Header().Get("RateLimit") != `"api";r=1;t=60` {
		t.Fatalf("report: %d %q %q", w.Code, w.Body.String(), w.Header().Get("RateLimit"))
	}
	if w := do(t, e, "GET", "/api/resource"); w.Code != 200 || w.Header().Get("RateLimit-Policy") != `"api";q=6;w=60` {
		t.Fatalf("resource: %d %q", w.Code, w.Header().Get("RateLimit-Policy"))
	}
	w := do(t, e, "GET", "/api/resource", "X-Real-IP", "198.51.100.1") // spoofing gains nothing
	want := `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"Rate limit exceeded; retry in 60 seconds.","retry_after":60,"violated_policies":["api"]}`
	if w.Code != http.StatusTooManyRequests || w.Body.String() != want || w.Header().Get("Content-Type") != httpengine.ProblemContentType {
		t.Fatalf("refusal: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	if w := do(t, e, "GET", "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Fatalf("healthz: %d", w.Code)
	}
}

func TestNativeDenyAndErrorHandlers(t *testing.T) {
	store := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	e := echo.New()
	e.Use(echomw.Middleware(store, httplimit.Limit(one, peer.Key), echomw.WithDenyHandler(func(c echo.Context, d *httplimit.Denial) error {
		return echo.NewHTTPError(http.StatusTooManyRequests, d.Violated())
	})))
	e.GET("/", hello)
	do(t, e, "GET", "/")
	if w := do(t, e, "GET", "/"); w.Code != 429 || w.Body.String() != "[\"one\"]\n" || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("custom deny: %d %q %q", w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}

	e = echo.New()
	e.Use(echomw.Middleware(down{}, httplimit.Limit(one, peer.Key)))
	e.GET("/", hello)
	w := do(t, e, "GET", "/")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Body.String() == "" {
		t.Fatalf("default error: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	var seen error
	e = echo.New()
	e.Use(echomw.Middleware(down{}, httplimit.Limit(one, peer.Key), echomw.WithErrorHandler(func(c echo.Context, err error) error {
		seen = err
		return c.NoContent(http.StatusTeapot)
	})))
	e.GET("/", hello)
	if w := do(t, e, "GET", "/"); w.Code != http.StatusTeapot || !errors.Is(seen, httplimit.ErrStore) {
		t.Fatalf("custom error: %d %v", w.Code, seen)
	}
	if _, err := echomw.New(store, httplimit.Limit(one, peer.Key), echomw.WithErrorHandler(nil)); err == nil {
		t.Error("a nil error handler was accepted")
	}
}

func TestConcurrencyLeaseReleasedOnPanic(t *testing.T) {
	store := newStore(t)
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	e := echo.New()
	e.Use(recoverer)
	e.GET("/panic", func(echo.Context) error { panic("boom") }, echomw.Middleware(store, httplimit.Limit(one, peer.Key)))
	e.GET("/ok", hello, echomw.Middleware(store, httplimit.Limit(one, peer.Key)))
	if w := do(t, e, "GET", "/panic"); w.Code != http.StatusInternalServerError {
		t.Fatalf("panicking handler: %d", w.Code)
	}
	if w := do(t, e, "GET", "/ok"); w.Code != 200 {
		t.Fatalf("after the panic: %d, want 200 (lease released)", w.Code)
	}
}

func TestSettleSeesHandlerErrorsAndRouteKeys(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(2))
	e := echo.New()
	e.Use(echomw.Middleware(store, httplimit.Limit(api, keyfuncs.Route()), httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
		if status == http.StatusNotFound {
			return 0
		}
		return cost
	})))
	e.GET("/items/:id", func(c echo.Context) error {
		if c.Param("id") == "missing" {
			return echo.ErrNotFound // written by echo's error handler after the middleware returns
		}
		return hello(c)
	})
	e.GET("/other", hello)
	for range 4 {
		if w := do(t, e, "GET", "/items/missing"); w.Code != http.StatusNotFound {
			t.Fatalf("404s are refunded, never limited: %d", w.Code)
		}
	}
	do(t, e, "GET", "/items/1")
	do(t, e, "GET", "/items/2")
	if w := do(t, e, "GET", "/items/3"); w.Code != 429 {
		t.Fatalf("third found item: %d, want 429", w.Code)
	}
	if w := do(t, e, "GET", "/other"); w.Code != 200 {
		t.Fatalf("another route has its own budget: %d", w.Code)
	}
}

// recoverer turns a panic into a 500, as echo's Recover middleware does.
func recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = echo.NewHTTPError(http.StatusInternalServerError)
			}
		}()
		return next(c)
	}
}

type down struct{}

var errDown = errors.New("redis: i/o timeout")

func (down) Decide(context.Context, core.Request) (core.Result, error) { return core.Result{}, errDown }
func (down) DecideStack(context.Context, []core.Request, []core.Result) (bool, error) {
	return false, errDown
}
func (down) Release(context.Context, core.Request, uint64) error { return errDown }
func (down) Close() error                                        { return nil }
