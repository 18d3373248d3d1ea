// Package httplimit is the HTTP contract of the rate limiter, written once and used
// by every router adapter (nethttp, chimw, ginmw, echomw). It imports no web
// framework.
//
// A Limiter validates and precomputes its configuration at construction (errors
// name the policy), then runs each request through one path:
//
//  1. skippers and the allow-list exempt a request entirely;
//  2. each policy of the stack is resolved (static, or per request with LimitFunc,
//     such as a tenant's plan), and keyed by its KeyFunc; a missing identity falls
//     back to the TCP peer, never to no limit at all (WithKeyFallback);
//  3. the cost is a constant, a function of the request, or settled after the
//     handler with a refund (WithCost, WithCostFunc, WithSettle);
//  4. the store decides the stack all-or-nothing;
//  5. the fields are written: RateLimit-Policy and RateLimit (draft-ietf-httpapi-
//     ratelimit-headers, one member per policy in stack order), optionally the
//     legacy X-RateLimit-* fields, and Retry-After on a refusal;
//  6. the adapter refuses (429 with an RFC 9457 problem body), reports an error
//     (503 for a failed store by default), or runs the handler: after a
//     leaky-bucket wait, holding concurrency leases that are released when the
//     handler returns or panics. Shadow mode decides and counts but never refuses.
//
// An Observer sees every decision and error, for metrics and logs.
//
// Adapters use it like this (the net/http one, in full, is little more):
//
//	l, err := httplimit.New(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))
//	...
//	t := l.Start(r, w.Header())
//	switch t.Outcome() {
//	case httplimit.Denied:
//		httplimit.WriteDenial(w, t.Denial())
//	case httplimit.Failed:
//		httplimit.WriteError(w, t.Err())
//	case httplimit.Admitted:
//		if t.Wait(r.Context()) == nil {
//			next.ServeHTTP(w, r)
//		}
//	default: // Skipped
//		next.ServeHTTP(w, r)
//	}
//	t.Finish(status, true)
package httplimit
