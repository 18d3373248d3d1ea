// Package core is the decision core of ratelimit: policies, the algorithms they
// name, requests and results, stacks, and the Store interface that the stores
// implement. The HTTP middleware (package httplimit and the router adapters) is
// built on it; use core directly to declare policies or to decide outside HTTP.
//
// A Policy is a name, an algorithm and a rate, validated once at construction. A
// Store decides a Request (a policy, a key and a cost) atomically and answers with
// a Result: admitted or not, what remains, when to retry. The stores are
// core/memory (the default: in process, one lock per key) and core/redisstore
// (shared by replicas: one Lua script per decision), wrapped in core/resilient for
// production; they decide exactly alike (see Store). The arithmetic is exact: 7
// requests per 3 seconds never rounds, and every accepted policy keeps its numbers
// below 2^53, where Redis Lua is exact too.
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
