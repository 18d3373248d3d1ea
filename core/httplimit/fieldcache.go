package httplimit

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// fieldCacheSlots is the number of RateLimit values a Limiter remembers.
const fieldCacheSlots = 256

// maxCachedStack is the largest static stack whose RateLimit values are cached.
const maxCachedStack = 4

// fieldCache remembers recent RateLimit field values of a static stack, keyed by
// the (r, t) pair of each policy: many responses repeat a value seen shortly
// before (a hot key refused with r=0, clients at the same point of their quota),
// and a hit costs neither formatting nor space. A slot holds an immutable entry
// and is replaced whole, so readers need no lock. The values are shared between
// responses: handlers must replace a field (Header.Set), never modify it in place.
type fieldCache struct {
	slots [fieldCacheSlots]atomic.Pointer[cachedField]
}

type cachedField struct {
	n     int
	r, t  [maxCachedStack]int64
	value []string // carved from a Ticket's valueSlab, immutable
}

// lookup returns the cached value for the (r, t) pairs of results, or nil, and
// the slot the value belongs in.
func (c *fieldCache) lookup(results []core.Result) ([]string, *atomic.Pointer[cachedField]) {
	h := uint64(len(results))
	for i := range results {
		h = (h ^ uint64(max(0, results[i].Remaining))) * 0x9E3779B97F4A7C15
		h = (h ^ uint64(resetSeconds(&results[i]))) * 0x9E3779B97F4A7C15
	}
	slot := &c.slots[h>>56]
	e := slot.Load()
	if e == nil || e.n != len(results) {
		return nil, slot
	}
	for i := range results {
		if e.r[i] != max(0, results[i].Remaining) || e.t[i] != resetSeconds(&results[i]) {
			return nil, slot
		}
	}
	return e.value, slot
}

// remember puts value for results in slot when it is empty, and otherwise
// replaces the entry there one time in eight: a value that keeps coming back gets
// in soon, while values that never repeat (the count-down of a busy key) cost few
// entries and few writes to slots that other cores read.
func (c *fieldCache) remember(slot *atomic.Pointer[cachedField], results []core.Result, value []string) {
	if slot.Load() != nil && rand.Uint32()%8 != 0 {
		return
	}
	e := &cachedField{n: len(results), value: value}
	for i := range results {
		e.r[i], e.t[i] = max(0, results[i].Remaining), resetSeconds(&results[i])
	}
	slot.Store(e)
}
