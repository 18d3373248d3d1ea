package resilient

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
