// Package chimw is the rate limiter for chi routers. chi takes net/http
// middleware, so this package reuses nethttp and uses chi only to read route
// patterns (Route, and the pattern httplimit.WithRouteCosts matches in r.Use).
//
// The simplest limiter is one line: a token bucket per client address, in memory.
//
//	r := chi.NewRouter()
//	r.Use(chimw.PerIP(core.PerSecond(10)))
//
// Limits declared app-wide and per route make one decision per request: a policy
// declared twice is charged once, at the route's cost; a route's refusal spends
// nothing of the app-wide policies; the response lists each policy once.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	r := chi.NewRouter()
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key))) // before the routes
//	r.Get("/api/resource", resource)
//	// five times the work: a request costs 5 of the same bucket, not 6
//	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
//		Get("/api/report", report)
//
// Weights are better in the app-wide middleware's table, matched on chi's patterns:
// the Retry-After of an app-wide refusal is then for the route's cost, not for 1.
//
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5})))
package chimw
