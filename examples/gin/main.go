// Command gin limits a gin engine in layers: every client has 10 requests per
// second with bursts of 20 ("api", keyed by its API key, hashed, when it is one
// the server accepts, else by its address: an invented key earns no bucket of
// its own), where a report costs 5; the login adds a stack of the account (5
// per minute) and the address (20 per minute). A request gets one decision over
// every policy that applies, and one RateLimit field listing each once.
//
//	go run ./examples/gin
//	curl -i -H 'X-API-Key: demo-key' localhost:8080/items/1
//	curl -i localhost:8080/report
//	curl -i -d username=alice -d password=x localhost:8080/login
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
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // not c.ClientIP(): it trusts every proxy
	// The keys the server accepts; or a validator that looks them up in your key store.
	valid := keyfuncs.APIKeySet("demo-key")
	byKey := keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), clientIP.Key)

	r := gin.New()
	// App-wide: every request spends the client's "api" bucket; a report, five
	// times the work, costs 5 (matched on c.FullPath()).
	r.Use(ginmw.Middleware(store, httplimit.Limit(api, byKey),
		httplimit.WithRouteCosts(map[string]int64{"/report": 5})))
	r.GET("/items/:id", func(c *gin.Context) { c.String(http.StatusOK, "item "+c.Param("id")+"\n") })
	r.GET("/report", func(c *gin.Context) { c.String(http.StatusOK, "report\n") })
	// Per route: the login's stack, decided together with "api".
	// A login without its username form field is refused (400): no JSON body or
	// other spelling reaches the password check outside the account's budget.
	namedOnly := httplimit.WithKeyFallback(httplimit.RefuseFallback())
	r.POST("/login", ginmw.Middleware(store, httplimit.Stack(
		httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.Limit(loginIP, clientIP.Key),
	), namedOnly), func(c *gin.Context) { c.String(http.StatusOK, "checked\n") })
	return r
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
