// Package httplimit declares an HTTP application's rate limits: which policies a
// request is charged to, by which key and at what cost, and who observes the
// decisions. A router package applies them: nethttp (net/http), chimw (chi),
// ginmw (gin) or echomw (echo), all driving the same engine, so a configuration
// means the same on every router.
//
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	clientIP := keyfuncs.MustClientIP(keyfuncs.ClientIPConfig{})
//
//	r := chi.NewRouter()
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key)))
//	r.Get("/api/resource", resource)
//	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
//		Get("/api/report", report)
//
// Configuration is checked when the middleware is built: an error names the
// policy or option at fault. Each request then goes through one path:
//
//  1. skippers and the allow-list exempt a request entirely (WithSkip,
//     WithAllowList);
//  2. each policy is resolved (Limit, or LimitFunc for a policy per request,
//     such as a tenant's plan) and keyed by its key function. A request without
//     that identity takes the fallback of WithKeyFallback: by default it is
//     limited by the client's address. Any other key error (a body that cannot
//     be parsed, say) refuses the request: 400, or 413 for a body over a size
//     limit;
//  3. the cost is a constant, a route's, a function of the request, or settled
//     after the handler with a refund (WithCost, WithRouteCosts, WithCostFunc,
//     WithSettle);
//  4. the store decides the stack all-or-nothing (Stack), merged with the
//     decision of an outer limiter the request already passed (see
//     Composition);
//  5. the response carries the rate-limit fields (WithFields: RateLimit-Policy
//     and RateLimit by default), and Retry-After on a refusal;
//  6. a refused request gets 429 with an RFC 9457 problem body, one that could
//     not be decided 503 (a failed store, ErrStore, or an identity that could
//     not be checked now, keyfuncs.ErrUnavailable), 400 (ErrUnidentified) or
//     500; the router packages' WithDenyHandler and WithErrorHandler replace
//     these answers. An admitted request runs its handler, after a leaky-bucket
//     wait, holding its concurrency leases until the handler returns or
//     panics. WithShadow decides and counts but never refuses.
//
// An Observer (WithObserver; prommetrics' HTTPObserver is one) sees every
// decision and error, and a KeyFallbackObserver every fallback taken. A request
// that cannot be decided is also logged at error level (WithLogger), without its
// key, at most one line per second; one its client sent malformed, at debug.
//
// # Composition
//
// Apps declare limits in layers: an app-wide middleware, then a route's. Whatever
// the layering, a request gets one decision. Each limiter decides when the
// request reaches it (no router tells a middleware whether another limiter
// follows), and a limiter on the same store that finds the decision of an outer
// one merges its own rules into it:
//
//   - a policy declared by both is charged once, at the inner declaration's key
//     and cost (a route's WithCost(5) under an app-wide limit of the same policy
//     costs 5, not 6): the inner limiter charges the difference, or refunds the
//     excess;
//   - the merged rules are all-or-nothing: when the inner rules refuse, what the
//     outer limiter charged is refunded and its leases released, so a route's
//     refusal spends nothing of the app-wide policies, and neither does a route
//     that cannot be decided (a store error, a request that ended; a client's
//     fault, such as a form that cannot be parsed, keeps the charge);
//   - the response carries the fields of the merged decision, one
//     RateLimit-Policy and one RateLimit member per policy, outer policies first;
//   - observers of both see one event for the request, when it ends.
//
// Giving back needs a store that implements core.Refunder (the memory and Redis
// stores do); on another store, what an outer limiter charged stays charged when
// an inner one refuses or costs less. Limiters on different stores decide
// separately, and one between two layers (PerIP builds its own store) does not
// keep them from merging; the fields list its policies too, before the merged
// decision's. A shadow-mode limiter and an enforcing one decide separately unless
// they declare a policy in common, so a policy tried out in shadow mode never
// refuses a request; merged, a refusal passes only when every limiter merged into
// the decision is in shadow mode. Between the outer charge and a refund,
// concurrent requests of the same key see the charge: never more is admitted
// than one merged decision allows, at worst briefly less.
//
// Values the router keeps outside the request context (gin's and echo's c.Set)
// reach the key functions: keyfuncs.Tenant("tenant") reads c.Set("tenant", …).
//
// The engine behind the router packages is core/httpengine. It defines the types
// named here (their fields and methods are documented there), and its other
// names serve adapter authors: an application never imports it.
package httplimit
