// Package chimw is the rate limiter for chi routers. chi takes net/http
// middleware, so this package reuses nethttp and uses chi only to read route
// patterns (Route), for limits per endpoint.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	r := chi.NewRouter()
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	r.Get("/api/resource", resource)
//	// five times the work: five times the cost, in the same bucket
//	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
//		Get("/api/report", report)
//	// every endpoint its own budget per client
//	perRoute := keyfuncs.Join(chimw.Route(), clientIP.Key)
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, perRoute)))
package chimw
