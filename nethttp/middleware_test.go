package nethttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httpengine"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

func newStore(t testing.TB) *memory.Store {
	t.Helper()
	clock := storetest.NewClock()
	store := memory.MustNew(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { _ = store.Close() })
	return store
}

var peerIP = keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

func get(t *testing.T, h http.Handler, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.RemoteAddr = "203.0.113.5:4000"
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddlewareOnServeMux(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(6))
	limit := httplimit.Limit(api, keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", keyfuncs.APIKeySet("secret")), peerIP.Key))
	mux := http.NewServeMux()
	mux.Handle("GET /api/resource", nethttp.Middleware(store, limit)(http.HandlerFunc(hello)))
	mux.Handle("GET /api/report", nethttp.Middleware(store, limit, httplimit.WithCost(5))(http.HandlerFunc(hello)))
	mux.HandleFunc("GET /healthz", hello)

	if w := get(t, mux, "/api/report"); w.Code != 200 || w.Body.String() != "hello" || w.Header().Get("RateLimit") != `"api";r=1;t=60` {
		t.Fatalf("report: %d %q %q", w.Code, w.Body.String(), w.Header().Get("RateLimit"))
	}
	if w := get(t, mux, "/api/report"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("second report: %d, want 429", w.Code)
	}
	if w := get(t, mux, "/api/resource"); w.Code != 200 || w.Header().Get("RateLimit") != `"api";r=0;t=60` {
		t.Fatalf("resource: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
	w := get(t, mux, "/api/resource")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(w.Body.String(), `"violated_policies":["api"]`) || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("refusal: %d %q %q %s", w.Code, w.Header().Get("Content-Type"), w.Header().Get("Retry-After"), w.Body.String())
	}
	// An accepted API key has its own bucket, an invented one shares the
	// address's; health checks are never limited.
	if w := get(t, mux, "/api/resource", "X-API-Key", "secret"); w.Code != 200 {
		t.Fatalf("with an API key: %d", w.Code)
	}
	if w := get(t, mux, "/api/resource", "X-API-Key", "guess"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("with an invented API key: %d, want 429", w.Code)
	}
	if w := get(t, mux, "/healthz"); w.Code != 200 || w.Header().Get("RateLimit") != "" {
		t.Fatalf("healthz: %d %q", w.Code, w.Header().Get("RateLimit"))
	}
}

func TestCustomDenyAndErrorHandlers(t *testing.T) {
	store := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	mw, err := nethttp.New(store, httplimit.Limit(one, peerIP.Key),
		nethttp.WithDenyHandler(func(w http.ResponseWriter, _ *http.Request, d *httplimit.Denial) {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "slow down: "+strings.Join(d.Violated(), ","))
		}))
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.HandlerFunc(hello))
	get(t, h, "/")
	if w := get(t, h, "/"); w.Code != http.StatusServiceUnavailable || w.Body.String() != "slow down: one" || w.Header().Get("Retry-After") != "60" {
		t.Fatalf("custom deny: %d %q %q", w.Code, w.Body.String(), w.Header().Get("Retry-After"))
	}

	var seen error
	mw, err = nethttp.New(failing{}, httplimit.Limit(one, peerIP.Key),
		nethttp.WithErrorHandler(func(w http.ResponseWriter, _ *http.Request, err error) {
			seen = err
			w.WriteHeader(http.StatusTeapot)
		}))
	if err != nil {
		t.Fatal(err)
	}
	if w := get(t, mw(http.HandlerFunc(hello)), "/"); w.Code != http.StatusTeapot || !errors.Is(seen, httplimit.ErrStore) {
		t.Fatalf("custom error handler: %d %v", w.Code, seen)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	store := newStore(t)
	one := core.MustPolicy("one", core.FixedWindow, core.PerMinute(1))
	for name, option := range map[string]httplimit.Option{
		"nil deny handler":    nethttp.WithDenyHandler(nil),
		"nil error handler":   nethttp.WithErrorHandler(nil),
		"another adapter's":   httpengine.AdapterOption(struct{ gin int }{}),
		"cost above capacity": httplimit.WithCost(2),
	} {
		if _, err := nethttp.New(store, httplimit.Limit(one, peerIP.Key), option); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Middleware did not panic on an invalid configuration")
		}
	}()
	nethttp.Middleware(store, httplimit.Limits{})
}

