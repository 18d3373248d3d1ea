package httplimit

import "github.com/go-ratelimit/ratelimit/core/httpengine"

// Observer watches a limiter's decisions and errors, for metrics and logs (see
// WithObserver): OnDecision(e *Event) once per decided request (a refusal before
// it is answered, an admitted request when it ends), and OnError(r *http.Request,
// err error) for a request that could not be decided or a lease or refund that
// failed after it. Its methods are called synchronously on the request's
// goroutine, so they must be quick and safe for concurrent use; a panic in one is
// a panic of the request, raised after the limiter has settled it.
// When limiters are nested, one merged decision is one event, seen by the
// observers of every limiter merged into it. The methods' contract:
// httpengine.Observer.
type Observer = httpengine.Observer

// Event is one decided request, as an Observer sees it: the request, what was
// asked of the store and its answer per policy, whether the request was allowed,
// shadow mode, and whether a key fallback was taken. Event.Verdict(i) is what the
// i-th policy amounted to; Event.Shown(i) names, for a policy a merged decision
// charges under two keys, the one result the response shows. Its fields:
// httpengine.Event.
type Event = httpengine.Event

// Verdict is what one policy of a decided request amounted to (Event.Verdict).
type Verdict = httpengine.Verdict

// The verdicts, usable as metric label values.
const (
	// VerdictAllowed: the request was admitted and charged.
	VerdictAllowed Verdict = httpengine.VerdictAllowed
	// VerdictDenied: this policy refused the request; nothing was charged.
	VerdictDenied Verdict = httpengine.VerdictDenied
	// VerdictShadowDenied: this policy would have refused the request, and shadow
	// mode let it through uncharged.
	VerdictShadowDenied Verdict = httpengine.VerdictShadowDenied
	// VerdictUncharged: this policy would have admitted the request, but another
	// policy of its stack (or of a nested limiter's rules) refused it, so nothing
	// was charged.
	VerdictUncharged Verdict = httpengine.VerdictUncharged
	// VerdictUnenforced: the policy's store failed and its failure mode admitted
	// the request without counting it (core.Result.Unenforced).
	VerdictUnenforced Verdict = httpengine.VerdictUnenforced
)

// The reasons ErrorReason reports, usable as metric label values.
const (
	// ReasonKey: a key function failed (the error wraps ErrUnidentified).
	ReasonKey = httpengine.ReasonKey
	// ReasonPolicy: a policy function (LimitFunc) failed or returned an invalid
	// policy.
	ReasonPolicy = httpengine.ReasonPolicy
	// ReasonCost: a cost function failed or returned a cost the policy cannot
	// admit.
	ReasonCost = httpengine.ReasonCost
	// ReasonStore: the store failed (the error wraps ErrStore), deciding or giving
	// back.
	ReasonStore = httpengine.ReasonStore
	// ReasonCanceled: the request ended before its decision.
	ReasonCanceled = httpengine.ReasonCanceled
	// ReasonOther: anything else, such as a merged decision the store rejected.
	ReasonOther = httpengine.ReasonOther
)

// ErrorReason classifies an error given to Observer.OnError: ReasonKey,
// ReasonPolicy, ReasonCost, ReasonStore, ReasonCanceled or ReasonOther.
func ErrorReason(err error) string { return httpengine.ErrorReason(err) }
