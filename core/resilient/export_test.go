package resilient

import "github.com/go-ratelimit/ratelimit/core"

// Names the tests of package resilient_test use.
type ContextBounded = contextBounded

var KeyType = keyType

var (
	SlotOf        = slotOf
	ProbePolicy   = probePolicy
	CheckPolicies = checkPolicies
)

const (
	CheckKey      = checkKey
	ProbeAttempts = probeAttempts
)

// Confirming reports whether a confirming probe of the store-wide breaker is out.
func (s *Store) Confirming() bool { return s.breaker.confirming() }

// ConfirmingFor reports whether a confirming probe of the breaker of req's slot is out.
func (s *Store) ConfirmingFor(req core.Request) bool {
	b := s.slots.get(s.slots.of(&req))
	return b != nil && b.confirming()
}

const (
	MaxReleasesPerPass = maxReleasesPerPass
	ReleasePassBudget  = releasePassBudget
)

// ReleasePass makes one of the prober's release passes now, and reports whether
// ended leases are left: for tests whose prober does not run (no breaker opens).
func (s *Store) ReleasePass() bool { return s.releasePass() }

// ReleasePassesByHand stops the prober from making release passes of its own, for
// tests that make each pass themselves (ReleasePass) and count what it does.
func (s *Store) ReleasePassesByHand() { s.prober.byHand.Store(true) }

// EndedLeases is how many shared leases whose release failed the lease book holds.
func (s *Store) EndedLeases() int64 { return s.leases.nEnded.Load() }
