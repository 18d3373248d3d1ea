package redisstore

import (
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
