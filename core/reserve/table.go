package reserve

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// tableShards splits a policy's entries to keep their locks apart.
const tableShards = 16

// table holds one leased policy's entries, by key.
type table struct {
	lease  Lease
	seed   maphash.Seed
	shards [tableShards]tableShard
}

type tableShard struct {
	mu      sync.RWMutex
	entries map[string]*entry
}

func newTable(l Lease) *table {
	t := &table{lease: l, seed: maphash.MakeSeed()}
	for i := range t.shards {
		t.shards[i].entries = make(map[string]*entry)
	}
	return t
}

func (t *table) shard(key string) *tableShard {
	return &t.shards[maphash.String(t.seed, key)%tableShards]
}

// lookup finds key's entry.
func (t *table) lookup(key string) (*entry, bool) {
	sh := t.shard(key)
	sh.mu.RLock()
	e, ok := sh.entries[key]
	sh.mu.RUnlock()
	return e, ok
}

// insert finds or creates key's entry. It creates none when keys already counts
// maxKeys entries.
func (t *table) insert(key string, keys *atomic.Int64, maxKeys int64) (*entry, bool) {
	sh := t.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.entries[key]; ok {
		return e, true
	}
	if keys.Add(1) > maxKeys {
		keys.Add(-1)
		return nil, false
	}
	e := newEntry()
	sh.entries[key] = e
	return e, true
}

// remove deletes key's entry if it is still e.
func (t *table) remove(key string, e *entry, keys *atomic.Int64) {
	sh := t.shard(key)
	sh.mu.Lock()
	if sh.entries[key] == e {
		delete(sh.entries, key)
		keys.Add(-1)
	}
	sh.mu.Unlock()
}

// keyed is an entry with its key, for sweeps.
type keyed struct {
	key   string
	entry *entry
}

// snapshot lists the table's entries at one moment, shard by shard.
func (t *table) snapshot(into []keyed) []keyed {
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		for k, e := range sh.entries {
			into = append(into, keyed{k, e})
		}
		sh.mu.RUnlock()
	}
	return into
}
