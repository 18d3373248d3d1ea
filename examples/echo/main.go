// Command echo limits an echo server: 10 requests per second per client IP with
// bursts of 20, and at most 2 exports in flight per client.
//
//	go run ./examples/echo
//	curl -i localhost:8080/hello
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
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not RealIP(): it trusts every proxy

	e := echo.New()
	e.Use(echomw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello\n") })
	e.GET("/export", func(c echo.Context) error {
		time.Sleep(100 * time.Millisecond) // the expensive work
		return c.String(http.StatusOK, "exported\n")
	}, echomw.Middleware(store, httplimit.Limit(export, clientIP.Key)))
	return e
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
