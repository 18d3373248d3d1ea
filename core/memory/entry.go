package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// entry is one key's state under one policy. Its fields are laid out by cache line
// (see TestEntryLayout):
//
//   - The first line holds the identity (hash, policy ID, key), the policy and
//     chargedFrom, written once before the entry is published in a table and only
//     read afterwards, so lookups need no lock; and dead, written once when the
//     entry leaves its table.
//   - The second line holds the mutex and the state's scalar fields: all that a
//     decision on a token bucket, GCRA or fixed window touches, and all that a
//     sliding window writes. Decisions on a hot key pass this one line between
//     cores, and a decision on a cold key misses on these two lines only.
//   - The rest holds the sliding window's previous count, the slices of the
//     sliding log and the concurrency limiter, and the sliding log's array.
//
// An entry records no recovery time: sweeps and evictions ask its policy
// (entry.recoveredBy), so decisions write nothing but the state.
type entry struct {
	hash   uint64
	id     string // core.Policy.ID
	key    string
	policy core.Policy
	// chargedFrom is the earliest charge instant (ms) whose refund the entry takes:
	// a key whose shard has sent keys to the overflow entry may have been charged
	// there, or on an entry since evicted, before this one existed (see
	// shard.newEntry). math.MinInt64 when every refund is the entry's.
	chargedFrom int64
	// dead is set, with mu held, just before the entry leaves its table. A dead entry
	// is never decided on again: whoever finds one looks the key up anew.
	dead bool
	_    [7]byte

	mu    sync.Mutex
	state transition.State // requires mu
	// logArray is the whole array that a sliding log's state.Log is a window of,
	// once the store has allocated one (see makeRoomInLog). Requires mu.
	logArray *[]transition.LogEntry
}

// commit stores next as e's state, anchoring its leases (see anchor). A sliding
// log's room was made before the transition (see makeRoomInLog). Requires e.mu.
func (e *entry) commit(next transition.State) {
	leases := e.state.Leases
	e.state = next
	e.state.Leases = anchor(leases, e.state.Leases)
}

// anchor moves next to the start of old's backing array when next is a window of it,
// so that steady traffic appends in place without allocating.
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
