package resilient

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrorKind classifies a failed shared-store call. The values are the kind label of
// ratelimit_store_errors_total.
type ErrorKind string

// The kinds of store errors.
const (
	// KindTimeout: the call did not answer within the deadline (a hung or overloaded
	// server, a dead link). Transient: the failure mode decides.
	KindTimeout ErrorKind = "timeout"
	// KindUnavailable: the store reported itself unreachable or not ready (connection
	// refused or reset, LOADING, READONLY, CLUSTERDOWN, …): an error wrapping
	// core.ErrStoreUnavailable, or a network error. Transient.
	KindUnavailable ErrorKind = "unavailable"
	// KindOverload: the call was not sent because too many calls were in flight.
	// Transient.
	KindOverload ErrorKind = "overload"
	// KindPermanent: the store answered, but not as a working store does. Returned as
	// an error wrapping ErrPermanent in every mode, and logged at error level.
	KindPermanent ErrorKind = "permanent"
)

// outcome is how one shared-store call ended, for the breaker and the failure modes.
type outcome int

const (
	succeeded outcome = iota // the store decided
	canceled                 // the caller's ctx ended: not the store's fault
	failed                   // a transient failure: the failure mode decides
	broken                   // a permanent error: returned as an error
)

// classify sorts the error of a call made under callCtx (ctx plus the deadline). A
// call that ended because the caller's ctx did is canceled, whatever its error; one
// that ran out of the deadline is a timeout.
func classify(ctx context.Context, err error, timedOut bool) (outcome, ErrorKind) {
	switch {
	case err == nil && !timedOut:
		return succeeded, ""
	case ctx.Err() != nil:
		return canceled, ""
	case timedOut, errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// the caller's ctx is live, so the deadline ended the call
		return failed, KindTimeout
	case errors.Is(err, ErrOverload):
		return failed, KindOverload
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return failed, KindTimeout
	}
	if errors.Is(err, core.ErrStoreUnavailable) || netErr != nil ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return failed, KindUnavailable
	}
	return broken, KindPermanent
}
