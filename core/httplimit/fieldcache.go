package httplimit

import (
	"strconv"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// fieldCacheSlots is the number of RateLimit values a Limiter remembers.
const fieldCacheSlots = 256

// maxCachedStack is the largest static stack whose RateLimit values are cached.
const maxCachedStack = 4

// maxCachedSeconds is the largest Retry-After value precomputed per Limiter.
const maxCachedSeconds = 120

// fieldCache remembers recent RateLimit field values of a static stack, keyed by
// the (r, t) pair of each policy: most responses repeat a value seen shortly
// before (a hot key refused with r=0, clients at the same point of their quota),
// and a hit costs no allocation. A slot holds an immutable entry and is replaced
// whole, so readers need no lock. The values are shared between responses:
// handlers must replace a field (Header.Set), never modify it in place.
type fieldCache struct {
	slots [fieldCacheSlots]atomic.Pointer[cachedField]
}

type cachedField struct {
	n     int
	r, t  [maxCachedStack]int64
	value [1]string // the header value slice points here
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
	return e.value[:], slot
}

// store remembers value for results in slot and returns the header value slice.
func (c *fieldCache) store(slot *atomic.Pointer[cachedField], results []core.Result, value string) []string {
	e := &cachedField{n: len(results)}
	for i := range results {
		e.r[i], e.t[i] = max(0, results[i].Remaining), resetSeconds(&results[i])
	}
	e.value[0] = value
	slot.Store(e)
	return e.value[:]
}

// secondsFields precomputes the header values "0" to "maxCachedSeconds".
func secondsFields() [][]string {
	fields := make([][]string, maxCachedSeconds+1)
	for i := range fields {
		fields[i] = single(strconv.Itoa(i))
	}
	return fields
}
