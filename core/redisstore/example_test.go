package redisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/redisstore"
	"github.com/go-ratelimit/ratelimit/core/redisstore/embedded"
)

// A Store decides on any go-redis client; here an in-process server stands in for
// Redis, and a fixed clock makes the decisions reproducible.
func Example() {
	server, err := miniredis.Run() // or a real Redis; embedded.New does this for you
	if err != nil {
		panic(err)
	}
	defer server.Close()
	client := redis.NewClient(&redis.Options{Addr: server.Addr(), ContextTimeoutEnabled: true})
	defer client.Close()

	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store, err := redisstore.New(client, redisstore.WithClock(func() time.Time { return at }))
	if err != nil {
		panic(err)
	}
	defer store.Close()
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

// A login stack whose three policies share a hash tag is one script call on a Cluster.
func ExampleTagPolicies() {
	store, err := embedded.New(redisstore.WithHashTag(
		redisstore.TagPolicies("login", "login-account", "login-ip", "login-subnet")))
	if err != nil {
		panic(err)
	}
	defer store.Close()
	account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	fmt.Println(store.Key(account, "alice"))
	// Output: rl:{login}login-account#log.5.60000.5:alice
}

// A store on the master a Sentinel names: DialUniversal takes go-redis's
// UniversalOptions (passwords and TLS too) and bounds every timeout left zero.
func ExampleDialUniversal() {
	store, err := redisstore.DialUniversal(&redis.UniversalOptions{
		MasterName: "mymaster",
		Addrs:      []string{"10.0.0.7:26379", "10.0.0.8:26379", "10.0.0.9:26379"}, // the Sentinels
		Password:   "secret",
	})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10))
	_, _ = store.Decide(context.Background(), core.Request{Policy: api, Key: "user-42"})
}
