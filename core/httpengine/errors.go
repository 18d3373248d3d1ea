package httpengine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/keyfuncs"
)

// errPolicyFunc and errCostFunc are wrapped by the errors of failing policy and
// cost functions, so that ErrorReason can tell them apart.
var (
	errPolicyFunc = errors.New("httplimit: policy function")
	errCostFunc   = errors.New("httplimit: cost function")
)

// The reasons ErrorReason reports (see httplimit.ReasonKey).
const (
	ReasonKey      = "key"      // a key function failed
	ReasonPolicy   = "policy"   // a policy function failed
	ReasonCost     = "cost"     // a cost function failed
	ReasonStore    = "store"    // the store failed
	ReasonCanceled = "canceled" // the request ended before its decision
	ReasonOther    = "other"    // anything else
)

// ErrorReason classifies an error given to Observer.OnError: ReasonKey,
// ReasonPolicy, ReasonCost, ReasonStore, ReasonCanceled or ReasonOther.
func ErrorReason(err error) string {
	switch {
	case errors.Is(err, ErrUnidentified):
		return ReasonKey
	case errors.Is(err, errPolicyFunc), errors.Is(err, core.ErrInvalidPolicy):
		return ReasonPolicy
	case errors.Is(err, errCostFunc), errors.Is(err, core.ErrInvalidCost), errors.Is(err, ErrCostTooHigh):
		return ReasonCost
	case errors.Is(err, ErrStore):
		return ReasonStore
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ReasonCanceled
	}
	return ReasonOther
}

// errorLog logs undecided requests at error level, at most once per
// errorLogInterval, counting the ones it leaves out, so that a key function that
// fails on every request does not flood the log.
type errorLog struct {
	logger *slog.Logger

	mu         sync.Mutex
	last       time.Time
	suppressed int64
}

// errorLogInterval is the least time between two error lines of one Limiter.
const errorLogInterval = time.Second

// log logs err about r, without the key: the method, the route (never the raw
// path, which may carry identities) and the error, whose text names the policy.
// A request that ended before its decision (whatever failed when it did: the store
// or a key function's lookup), or that its client sent malformed (clientFault), is
// no error of the limiter's: it is logged at debug, so that no client can write
// error lines at will.
func (e *errorLog) log(r *http.Request, err error) {
	ctx := r.Context()
	if ErrorReason(err) == ReasonCanceled || ctx.Err() != nil {
		if e.logger.Enabled(ctx, slog.LevelDebug) {
			e.logger.LogAttrs(ctx, slog.LevelDebug, "rate limit: request ended before its decision",
				slog.String("method", r.Method), slog.String("route", r.Pattern))
		}
		return
	}
	if clientFault(err) {
		if e.logger.Enabled(ctx, slog.LevelDebug) {
			e.logger.LogAttrs(ctx, slog.LevelDebug, "rate limit: malformed request not decided",
				slog.String("method", r.Method), slog.String("route", r.Pattern), slog.Any("error", err))
		}
		return
	}
	e.mu.Lock()
	now := time.Now()
	if !e.last.IsZero() && now.Sub(e.last) < errorLogInterval {
		e.suppressed++
		e.mu.Unlock()
		return
	}
	suppressed := e.suppressed
	e.last, e.suppressed = now, 0
	e.mu.Unlock()
	e.logger.LogAttrs(ctx, slog.LevelError, "rate limit: request not decided",
		slog.String("reason", ErrorReason(err)), slog.String("method", r.Method), slog.String("route", r.Pattern),
		slog.Any("error", err), slog.Int64("errors_not_logged", suppressed))
}

// clientFault reports whether err is the client's: a body that cannot be parsed
// or is too large, an invalid username, no key where the fallback refuses, or a
// cost its policy never admits (each answered 4xx). A key function that fails otherwise (a validator whose
// backend is down, a trusted proxy that forwarded no address) is not.
func clientFault(err error) bool {
	return errors.Is(err, keyfuncs.ErrBadForm) || errors.Is(err, keyfuncs.ErrFormTooLarge) ||
		errors.Is(err, keyfuncs.ErrBadJSON) || errors.Is(err, keyfuncs.ErrInvalidUsername) ||
		errors.Is(err, keyfuncs.ErrNoKey) || errors.Is(err, ErrCostTooHigh)
}

// errClientClosed marks the error of a request whose own context was cancelled
// before its decision: its client went away (ErrorResponse answers 499).
var errClientClosed = errors.New("httplimit: the client closed the request")

// endedEarly is err, the error of a request whose ctx ended before its decision,
// marked with errClientClosed when ctx was cancelled rather than past its deadline.
// The mark comes from the request's own context, never from err's chain: a store or
// a key function may return a context.Canceled of its own to a client still there.
func endedEarly(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("%w: %w", errClientClosed, err)
	}
	return err
}
