package transition_test

import (
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
)

// Step is a pure function: the same state, policy, instant and cost always give the
// same decision, which is how every store is tested.
func ExampleStep() {
	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(2), core.WithBurst(3))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	var state transition.State
	for i, at := range []int64{0, 0, 0, 0, 500} {
		var res core.Result
		state, res = transition.Step(state, &api, start+at, 1, 0)
		fmt.Printf("request %d at +%dms: allowed=%v remaining=%d retry=%v\n", i, at, res.Allowed, res.Remaining, res.RetryAfter)
	}
	// Output:
	// request 0 at +0ms: allowed=true remaining=2 retry=0s
	// request 1 at +0ms: allowed=true remaining=1 retry=0s
	// request 2 at +0ms: allowed=true remaining=0 retry=0s
	// request 3 at +0ms: allowed=false remaining=0 retry=500ms
	// request 4 at +500ms: allowed=true remaining=0 retry=0s
}
