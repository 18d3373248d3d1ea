package nethttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

func ExampleMiddleware() {
	store := memory.MustNew(memory.WithClock(storetest.NewClock().Now)) // a virtual clock, for a stable output
	defer store.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})

	mux := http.NewServeMux()
	mux.Handle("GET /report", nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(8))(
		http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "report\n") })))

	for range 3 {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/report", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "api";q=20;w=2 "api";r=12;t=1
	// 200 "api";q=20;w=2 "api";r=4;t=2
	// 429 "api";q=20;w=2 "api";r=4;t=1
}