func TestSettleSeesTheStatus(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(3))
	var statuses []int
	mw := nethttp.Middleware(store, httplimit.Limit(api, peerIP.Key), httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
		statuses = append(statuses, status)
		if status == http.StatusNotModified {
			return 0
		}
		return cost
	}))
	notModified := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotModified) }))
	silent := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	flushing := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush through the status recorder: %v", err)
		}
		_, _ = io.WriteString(w, "data")
	}))
	for range 5 {
		if w := get(t, notModified, "/"); w.Code != http.StatusNotModified {
			t.Fatalf("304 route: %d (its cost is refunded, so it is never limited)", w.Code)
		}
	}
	get(t, silent, "/")
	get(t, flushing, "/")
	want := []int{304, 304, 304, 304, 304, 200, 200}
	if len(statuses) != len(want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	for i := range want {
		if statuses[i] != want[i] {
			t.Fatalf("statuses %v, want %v", statuses, want)
		}
	}
}

func TestConcurrencyOverRealConnections(t *testing.T) {
	store := newStore(t)
	export := core.MustConcurrencyPolicy("export", 2, time.Minute)
	entered, leave := make(chan struct{}, 2), make(chan struct{})
	h := nethttp.Middleware(store, httplimit.Limit(export, peerIP.Key))(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-leave
		_, _ = io.WriteString(w, "done")
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			codes[i] = resp.StatusCode
			resp.Body.Close()
		}()
		<-entered
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third in flight: %d, want 429", resp.StatusCode)
	}
	close(leave)
	wg.Wait()
	if codes[0] != 200 || codes[1] != 200 {
		t.Fatalf("the two in flight: %v", codes)
	}
	go func() { <-entered }()
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after they returned: %d, want 200", resp.StatusCode)
	}
}

// failing is a store whose backend is down.
type failing struct{}

var errDown = errors.New("redis: connection refused")

func (failing) Decide(context.Context, core.Request) (core.Result, error) {
	return core.Result{}, errDown
}
func (failing) DecideStack(context.Context, []core.Request, []core.Result) (bool, error) {
	return false, errDown
}
func (failing) Release(context.Context, core.Request, uint64) error { return errDown }
func (failing) Close() error                                        { return nil }

// A handler that takes the connection over through a type assertion (a WebSocket
// upgrade written before http.ResponseController) still can when the limiter
// records statuses for WithSettle, and the upgrade is settled as 101.
func TestSettledHandlerCanHijack(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(3))
	statuses := make(chan int, 1)
	mw := nethttp.Middleware(store, httplimit.Limit(api, peerIP.Key), httplimit.WithSettle(func(_ *http.Request, status int, cost int64) int64 {
		statuses <- status
		return cost
	}))
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hijacker, ok := w.(http.Hijacker)
		if !ok {
			http.Error(w, "no Hijacker", http.StatusInternalServerError)
			return
		}
		conn, rw, err := hijacker.Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		_ = rw.Flush()
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101 from the hijacked connection", resp.StatusCode)
	}
	if got := <-statuses; got != http.StatusSwitchingProtocols {
		t.Fatalf("settled with status %d, want 101", got)
	}
}

// TestRouteCostsNeedTheServeMux: route costs from a middleware that does not wrap
// the ServeMux itself would never match a route, so every request would cost the
// default. Wrapping anything else panics when the handler is built, naming the fix;
// around the mux the report route costs its 5.
func TestRouteCostsNeedTheServeMux(t *testing.T) {
	store := newStore(t)
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(6))
	mw := nethttp.Middleware(store, httplimit.Limit(api, peerIP.Key),
		httplimit.WithRouteCosts(map[string]int64{"GET /api/report": 5}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/report", hello)
	logged := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mux.ServeHTTP(w, r) })
	for name, next := range map[string]http.Handler{"a HandlerFunc around the mux": logged,
		"StripPrefix": http.StripPrefix("/v1", mux)} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "WithRouteCosts needs the middleware directly around a *http.ServeMux") {
					t.Fatalf("panic %q, want one that names WithRouteCosts and the ServeMux", msg)
				}
			}()
			mw(next)
		})
	}
	h := mw(mux)
	if w := get(t, h, "/api/report"); w.Code != 200 || w.Header().Get("RateLimit") != `"api";r=1;t=60` {
		t.Fatalf("report: %d %q, want 200 and r=1", w.Code, w.Header().Get("RateLimit"))
	}
}

