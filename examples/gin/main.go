// Command gin limits a gin engine by API key (hashed; the client IP when there is
// none): 10 requests per second with bursts of 20.
//
//	go run ./examples/gin
//	curl -i -H 'X-API-Key: demo' localhost:8080/hello
package main

import (
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func newHandler(store core.Store) http.Handler {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not c.ClientIP(): it trusts every proxy
	byKey := keyfuncs.FirstOf(keyfuncs.APIKey("X-API-Key"), clientIP.Key)

	r := gin.New()
	r.Use(ginmw.Middleware(store, httplimit.Limit(api, byKey)))
	r.GET("/hello", func(c *gin.Context) { c.String(http.StatusOK, "hello\n") })
	return r
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
