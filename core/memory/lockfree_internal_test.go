package memory

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/go-ratelimit/ratelimit/core"
)

// A lookup can find an entry in the table just before a sweep drops it. The entry
// is marked dead before it leaves the table, and whoever then locks it must look
// the key up again rather than decide on state that is no longer the key's. This
// test holds the sweep between those two steps and checks that a decision in that
// gap goes to a new entry.
func TestDecisionOnADroppedEntryGoesToANewOne(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	store, err := New(WithShards(1), WithSweepInterval(0), WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	p := core.MustPolicy("p", core.FixedWindow, core.Rate{Limit: 3, Period: time.Hour})
	req := core.Request{Policy: p, Key: "k"}
	if _, err := store.Decide(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	sh, h := &store.shards[0], store.hash(p.ID(), "k")
	old := sh.table.Load().find(h, p.ID(), "k")
	before := old.state

	// The first half of a sweep's drop: the entry is dead but still in the table.
	sh.mu.Lock()
	old.mu.Lock()
	old.dead = true
	old.mu.Unlock()
	decided := make(chan core.Result, 1)
	go func() {
		res, err := store.Decide(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		decided <- res
	}()
	select {
	case res := <-decided:
		sh.mu.Unlock()
		t.Fatalf("decided %+v on the dead entry without waiting for the shard", res)
	case <-time.After(50 * time.Millisecond): // it found the dead entry and waits for sh.mu
	}
	sh.table.Load().remove(old) // the second half
	sh.live--
	sh.mu.Unlock()

	res := <-decided
	if !res.Allowed || res.Remaining != 2 {
		t.Fatalf("decision after the drop: %+v, want a fresh window with 2 remaining", res)
	}
	if old.state.Count != before.Count || old.state.Window != before.Window {
		t.Fatalf("the dead entry's state changed: %+v, was %+v", old.state, before)
	}
	if e := sh.table.Load().find(h, p.ID(), "k"); e == nil || e == old {
		t.Fatalf("the table holds %p, want a new entry (old %p)", e, old)
	}
}

// The entry's layout is what keeps a hot key's decisions on one cache line (see
// entry). Adding a field in the wrong place fails here rather than silently
// costing a second line per decision.
func TestEntryLayout(t *testing.T) {
	const line = 64
	var e entry
	if got := unsafe.Offsetof(e.mu); got != line {
		t.Errorf("mu at offset %d, want %d: the identity must fill exactly the first line", got, line)
	}
	hot := []struct {
		name string
		end  uintptr
	}{
		{"Seen", unsafe.Offsetof(e.state.Seen) + unsafe.Sizeof(e.state.Seen)},
		{"Tokens", unsafe.Offsetof(e.state.Tokens) + unsafe.Sizeof(e.state.Tokens)},
		{"Updated", unsafe.Offsetof(e.state.Updated) + unsafe.Sizeof(e.state.Updated)},
		{"TAT", unsafe.Offsetof(e.state.TAT) + unsafe.Sizeof(e.state.TAT)},
		{"Window", unsafe.Offsetof(e.state.Window) + unsafe.Sizeof(e.state.Window)},
		{"Count", unsafe.Offsetof(e.state.Count) + unsafe.Sizeof(e.state.Count)},
	}
	for _, f := range hot {
		if end := unsafe.Offsetof(e.state) + f.end; end > 2*line {
			t.Errorf("State.%s ends at offset %d of the entry, past the second line", f.name, end)
		}
	}
	// The allocator aligns objects of a size class that is a multiple of 64 bytes
	// to 64 bytes; 192 is such a class.
	if size := unsafe.Sizeof(e); size <= 2*line || size > 3*line {
		t.Errorf("entry is %d bytes, want the 192-byte size class", size)
	}
}
