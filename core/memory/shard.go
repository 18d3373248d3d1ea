package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
)

// entry is one key's state under one policy. It is only read or written with its
// shard's mutex held.
type entry struct {
	policy string // core.Policy.ID
	key    string
	next   *entry // another entry whose hash is the same
	state  core.State
	// recovered is when the state will have fully recovered (ms): from then on the
	// entry decides like a missing one and may be evicted.
	recovered int64
}

// evictionSample is how many entries a full shard samples to pick one to evict.
const evictionSample = 8

// shard is a slice of the key space behind one mutex. Entries are found by the
// 64-bit seeded hash of their key, so a lookup hashes one string once; entries of
// several policies on one key, and keys whose hashes collide, are chained.
type shard struct {
	mu      sync.Mutex
	entries map[uint64]*entry
	count   int      // entries held, chains included
	_       [40]byte // keep neighbouring shards' mutexes off one cache line
}

func (sh *shard) find(h uint64, policy, key string) *entry {
	for e := sh.entries[h]; e != nil; e = e.next {
		if e.key == key && e.policy == policy {
			return e
		}
	}
	return nil
}

// lookup returns the entry of (policy, key), creating it when missing. When the
// shard holds maxKeys entries already, it first evicts the sampled entry that
// recovers soonest, and reports whether that entry was still live. Requires sh.mu.
func (sh *shard) lookup(h uint64, policy, key string, maxKeys int, now int64) (e *entry, evictedLive bool) {
	if e = sh.find(h, policy, key); e != nil {
		return e, false
	}
	return sh.insert(h, policy, key, maxKeys, now)
}

// insert adds the missing entry of (policy, key), as lookup does. Requires sh.mu.
func (sh *shard) insert(h uint64, policy, key string, maxKeys int, now int64) (e *entry, evictedLive bool) {
	if sh.count >= maxKeys {
		evictedLive = sh.evictOne(now)
	}
	e = &entry{policy: policy, key: key, recovered: now, next: sh.entries[h]}
	sh.entries[h] = e
	sh.count++
	return e, evictedLive
}

// evictOne removes the entry that recovers soonest among a few sampled ones (map
// iteration starts at a random place). Requires sh.mu.
func (sh *shard) evictOne(now int64) (live bool) {
	var victim *entry
	var victimHash uint64
	seen := 0
sample:
	for h, head := range sh.entries {
		for e := head; e != nil; e = e.next {
			if victim == nil || e.recovered < victim.recovered {
				victim, victimHash = e, h
			}
			if seen++; seen == evictionSample || victim.recovered <= now {
				break sample
			}
		}
	}
	if victim == nil {
		return false
	}
	sh.remove(victimHash, victim)
	return victim.recovered > now
}

// remove unlinks victim from the chain at h. Requires sh.mu.
func (sh *shard) remove(h uint64, victim *entry) {
	head := sh.entries[h]
	switch {
	case head == victim && victim.next == nil:
		delete(sh.entries, h)
	case head == victim:
		sh.entries[h] = victim.next
	default:
		for e := head; e.next != nil; e = e.next {
			if e.next == victim {
				e.next = victim.next
				break
			}
		}
	}
	sh.count--
}

// sweep evicts every entry that has recovered by now and returns how many. Requires sh.mu.
func (sh *shard) sweep(now int64) int {
	n := 0
	for h, head := range sh.entries {
		for e := head; e != nil; {
			next := e.next
			if e.recovered <= now {
				sh.remove(h, e)
				n++
			}
			e = next
		}
	}
	return n
}

// commit stores next as e's state, anchoring its slices (see entry.anchor).
func (e *entry) commit(next core.State) {
	log, leases := e.state.Log, e.state.Leases
	e.state = next
	e.anchor(log, leases)
}

// anchor moves the state's sliding log and leases back to the start of the backing
// arrays they had before the last transition (log and leases), so that steady
// traffic appends in place without allocating.
func (e *entry) anchor(log []core.LogEntry, leases []core.Lease) {
	e.state.Log = anchor(log, e.state.Log)
	e.state.Leases = anchor(leases, e.state.Leases)
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
