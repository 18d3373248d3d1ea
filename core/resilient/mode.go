package resilient

import "fmt"

// Mode is what a policy does while the shared store cannot decide: its failure mode.
type Mode string

// The failure modes.
const (
	// Open admits every request of the policy, uncounted, and flags the result
	// (core.Result.Unenforced), which reports what the key's last shared answer left.
	// Choose it when refusing users costs more than a short stretch of unenforced
	// traffic, and the backend can take the load. (BreakerOpen is the breaker's state
	// in which the failure modes decide.)
	Open Mode = "open"
	// Closed refuses every request of the policy with an *UnavailableError (the HTTP
	// layer answers 503 with Retry-After: the client did nothing wrong). Choose it when
	// an unenforced request is worse than a refused one (an expensive or abusable
	// endpoint, a login). Not to be confused with BreakerClosed, the healthy state
	// in which every decision calls the shared store.
	Closed Mode = "closed"
	// Local enforces the policy in process memory, optionally stricter (WithReplicas,
	// WithDegrade), until the shared store is back. Each replica keeps its own count,
	// so N replicas admit up to N times the local limit.
	Local Mode = "local"
)

// Valid reports whether m is one of the failure modes.
func (m Mode) Valid() bool { return m == Open || m == Closed || m == Local }

// ParseMode returns the mode named s ("open", "closed" or "local").
func ParseMode(s string) (Mode, error) {
	m := Mode(s)
	if !m.Valid() {
		return "", fmt.Errorf("resilient: unknown failure mode %q (known: open, closed, local)", s)
	}
	return m, nil
}
