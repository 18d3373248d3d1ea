package resilient

import (
	"sync"
	"sync/atomic"
	"time"
)

// maxFallbackLeases bounds how many leases granted by a failure mode are remembered.
const maxFallbackLeases = 100_000

// leaseBook remembers the concurrency leases a failure mode granted (in the local
// store, or unenforced), so that releasing them does not call the shared store, which
// never saw them, and so that the local ones still in flight when the shared store is
// back can be handed over to it (Store.handOver). Entries expire with their lease
// timeout; when the book is full, a lease is not remembered and its release goes to
// the shared store, where releasing an unknown lease is harmless. Expired entries are
// swept once per lease timeout.
type leaseBook struct {
	mu      sync.Mutex
	leases  map[leaseKey]leaseEntry
	local   map[preKey]map[uint64]struct{} // the local leases of each key
	nLocal  atomic.Int64                   // how many local leases the book holds
	swept   int64                          // ns: last sweep
	timeout int64                          // ns: the longest lease timeout seen, the sweep interval
}

type leaseKey struct {
	policy, key string // policy ID, key
	lease       uint64
}

type leaseEntry struct {
	expires int64 // ns
	cost    int64
	local   bool // granted by the local store (else unenforced)
	moving  bool // being handed over to the shared store
}

func newLeaseBook() *leaseBook {
	return &leaseBook{leases: map[leaseKey]leaseEntry{}, local: map[preKey]map[uint64]struct{}{}}
}

// add remembers a lease of cost granted at now for timeout.
func (b *leaseBook) add(k leaseKey, local bool, cost, now int64, timeout time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timeout = max(b.timeout, int64(timeout))
	if now-b.swept >= b.timeout {
		for k, e := range b.leases {
			if now >= e.expires {
				b.forget(k, e)
			}
		}
		b.swept = now
	}
	if len(b.leases) >= maxFallbackLeases {
		return
	}
	b.leases[k] = leaseEntry{expires: now + int64(timeout), cost: cost, local: local}
	if local {
		of := preKey{k.policy, k.key}
		if b.local[of] == nil {
			b.local[of] = map[uint64]struct{}{}
		}
		b.local[of][k.lease] = struct{}{}
		b.nLocal.Add(1)
	}
}

// forget removes the entry e of k. Requires b.mu.
func (b *leaseBook) forget(k leaseKey, e leaseEntry) {
	delete(b.leases, k)
	if !e.local {
		return
	}
	of := preKey{k.policy, k.key}
	delete(b.local[of], k.lease)
	if len(b.local[of]) == 0 {
		delete(b.local, of)
	}
	b.nLocal.Add(-1)
}

// take forgets the lease k and reports whether it was granted by a failure mode, and
// whether by the local store.
func (b *leaseBook) take(k leaseKey) (found, local bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.leases[k]
	if ok {
		b.forget(k, e)
	}
	return ok, e.local
}

// movingLease is a local lease being handed over: its ID and cost.
type movingLease struct {
	lease uint64
	cost  int64
}

// startMoving marks the local leases of policy's key that are live at now, and not
// being handed over already, as being handed over, and returns them. It does not
// lock while the book holds no local lease, the case of every decision but those
// just after an outage.
func (b *leaseBook) startMoving(policy, key string, now int64) []movingLease {
	if b.nLocal.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var moving []movingLease
	for lease := range b.local[preKey{policy, key}] {
		k := leaseKey{policy, key, lease}
		if e := b.leases[k]; !e.moving && now < e.expires {
			e.moving = true
			b.leases[k] = e
			moving = append(moving, movingLease{lease, e.cost})
		}
	}
	return moving
}

// moved ends the hand-over of the lease k: taken says the shared store now holds it,
// so the book forgets it (its release goes to the shared store); otherwise it stays
// local. It reports false when the lease's request ended meanwhile (take found it).
func (b *leaseBook) moved(k leaseKey, taken bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.leases[k]
	switch {
	case !ok:
		return false
	case taken:
		b.forget(k, e)
	default:
		e.moving = false
		b.leases[k] = e
	}
	return true
}
