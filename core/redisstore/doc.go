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
// In production, wrap the store in core/resilient: alone, it fails every decision
// while Redis is down (core.ErrStoreUnavailable within 250–400ms with Dial's
// client), and the HTTP middleware answers 503 until Redis is back. resilient
// gives each policy a failure mode and keeps enforcing limits locally.
//
// DialUniversal takes go-redis's UniversalOptions, for Sentinel, passwords and TLS,
// with the same bounds; New takes any go-redis v9 UniversalClient you made. Package
// embedded runs the store on an in-process miniredis, for tests and demos.
//
// Run Redis with maxmemory-policy noeviction: an evicted key gives its client the
// whole limit again, and Store.CheckEviction names any server that may evict.
//
// A failed decision is an error naming the policy, never an admission. The scripts
// read Redis TIME, so the replicas' clocks do not matter. On a Cluster, WithHashTag
// puts a stack's keys in one slot, for one round trip. WithBatching lets concurrent
// decisions bound for one Redis node share one round trip; a lone request waits for
// nothing.
//
// Keys, TTLs, errors, Cluster stacks and batching in detail: docs/redis.md; the
// scripts, file by file: docs/redis-scripts.md.
package redisstore
