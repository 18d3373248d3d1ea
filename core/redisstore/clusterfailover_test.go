package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/redistest"
)

// A master of a Cluster with replicas fails (killed, or stuck: SIGSTOP) and its
// replica takes its slots over. Decisions on a key of those slots, every 20ms, fail
// while the Cluster fails over, then succeed on the promoted replica within seconds:
// go-redis on its own would keep sending them to the failed master until its next
// periodic reload of the slots (60s). Unbatched and batched.
func TestClusterFailoverReachesThePromotedReplica(t *testing.T) {
	for _, fault := range []string{"kill", "sigstop"} {
		for _, batched := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, batched %v", fault, batched), func(t *testing.T) {
				t.Parallel() // the subtests mostly wait for the Clusters to fail over
				c := redistest.StartClusterWithReplicas(t, 3, time.Second)
				var options []redisstore.Option
				if batched {
					options = append(options, redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch))
				}
				store, err := redisstore.Dial(c.Addrs(), options...)
				if err != nil {
					t.Fatal(err)
				}
				defer store.Close()
				p := core.MustPolicy("failover", core.GCRA, core.PerSecond(1000))
				key, err := c.KeyOn(0, "user-", func(key string) string { return store.Key(p, key) })
				if err != nil {
					t.Fatal(err)
				}
				decide := func() error {
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
					defer cancel()
					_, err := store.Decide(ctx, core.Request{Policy: p, Key: key})
					return err
				}
				if err := decide(); err != nil {
					t.Fatal(err)
				}
				if fault == "kill" {
					err = c.Servers[0].Kill()
				} else {
					err = c.Servers[0].Pause()
					defer c.Servers[0].Resume()
				}
				if err != nil {
					t.Fatal(err)
				}
				failed := time.Now()
				var lastErr error
				for lastErr = decide(); lastErr == nil; lastErr = decide() { // until the Cluster notices
					if time.Since(failed) > 10*time.Second {
						t.Fatal("decisions on the failed master's slots still succeed 10s after it failed")
					}
					time.Sleep(20 * time.Millisecond)
				}
				if err := c.WaitPromoted(0); err != nil {
					t.Fatal(err)
				}
				promoted := time.Now()
				for err := decide(); err != nil; err = decide() {
					if time.Since(promoted) > 10*time.Second {
						t.Fatalf("decisions still fail 10s after the replica's promotion: %v", err)
					}
					time.Sleep(20 * time.Millisecond)
				}
				t.Logf("%s: the replica was promoted %v after the fault (decisions failing with %v); decisions succeeded again %v later",
					fault, promoted.Sub(failed).Round(10*time.Millisecond), lastErr, time.Since(promoted).Round(10*time.Millisecond))
			})
		}
	}
}
