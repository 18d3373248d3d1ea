package memory

import "sync/atomic"

// table is an open-addressed hash table of entries that is read without locks.
//
// Its slots only ever change from nil to an entry, or from an entry to the table's
// tombstone, and only with the owning shard's mutex held. A reader that loads a
// slot therefore sees either nothing, a tombstone, or a fully built entry. When the
// tombstones and entries fill three quarters of the slots, the shard copies the
// live entries into a fresh table and publishes it; a reader still probing the old
// table may miss an entry inserted since, and then takes the locked path, which
// looks again in the current table.
type table struct {
	slots     []atomic.Pointer[entry]
	mask      uint64
	tombstone *entry // marks a slot whose entry was removed; probes go past it
}

// minTableSlots is the size of a new shard's table.
const minTableSlots = 8

func newTable(slots int) *table {
	return &table{slots: make([]atomic.Pointer[entry], slots), mask: uint64(slots - 1), tombstone: new(entry)}
}

// home is the first slot probed for hash h. The low bits of h pick the shard, so
// the table indexes by the high ones.
func (t *table) home(h uint64) uint64 { return (h >> 32) & t.mask }

// find returns the entry of the key under the policy with that ID, or nil. It
// takes no lock.
func (t *table) find(h uint64, id, key string) *entry {
	for i := t.home(h); ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e != t.tombstone && e.is(h, id, key) {
			return e
		}
	}
}

// full reports whether one more slot may not be taken without growing: the table
// keeps a quarter of its slots empty so that every probe ends.
func (t *table) full(used int) bool { return (used+1)*4 > len(t.slots)*3 }

// place puts e into the first free or tombstoned slot of its probe sequence and
// reports whether that slot was empty (rather than a tombstone). The caller must
// hold the shard's mutex and know that e's key is not in the table.
func (t *table) place(e *entry) (tookEmpty bool) {
	for i := t.home(e.hash); ; i = (i + 1) & t.mask {
		switch old := t.slots[i].Load(); old {
		case nil:
			t.slots[i].Store(e)
			return true
		case t.tombstone:
			t.slots[i].Store(e)
			return false
		}
	}
}

// remove replaces e by a tombstone. The caller must hold the shard's mutex.
func (t *table) remove(e *entry) {
	for i := t.home(e.hash); ; i = (i + 1) & t.mask {
		switch t.slots[i].Load() {
		case e:
			t.slots[i].Store(t.tombstone)
			return
		case nil:
			return
		}
	}
}

// each calls f with every entry of the table, starting at slot from, until f
// returns false.
func (t *table) each(from uint64, f func(*entry) bool) {
	for n, i := 0, from&t.mask; n < len(t.slots); n, i = n+1, (i+1)&t.mask {
		if e := t.slots[i].Load(); e != nil && e != t.tombstone && !f(e) {
			return
		}
	}
}
