// Package memory is the in-process Store: the default store, and the one the Redis
// store falls back to in degraded mode.
//
// Each key's state has its own mutex, and a decision finds it through a hash table
// that is read without locks, so decisions on different keys do not contend, a hot
// key is held only for its own transition, and a decision on an existing key
// allocates nothing. The table is split into shards whose mutexes serialise only
// inserts and evictions.
//
// Keys whose state has fully recovered (a full bucket, an elapsed window) are
// evicted by a janitor goroutine, which is invisible to clients: a recovered key
// decides exactly as a new one. A cap on keys bounds memory under a flood of random
// keys; when a shard is full, the entry closest to recovery among a small sample is
// evicted. An entry is never evicted in the middle of its own decision, so a shard
// whose sampled entries are all being decided at that instant takes the new key
// anyway and exceeds its cap by at most the decisions then in flight.
//
//	store, err := memory.New()
//	if err != nil {
//		return err
//	}
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//	if err == nil && !res.Allowed {
//		fmt.Println("retry after", res.RetryAfter)
//	}
package memory