// TestRouteKeyAroundTheMux: keyfuncs.Route() in the middleware around a ServeMux
// finds the pattern when WithRouteCosts makes the middleware look it up, so the
// routes keep separate budgets; without it the mux has not routed yet, and every
// request takes the fallback key, one budget for the whole mux.
func TestRouteKeyAroundTheMux(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(1))
	for _, tc := range []struct {
		name    string
		options []httplimit.Option
		second  int // the status of /b after /a spent its budget
	}{
		{"with WithRouteCosts", []httplimit.Option{httplimit.WithRouteCosts(map[string]int64{"GET /a": 1})}, http.StatusOK},
		{"without", nil, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /a", hello)
			mux.HandleFunc("GET /b", hello)
			h := nethttp.Middleware(newStore(t), httplimit.Limit(api, keyfuncs.Route()), tc.options...)(mux)
			if w := get(t, h, "/a"); w.Code != http.StatusOK {
				t.Fatalf("/a: %d, want 200", w.Code)
			}
			if w := get(t, h, "/b"); w.Code != tc.second {
				t.Errorf("/b after /a: %d, want %d", w.Code, tc.second)
			}
		})
	}
}

// TestRouteCostsByPathCoverEveryMethod: a ServeMux pattern names a method ("GET
// /api/report"), where chi, gin and echo name the path alone. A table written the
// other routers' way ("/api/report") covers the route for every method rather than
// silently matching nothing; a key naming the method wins over the path alone.
func TestRouteCostsByPathCoverEveryMethod(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(20))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/report", hello)
	mux.HandleFunc("POST /api/report", hello)
	mux.HandleFunc("GET example.com/api/export", hello)
	h := nethttp.Middleware(newStore(t), httplimit.Limit(api, peerIP.Key),
		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5, "POST /api/report": 2, "example.com/api/export": 3}))(mux)
	for _, step := range []struct {
		method, target string
		want           string
	}{
		{http.MethodGet, "/api/report", `"api";r=15;t=60`},                   // the path's cost
		{http.MethodPost, "/api/report", `"api";r=13;t=60`},                  // the method's own entry
		{http.MethodGet, "http://example.com/api/export", `"api";r=10;t=60`}, // a host pattern, by host and path
	} {
		r := httptest.NewRequest(step.method, step.target, nil)
		r.RemoteAddr = "192.0.2.1:1234"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Header().Get("RateLimit"); w.Code != http.StatusOK || got != step.want {
			t.Fatalf("%s %s: %d, RateLimit %q; want 200 and %q", step.method, step.target, w.Code, got, step.want)
		}
	}
}

// TestServeMuxRedirectsCostTheDefault: a ServeMux redirects "/api/exports" to its
// route "GET /api/exports/" and "//api/report" to "/api/report", and names that
// route's pattern for the redirect. The redirect does none of the route's work: it
// costs the default, and the request the client then sends costs the weight once.
func TestServeMuxRedirectsCostTheDefault(t *testing.T) {
	api := core.MustPolicy("api", core.FixedWindow, core.PerMinute(20))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/report", hello)
	mux.HandleFunc("GET /api/exports/", hello)
	h := nethttp.Middleware(newStore(t), httplimit.Limit(api, peerIP.Key),
		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5, "GET /api/exports/": 4}))(mux)
	for _, step := range []struct {
		target string
		code   int
		want   string
	}{
		{"//api/report", http.StatusTemporaryRedirect, `"api";r=19;t=60`},
		{"/api/report", http.StatusOK, `"api";r=14;t=60`},
		{"/api/exports", http.StatusTemporaryRedirect, `"api";r=13;t=60`},
		{"/api/exports/", http.StatusOK, `"api";r=9;t=60`},
	} {
		if w := get(t, h, step.target); w.Code != step.code || w.Header().Get("RateLimit") != step.want {
			t.Fatalf("GET %s: %d, RateLimit %q; want %d and %q", step.target, w.Code, w.Header().Get("RateLimit"), step.code, step.want)
		}
	}
}
