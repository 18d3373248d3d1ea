// Package ginmw is the rate limiter as gin middleware, a gin.HandlerFunc that
// applies the limits declared with core/httplimit, through the engine
// core/httpengine. A refused request is aborted with 429, the RateLimit
// fields, Retry-After and an RFC 9457 problem body.
//
// Client addresses come from keyfuncs.ClientIP, which trusts only the proxies you
// list; gin's c.ClientIP() is not used, as it trusts forwarding headers from
// every peer unless the engine is configured otherwise.
//
// The simplest limiter is one line: a token bucket per client address, in memory.
//
//	r := gin.New()
//	r.Use(ginmw.PerIP(core.PerSecond(10)))
//
// Limits declared app-wide (r.Use) and in a route's handler chain make one
// decision per request: a policy declared twice is charged once, at the route's
// cost; a route's refusal spends nothing of the app-wide policies; the response
// lists each policy once.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	r := gin.New()
//	r.Use(ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	r.GET("/api/resource", resource)
//	r.GET("/api/report", ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5)), report)
//
// Weights are better in the app-wide middleware's table, matched on c.FullPath():
// the Retry-After of an app-wide refusal is then for the route's cost, not for 1.
//
//	r.Use(ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5})))
//
// gin answers its trailing-slash and fixed-path redirects (RedirectTrailingSlash,
// on by default, and RedirectFixedPath) before any r.Use middleware runs, so an
// app-wide limit never sees them: 100 requests to "/items/" get 100 redirects.
// To limit them, turn both off, or wrap the engine in nethttp.Middleware, which
// sees every request.
//
// Values stored with c.Set reach the key functions: after
// c.Set("tenant", "acme") in an authentication middleware,
// keyfuncs.Tenant("tenant") keys the request as "tenant:acme". The middleware also
// sets r.Pattern to the gin route (c.FullPath()), also over the pattern of a
// ServeMux that mounts the engine, so keyfuncs.Route() and WithRouteCosts see
// the endpoint here too.
package ginmw
