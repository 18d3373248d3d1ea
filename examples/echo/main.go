// Command echo limits an echo server in layers: every client address has 10
// requests per second with bursts of 20 ("api"), where a report costs 5 and an
// export also takes one of 2 slots in flight per client; the login adds a stack of
// the account (5 per minute) and the address (20 per minute). A request gets one
// decision over every policy that applies, and one RateLimit field listing each
// once.
//
//	go run ./examples/echo
//	curl -i localhost:8080/items/1
//	curl -i localhost:8080/report
//	curl -i -d username=alice -d password=x localhost:8080/login
package main

import (
	"log"
	"net/http"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/labstack/echo/v4"
)

func newHandler(store core.Store) http.Handler {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	export := core.MustConcurrencyPolicy("export", 2, 30*time.Second)
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not RealIP(): it trusts every proxy

	e := echo.New()
	// App-wide: every request spends the client's "api" bucket.
	e.Use(echomw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
	e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, "item "+c.Param("id")+"\n") })
	// Per route: the same policy at five times the cost (5 in all, not 6) ...
	e.GET("/report", func(c echo.Context) error { return c.String(http.StatusOK, "report\n") },
		echomw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5)))
	// ... a concurrency limit, decided together with "api" ...
	e.GET("/export", func(c echo.Context) error {
		time.Sleep(100 * time.Millisecond) // the expensive work
		return c.String(http.StatusOK, "exported\n")
	}, echomw.Middleware(store, httplimit.Limit(export, clientIP.Key)))
	// ... and the login's stack.
	// A login without its username form field is refused (400): no JSON body or
	// other spelling reaches the password check outside the account's budget.
	namedOnly := httplimit.WithKeyFallback(httplimit.RefuseFallback())
	e.POST("/login", func(c echo.Context) error { return c.String(http.StatusOK, "checked\n") },
		echomw.Middleware(store, httplimit.Stack(
			httplimit.Limit(account, keyfuncs.FormUsername("username")),
			httplimit.Limit(loginIP, clientIP.Key),
		), namedOnly))
	return e
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
