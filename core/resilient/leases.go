package resilient

import (
	"sync"
	"time"
)

// maxFallbackLeases bounds how many leases granted by a failure mode are remembered.
const maxFallbackLeases = 100_000

// leaseBook remembers the concurrency leases a failure mode granted (in the local
// store, or unenforced), so that releasing them does not call the shared store, which
// never saw them. Entries expire with their lease timeout; when the book is full, a
// lease is not remembered and its release goes to the shared store, where releasing
// an unknown lease is harmless. Expired entries are swept once per lease timeout.
type leaseBook struct {
	mu      sync.Mutex
	leases  map[leaseKey]leaseEntry
	swept   int64 // ns: last sweep
	timeout int64 // ns: the longest lease timeout seen, the sweep interval
}

type leaseKey struct {
	policy, key string // policy ID, key
	lease       uint64
}

type leaseEntry struct {
	expires int64 // ns
	local   bool  // granted by the local store (else unenforced)
}

func newLeaseBook() *leaseBook { return &leaseBook{leases: map[leaseKey]leaseEntry{}} }

// add remembers a lease granted at now for timeout.
func (b *leaseBook) add(k leaseKey, local bool, now int64, timeout time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.timeout = max(b.timeout, int64(timeout))
	if now-b.swept >= b.timeout {
		for k, e := range b.leases {
			if now >= e.expires {
				delete(b.leases, k)
			}
		}
		b.swept = now
	}
	if len(b.leases) < maxFallbackLeases {
		b.leases[k] = leaseEntry{expires: now + int64(timeout), local: local}
	}
}

// take forgets the lease k and reports whether it was granted by a failure mode, and
// whether by the local store.
func (b *leaseBook) take(k leaseKey) (found, local bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.leases[k]
	if ok {
		delete(b.leases, k)
	}
	return ok, e.local
}

// len is how many leases the book holds.
func (b *leaseBook) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.leases)
}
