package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
)

// With batching, concurrent decisions share round trips and still decide exactly: 64
// goroutines asking at one instant of a bucket of 10 get exactly 10 admissions.
func ExampleWithBatching() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := embedded.New(
		redisstore.WithClock(func() time.Time { return at }),
		redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch))
	if err != nil {
		panic(err)
	}
	defer store.Close() // stops the batching goroutines
	api := core.MustPolicy("api", core.GCRA, core.PerSecond(10))
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "user-42"})
			if err != nil {
				panic(err)
			}
			if res.Allowed {
				admitted.Add(1)
			}
		}()
	}
	wg.Wait()
	fmt.Println(admitted.Load())
	// Output: 10
}
