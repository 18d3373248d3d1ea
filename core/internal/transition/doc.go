// Package transition holds the algorithms of package core as pure transitions,
// and the state they work on: Step(state, policy, now, cost) → (state, result), with
// time as a parameter (milliseconds since the Unix epoch). It reads no clock and
// keeps nothing; the stores run these transitions atomically (the memory store
// under a per-key lock, the Redis store as a Lua script that mirrors them), and the
// conformance suite (core/storetest) holds every store to them.
//
// The arithmetic is exact: token buckets count in integer token units
// (core.Policy.TokenUnit per token, core.Policy.RefillPerMilli earned per
// millisecond), so 7 requests per 3 seconds never rounds, and every policy core
// accepts keeps its numbers below 2^53, where Redis Lua's doubles are exact too.
//
// It is internal: users decide through a core.Store, never through a transition.
package transition
