// Package echomw is the rate limiter as echo middleware, an echo.MiddlewareFunc
// built on the httplimit engine. A refused request gets 429, the RateLimit fields,
// Retry-After and an RFC 9457 problem body.
//
// Client addresses come from keyfuncs.ClientIP, which trusts only the proxies you
// list; echo's RealIP() is not used, as it believes forwarding headers from any
// peer unless an IP extractor is configured.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	e := echo.New()
//	e.GET("/api/resource", resource, echomw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	e.GET("/api/report", report, echomw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5)))
//
// The middleware sets r.Pattern to the echo route (c.Path()) when it is empty, so
// keyfuncs.Route() keys requests by endpoint here too.
package echomw
