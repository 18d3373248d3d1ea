package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
)

// entry is one key's state under one policy. Its fields are laid out by cache line
// (see TestEntryLayout):
//
//   - The first line holds the identity (hash, policy, key), written once before
//     the entry is published in a table and only read afterwards, so lookups need
//     no lock; and dead, written once when the entry leaves its table.
//   - The second line holds the mutex and the state's scalar fields: all that a
//     decision on a token bucket, GCRA, fixed or sliding window writes. Decisions
//     on a hot key pass this one line between cores.
//   - The third holds the slices and recovered, which steady traffic on those
//     algorithms reads but rarely writes.
type entry struct {
	hash   uint64
	policy string // core.Policy.ID
	key    string
	// dead is set, with mu held, just before the entry leaves its table. A dead entry
	// is never decided on again: whoever finds one looks the key up anew.
	dead bool
	_    [23]byte

	mu    sync.Mutex
	state core.State // requires mu
	// recovered is when the state will have fully recovered (ms): from then on the
	// entry decides like a missing one and may be evicted. It may lie later than
	// that, never earlier. Requires mu.
	recovered int64
}

// commit stores next as e's state, anchoring its slices (see entry.anchor). Requires e.mu.
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

// settle records when e's state recovers, given the result of the decision just
// taken. It only ever moves recovered later: a recovery time that is too late only
// keeps the entry a little longer, and most decisions on a busy key then write
// nothing here. Requires e.mu.
func (e *entry) settle(now int64, res *core.Result) {
	if at := now + res.ResetAfter.Milliseconds(); at > e.recovered {
		e.recovered = at
	}
}

// is reports whether e holds (policy, key), whose hash is h.
func (e *entry) is(h uint64, policy, key string) bool {
	return e.hash == h && e.key == key && e.policy == policy
}
