package ginmw_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func newStore(t testing.TB) *memory.Store {
	t.Helper()
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func newEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.CustomRecovery(func(c *gin.Context, _ any) { c.AbortWithStatus(http.StatusInternalServerError) }))
	return r
}

func hello(c *gin.Context) { c.String(http.StatusOK, "hello") }

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

func TestMiddlewareOnGin(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(6))
	r := newEngine()
	r.GET("/healthz", hello)
	r.GET("/api/resource", ginmw.Middleware(store, httplimit.Limit(api, peer.Key)), hello)
	r.GET("/api/report", ginmw.Middleware(store, httplimit.Limit(api, peer.Key), httplimit.WithCost(5)), hello)

	if w := do(t, r, "GET", "/api/report"); w.Code != 200 || w.Body.String() != "hello" || w.Header().Get("RateLimit") != `"api";r=1;t=60` {
		t.Fatalf("report: %d %q %q", w.Code, w.Body.String(), w.Header().Get("RateLimit"))
	}
	if w := do(t, r, "GET", "/api/resource"); w.Code != 200 || w.Header().Get("RateLimit-Policy") != `"api";q=6;w=60` {
		t.Fatalf("resource: %d %q", w.Code, w.Header().Get("RateLimit-Policy"))
	}
	w := do(t, r, "GET", "/api/resource", "X-Forwarded-For", "198.51.100.1") // spoofing gains nothing
	want := `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"Rate limit exceeded; retry in 60 seconds.","retry_after":60,"violated_policies":["api"]}`
	if w.Code != http.StatusTooManyRequests || w.Body.String() != want || w.Header().Get("Content-Type") != httpengine.ProblemContentType {
		t.Fatalf("refusal: %d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
	if w := do(t, r, "GET", "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Fatalf("healthz: %d", w.Code)
	}
}

func TestNativeDenyAndErrorHandlers(t *testing.T) {
	store := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	r := newEngine()
	ran := 0
	r.Use(ginmw.Middleware(store, httplimit.Limit(one, peer.Key), ginmw.WithDenyHandler(func(c *gin.Context, d *httplimit.Denial) {
		c.JSON(http.StatusTooManyRequests, gin.H{"policies": d.Violated(), "retry": d.RetryAfter.Seconds()})
	})))
	r.GET("/", func(c *gin.Context) { ran++; hello(c) })
	do(t, r, "GET", "/")
	if w := do(t, r, "GET", "/"); w.Code != 429 || w.Body.String() != `{"policies":["one"],"retry":60}` || ran != 1 {
		t.Fatalf("custom deny: %d %s, handler ran %d times", w.Code, w.Body.String(), ran)
	}

	r = newEngine()
	r.Use(ginmw.Middleware(down{}, httplimit.Limit(one, peer.Key)))
	r.GET("/", hello)
	w := do(t, r, "GET", "/")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Body.String() == "" {
		t.Fatalf("default error: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	var seen error
	r = newEngine()
	r.Use(ginmw.Middleware(down{}, httplimit.Limit(one, peer.Key), ginmw.WithErrorHandler(func(c *gin.Context, err error) {
		seen = err
		c.Status(http.StatusTeapot)
	})))
	r.GET("/", hello)
	if w := do(t, r, "GET", "/"); w.Code != http.StatusTeapot || !errors.Is(seen, httplimit.ErrStore) {
		t.Fatalf("custom error: %d %v", w.Code, seen)
	}
	if _, err := ginmw.New(store, httplimit.Limit(one, peer.Key), ginmw.WithDenyHandler(nil)); err == nil {
		t.Error("a nil deny handler was accepted")
	}
}

func TestConcurrencyLeaseReleasedOnPanic(t *testing.T) {
	store := newStore(t)
	one := core.MustConcurrencyPolicy("one", 1, time.Minute)
	r := newEngine()
	r.GET("/panic", ginmw.Middleware(store, httplimit.Limit(one, peer.Key)), func(*gin.Context) { panic("boom") })
	r.GET("/ok", ginmw.Middleware(store, httplimit.Limit(one, peer.Key)), hello)
	if w := do(t, r, "GET", "/panic"); w.Code != http.StatusInternalServerError {
		t.Fatalf("panicking handler: %d", w.Code)
	}
	if w := do(t, r, "GET", "/ok"); w.Code != 200 {
		t.Fatalf("after the panic: %d, want 200 (lease released)", w.Code)
	}
}

func TestSettleSeesTheGinStatusAndRouteKeys(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(2))
	r := newEngine()
	r.Use(ginmw.Middleware(store, httplimit.Limit(api, keyfuncs.Route()), httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
		if status == http.StatusNotFound {
			return 0
		}
		return cost
	})))
	r.GET("/items/:id", func(c *gin.Context) {
		if c.Param("id") == "missing" {
			c.Status(http.StatusNotFound)
			return
		}
		hello(c)
	})
	r.GET("/other", hello)
	for range 4 {
		if w := do(t, r, "GET", "/items/missing"); w.Code != http.StatusNotFound {
			t.Fatalf("404s are refunded, never limited: %d", w.Code)
		}
	}
	do(t, r, "GET", "/items/1")
	do(t, r, "GET", "/items/2")
	if w := do(t, r, "GET", "/items/3"); w.Code != 429 {
		t.Fatalf("third found item: %d, want 429", w.Code)
	}
	if w := do(t, r, "GET", "/other"); w.Code != 200 {
		t.Fatalf("another route has its own budget: %d", w.Code)
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
