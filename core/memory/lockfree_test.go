package memory_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
	"github.com/go-ratelimit/ratelimit/core/storetest"
)

// Lookups read the shard's table without a lock while sweeps, evictions and table
// rebuilds change it. This test runs all of them at once in one shard, under the
// race detector in CI, and checks that the decisions stay exact:
//   - a fixed window on hot keys admits exactly its limit (a lost entry would
//     admit more);
//   - a concurrency limit is never exceeded, although its entry may be swept
//     whenever it holds no lease.
//
// The gap between finding an entry and a sweep dropping it is too narrow to hit
// reliably here; TestDecisionOnADroppedEntryGoesToANewOne holds it open.
func TestLockFreeLookupsStayExactUnderChurn(t *testing.T) {
	clock := storetest.NewClock() // frozen: only the churn recovers
	store := newTestStore(t, clock, memory.WithShards(1), memory.WithMaxKeys(64))
	ctx := context.Background()
	const (
		hotKeys  = 4
		limit    = 500
		inFlight = 3
		workers  = 4
		attempts = 2000
		// The workers go on past their attempts until the churn has swept this
		// often while they ran: on a loaded machine the churn's goroutine was once
		// scheduled too late to sweep at all (Evicted 0 below).
		minSweeps = 8
	)
	window := core.MustPolicy("window", core.FixedWindow, core.Rate{Limit: limit, Period: time.Hour})
	gate, err := core.NewConcurrencyPolicy("gate", inFlight, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	churn, err := core.NewConcurrencyPolicy("churn", 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	var (
		wg       sync.WaitGroup
		admitted [hotKeys]atomic.Int64
		holding  atomic.Int64
		peak     atomic.Int64
		lease    atomic.Uint64
		sweeps   atomic.Int64
		done     = make(chan struct{})
		failures = make(chan error, 16)
	)
	fail := func(err error) {
		select {
		case failures <- err:
		default:
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(2)
		go func() { // the hot keys
			defer wg.Done()
			for i := 0; i < attempts || sweeps.Load() < minSweeps; i++ {
				k := i % hotKeys
				res, err := store.Decide(ctx, core.Request{Policy: window, Key: fmt.Sprint("hot", k)})
				if err != nil {
					fail(err)
					return
				}
				if res.Allowed {
					admitted[k].Add(1)
				}
			}
		}()
		go func() { // the gate: acquire, count, release
			defer wg.Done()
			for i := 0; i < attempts || sweeps.Load() < minSweeps; i++ {
				id := lease.Add(1)
				res, err := store.Decide(ctx, core.Request{Policy: gate, Key: "gate", Lease: id})
				if err != nil {
					fail(err)
					return
				}
				if !res.Allowed {
					continue
				}
				now := holding.Add(1)
				for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
				}
				holding.Add(-1)
				if err := store.Release(ctx, core.Request{Policy: gate, Key: "gate"}, id); err != nil {
					fail(err)
					return
				}
			}
		}()
	}
	var churned sync.WaitGroup
	churned.Add(1)
	go func() { // keys that recover at once: inserts, evictions at the cap, sweeps, rebuilds
		defer churned.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			key := fmt.Sprint("churn", i)
			id := lease.Add(1)
			if _, err := store.Decide(ctx, core.Request{Policy: churn, Key: key, Lease: id}); err != nil {
				fail(err)
				return
			}
			if err := store.Release(ctx, core.Request{Policy: churn, Key: key}, id); err != nil {
				fail(err)
				return
			}
			if i%16 == 0 {
				store.Sweep()
				sweeps.Add(1)
			}
		}
	}()
	wg.Wait()
	close(done)
	churned.Wait()
	close(failures)
	for err := range failures {
		t.Fatal(err)
	}
	for k := range admitted {
		if n := admitted[k].Load(); n != limit {
			t.Errorf("hot key %d admitted %d, want exactly %d", k, n, limit)
		}
	}
	if p := peak.Load(); p > inFlight {
		t.Errorf("%d requests held the gate at once, limit %d", p, inFlight)
	}
	if st := store.Stats(); st.Evicted == 0 {
		t.Errorf("stats %+v: the churn was never swept, so the test proved nothing", st)
	}
}
