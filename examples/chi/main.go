// Command chi limits a chi router in layers, as apps declare limits: every client
// address has 10 requests per second with bursts of 20 ("api"), where a report
// costs 5; the login adds a stack of the account (5 per minute) and the address
// (20 per minute). A request gets one decision over every policy that applies,
// and one RateLimit field listing each once.
//
//	go run ./examples/chi
//	curl -i localhost:8080/items/1
//	curl -i localhost:8080/report
//	curl -i -d username=alice -d password=x localhost:8080/login
package main

import (
	"io"
	"log"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

func newHandler(store core.Store) http.Handler {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	account := core.MustPolicy("account", core.SlidingLog, core.PerMinute(5))
	loginIP := core.MustPolicy("login-ip", core.FixedWindow, core.PerMinute(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // list your proxies in TrustedProxies

	r := chi.NewRouter()
	// App-wide, before the routes: every request spends the client's "api"
	// bucket; a report, five times the work, costs 5.
	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
		httplimit.WithRouteCosts(map[string]int64{"/report": 5})))
	r.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "item "+chi.URLParam(r, "id")+"\n")
	})
	r.Get("/report", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "report\n") })
	// Per route: the login's stack, decided together with "api".
	// A login without its username form field is refused (400): no JSON body or
	// other spelling reaches the password check outside the account's budget.
	namedOnly := httplimit.WithKeyFallback(httplimit.RefuseFallback())
	r.With(chimw.Middleware(store, httplimit.Stack(
		httplimit.Limit(account, keyfuncs.FormUsername("username")),
		httplimit.Limit(loginIP, clientIP.Key),
	), namedOnly)).Post("/login", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "checked\n") })
	return r
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
