package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
	"github.com/labstack/echo/v4"
)

// Layered limits (DESIGN.md, "Composition") on the store users deploy:
// resilient.New(redisstore) on a real redis-server and a real 3-master Cluster.
// The reference server declares no app-wide limit, so each router gets a small app
// here: an app-wide "api" limit (token bucket, 10 a minute, burst 10, by client
// address), /report under the same policy at cost 5, and /login under a route
// stack (attempts per address, attempts per /24). The stores run on one frozen
// virtual clock, so no decision depends on the wall.

// layeredPolicies are the app's policies and key functions.
type layeredPolicies struct {
	api, attempts, subnetAttempts core.Policy
	ip, subnet                    keyfuncs.KeyFunc
}

func newLayeredPolicies(t *testing.T) layeredPolicies {
	t.Helper()
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	subnet, err := clientIP.Subnet(24, 56)
	if err != nil {
		t.Fatal(err)
	}
	return layeredPolicies{
		api:            core.MustPolicy("api", core.TokenBucket, core.PerMinute(10)),
		attempts:       core.MustPolicy("attempts", core.FixedWindow, core.PerMinute(2)),
		subnetAttempts: core.MustPolicy("subnet-attempts", core.FixedWindow, core.PerMinute(50)),
		ip:             clientIP.Key,
		subnet:         subnet,
	}
}

// layeredApp mounts the three routes behind the app-wide limit on router.
func layeredApp(t *testing.T, router string, store core.Store, p layeredPolicies) http.Handler {
	t.Helper()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	appWide := func() (core.Store, httplimit.Limits) { return store, httplimit.Limit(p.api, p.ip) }
	report := httplimit.Limit(p.api, p.ip)
	login := httplimit.Stack(httplimit.Limit(p.attempts, p.ip), httplimit.Limit(p.subnetAttempts, p.subnet))
	cost5 := httplimit.WithCost(5)
	switch router {
	case "nethttp":
		mux := http.NewServeMux()
		mux.Handle("GET /resource", ok)
		mux.Handle("GET /report", nethttp.Middleware(store, report, cost5)(ok))
		mux.Handle("GET /login", nethttp.Middleware(store, login)(ok))
		return nethttp.Middleware(appWide())(mux)
	case "chi":
		r := chi.NewRouter()
		r.Use(chimw.Middleware(appWide()))
		r.Get("/resource", ok)
		r.With(chimw.Middleware(store, report, cost5)).Get("/report", ok)
		r.With(chimw.Middleware(store, login)).Get("/login", ok)
		return r
	case "gin":
		gin.SetMode(gin.ReleaseMode)
		r := gin.New()
		r.Use(ginmw.Middleware(appWide()))
		r.GET("/resource", gin.WrapH(ok))
		r.GET("/report", ginmw.Middleware(store, report, cost5), gin.WrapH(ok))
		r.GET("/login", ginmw.Middleware(store, login), gin.WrapH(ok))
		return r
	case "echo":
		e := echo.New()
		e.Use(echomw.Middleware(appWide()))
		e.GET("/resource", echo.WrapHandler(ok))
		e.GET("/report", echo.WrapHandler(ok), echomw.Middleware(store, report, cost5))
		e.GET("/login", echo.WrapHandler(ok), echomw.Middleware(store, login))
		return e
	}
	t.Fatalf("unknown router %q", router)
	return nil
}

// TestLayeredLimitsOverResilientRedis: under the app-wide "api" limit, a route's
// cost 5 of the same policy costs 5, not 6; a refusal by the route (of "api" at
// cost 5, or by the route's own stack) spends nothing of the app-wide limit, as the
// RateLimit field of the next request shows; each policy is listed once. The bare
// Redis store is the control; resilient over Redis is what the server deploys.
func TestLayeredLimitsOverResilientRedis(t *testing.T) {
	standalone := redistest.StartServer(t)
	cluster := redistest.StartCluster(t, 3)
	for _, topology := range []struct {
		name  string
		addrs []string
	}{{"standalone", []string{standalone.Addr}}, {"cluster", cluster.Addrs()}} {
		for _, wrap := range []string{"redis", "resilient+redis"} {
			for _, router := range allRouters {
				t.Run(topology.name+"/"+wrap+"/"+router, func(t *testing.T) {
					clock := storetest.NewClock()
					prefix := "layers:" + topology.name + ":" + wrap + ":" + router + ":"
					shared, err := redisstore.Dial(topology.addrs, redisstore.WithClock(clock.Now), redisstore.WithPrefix(prefix))
					if err != nil {
						t.Fatal(err)
					}
					var store core.Store = shared
					if wrap == "resilient+redis" {
						if store, err = resilient.New(shared, resilient.WithClock(clock.Now), resilient.WithMode(resilient.Local)); err != nil {
							shared.Close()
							t.Fatal(err)
						}
					}
					t.Cleanup(func() { _ = store.Close() })
					_, refunds := store.(core.Refunder)
					t.Logf("%s implements core.Refunder: %v", wrap, refunds)
					checkLayered(t, layeredApp(t, router, store, newLayeredPolicies(t)), "192.0.2.10:1000")
				})
			}
		}
	}
}

// checkLayered runs the layered scenario through h from the client address peer,
// which no policy has counted yet.
func checkLayered(t *testing.T, h http.Handler, peer string) {
	t.Helper()
	step := func(what, path string, wantStatus int, wantAPI int64) response {
		t.Helper()
		r := serveLocal(h, http.MethodGet, path, peer)
		field := r.header.Get("RateLimit")
		if r.status != wantStatus {
			t.Fatalf("%s: GET %s = %d %s, want %d", what, path, r.status, strings.TrimSpace(r.body), wantStatus)
		}
		if n := strings.Count(field, `"api";`); n != 1 {
			t.Fatalf("%s: RateLimit %q lists \"api\" %d times, want once", what, field, n)
		}
		if got := remainingOf(field, "api"); got != wantAPI {
			t.Fatalf("%s: RateLimit %q: api remaining %d, want %d", what, field, got, wantAPI)
		}
		return r
	}
	step("a report (cost 5) under the app-wide limit costs 5, not 6", "/report", http.StatusOK, 5)
	step("a resource costs 1", "/resource", http.StatusOK, 4)
	step("a report needs 5 of the 4 left: refused", "/report", http.StatusTooManyRequests, 4)
	step("the refused report spent nothing of the app-wide limit", "/resource", http.StatusOK, 3)
	step("login 1: the app-wide limit and the route stack", "/login", http.StatusOK, 2)
	step("login 2", "/login", http.StatusOK, 1)
	r := step("login 3: refused by the route's attempts", "/login", http.StatusTooManyRequests, 1)
	if p := r.problem(t); len(p.Violated) != 1 || p.Violated[0] != "attempts" {
		t.Fatalf("login 3 refused by %v, want [attempts]", p.Violated)
	}
	step("the refused login spent nothing of the app-wide limit", "/resource", http.StatusOK, 0)
	step("and the app-wide limit is now spent", "/resource", http.StatusTooManyRequests, 0)
}
