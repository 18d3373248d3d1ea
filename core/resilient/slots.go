package resilient

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// clusterSlots is the number of Redis Cluster hash slots.
const clusterSlots = 16384

// keyNamer is implemented by shared stores that name the key a policy's state is
// kept under (redisstore.Store.Key). For such a store a Store tracks failures per
// Redis Cluster hash slot of that key, as well as for the whole store: on a Cluster,
// a stuck master sends to the failure modes only the decisions whose keys live on it.
type keyNamer interface {
	Key(policy core.Policy, key string) string
}

// slotBreakers are the breakers of the Cluster slots that have failed, created on a
// slot's first failure; a slot without one counts as closed.
type slotBreakers struct {
	namer  keyNamer
	policy breakerPolicy
	nodes  *stuckNodes // nil when the shared store cannot name a key's master

	breakers  [clusterSlots]atomic.Pointer[breaker]
	notClosed atomic.Int64 // slots whose breaker is open or half-open

	mu        sync.Mutex
	open      map[int]struct{} // slots whose breaker is not closed
	probeKeys map[int]string   // a probe key in each slot probed so far
}

func newSlotBreakers(shared core.Store, p breakerPolicy) *slotBreakers {
	namer, ok := shared.(keyNamer)
	if !ok {
		return nil
	}
	return &slotBreakers{namer: namer, policy: p, nodes: newStuckNodes(shared), open: map[int]struct{}{}, probeKeys: map[int]string{}}
}

// of is the slot of req's state, or -1 when slots are not tracked.
func (sb *slotBreakers) of(req *core.Request) int {
	if sb == nil {
		return -1
	}
	return slotOf(sb.namer.Key(req.Policy, req.Key))
}

// get is the breaker of slot, nil when the slot never failed.
func (sb *slotBreakers) get(slot int) *breaker {
	if sb == nil || slot < 0 {
		return nil
	}
	return sb.breakers[slot].Load()
}

// closed reports whether slot's breaker lets decisions call the store.
func (sb *slotBreakers) closed(slot int) bool {
	b := sb.get(slot)
	return b == nil || b.closed()
}

// closedFor reports whether the breaker of req's slot lets it call the store, and
// the master serving that slot is not stuck (stuckNodes).
func (sb *slotBreakers) closedFor(req *core.Request, slot int) bool {
	return sb.closed(slot) && (sb == nil || !sb.nodes.holds(sb.namer, req))
}

// record counts a call's outcome o for slot at now; a failure creates the slot's
// breaker. It returns the slot's breaker when it asks for a confirming probe.
func (sb *slotBreakers) record(slot int, o outcome, now int64) *breaker {
	if sb == nil || slot < 0 {
		return nil
	}
	b := sb.breakers[slot].Load()
	if b == nil {
		if o != failed {
			return nil
		}
		b = sb.breakerOf(slot)
	}
	if b.record(o, now) {
		return b
	}
	return nil
}

// breakerOf is slot's breaker, created when the slot has none yet.
func (sb *slotBreakers) breakerOf(slot int) *breaker {
	b := sb.breakers[slot].Load()
	if b == nil {
		b = newBreaker(sb.policy)
		if !sb.breakers[slot].CompareAndSwap(nil, b) {
			b = sb.breakers[slot].Load()
		}
	}
	return b
}

// opened records that slot's breaker opened; key is a Redis key in slot. It returns
// the master serving slot when that master was not stuck before (see stuckNodes).
func (sb *slotBreakers) opened(slot int, key string) (stuckMaster string) {
	sb.mu.Lock()
	sb.open[slot] = struct{}{}
	sb.notClosed.Store(int64(len(sb.open)))
	sb.mu.Unlock()
	if node, first := sb.nodes.opened(slot, key); first {
		return node
	}
	return ""
}

// closedSlot forgets slot as open.
func (sb *slotBreakers) closedSlot(slot int) {
	sb.mu.Lock()
	delete(sb.open, slot)
	sb.notClosed.Store(int64(len(sb.open)))
	sb.mu.Unlock()
	sb.nodes.closed(slot)
}

// openSlots lists the slots whose breaker is not closed.
func (sb *slotBreakers) openSlots() []int {
	if sb == nil || sb.notClosed.Load() == 0 {
		return nil
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	slots := make([]int, 0, len(sb.open))
	for slot := range sb.open {
		slots = append(slots, slot)
	}
	return slots
}

// probeKey is a key whose state for the probe policy lives in slot, found by trying
// numbered keys (about 16,384 tries, once per slot).
func (sb *slotBreakers) probeKey(slot int, probe core.Policy) (string, bool) {
	sb.mu.Lock()
	key, ok := sb.probeKeys[slot]
	sb.mu.Unlock()
	if ok {
		return key, true
	}
	for i := 0; i < 32*clusterSlots; i++ {
		key = checkKey + "-" + strconv.Itoa(i)
		if slotOf(sb.namer.Key(probe, key)) == slot {
			sb.mu.Lock()
			if len(sb.probeKeys) < clusterSlots {
				sb.probeKeys[slot] = key
			}
			sb.mu.Unlock()
			return key, true
		}
	}
	return "", false
}

// slotOf is the Redis Cluster slot of key: CRC16-CCITT (XMODEM) of its hash tag (the
// text between the first '{' and the next '}', when not empty; else the whole key),
// mod 16384.
func slotOf(key string) int {
	for open := 0; open < len(key); open++ {
		if key[open] != '{' {
			continue
		}
		for end := open + 1; end < len(key); end++ {
			if key[end] == '}' {
				if end > open+1 {
					key = key[open+1 : end]
				}
				break
			}
		}
		break
	}
	crc := uint16(0)
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for j := 0; j < 8; j++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % clusterSlots
}
