// Package core is the decision core of ratelimit: policies, the algorithms, results,
// stacks, and the Store interface the stores implement.
//
// Every algorithm is a pure transition Step(state, policy, now, cost) → (state,
// result), with time as a parameter (milliseconds since the Unix epoch). Stores run
// that transition atomically: the memory store under a per-shard lock, the Redis
// store as a Lua script. The arithmetic is exact: token buckets count in integer
// token units, so 7 requests per 3 seconds never rounds, and every accepted policy
// keeps its numbers below 2^53, where Redis Lua's doubles are exact too.
//
// A stack is several policies decided as one, all-or-nothing (a login checked per
// account, per IP and per subnet): if any policy refuses, none is charged.
//
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	store := memory.MustNew()
//	defer store.Close()
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//	switch {
//	case err != nil: // the store failed; never "over limit"
//	case !res.Allowed:
//		fmt.Println("429, retry after", res.RetryAfter)
//	}
//
// This library protects capacity. It is not billing: exact, durable quotas that
// money depends on belong in an accounting system.
package core
