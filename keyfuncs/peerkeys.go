package keyfuncs

import (
	"hash/maphash"
	"sync/atomic"
)

// peerKeySlots is the number of TCP peers whose keys a ClientIP remembers.
const peerKeySlots = 512

// peerKeyCache remembers the keys of recent TCP peers, by their exact r.RemoteAddr,
// so that the requests of one connection (a keep-alive client's, with the same
// address and port) are keyed without parsing the address or allocating the key
// again. It only holds peers keyed by their own address, when the ClientIP trusts no
// proxy: then the key is a function of RemoteAddr alone, so a hit gives the same
// key as computing it. A slot holds an immutable entry and is replaced whole, so
// readers need no lock.
type peerKeyCache struct {
	seed  maphash.Seed
	slots [peerKeySlots]peerKeySlot
}

// peerKeySlot holds an entry and the hash of its address, which rules most misses
// out without reaching the entry. The two are stored apart, so a reader may see
// the hash of one entry with another: the hash only filters, and the address
// comparison decides.
type peerKeySlot struct {
	hash   atomic.Uint64
	entry  atomic.Pointer[peerKey]
	misses atomic.Uint32 // counts the misses of a full slot, to replace its entry every eighth
}

type peerKey struct {
	remoteAddr string
	key        string
}

func newPeerKeyCache() *peerKeyCache { return &peerKeyCache{seed: maphash.MakeSeed()} }

// lookup returns the key remembered for remoteAddr, or "" and the slot it belongs
// in with the hash of remoteAddr.
func (c *peerKeyCache) lookup(remoteAddr string) (string, *peerKeySlot, uint64) {
	hash := maphash.String(c.seed, remoteAddr)
	slot := &c.slots[hash%peerKeySlots]
	if slot.hash.Load() == hash {
		if e := slot.entry.Load(); e != nil && e.remoteAddr == remoteAddr {
			return e.key, nil, hash
		}
	}
	return "", slot, hash
}

// remember puts key in slot when it is empty, and otherwise replaces the entry
// there on every eighth miss: a peer that keeps coming back gets in within eight
// requests, while a stream of new peers, each seen once, costs few allocations.
func (c *peerKeyCache) remember(slot *peerKeySlot, hash uint64, remoteAddr, key string) {
	if slot.entry.Load() != nil && slot.misses.Add(1)%8 != 0 {
		return
	}
	slot.entry.Store(&peerKey{remoteAddr: remoteAddr, key: key})
	slot.hash.Store(hash)
}
