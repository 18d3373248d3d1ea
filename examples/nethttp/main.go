// Command nethttp limits a net/http ServeMux in layers: every client address has
// 10 requests per second with bursts of 20 ("api"), where a report costs 5; the
// login adds a stack of the account (5 per minute) and the address (20 per
// minute). A request gets one decision over every policy that applies, and one
// RateLimit field listing each once.
//
//	go run ./examples/nethttp
//	curl -i localhost:8080/items/1
//	curl -i localhost:8080/report
//	curl -i -d username=alice -d password=x localhost:8080/login
package main

import (
	"io"
	"log"
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

func newHandler(store core.Store) http.Handler {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // add TrustedProxies behind a proxy

	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "item "+r.PathValue("id")+"\n")
	})
	// Per route: the same policy at five times the cost (5 in all, not 6) ...
	mux.Handle("GET /report", nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "report\n") })))
	// ... and the login's stack, decided together with "api".
	// A login without its username form field is refused (400): no JSON body or
	// other spelling reaches the password check outside the account's budget.
	namedOnly := httplimit.WithKeyFallback(httplimit.RefuseFallback())
	mux.Handle("POST /login", nethttp.Middleware(store, httplimit.Stack(
		httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.Limit(loginIP, clientIP.Key),
	), namedOnly)(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "checked\n") })))
	// App-wide: every request spends the client's "api" bucket.
	return nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))(mux)
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
