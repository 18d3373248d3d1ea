package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// TestBatchScriptFlushDuringTraffic flushes the script cache of every server while 16
// goroutines decide through a batching store: batches meet NOSCRIPT, which means their
// scripts did not run, and are sent again as EVAL, without errors and without a
// decision charged twice (the bucket's tokens match the admissions).
func TestBatchScriptFlushDuringTraffic(t *testing.T) {
	for name, newClient := range batchClients {
		t.Run(name, func(t *testing.T) {
			client := newClient(t)
			store := newBatchingStore(t, client)
			// 100,000 tokens, none refilled within the test: at most 100,000 admissions on "k".
			scarce := core.MustPolicy("flush-scarce", core.TokenBucket, core.Rate{Limit: 1, Period: 24 * time.Hour}, core.WithBurst(100_000))
			plenty := core.MustPolicy("flush-plenty", core.SlidingWindow, core.PerMinute(1_000_000))
			ctx := context.Background()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			admitted, decisions := 0, 0
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						req := core.Request{Policy: scarce, Key: "k"}
						if g%2 == 1 {
							req = core.Request{Policy: plenty, Key: "k"}
						}
						res, err := store.Decide(ctx, req)
						if err != nil {
							t.Errorf("goroutine %d: %v", g, err)
							return
						}
						mu.Lock()
						decisions++
						if res.Allowed && g%2 == 0 {
							admitted++
						}
						mu.Unlock()
					}
				}()
			}
			flushDuringTraffic(t, ctx, client)
			close(stop)
			wg.Wait()
			if decisions == 0 || admitted > 100_000 {
				t.Fatalf("%d decisions, %d admitted from a bucket of 100,000", decisions, admitted)
			}
			// The bucket's state agrees with the admissions counted: one more charge
			// leaves exactly 100,000 - admitted - 1 tokens.
			res, err := store.Decide(ctx, core.Request{Policy: scarce, Key: "k"})
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(100_000 - admitted - 1); res.Remaining != want {
				t.Fatalf("after %d admissions the bucket holds %d, want %d", admitted, res.Remaining, want)
			}
			t.Logf("%d decisions, %d admitted", decisions, admitted)
		})
	}
}
