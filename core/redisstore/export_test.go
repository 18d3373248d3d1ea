package redisstore

// WithSplitStacks exposes withSplitStacks to the external tests.
var WithSplitStacks = withSplitStacks
