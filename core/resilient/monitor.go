package resilient

import "time"

// Monitor watches a Store, to feed metrics, traces or logs (core/prommetrics is the
// Prometheus one). Its methods are called synchronously, on the deciding goroutine or
// on the prober's (the calls of its probes, the end of a fallback), so they must be
// quick and safe for concurrent use; events are only valid during the call. A method
// that panics is recovered and logged at error, at most once a second: that event is
// lost, and nothing else changes. Neither this package nor core imports a metrics or
// tracing library: attach them here.
type Monitor interface {
	// OnDecision is called once per policy of every decision the Store returns
	// (a stack of three policies makes three calls), and once per policy of a decision
	// that failed with an error.
	OnDecision(e *DecisionEvent)
	// OnStoreCall is called after every call to the shared store that ended with an
	// answer, an error or the deadline. Calls that the caller's context ended are not
	// reported: a client that went away is not a store failure.
	OnStoreCall(e *StoreCallEvent)
	// OnFallback is called when a policy enters its failure mode (the first decision
	// its failure mode takes for it because a breaker is open) and when it leaves it
	// (every breaker is closed again). A slow call decided while the breakers stay
	// closed is not a transition.
	OnFallback(e *FallbackEvent)
	// OnLocalRefusal is called for every request the pre-limiter refuses in process
	// memory, without asking the shared store: a hot key.
	OnLocalRefusal(e *LocalRefusalEvent)
}

// Outcome is what a decision amounted to for one policy. The values are the result
// label of ratelimit_decisions_total.
type Outcome string

// The outcomes.
const (
	// OutcomeAllowed: admitted and charged (by the shared store or, in Local mode, in
	// process memory).
	OutcomeAllowed Outcome = "allowed"
	// OutcomeDenied: this policy refused the request (429); nothing was charged.
	OutcomeDenied Outcome = "denied"
	// OutcomeUncharged: this policy would have admitted the request, but another policy
	// of its stack refused it, so nothing was charged.
	OutcomeUncharged Outcome = "uncharged"
	// OutcomeUnenforced: admitted without being counted, because the shared store
	// failed and the policy's mode is Open.
	OutcomeUnenforced Outcome = "unenforced"
	// OutcomeUnavailable: refused with an *UnavailableError (503), because the shared
	// store failed and the stack holds a Closed policy.
	OutcomeUnavailable Outcome = "unavailable"
	// OutcomeError: the shared store failed permanently (ErrPermanent); the request was
	// not decided.
	OutcomeError Outcome = "error"
)

// Via says what took a decision. The values are the mode field of the decision logs.
type Via string

// The deciders.
const (
	// ViaShared: the shared store.
	ViaShared Via = "shared"
	// ViaPreLimit: the local pre-limiter, which refuses keys the shared store refused
	// until their Retry-After has passed.
	ViaPreLimit Via = "prelimit"
	// ViaLocal: the in-process store of the Local mode.
	ViaLocal Via = "local"
	// ViaOpen: the Open mode (nobody: admitted unenforced).
	ViaOpen Via = "open"
	// ViaClosed: the Closed mode (refused as unavailable).
	ViaClosed Via = "closed"
	// ViaLastShared: the key's last shared answer, without refill, for a Local
	// policy's call that failed while the breaker stayed closed (a slow call under
	// load); also a refusal of such a call for a key with no answer.
	ViaLastShared Via = "last-shared"
)

// DecisionEvent is one policy's part of a decision.
type DecisionEvent struct {
	// Policy is the policy's name.
	Policy string
	// KeyType is the key's kind: the part before its first ':' ("ip", "ip6", "ak",
	// "user", "field", …), or "other". Never the key itself, which may identify a person
	// or hold a secret.
	KeyType string
	// Cost is the request's effective cost.
	Cost int64
	// Outcome is what the decision amounted to for this policy.
	Outcome Outcome
	// Via is what decided.
	Via Via
}

// StoreCallEvent is one finished call to the shared store.
type StoreCallEvent struct {
	// Store names the shared store (WithStoreName), the store label of the metrics.
	Store string
	// Latency is how long the caller waited for the call: at most the deadline.
	Latency time.Duration
	// Kind is empty for a call that succeeded, else what went wrong.
	Kind ErrorKind
	// Err is the call's error; nil when it succeeded.
	Err error
}

// FallbackEvent is a policy entering or leaving its failure mode.
type FallbackEvent struct {
	// Policy is the policy's name.
	Policy string
	// Mode is the policy's failure mode.
	Mode Mode
	// Active is true when the policy enters its failure mode, false when the shared
	// store decides it again.
	Active bool
	// Duration is, when leaving, how long the policy was in its failure mode.
	Duration time.Duration
	// Cause is, when entering, the failure that sent the policy to its failure mode.
	Cause error
}

// To is the destination of the transition: the mode's name when entering, "shared"
// when leaving. It is the to label of ratelimit_fallback_transitions_total.
func (e *FallbackEvent) To() string {
	if e.Active {
		return string(e.Mode)
	}
	return string(ViaShared)
}

// LocalRefusalEvent is a request the pre-limiter refused without asking the shared store.
type LocalRefusalEvent struct {
	// Policy is the name of the policy that is known to refuse the key.
	Policy string
	// KeyType is the key's kind (see DecisionEvent.KeyType).
	KeyType string
	// Cost is the request's effective cost.
	Cost int64
	// RetryAfter is how long the key stays refused.
	RetryAfter time.Duration
}
