// Package nethttp is the rate limiter as net/http middleware,
// func(http.Handler) http.Handler, built on the httplimit engine. It imports no
// web framework, so it also serves chi and any router that takes such middleware.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//	limit := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))
//
//	mux := http.NewServeMux()
//	mux.Handle("GET /api/resource", limit(resource))
//	mux.Handle("GET /api/report", nethttp.Middleware(store,
//		httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))(report))
//
// A refused request gets 429 with the RateLimit fields, Retry-After and an RFC 9457
// problem body; replace it with WithDenyHandler. A store failure gets 503 by
// default; replace it with WithErrorHandler.
package nethttp
