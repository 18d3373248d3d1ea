package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// The lock-free table against a map: random inserts, evictions at the cap, sweeps
// and the rebuilds they cause, after each of which every key the map holds is
// found, no key it lacks is, and the shard's counts agree.
func TestTableAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	p := core.MustPolicy("table", core.FixedWindow, core.Rate{Limit: 10, Period: time.Second})
	q := core.MustPolicy("other", core.FixedWindow, core.Rate{Limit: 10, Period: time.Second})
	store, err := New(WithShards(1), WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	sh := &store.shards[0]
	held := map[string]*entry{} // policy ID + "|" + key
	now := int64(1_700_000_000_000)
	const maxKeys = 100
	tables := map[*table]bool{}
	capEvictions := 0
	for op := 0; op < 20_000; op++ {
		policy := p
		if rng.IntN(4) == 0 {
			policy = q // a second policy on the same keys: equal hashes, different entries
		}
		key := fmt.Sprint("k", rng.IntN(1000))
		h := store.hash(policy.ID(), key)
		switch r := rng.IntN(100); {
		case r < 90: // insert or find, and charge it so that it stays live for a while
			sh.mu.Lock()
			if sh.live == maxKeys && sh.table.Load().find(h, policy.ID(), key) == nil {
				capEvictions++
			}
			e := sh.lookupLocked(h, policy, key, maxKeys, now)
			if e == nil { // full of live entries: the store would use the overflow entry
				sh.mu.Unlock()
				break
			}
			e.mu.Lock()
			sh.mu.Unlock()
			var res core.Result
			transition.StepInPlace(&e.state, &core.Request{Policy: policy, Key: key}, now, &res)
			e.mu.Unlock()
			held[policy.ID()+"|"+key] = e
		case r < 97:
			now += rng.Int64N(100) // some windows end
		default:
			sh.mu.Lock()
			sh.sweep(now)
			sh.mu.Unlock()
		}
		// What left the table is dead; what is in it is found.
		for id, e := range held {
			if e.dead {
				delete(held, id)
				continue
			}
			if got := sh.table.Load().find(e.hash, e.id, e.key); got != e {
				t.Fatalf("op %d: %s found as %p, want %p", op, id, got, e)
			}
		}
		live := 0
		sh.table.Load().each(0, func(e *entry) bool {
			live++
			if e.dead {
				t.Fatalf("op %d: a dead entry %s|%s is still in the table", op, e.id, e.key)
			}
			if held[e.id+"|"+e.key] != e {
				t.Fatalf("op %d: the table holds %s|%s, which was not inserted or was replaced", op, e.id, e.key)
			}
			return true
		})
		if live != len(held) || sh.live != live {
			t.Fatalf("op %d: %d entries in the table, shard counts %d, the map %d", op, live, sh.live, len(held))
		}
		if sh.live > maxKeys {
			t.Fatalf("op %d: %d entries, cap %d", op, sh.live, maxKeys)
		}
		tb := sh.table.Load()
		if sh.used*4 > len(tb.slots)*3 {
			t.Fatalf("op %d: %d of %d slots used: probes may not end", op, sh.used, len(tb.slots))
		}
		tables[tb] = true
	}
	if len(tables) < 5 || capEvictions == 0 {
		t.Fatalf("%d tables and %d inserts at the cap: the test did not exercise rebuilds and evictions",
			len(tables), capEvictions)
	}
}
