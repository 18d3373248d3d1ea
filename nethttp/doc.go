// Package nethttp is the rate limiter as net/http middleware,
// func(http.Handler) http.Handler: it applies the limits declared with
// core/httplimit, through the engine core/httpengine. It imports no web
// framework, so it also serves chi and any router that takes such middleware.
//
// The simplest limiter is one line: a token bucket per client address, in memory.
//
//	http.ListenAndServe(addr, nethttp.PerIP(core.PerSecond(10))(mux))
//
// Limits declared around the whole mux and on one pattern make one decision per
// request: a policy declared twice is charged once, at the inner cost; an inner
// refusal spends nothing of the outer policies; the response lists each policy
// once.
//
//	store := memory.MustNew()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	mux := http.NewServeMux()
//	mux.Handle("GET /api/resource", resource)
//	mux.Handle("GET /api/report", nethttp.Middleware(store,
//		httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))(report))
//	handler := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key))(mux)
//
// Weights are better in the table of the middleware directly around the mux (an outer
// refusal's Retry-After is then for the route's cost, not for 1), matched on the ServeMux
// pattern, which it looks up before the mux routes (around any other handler it cannot
// see the routes, and panics):
//
//	handler := nethttp.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithRouteCosts(map[string]int64{"GET /api/report": 5}))(mux)
//
// A key without the method ("/api/report") covers the route for every method.
// Routes grouped on a ServeMux mounted as a handler of that mux
// (mux.Handle("/api/", apiMux)) are matched on the inner mux's pattern, as it
// routes them. A mux behind another handler, such as http.StripPrefix, cannot be
// seen: wrap it in a middleware of its own with its table, which merges with the
// outer one (the same policy is charged once, at the inner cost).
//
// keyfuncs.Route() reads r.Pattern, which the mux sets when it routes. It finds
// one in a middleware on a pattern's handler, and around the mux only with
// WithRouteCosts, whose lookup sets it first. Around the mux without
// WithRouteCosts, every request gets Route's ErrNoKey, and so the fallback key:
// the lookup is left out there because it costs a second routing per request.
//
// A refused request gets 429 with the RateLimit fields, Retry-After and an RFC 9457
// problem body; replace it with WithDenyHandler. A store failure gets 503 by
// default; replace it with WithErrorHandler.
package nethttp
