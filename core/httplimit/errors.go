package httplimit

import "github.com/go-ratelimit/ratelimit/core/httpengine"

// The errors an error handler and Observer.OnError receive wrap one of these;
// test them with errors.Is. Anything else comes from a failing policy or cost
// function (500 by default).
var (
	// ErrStore: the store could not decide (the backend is unreachable, say). The
	// default error handlers answer 503 with Retry-After (the failure mode's hint
	// when it has one, as resilient's closed mode gives).
	ErrStore = httpengine.ErrStore
	// ErrUnidentified: the request's key could not be found. Its key function
	// failed with an error other than keyfuncs.ErrNoKey (a body that cannot be
	// parsed, say), or it found no identity and the fallback refuses such
	// requests (RefuseFallback). The default error handlers answer 400, 413
	// when the body is over a size limit before the identity is found
	// (keyfuncs.ErrFormTooLarge), or 503 with Retry-After when the identity could
	// not be checked now (keyfuncs.ErrUnavailable: an API-key validator whose
	// backend is down). Such a request is never charged to another name.
	ErrUnidentified = httpengine.ErrUnidentified
	// ErrCostTooHigh: the cost function (WithCostFunc) priced the request above
	// what one of its policies ever admits. The default error handlers answer 400.
	ErrCostTooHigh = httpengine.ErrCostTooHigh
)

// Denial describes a refused request to a router package's deny handler
// (WithDenyHandler): the policies' results, Violated (the names of those that
// refused), RetryAfter, and Problem, the default RFC 9457 body with its
// SetContentType. The rate-limit fields and Retry-After are already set on the
// response. A Denial is only valid until the handler returns. Its fields and
// methods: httpengine.Denial.
type Denial = httpengine.Denial
