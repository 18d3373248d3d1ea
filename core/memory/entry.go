package memory

import (
	"sync"

	"github.com/go-ratelimit/ratelimit/core"
)

// entry is one key's state under one policy.
//
// Its identity (hash, policy, key) is written once, before the entry is published
// in a table, and only read afterwards, so lookups need no lock. Everything below
// mu is read and written with mu held. The identity fills the first cache line and
// the mutable fields start on the next one, so the line that lookups read stays
// shared between cores while the decisions on a hot key pass the other one around.
type entry struct {
	hash   uint64
	policy string // core.Policy.ID
	key    string
	_      [24]byte

	mu sync.Mutex
	// dead is set, with mu held, just before the entry leaves its table. A dead entry
	// is never decided on again: whoever finds one looks the key up anew.
	dead bool
	// recovered is when the state will have fully recovered (ms): from then on the
	// entry decides like a missing one and may be evicted.
	recovered int64
	state     core.State
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
// taken. Requires e.mu.
func (e *entry) settle(now int64, res *core.Result) {
	e.recovered = now + res.ResetAfter.Milliseconds()
}

// is reports whether e holds (policy, key), whose hash is h.
func (e *entry) is(h uint64, policy, key string) bool {
	return e.hash == h && e.key == key && e.policy == policy
}
