//lint:file-ignore U1000 the README's snippets are compiled here, never called

package readme

// Each function below holds one Go snippet of the README, line for line, with the
// declarations around it that the README leaves to the reader. They are compiled by
// `go test` and `go vet`, and TestREADMESnippetsAreCompiled checks that every snippet
// of the README is in this file (or, for the complete program, in examples/chi), so a
// README snippet that stops compiling fails the tests.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/netip"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/go-ratelimit/ratelimit/chimw"
	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/httplimit"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/prommetrics"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/resilient"
	"github.com/go-ratelimit/ratelimit/echomw"
	"github.com/go-ratelimit/ratelimit/ginmw"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
	"github.com/go-ratelimit/ratelimit/nethttp"
)

// "Use it on your router": one line per router.
func perIP(r chi.Router, g *gin.Engine, e *echo.Echo, mux *http.ServeMux, addr string) {
	r.Use(chimw.PerIP(core.PerSecond(10)))                            // chi
	g.Use(ginmw.PerIP(core.PerSecond(10)))                            // gin
	e.Use(echomw.PerIP(core.PerSecond(10)))                           // echo
	http.ListenAndServe(addr, nethttp.PerIP(core.PerSecond(10))(mux)) // net/http
}

// "Use it on your router": a store and policies of your own.
func ownStore(r chi.Router, g *gin.Engine, e *echo.Echo, mux *http.ServeMux, resource http.Handler) {
	store := memory.MustNew()
	defer store.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
	limit := httplimit.Limit(api, clientIP.Key)

	mux.Handle("GET /api/resource", nethttp.Middleware(store, limit)(resource)) // net/http
	r.Use(chimw.Middleware(store, limit))                                       // chi
	g.Use(ginmw.Middleware(store, limit))                                       // gin
	e.Use(echomw.Middleware(store, limit))                                      // echo
}

// "Composition": route costs in one table.
func routeCosts(r chi.Router, store core.Store, api core.Policy, clientIP *keyfuncs.ClientIP) {
	costs := map[string]int64{"/api/report": 5, "/api/export": 20}
	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithRouteCosts(costs)))
}

// "Keys": identities a client cannot mint.
func keys() keyfuncs.KeyFunc {
	ip := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
		Header:         keyfuncs.XForwardedFor, // the one header your proxies set
	})
	valid := keyfuncs.APIKeySet("k1", "k2") // or a func(ctx, key) (bool, error) over your key store
	key := keyfuncs.FirstOf(keyfuncs.ValidAPIKey("X-API-Key", valid), ip.Key)
	subnet, err := ip.Subnet(24, 56) // the client's /24 (IPv4) or /56 (IPv6); an error for bits out of range
	_, _ = subnet, err
	return key
}

// "Use it on your router": a limit on one route.
func perRoute(r chi.Router, g *gin.Engine, e *echo.Echo, mux *http.ServeMux, store core.Store, account core.Policy,
	loginHandler http.Handler, ginLogin gin.HandlerFunc, echoLogin echo.HandlerFunc) {
	login := httplimit.Limit(account, keyfuncs.FormUsername("username"))
	mux.Handle("POST /login", nethttp.Middleware(store, login)(loginHandler))     // net/http
	r.With(chimw.Middleware(store, login)).Method("POST", "/login", loginHandler) // chi
	g.POST("/login", ginmw.Middleware(store, login), ginLogin)                    // gin
	e.POST("/login", echoLogin, echomw.Middleware(store, login))                  // echo
}

// "Algorithms": a decision in Go, without HTTP.
func decide(ctx context.Context, store core.Store, api core.Policy) {
	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
	switch {
	case err != nil: // the store failed; never "over limit"
	case !res.Allowed:
		fmt.Println("429; retry after", res.RetryAfter)
	}
}

// "Redis in production": resilient plus metrics, a complete function.
func run(ctx context.Context) error {
	registry := prometheus.NewRegistry()
	metrics, err := prommetrics.New(registry)
	if err != nil {
		return err
	}
	shared, err := redisstore.Dial([]string{"10.0.0.5:6379"}) // several: Cluster; Sentinel, TLS: DialUniversal
	if err != nil {
		return err
	}
	if err := shared.CheckEviction(ctx); err != nil {
		log.Print(err) // want maxmemory-policy noeviction: an evicted key gets its whole limit again
	}
	store, err := resilient.New(shared,
		resilient.WithMode(resilient.Local),                   // the default failure mode
		resilient.WithReplicas(4),                             // local mode enforces 1/4 per replica
		resilient.WithPolicyMode("account", resilient.Closed), // per-policy override
		resilient.WithMonitor(metrics))
	if err != nil {
		shared.Close()
		return err
	}
	defer store.Close() // closes shared too
	if err := store.Check(ctx); errors.Is(err, resilient.ErrPermanent) {
		return err // this Redis cannot run the limiter: fail at start-up
	}

	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{}) // list your proxies in TrustedProxies
	r := chi.NewRouter()
	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
		httplimit.WithObserver(metrics.HTTPObserver())))
	// ... your routes on r
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{})) // not limited
	mux.Handle("/", r)
	return http.ListenAndServe(":8080", mux)
}

// "Metrics": the HTTP observer on any store.
func httpMetrics(registry prometheus.Registerer, store core.Store, limit httplimit.Limits) {
	metrics, err := prommetrics.New(registry)
	mw := chimw.Middleware(store, limit, httplimit.WithObserver(metrics.HTTPObserver()))
	_, _ = mw, err
}
