package redisstore

import (
	"fmt"

	"github.com/go-ratelimit/ratelimit/core"
)

// WithSplitStacks exposes withSplitStacks to the external tests.
var WithSplitStacks = withSplitStacks

// SlotOf exposes slotOf to the external tests.
var SlotOf = slotOf

// FixedWindowState reads the state a fixed window policy stores (lua/fixedwindow.lua):
// the index of its newest window and the cost admitted in it.
func FixedWindowState(p core.Policy, state string) (window, count int64, err error) {
	_, err = fmt.Sscanf(state, "%d %d", &window, &count)
	return window, count, err
}

// NewFuzzRedis is newFuzzRedis for the external tests: a miniredis and a client on
// it, both closed with f.
var NewFuzzRedis = newFuzzRedis
