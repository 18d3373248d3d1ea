package redisstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// WithSplitStacks exposes withSplitStacks to the external tests.
var WithSplitStacks = withSplitStacks

// SlotOf exposes slotOf to the external tests.
var SlotOf = slotOf

// TickedGranule is how much later than its state's recovery (plus the margin) a key of
// p may expire: the granule of a ticked policy's TTL (lua/ticked_write.lua) in whole
// ms, rounded up; 0 for a policy that is not ticked.
func TickedGranule(p core.Policy) time.Duration {
	if !ticked(p.Algorithm(), p.TokenUnit(), p.RefillPerMilli(), p.Capacity()) {
		return 0
	}
	granule := tickedGranule(p.TokenUnit(), p.RefillPerMilli(), p.Capacity())
	return time.Duration((granule+p.RefillPerMilli()-1)/p.RefillPerMilli()) * time.Millisecond
}

// FixedWindowState reads the state a fixed window policy p stores, in either format
// (lua/fixedwindow.lua): the index of its newest window and the cost admitted in it.
func FixedWindowState(p core.Policy, state string) (window, count int64, err error) {
	if stride := countedStride(p.Limit(), p.PeriodMillis()); stride != 0 {
		value, err := strconv.ParseInt(state, 10, 64)
		return value / stride, value % stride, err
	}
	_, err = fmt.Sscanf(state, "%d %d", &window, &count)
	return window, count, err
}
