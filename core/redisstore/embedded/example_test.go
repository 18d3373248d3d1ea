package embedded_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
)

// An embedded store runs the Redis scripts in process; with a fixed clock its
// decisions are reproducible.
func ExampleNew() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := embedded.New(redisstore.WithClock(func() time.Time { return at }))
	if err != nil {
		panic(err)
	}
	defer store.Close() // stops the in-process server
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(2))
	for i := 0; i < 3; i++ {
		res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "user-42"})
		if err != nil {
			panic(err)
		}
		fmt.Println(res.Allowed, res.Remaining, res.RetryAfter)
	}
	fmt.Println(store.Key(api, "user-42"))
	// Output:
	// true 1 0s
	// true 0 0s
	// false 0 500ms
	// rl:{api#tb.2.1000.2:user-42}
}
