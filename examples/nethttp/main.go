// Command nethttp limits a net/http ServeMux: 10 requests per second per client
// IP with bursts of 20, and a report that costs 5 of them.
//
//	go run ./examples/nethttp
//	curl -i localhost:8080/hello
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
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // add TrustedProxies behind a proxy
	limit := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))
	limitReport := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))

	mux := http.NewServeMux()
	mux.Handle("GET /hello", limit(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "hello\n")
	})))
	mux.Handle("GET /report", limitReport(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "an expensive report\n")
	})))
	return mux
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
