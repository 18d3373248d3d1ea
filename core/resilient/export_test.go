package resilient

// Names the tests of package resilient_test use.
type ContextBounded = contextBounded

var KeyType = keyType
