package memory

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// evictionSample is how many entries a full shard looks at for a recovered one
// to evict before it decides a new key against the overflow entry.
const evictionSample = 32

// shard is a slice of the key space. Lookups read its table without a lock; its
// mutex serialises the changes to the table (inserts, evictions, sweeps), and each
// entry has its own mutex for its state. Locks are always taken shard first, then
// entry, and a goroutine holding an entry's mutex never waits for a shard's.
type shard struct {
	mu    sync.Mutex
	table atomic.Pointer[table]
	live  int    // entries in the table; requires mu
	used  int    // slots taken by entries or tombstones; requires mu
	rng   uint64 // xorshift state that spreads eviction samples; requires mu
	early int64  // recovered entries evicted to make room; requires mu
	// overflowedAt is the latest instant (ms) at which reserve found no room, so
	// that a key of the shard may have been decided against an overflow entry (not
	// when its decision asked for its own entry only); noOverflow when none ever
	// was. Requires mu.
	overflowedAt int64
	_            [8]byte
}

// noOverflow is shard.overflowedAt of a shard that has never been full.
const noOverflow = math.MinInt64

func (sh *shard) init(seed uint64) {
	sh.table.Store(newTable(minTableSlots))
	sh.rng = seed | 1
	sh.overflowedAt = noOverflow
}

// newEntry builds the entry of (policy, key), created by a decision at now. In a
// shard that has never been full, no key of the shard was charged anywhere but on
// its own entries, so the entry takes every refund, as a key the store never
// evicted does. Once the shard has sent a key to the overflow entry, a new entry
// may be that key's, whose earlier charges went to the overflow entry (or to an
// entry since evicted): it takes back only charges from now on, and from after the
// shard's last overflow, since charges of one millisecond cannot be told apart.
// Requires sh.mu.
func (sh *shard) newEntry(h uint64, p core.Policy, key string, now int64) *entry {
	e := &entry{hash: h, id: p.ID(), key: key, policy: p, chargedFrom: noOverflow}
	if sh.overflowedAt != noOverflow {
		e.chargedFrom = max(now, sh.overflowedAt+1)
	}
	return e
}

// acquire returns the entry of (policy, key) with its mutex held, creating the
// entry when missing. It returns nil when the key has no entry and the shard is
// full of entries that still restrict their keys: the caller then decides against
// the policy's overflow entry.
func (sh *shard) acquire(h uint64, p core.Policy, key string, maxKeys int, now int64) *entry {
	if e := sh.lockFound(h, p.ID(), key); e != nil {
		return e
	}
	sh.mu.Lock()
	e := sh.lookupLocked(h, p, key, maxKeys, now)
	if e != nil {
		e.mu.Lock()
	}
	sh.mu.Unlock()
	return e
}

// acquireExisting returns the entry of (policy, key) with its mutex held, or nil
// when the key has no entry.
func (sh *shard) acquireExisting(h uint64, id, key string) *entry {
	if e := sh.lockFound(h, id, key); e != nil {
		return e
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.table.Load().find(h, id, key)
	if e != nil {
		e.mu.Lock()
	}
	return e
}

// lockFound is the lock-free path: the entry found in the table, with its mutex
// held, unless there is none or it turned out dead (its key must then be looked
// up again under sh.mu, after the entry has left the table).
func (sh *shard) lockFound(h uint64, id, key string) *entry {
	e := sh.table.Load().find(h, id, key)
	if e == nil {
		return nil
	}
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return nil
	}
	return e
}

// lookupLocked returns the entry of (policy, key), inserting it when missing.
// When the shard holds maxKeys entries already, it first evicts a recovered entry;
// when it finds none, it inserts nothing and returns nil. Requires sh.mu; the
// entry's mutex is not taken.
func (sh *shard) lookupLocked(h uint64, p core.Policy, key string, maxKeys int, now int64) *entry {
	if e := sh.table.Load().find(h, p.ID(), key); e != nil {
		return e
	}
	if !sh.reserve(maxKeys, now) {
		return nil
	}
	e := sh.newEntry(h, p, key, now)
	sh.insertReserved(e)
	return e
}

// reserve makes room for one more entry and counts it as live: at once when the
// shard is under maxKeys, else by evicting a recovered entry. It reports false,
// reserving nothing, when every sampled entry still restricts its key: the caller
// then decides the key against the overflow entry, and the shard remembers when
// (see newEntry). Requires sh.mu.
func (sh *shard) reserve(maxKeys int, now int64) bool {
	if sh.live >= maxKeys && !sh.evictRecovered(now) {
		sh.overflowedAt = max(sh.overflowedAt, now)
		return false
	}
	sh.live++
	return true
}

// insertReserved places e, for which reserve made room, into the table. Requires
// sh.mu.
func (sh *shard) insertReserved(e *entry) {
	t := sh.table.Load()
	if t.full(sh.used) {
		t = sh.rebuild(sh.live)
	}
	if t.place(e) {
		sh.used++
	}
}

// rebuild publishes a table holding the live entries, sized so that want entries
// fill at most half of it, and returns it. Requires sh.mu.
func (sh *shard) rebuild(want int) *table {
	slots := minTableSlots
	for slots < 2*want {
		slots *= 2
	}
	old, t := sh.table.Load(), newTable(slots)
	old.each(0, func(e *entry) bool {
		t.place(e)
		return true
	})
	sh.used = sh.live
	sh.table.Store(t)
	return t
}

// evictRecovered removes an entry whose state has fully recovered (it decides
// exactly like a missing one), looking at up to evictionSample entries from a
// random place in the table, and reports whether it found one. An entry that
// still restricts its key (a locked account, an empty bucket, a debt) is never
// evicted, nor is an entry in use (its mutex held). Requires sh.mu.
func (sh *shard) evictRecovered(now int64) bool {
	var victim *entry
	seen := 0
	sh.table.Load().each(sh.random(), func(e *entry) bool {
		seen++
		if !e.mu.TryLock() {
			return seen < evictionSample
		}
		if e.recoveredAt(now) <= now {
			victim = e
			return false
		}
		e.mu.Unlock()
		return seen < evictionSample
	})
	if victim == nil {
		return false
	}
	sh.drop(victim)
	sh.early++
	return true
}

// drop marks e dead, releases its mutex and takes it out of the table. Requires
// sh.mu and e.mu.
func (sh *shard) drop(e *entry) {
	e.dead = true
	e.mu.Unlock()
	sh.table.Load().remove(e)
	sh.live--
}

// sweep evicts every entry that has recovered by now and returns how many. Entries
// in use are left for the next sweep. Requires sh.mu.
func (sh *shard) sweep(now int64) int {
	n := 0
	t := sh.table.Load()
	t.each(0, func(e *entry) bool {
		if !e.mu.TryLock() {
			return true
		}
		if e.recoveredAt(now) > now {
			e.mu.Unlock()
			return true
		}
		sh.drop(e)
		n++
		return true
	})
	if sh.used-sh.live > sh.live && len(t.slots) > minTableSlots {
		sh.rebuild(sh.live) // mostly tombstones: shrink
	}
	return n
}

// random returns the next number of the shard's xorshift sequence. Requires sh.mu.
func (sh *shard) random() uint64 {
	sh.rng ^= sh.rng << 13
	sh.rng ^= sh.rng >> 7
	sh.rng ^= sh.rng << 17
	return sh.rng
}
