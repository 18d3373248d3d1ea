package httpengine

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
)

// Observer watches a Limiter's decisions and errors, for metrics and logs. Its
// methods are called synchronously on the request's goroutine, so they must be
// quick and safe for concurrent use. The engine imports no metrics or logging
// library: attach them here.
type Observer interface {
	// OnDecision is called once per decided request: for a refusal, before it is
	// written; for an admitted request, when it ends (Ticket.Finish), because a
	// Limiter nested inside may still merge its decision into this one. A merged
	// decision is one event, seen by the observers of every Limiter merged into
	// it. e and its slices are only valid during the call.
	OnDecision(e *Event)
	// OnError is called when a request could not be decided (a key, policy, cost or
	// store error) and when releasing a lease or refunding a cost fails after the
	// request. err wraps ErrStore, ErrUnidentified or the failing function's error.
	OnError(r *http.Request, err error)
}

// Event is one decided request, as an Observer sees it.
type Event struct {
	// Request is the decided request.
	Request *http.Request
	// Requests holds what was asked of the store, one per policy in stack order: the
	// policy, the key (never a raw secret when keyfuncs built it) and the cost.
	Requests []core.Request
	// Results holds the store's answer for each policy, in the same order.
	Results []core.Result
	// Allowed reports whether every policy admitted the request.
	Allowed bool
	// Shadow reports shadow mode: the request proceeds even when Allowed is false.
	Shadow bool
	// FellBack reports that at least one key function failed and the fallback key
	// (the TCP peer, by default) was used instead.
	FellBack bool
}

// Verdict is what one policy of a decided request amounted to.
type Verdict string

// The verdicts, usable as metric label values.
const (
	// VerdictAllowed: the request was admitted and charged.
	VerdictAllowed Verdict = "allowed"
	// VerdictDenied: this policy refused the request; nothing was charged.
	VerdictDenied Verdict = "denied"
	// VerdictShadowDenied: this policy would have refused the request, and shadow
	// mode let it through uncharged.
	VerdictShadowDenied Verdict = "shadow_denied"
	// VerdictUncharged: this policy would have admitted the request, but another
	// policy of its stack (or of a nested Limiter's rules) refused it, so nothing
	// was charged.
	VerdictUncharged Verdict = "uncharged"
	// VerdictUnenforced: the policy's store failed and its failure mode admitted the
	// request without counting it (core.Result.Unenforced).
	VerdictUnenforced Verdict = "unenforced"
)

// Verdict is the verdict of the i-th policy.
func (e *Event) Verdict(i int) Verdict {
	switch {
	case e.Results[i].Unenforced && (e.Allowed || !refused(&e.Results[i])):
		return VerdictUnenforced
	case e.Allowed:
		return VerdictAllowed
	case !refused(&e.Results[i]):
		return VerdictUncharged
	case e.Shadow:
		return VerdictShadowDenied
	}
	return VerdictDenied
}
