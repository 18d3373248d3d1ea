// Package httplimit declares an HTTP application's rate limits: which policies a
// request is charged to, by which key and at what cost, and who observes the
// decisions. A router package applies them: nethttp (net/http), chimw (chi),
// ginmw (gin) or echomw (echo), all driving the same engine, so a configuration
// means the same on every router.
//
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
//		Get("/api/report", report)
//
// # Composition
//
// Limiters declared in layers (app-wide, then a route's) on one store make one
// decision per request. A policy declared by both layers for the same key is
// charged once, at the inner declaration's cost: the report above costs 5 of the
// client's "api" bucket, not 6; under different keys, both buckets are charged.
// The merged rules are all-or-nothing. Weights are better in the outer layer's
// WithRouteCosts table: an outer layer that refuses on its own has not seen the
// route's WithCost, and its Retry-After is for its own cost. docs/composition.md.
package httplimit
