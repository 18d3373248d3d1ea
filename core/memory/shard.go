package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
)

// stateKey identifies one key's state under one policy.
type stateKey struct {
	policy string // core.Policy.ID
	key    string
}

// entry is one key's state. It is only read or written with its shard's mutex held.
type entry struct {
	state core.State
	// recovered is when the state will have fully recovered (ms): from then on the
	// entry decides like a missing one and may be evicted.
	recovered int64
}

// evictionSample is how many entries a full shard samples to pick one to evict.
const evictionSample = 8

// shard is a slice of the key space behind one mutex.
type shard struct {
	mu      sync.Mutex
	entries map[stateKey]*entry
	_       [48]byte // keep neighbouring shards' mutexes off one cache line
}

// lookup returns the entry of k, creating it when missing. When the shard holds
// maxKeys entries already, it first evicts the sampled entry that recovers soonest.
// It reports whether a live (unrecovered) entry had to be evicted. Requires sh.mu.
func (sh *shard) lookup(k stateKey, maxKeys int, now int64) (e *entry, evictedLive bool) {
	if e = sh.entries[k]; e != nil {
		return e, false
	}
	if len(sh.entries) >= maxKeys {
		evictedLive = sh.evictOne(now)
	}
	e = &entry{recovered: now}
	sh.entries[k] = e
	return e, evictedLive
}

// evictOne removes the entry that recovers soonest among a few sampled ones (map
// iteration starts at a random place). Requires sh.mu.
func (sh *shard) evictOne(now int64) (live bool) {
	var victim stateKey
	soonest, seen := int64(0), 0
	for k, e := range sh.entries {
		if seen == 0 || e.recovered < soonest {
			victim, soonest = k, e.recovered
		}
		if seen++; seen == evictionSample || soonest <= now {
			break
		}
	}
	if seen > 0 {
		delete(sh.entries, victim)
	}
	return seen > 0 && soonest > now
}

// sweep evicts every entry that has recovered by now and returns how many. Requires sh.mu.
func (sh *shard) sweep(now int64) int {
	n := 0
	for k, e := range sh.entries {
		if e.recovered <= now {
			delete(sh.entries, k)
			n++
		}
	}
	return n
}

// commit stores next as e's state. Sliding logs and leases keep their backing array
// anchored at its start, so that steady traffic appends in place without allocating.
func (e *entry) commit(next core.State) {
	next.Log = anchor(e.state.Log, next.Log)
	next.Leases = anchor(e.state.Leases, next.Leases)
	e.state = next
}

// anchor moves next to the start of old's backing array when next is a window of it
// (the transitions drop from the front and append past the end).
func anchor[T any](old, next []T) []T {
	if len(next) == 0 || cap(old) == 0 || cap(next) == 0 {
		return next
	}
	if &old[:cap(old)][cap(old)-1] != &next[:cap(next)][cap(next)-1] {
		return next // a new array
	}
	n := copy(old[:len(next)], next)
	return old[:n]
}

// settle records when e's state recovers, given the result of the decision just taken.
func (e *entry) settle(now int64, res *core.Result) {
	e.recovered = now + res.ResetAfter.Milliseconds()
}
