package httpengine

import (
	"net/http"

	"github.com/go-ratelimit/ratelimit/core"
)

// Observer watches a Limiter's decisions and errors, for metrics and logs (see
// httplimit.WithObserver). Its methods are called synchronously on the request's
// goroutine, so they must be quick and safe for concurrent use. A panic in one is a
// panic of the request, as in any handler; the Limiter has released the request's
// leases and settled its charges before an admitted request's OnDecision.
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

// Verdict is what one policy of a decided request amounted to (see
// httplimit.Verdict).
type Verdict string

// The verdicts (see httplimit.VerdictAllowed).
const (
	VerdictAllowed      Verdict = "allowed"       // admitted and charged
	VerdictDenied       Verdict = "denied"        // refused by this policy
	VerdictShadowDenied Verdict = "shadow_denied" // would have been refused; shadow mode let it through
	VerdictUncharged    Verdict = "uncharged"     // admitted by this policy, refused by another, or given back unserved
	VerdictUnenforced   Verdict = "unenforced"    // admitted uncounted by a store's failure mode
)

// Shown is the index of the result that stands for the policy of the i-th one,
// or -1 when that policy appears earlier in Results. A merged decision may charge
// one policy under several keys (declared at two levels with different key
// functions): Results holds each bucket's, and the response lists the policy once,
// as the result Shown names (the one that constrains the client most). Counting
// Verdict(k) for each k = Shown(i) >= 0 counts each policy once per request.
func (e *Event) Shown(i int) int { return shownFor(e.Results, i) }

// Verdict is the verdict of the i-th policy.
func (e *Event) Verdict(i int) Verdict {
	switch {
	case e.Results[i].Unenforced && (e.Allowed || !refused(&e.Results[i])):
		return VerdictUnenforced
	case e.Allowed && refused(&e.Results[i]):
		// Refused within an admitted decision: only a Limiter in shadow mode
		// declares it, merged with one that enforces (withoutObservedRefusals).
		return VerdictShadowDenied
	case e.Allowed:
		return VerdictAllowed
	case !refused(&e.Results[i]):
		return VerdictUncharged
	case e.Shadow:
		return VerdictShadowDenied
	}
	return VerdictDenied
}
