package httpengine

import (
	"math/rand/v2"
	"sync/atomic"
)

// leaseIDs hands out concurrency lease IDs: a random 64-bit prefix XOR an atomic
// counter. Within one Limiter they are distinct for 2^64 leases; across processes
// sharing a store they collide with negligible probability. They are never 0,
// which stores may treat as "no lease".
type leaseIDs struct {
	seed    uint64
	counter *atomic.Uint64
}

func newLeaseIDs() leaseIDs {
	return leaseIDs{seed: rand.Uint64(), counter: new(atomic.Uint64)}
}

// next returns a fresh lease ID.
func (g leaseIDs) next() uint64 {
	for {
		if id := g.seed ^ g.counter.Add(1); id != 0 {
			return id
		}
	}
}
