package redisstore

// WithSplitStacks exposes withSplitStacks to the external tests.
var WithSplitStacks = withSplitStacks

// SlotOf exposes slotOf to the external tests.
var SlotOf = slotOf
