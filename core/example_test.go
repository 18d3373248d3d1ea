package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// A policy is handed to a store with every decision; the store answers with the
// policy's verdict for that key. (A memory store on a fixed clock, so the output is
// reproducible.)
func Example() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := memory.MustNew(memory.WithClock(func() time.Time { return at }))
	defer store.Close()

	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(2), core.WithBurst(3))
	for i := 0; i < 4; i++ {
		res, err := store.Decide(context.Background(), core.Request{Policy: api, Key: "user-42"})
		switch {
		case err != nil: // the store failed; never "over limit"
			fmt.Println("store error:", err)
		case !res.Allowed:
			fmt.Println("429, retry after", res.RetryAfter)
		default:
			fmt.Println("allowed, remaining", res.Remaining)
		}
	}
	// Output:
	// allowed, remaining 2
	// allowed, remaining 1
	// allowed, remaining 0
	// 429, retry after 500ms
}

// A stack decides several policies as one: the login is refused by the policy on
// the account, and the IP's policy is not charged for it.
func ExampleStore_DecideStack() {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := memory.MustNew(memory.WithClock(func() time.Time { return at }))
	defer store.Close()

	account := core.MustPolicy("login-account", core.SlidingLog, core.PerMinute(2))
	ip := core.MustPolicy("login-ip", core.TokenBucket, core.PerMinute(20))
	results := make([]core.Result, 2)
	for i := 0; i < 3; i++ {
		reqs := []core.Request{{Policy: account, Key: "alice"}, {Policy: ip, Key: "203.0.113.9"}}
		allowed, err := store.DecideStack(context.Background(), reqs, results)
		if err != nil {
			panic(err)
		}
		decisive := results[core.MostRestrictive(results)]
		fmt.Printf("allowed=%v decided by %s, ip remaining %d\n", allowed, decisive.Policy, results[1].Remaining)
	}
	// Output:
	// allowed=true decided by login-account, ip remaining 19
	// allowed=true decided by login-account, ip remaining 18
	// allowed=false decided by login-account, ip remaining 18
}

// A policy is built once, validated, and handed to every decision.
func ExampleNewPolicy() {
	login, err := core.NewPolicy("login-account", core.SlidingLog, core.PerMinute(5))
	if err != nil {
		panic(err)
	}
	fmt.Println(login)
	_, err = core.NewPolicy("broken", core.TokenBucket, core.PerSecond(10), core.WithBurst(0))
	fmt.Println(err)
	// Output:
	// login-account: sliding_log 5/1m0s
	// ratelimit: invalid policy "broken": burst must be at least 1, got 0
}
