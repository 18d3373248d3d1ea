package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
)

// TestScriptFlushDuringTraffic flushes the script cache of every server while 16
// goroutines decide: EVALSHA meets NOSCRIPT and falls back to EVAL, without errors.
func TestScriptFlushDuringTraffic(t *testing.T) {
	for name, client := range testClients(true) {
		t.Run(name, func(t *testing.T) {
			client := client(t)
			store, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix()))
			if err != nil {
				t.Fatal(err)
			}
			api := core.MustPolicy("flush-api", core.GCRA, core.PerSecond(1000))
			login := []core.Policy{
				core.MustPolicy("flush-account", core.SlidingLog, core.PerMinute(1000)),
				core.MustPolicy("flush-ip", core.TokenBucket, core.PerMinute(1000)),
			}
			ctx := context.Background()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var decisions sync.Map
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 0
					for {
						select {
						case <-stop:
							decisions.Store(g, n)
							return
						default:
						}
						var err error
						if g%2 == 0 {
							_, err = store.Decide(ctx, core.Request{Policy: api, Key: "k"})
						} else {
							reqs := []core.Request{{Policy: login[0], Key: "alice"}, {Policy: login[1], Key: "203.0.113.9"}}
							_, err = store.DecideStack(ctx, reqs, make([]core.Result, 2))
						}
						if err != nil {
							t.Errorf("goroutine %d decision %d: %v", g, n, err)
							return
						}
						n++
					}
				}()
			}
			flushDuringTraffic(t, ctx, client)
			close(stop)
			wg.Wait()
			total := 0
			decisions.Range(func(_, n any) bool { total += n.(int); return true })
			if total == 0 {
				t.Fatal("no decisions were made")
			}
		})
	}
}

// flushDuringTraffic flushes the scripts of every master five times, 30 ms apart, while
// the caller's goroutines decide.
func flushDuringTraffic(t *testing.T, ctx context.Context, client redis.UniversalClient) {
	t.Helper()
	for i := 0; i < 5; i++ {
		time.Sleep(30 * time.Millisecond) // let traffic run between flushes
		if err := flushScripts(ctx, client); err != nil {
			t.Fatal(err)
		}
	}
}

func flushScripts(ctx context.Context, client redis.UniversalClient) error {
	if c, ok := client.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return node.ScriptFlush(ctx).Err()
		})
	}
	return client.ScriptFlush(ctx).Err()
}
