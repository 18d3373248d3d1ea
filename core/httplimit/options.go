package httplimit

import (
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-ratelimit/ratelimit/core/httpengine"
)

// Option configures a limiter. The router packages take these options, plus
// their own (WithDenyHandler, WithErrorHandler). An invalid option fails the
// router's New with an error naming it (Middleware panics with it).
type Option = httpengine.Option

// SettleFunc settles the cost of a request after its handler returned: given the
// response status, it returns what the request really cost, from 0 to the cost it
// was charged. The difference is refunded. For example, charge nothing when the
// handler answered 304 or 5xx because the work was not done.
type SettleFunc = httpengine.SettleFunc

// WithCost sets the cost of every request (default: each policy's own default
// cost, usually 1). A route that does five times the work of another costs 5. The
// cost applies to the rate policies of the stack; a concurrency policy always
// takes its own cost in slots. Construction fails for a cost below 1 or one that a
// static policy could never admit.
//
//	r.With(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key), httplimit.WithCost(5))).
//		Get("/api/report", report)
func WithCost(cost int64) Option { return httpengine.WithCost(cost) }

// WithCostFunc computes the cost of each request, for example from the size of a
// batch. A cost above what a policy ever admits fails the request with
// ErrCostTooHigh (the client's: 400 by default); a cost below 1, or an error,
// fails it through the error handler (a programming error, 500 by default). It
// excludes WithCost and WithRouteCosts.
func WithCostFunc(cost func(*http.Request) (int64, error)) Option {
	return httpengine.WithCostFunc(cost)
}

// WithRouteCosts sets the cost of requests per route, from one app-wide
// middleware: costs maps a route pattern, exactly as the router names it, to the
// cost of its requests. The pattern is r.Pattern with net/http (such as
// "GET /api/report"; an entry without the method, "/api/report", covers every
// method of the route), chi's RoutePattern ("/api/report"), gin's FullPath and
// echo's Path; the router packages find it before the decision, also under a
// ServeMux that mounts the router and has set r.Pattern to its own (nethttp's
// middleware must wrap the ServeMux itself, and panics around any other handler,
// whose routes it cannot see). Routes that are not in the table cost the WithCost
// cost (default: the policy's own).
// Construction fails for a cost below 1 or one that a static policy could never
// admit.
//
//	r.Use(chimw.Middleware(store, httplimit.Limit(api, clientIP.Key),
//		httplimit.WithRouteCosts(map[string]int64{"/api/report": 5})))
func WithRouteCosts(costs map[string]int64) Option { return httpengine.WithRouteCosts(costs) }

// WithSettle settles each admitted request's cost after its handler returns and
// refunds the difference. settle is called once for each rate policy the
// limiter declares, with what that policy charged (policies of a stack may cost
// differently). When limiters compose (see Composition), a policy is settled by
// the innermost limiter that declares it and has a settle function: an app-wide
// WithSettle keeps settling the app-wide policies of requests a route's limiter
// merged, and a route's settles only what the route declares. A refund goes back
// to the window that counted the charge (core.Refunder): a handler that ends after
// another request opened the next window gives nothing to that window. A bucket
// gets back what it has not refilled since the charge: a handler that ends after
// the bucket refilled gives back nothing the refill covered. The store must
// implement core.Refunder (the memory and Redis stores do): construction fails
// otherwise. A handler that panics is not settled: it keeps its whole cost.
func WithSettle(settle SettleFunc) Option { return httpengine.WithSettle(settle) }

// WithSkip exempts the requests for which skip returns true: they are neither
// decided nor counted and carry no rate-limit fields. Several skippers combine:
// any of them may exempt a request.
func WithSkip(skip func(*http.Request) bool) Option { return httpengine.WithSkip(skip) }

// WithAllowList exempts requests whose client address lies in one of prefixes.
// addr resolves the client address; nil means the TCP peer (r.RemoteAddr), which
// is the right choice unless the address comes through trusted proxies, in which
// case pass a keyfuncs.ClientIP's Addr method. A request whose address cannot be
// resolved is not exempt. IPv4-mapped prefixes match the IPv4 addresses they map.
func WithAllowList(addr func(*http.Request) (netip.Addr, error), prefixes ...netip.Prefix) Option {
	return httpengine.WithAllowList(addr, prefixes...)
}

// WithShadow turns on shadow mode: every request is decided, counted and given
// the rate-limit fields, but none is refused or made to wait. Observers see what
// would have been refused (Event.Shadow, VerdictShadowDenied). Use it to try a
// policy on live traffic. Under or over an enforcing limiter on the same store,
// it decides separately, unless both declare a policy in common (see the package
// doc, Composition).
func WithShadow() Option { return httpengine.WithShadow() }

// WithObserver attaches an observer to every decision and error, for metrics
// (prommetrics.Metrics.HTTPObserver) and logs.
func WithObserver(o Observer) Option { return httpengine.WithObserver(o) }

// WithFields chooses which rate-limit header fields responses carry (default
// IETFFields). WithFields(NoFields) sends none; Retry-After is still sent on a
// refusal.
func WithFields(f Fields) Option { return httpengine.WithFields(f) }

// WithKeyFallback chooses what happens to a request whose key function finds no
// identity (keyfuncs.ErrNoKey, an empty or an oversized key), for example a
// request without a tenant in its context or without the form field:
//
//   - ClientIPFallback(ip): limit it by the client's address (the default, with
//     the TCP peer's address);
//   - RefuseFallback(): refuse it as unidentified (400 by default);
//   - SkipFallback(): do not limit it here (single-policy limiters only).
//
// A key function's other errors are never a missing identity: they always
// refuse the request (ErrUnidentified). Every fallback taken is logged at debug
// (WithLogger), with the policy and the route, and reported to a
// KeyFallbackObserver, to be counted. WithKeyFallback(nil) is RefuseFallback().
func WithKeyFallback(f KeyFallback) Option { return httpengine.WithKeyFallback(f) }

// WithLogger sets where the limiter logs the requests it could not decide (a
// failing key, policy or cost function, a failing store) at error level, with the
// policy, method and route but never the key; a burst of such errors is logged at
// most once a second, with the number of errors left out. A request that ended
// before its decision, or that its client sent malformed (an unparsable or too
// large body, an invalid username, no key where the fallback refuses), is logged
// at debug. The default is slog.Default().
func WithLogger(logger *slog.Logger) Option { return httpengine.WithLogger(logger) }

// WithReleaseTimeout bounds the store calls made after a request ends: releasing
// concurrency leases and refunding settled costs (default one second). They run
// on a context detached from the request's, so a client that went away still
// gives its lease back.
func WithReleaseTimeout(d time.Duration) Option { return httpengine.WithReleaseTimeout(d) }
