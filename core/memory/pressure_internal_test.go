package memory

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestKeyCountStaysExactUnderConcurrentStacks runs stacks of new and known keys,
// single decisions and sweeps at once on a small, full store, then checks that
// each shard's count of live entries is the number of entries in its table and
// never above the cap.
func TestKeyCountStaysExactUnderConcurrentStacks(t *testing.T) {
	store, err := New(WithMaxKeys(64), WithShards(4), WithSweepInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a := core.MustPolicy("a", core.FixedWindow, core.PerMinute(3))
	b := core.MustPolicy("b", core.TokenBucket, core.PerSecond(1000))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results := make([]core.Result, 2)
			for i := range 3000 {
				ka, kb := fmt.Sprint("a", (w*7919+i)%500), fmt.Sprint("b", (w*104729+i)%300)
				switch i % 5 {
				case 0:
					_, _ = store.Decide(context.Background(), core.Request{Policy: b, Key: kb})
				case 1:
					if w == 0 {
						store.Sweep()
					}
				default:
					_, _ = store.DecideStack(context.Background(), []core.Request{{Policy: a, Key: ka}, {Policy: b, Key: kb}}, results)
				}
			}
		}()
	}
	wg.Wait()
	for i := range store.shards {
		sh := &store.shards[i]
		sh.mu.Lock()
		n := 0
		sh.table.Load().each(0, func(*entry) bool { n++; return true })
		live := sh.live
		sh.mu.Unlock()
		if n != live || live > store.perShard {
			t.Fatalf("shard %d: %d entries in the table, %d counted live, cap %d", i, n, live, store.perShard)
		}
	}
	t.Logf("stats %+v", store.Stats())
}
