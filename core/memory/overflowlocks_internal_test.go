package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// keyInShard returns the first key, prefix followed by a number, that s places in
// shard id.
func keyInShard(s *Store, prefix string, id int) string {
	for i := 0; ; i++ {
		if k := fmt.Sprint(prefix, i); s.hash("", k)&s.mask == uint64(id) {
			return k
		}
	}
}

// TestStacksOverflowingInOppositeOrderDoNotDeadlock runs two stacks that list the
// same two policies in opposite order, on keys of two different full shards, so
// that both are decided against the two policies' overflow entries. Overflow
// entries belong to no shard, so the shard order does not cover them. DecideStack
// used to lock each one in the stack's own order, inside its loop over the
// requests: one stack held a's overflow entry and waited for b's while the other
// held b's and waited for a's, for ever, and every later decision on a new key of
// either policy, or in either shard, hung behind them.
func TestStacksOverflowingInOppositeOrderDoNotDeadlock(t *testing.T) {
	clock := storetest.NewClock()
	store, err := New(WithShards(2), WithMaxKeys(2), WithSweepInterval(0), WithClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	filler := core.MustPolicy("filler", core.FixedWindow, core.PerMinute(5))
	for id := range 2 { // each shard's one slot, held by a key that stays restricted
		if _, err := store.Decide(ctx, core.Request{Policy: filler, Key: keyInShard(store, "filler-", id)}); err != nil {
			t.Fatal(err)
		}
	}
	a := core.MustPolicy("a", core.FixedWindow, core.PerMinute(1_000_000))
	b := core.MustPolicy("b", core.FixedWindow, core.PerMinute(1_000_000))
	stacks := [][]core.Request{
		{{Policy: a, Key: keyInShard(store, "x", 0)}, {Policy: b, Key: keyInShard(store, "y", 0)}},
		{{Policy: b, Key: keyInShard(store, "x", 1)}, {Policy: a, Key: keyInShard(store, "y", 1)}},
	}
	const rounds = 20_000
	var wg sync.WaitGroup
	for _, stack := range stacks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results := make([]core.Result, len(stack))
			for range rounds {
				if _, err := store.DecideStack(ctx, stack, results); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // the rounds take well under a second, even under -race
		t.Fatal("the two stacks did not finish within 10s: deadlocked on the overflow entries") // Stats would wait for their shards
	}
	if st := store.Stats(); st.Overflowed != 4*rounds {
		t.Fatalf("%d decisions against an overflow entry, want %d", st.Overflowed, 4*rounds)
	}
}
