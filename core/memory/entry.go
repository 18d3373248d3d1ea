package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// entry is one key's state under one policy. Its fields are laid out by cache line
// (see TestEntryLayout):
//
//   - The first line holds the identity (hash, policy ID, key) and the policy,
//     written once before the entry is published in a table and only read
//     afterwards, so lookups need no lock; and dead, written once when the entry
//     leaves its table.
//   - The second line holds the mutex and the state's scalar fields: all that a
//     decision on a token bucket, GCRA or fixed window touches, and all that a
//     sliding window writes. Decisions on a hot key pass this one line between
//     cores, and a decision on a cold key misses on these two lines only.
//   - The rest holds the sliding window's previous count and the slices of the
//     sliding log and the concurrency limiter.
//
// An entry records no recovery time: sweeps and evictions ask its policy
// (entry.recoveredBy), so decisions write nothing but the state.
type entry struct {
	hash   uint64
	id     string // core.Policy.ID
	key    string
	policy core.Policy
	// dead is set, with mu held, just before the entry leaves its table. A dead entry
	// is never decided on again: whoever finds one looks the key up anew.
	dead bool
	_    [15]byte

	mu    sync.Mutex
	state transition.State // requires mu
}

// commit stores next as e's state, anchoring its slices (see entry.anchor). Requires e.mu.
func (e *entry) commit(next transition.State) {
	log, leases := e.state.Log, e.state.Leases
	e.state = next
	e.anchor(log, leases)
}

// anchor moves the state's sliding log and leases back to the start of the backing
// arrays they had before the last transition (log and leases), so that steady
// traffic appends in place without allocating.
func (e *entry) anchor(log []transition.LogEntry, leases []transition.Lease) {
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

// recoveredAt is when e's state will have fully recovered (ms since the epoch):
// from then on the entry decides exactly like a missing one and may be evicted.
// Requires e.mu.
func (e *entry) recoveredAt(now int64) int64 {
	return now + transition.RecoveredAfter(e.state, &e.policy, now).Milliseconds()
}

// is reports whether e holds the key under the policy with that ID; h is their hash.
func (e *entry) is(h uint64, id, key string) bool {
	return e.hash == h && e.key == key && e.id == id
}
