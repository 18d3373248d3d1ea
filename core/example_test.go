package core_test

import (
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Step is a pure function: the same state, policy, instant and cost always give the
// same decision, which is how every store is tested.
func ExampleStep() {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(2), core.WithBurst(3))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var state core.State
	for i, at := range []int64{0, 0, 0, 0, 500} {
		var res core.Result
		state, res = core.Step(state, &api, start+at, 1, 0)
		fmt.Printf("request %d at +%dms: allowed=%v remaining=%d retry=%v\n", i, at, res.Allowed, res.Remaining, res.RetryAfter)
	}
	// Output:
	// request 0 at +0ms: allowed=true remaining=2 retry=0s
	// request 1 at +0ms: allowed=true remaining=1 retry=0s
	// request 2 at +0ms: allowed=true remaining=0 retry=0s
	// request 3 at +0ms: allowed=false remaining=0 retry=500ms
	// request 4 at +500ms: allowed=true remaining=0 retry=0s
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
