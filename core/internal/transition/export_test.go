package transition

// Test helpers shared with the external tests of package core_test.
var (
	RandomTrace       = randomTrace
	ReferencePolicies = referencePolicies
)

// T0 is the round instant the tables start at.
const T0 = t0
