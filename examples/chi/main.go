// Command chi limits a chi router: every client IP gets 10 requests per second
// with bursts of 20, shared by all routes, and each endpoint also has its own
// budget of 100 per minute per client.
//
//	go run ./examples/chi
//	curl -i localhost:8080/items/1
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
	endpoint := core.MustPolicy("endpoint", core.SlidingWindow, core.PerMinute(100))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Stack(
		httplimit.Limit(api, clientIP.Key),
		httplimit.Limit(endpoint, keyfuncs.Join(chimw.Route(), clientIP.Key)),
	)))
	r.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "item "+chi.URLParam(r, "id")+"\n")
	})
	return r
}

func main() {
	store := memory.MustNew()
	defer store.Close()
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", newHandler(store)))
}
