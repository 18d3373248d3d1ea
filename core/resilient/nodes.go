package resilient

import (
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// nodeNamer is implemented by shared stores that know which server holds a key
// (redisstore.Store.Node): on a Cluster, the address of the master serving the key's
// slot, from the client's slot map; "" when not known.
type nodeNamer interface {
	Node(key string) string
}

// stuckNodes are the Cluster masters serving a slot whose breaker is open. A master
// that is stuck fails the calls of every one of its slots, but each slot's breaker
// opens on its own traffic (3 failed calls and a probe), so keys spread over many
// slots (one per user, per address) went on waiting out the deadline slot by slot.
// Once a slot's opening is confirmed, every key its master serves follows its
// failure mode without calling the store; it calls again once that master's open
// slots have closed (their probes reach the master, or, after a failover, the
// replica promoted in its place), or once the client's slot map moves the key to
// another master.
type stuckNodes struct {
	namer nodeNamer
	count atomic.Int64 // len(open), read without the lock on the fast path

	mu     sync.RWMutex
	open   map[string]int // master → how many of its slots have a breaker not closed
	slotOn map[int]string // slot → its master, for each slot counted in open
}

func newStuckNodes(shared core.Store) *stuckNodes {
	namer, ok := shared.(nodeNamer)
	if !ok {
		return nil
	}
	return &stuckNodes{namer: namer, open: map[string]int{}, slotOn: map[int]string{}}
}

// opened counts slot, whose breaker opened, for the master serving key, a Redis key
// in slot, and returns that master ("" when not known), and whether it was not
// counted as stuck before.
func (sn *stuckNodes) opened(slot int, key string) (node string, first bool) {
	if sn == nil {
		return "", false
	}
	node = sn.namer.Node(key)
	if node == "" {
		return "", false
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if _, ok := sn.slotOn[slot]; ok {
		return node, false
	}
	sn.slotOn[slot] = node
	sn.open[node]++
	sn.count.Store(int64(len(sn.open)))
	return node, sn.open[node] == 1
}

// closed forgets slot, whose breaker closed.
func (sn *stuckNodes) closed(slot int) {
	if sn == nil {
		return
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	node, ok := sn.slotOn[slot]
	if !ok {
		return
	}
	delete(sn.slotOn, slot)
	if sn.open[node]--; sn.open[node] <= 0 {
		delete(sn.open, node)
	}
	sn.count.Store(int64(len(sn.open)))
}

// holds reports whether req's state, named by keys, lives on a stuck master. While
// no master is stuck it costs one atomic load: no key is named.
func (sn *stuckNodes) holds(keys keyNamer, req *core.Request) bool {
	if sn == nil || sn.count.Load() == 0 {
		return false
	}
	node := sn.namer.Node(keys.Key(req.Policy, req.Key))
	if node == "" {
		return false
	}
	sn.mu.RLock()
	defer sn.mu.RUnlock()
	return sn.open[node] > 0
}
