package resilient

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("resilient: store closed")

// ErrBreakerOpen is the cause of a failure-mode decision taken without calling the
// shared store, because the circuit breaker is open.
var ErrBreakerOpen = errors.New("resilient: circuit breaker open: the shared store is not called")

// ErrTimeout is the cause of a failure-mode decision whose shared-store call did not
// answer within the deadline (WithDeadline).
var ErrTimeout = errors.New("resilient: the shared store did not answer within the deadline")

// ErrOverload is the cause of a failure-mode decision that was not sent to the shared
// store because too many of its calls were still in flight (WithMaxInFlight).
var ErrOverload = errors.New("resilient: too many shared-store calls in flight")

// ErrPermanent is wrapped by errors that no failure mode hides: the shared store
// answered, but not as a working store does (a wrong key type, keys in different
// Cluster slots, a missing command or script feature, a reply of the wrong shape).
// Such a decision is returned as an error in every mode, never turned into "allowed",
// and logged at error level.
var ErrPermanent = errors.New("resilient: permanent store error")

// UnavailableError refuses a request whose stack holds a Closed policy while the
// shared store cannot decide. It wraps core.ErrStoreUnavailable and the cause, so the
// HTTP layer answers 503 Service Unavailable (not 429: the client did nothing wrong)
// with Retry-After.
type UnavailableError struct {
	// Policies names the Closed policies that refused.
	Policies []string
	// RetryAfter hints when to try again: until the circuit breaker next probes the
	// shared store, or its cooldown (WithBreaker) when it has not opened yet.
	RetryAfter time.Duration
	// Err is the cause: the shared store's error, ErrTimeout, ErrOverload or ErrBreakerOpen.
	Err error
}

// Error describes the refusal.
func (e *UnavailableError) Error() string {
	quoted := make([]string, len(e.Policies))
	for i, name := range e.Policies {
		quoted[i] = fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("resilient: policy %s fails closed: %v (retry after %v)", strings.Join(quoted, ", "), e.Err, e.RetryAfter)
}

// RetryAfterHint is RetryAfter. HTTP error handlers (core/httpengine) read it through
// this method to set the 503's Retry-After.
func (e *UnavailableError) RetryAfterHint() time.Duration { return e.RetryAfter }

// Unwrap returns core.ErrStoreUnavailable and the cause.
func (e *UnavailableError) Unwrap() []error { return []error{core.ErrStoreUnavailable, e.Err} }
