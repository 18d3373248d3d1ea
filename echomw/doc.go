// Package echomw is the rate limiter as echo middleware, an echo.MiddlewareFunc
// that applies the limits declared with core/httplimit, through the engine
// core/httpengine. A refused request gets 429, the RateLimit fields,
// Retry-After and an RFC 9457 problem body.
//
// Client addresses come from keyfuncs.ClientIP, which trusts only the proxies you
// list; echo's RealIP() is not used, as it believes forwarding headers from any
// peer unless an IP extractor is configured.
//
// The simplest limiter is one line: a token bucket per client address, in memory.
//
//	e := echo.New()
//	e.Use(echomw.PerIP(core.PerSecond(10)))
//
// Limits declared app-wide (e.Use) and on a route make one decision per request:
// a policy declared twice is charged once, at the route's cost; a route's refusal
// spends nothing of the app-wide policies; the response lists each policy once.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	e := echo.New()
//	e.Use(echomw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	e.GET("/api/resource", resource)
//	e.GET("/api/report", report, echomw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5)))
//
// Weights are better in the app-wide middleware's table, matched on c.Path():
// the Retry-After of an app-wide refusal is then for the route's cost, not for 1.
//
//	e.Use(echomw.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5})))
//
// Values stored with c.Set reach the key functions: after
// c.Set("tenant", "acme") in an authentication middleware,
// keyfuncs.Tenant("tenant") keys the request as "tenant:acme". The middleware also
// sets r.Pattern to the echo route (c.Path()), also over the pattern of a
// ServeMux that mounts the server, so keyfuncs.Route() and WithRouteCosts see
// the endpoint here too.
//
// keyfuncs.FormField and FormUsername require the field to be unambiguous across
// the body and the URL query: a copy with another value (a decoy), or a POST's
// field found only in the query, is refused with 400 before the handler runs. So
// the handler may read the field with c.FormValue or PostFormValue alike.
package echomw
