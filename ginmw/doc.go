// Package ginmw is the rate limiter as gin middleware, a gin.HandlerFunc built on
// the httplimit engine. A refused request is aborted with 429, the RateLimit
// fields, Retry-After and an RFC 9457 problem body.
//
// Client addresses come from keyfuncs.ClientIP, which trusts only the proxies you
// list; gin's c.ClientIP() is not used, as it trusts forwarding headers from
// every peer unless the engine is configured otherwise.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	r := gin.New()
//	r.GET("/api/resource", ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key)), resource)
//	r.GET("/api/report", ginmw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5)), report)
//
// The middleware sets r.Pattern to the gin route (c.FullPath()) when it is empty,
// so keyfuncs.Route() keys requests by endpoint here too.
package ginmw
