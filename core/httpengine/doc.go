// Package httpengine is the HTTP contract of the rate limiter, written once and used
// by every router adapter (nethttp, chimw, ginmw, echomw). It imports no web
// framework.
//
// A Limiter validates and precomputes its configuration at construction (errors
// name the policy), then runs each request through one path:
//
//  1. skippers and the allow-list exempt a request entirely (WithSkip,
//     WithAllowList);
//  2. each policy of the stack is resolved (static, or per request with LimitFunc,
//     such as a tenant's plan), and keyed by its KeyFunc. A missing identity
//     (keyfuncs.ErrNoKey, an empty or an oversized key) takes the fallback
//     chosen with WithKeyFallback: ClientIPFallback, the default, limits the
//     request by the client's address (the TCP peer unless given a
//     keyfuncs.ClientIP that trusts proxies); RefuseFallback refuses it as
//     unidentified (400); SkipFallback exempts it from a single-policy Limiter,
//     and New refuses it for a stack, whose other policies the skip would lift
//     too. Any other key error (a body that cannot be parsed, say) refuses the
//     request: 400, or 413 for a body over a size limit;
//  3. the cost is a constant, a route's (WithRouteCosts), a function of the
//     request, or settled after the handler with a refund (WithCost,
//     WithCostFunc, WithSettle);
//  4. the store decides the stack all-or-nothing, merged with the decision of an
//     outer Limiter the request already passed (see Composition);
//  5. the fields are written: RateLimit-Policy and RateLimit (draft-ietf-httpapi-
//     ratelimit-headers, one member per policy in stack order), optionally the
//     legacy X-RateLimit-* fields, and Retry-After on a refusal;
//  6. the adapter refuses (429 with an RFC 9457 problem body), reports an error
//     (503 for a failed store by default), or runs the handler: after a
//     leaky-bucket wait, holding concurrency leases that are released when the
//     handler returns or panics. Shadow mode decides and counts but never refuses.
//
// An Observer sees every decision and error, for metrics and logs, and a
// KeyFallbackObserver every fallback taken. A request that cannot be decided is
// also logged at error level (WithLogger), without its key, at most one line per
// second; a request that ended before its decision is logged at debug.
//
// # Composition
//
// Apps declare limits in layers: an app-wide middleware, then a route's. Whatever
// the layering, a request gets one decision. Each Limiter decides when the
// request reaches it (no router tells a middleware whether another limiter
// follows: echo builds a route's middlewares inside an opaque handler), and
// passes on a request (Ticket.Request) whose context carries its decision. A
// Limiter on the same store that finds such a decision merges its own rules into
// it:
//
//   - a policy declared by both is charged once, at the inner declaration's key
//     and cost (a route's WithCost(5) under an app-wide limit of the same policy
//     costs 5, not 6): the inner Limiter charges the difference, or refunds the
//     excess;
//   - the merged rules are all-or-nothing: when the inner rules refuse, what the
//     outer Limiter charged is refunded and its leases released, so a route's
//     refusal spends nothing of the app-wide policies;
//   - the inner Limiter writes the fields of the merged decision, one
//     RateLimit-Policy and one RateLimit member per policy, outer policies first;
//   - observers of both see one event for the request, when it ends.
//
// Giving back needs a store that implements core.Refunder (the memory and Redis
// stores do); on another store, what an outer Limiter charged stays charged when
// an inner one refuses or costs less. Limiters on different stores decide
// separately. A shadow-mode Limiter's refusals let a merged request through only
// when every Limiter merged into it is in shadow mode. Between the outer charge
// and a refund, concurrent requests of the same key see the charge: never more
// is admitted than one merged decision allows, at worst briefly less.
//
// Values the router keeps outside the request context (gin's and echo's c.Set)
// reach the key functions through the same context (WithRouterValues), so
// keyfuncs.Tenant("tenant") reads c.Set("tenant", …).
//
// Adapters use it like this (the net/http one, in full, is little more):
//
//	l, err := httpengine.New(store, httpengine.Limit(api, clientIP.Key), httpengine.WithCost(5))
//	...
//	t := l.Start(r, w.Header())
//	switch t.Outcome() {
//	case httpengine.Denied:
//		httpengine.WriteDenial(w, t.Denial())
//	case httpengine.Failed:
//		httpengine.WriteError(w, t.Err())
//	case httpengine.Admitted:
//		if t.Wait(r.Context()) == nil {
//			next.ServeHTTP(w, t.Request())
//		}
//	default: // Skipped
//		next.ServeHTTP(w, r)
//	}
//	t.Finish(status, true)
package httpengine
