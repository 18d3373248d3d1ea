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
