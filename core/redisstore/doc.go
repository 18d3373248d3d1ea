// Package redisstore is the Redis core.Store: every algorithm of package core runs as
// a Lua script that reads, refills, decides, writes and expires in one atomic step, so
// that any number of replicas share exact limits. The scripts make exactly the
// decisions of the memory store, on a standalone server, Sentinel or a Cluster.
//
//	store, err := redisstore.Dial([]string{"127.0.0.1:6379"}) // several addresses: a Cluster
//	if err != nil {
//		return err
//	}
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//	if err == nil && !res.Allowed {
//		fmt.Println("retry after", res.RetryAfter)
//	}
//
// In production, wrap the store in core/resilient: used on its own, it fails every
// decision while Redis is down (core.ErrStoreUnavailable within about 250ms with
// Dial's client), and the HTTP middleware answers 503 until Redis is back.
// resilient gives each policy a failure mode and keeps enforcing limits locally.
//
// # Clients
//
// New takes any go-redis v9 UniversalClient: a Client (standalone or a Sentinel
// failover client), a ClusterClient or a Ring. Dial makes a Client for one address or
// a ClusterClient for several. Package embedded runs the store on an in-process
// miniredis, for tests and demos, and is linked only where imported.
//
// # Keys
//
// A policy's state for a key lives at rl:{api#tb.10.1000.20:user-42}: the prefix
// (WithPrefix), then, as the hash tag, the policy's ID (its name and parameters, so
// a changed plan never misreads old state) and the key. Every key expires once its
// state has fully recovered. A decision, or a stack whose keys share a slot (always,
// on one server), is one round trip. On a Cluster, WithHashTag (TagByKey,
// TagPolicies) puts a stack's keys in one slot; a stack across slots is still
// all-or-nothing, at a round trip per slot (two when it refuses).
//
// # Batching
//
// WithBatching lets concurrent decisions bound for one Redis node share one round
// trip, trading at most the window plus one round trip of latency under load for
// less server work; a lone request waits for nothing.
//
// # Errors
//
// A failed decision is an error naming the policy, never an admission:
// core.ErrStoreUnavailable when the server cannot serve now, ErrUnexpectedReply when
// it answers what the scripts did not expect (WRONGTYPE, CROSSSLOT, foreign state).
//
// # Time
//
// The scripts read Redis TIME, so the replicas' clocks do not matter; WithClock uses
// the caller's clock instead (the simulator replays traces with it). A clock that
// goes back mints nothing.
//
// Operations, Cluster layouts and batching in detail: docs/redis.md; the scripts,
// file by file: docs/redis-scripts.md.
package redisstore
