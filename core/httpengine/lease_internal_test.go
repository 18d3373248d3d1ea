package httpengine

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestLeaseIDsAreDistinctAndNeverZero(t *testing.T) {
	// A seed of 3 makes the counter's third value XOR to 0, which must be skipped.
	g := leaseIDs{seed: 3, counter: new(atomic.Uint64)}
	const workers, each = 4, 1000
	ids := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				ids[w] = append(ids[w], g.next())
			}
		}()
	}
	wg.Wait()
	seen := make(map[uint64]bool, workers*each)
	for _, list := range ids {
		for _, id := range list {
			if id == 0 || seen[id] {
				t.Fatalf("lease id %d is zero or repeated", id)
			}
			seen[id] = true
		}
	}
	if a, b := newLeaseIDs(), newLeaseIDs(); a.seed == b.seed {
		t.Errorf("two generators share the seed %d", a.seed)
	}
}
