// Package memory is the in-process Store: the default store, and the one the Redis
// store falls back to in degraded mode.
//
// State lives in shards, each behind its own mutex, so decisions on different keys
// rarely contend and a decision on an existing key allocates nothing. Keys whose
// state has fully recovered (a full bucket, an elapsed window) are evicted by a
// janitor goroutine, which is invisible to clients: a recovered key decides exactly
// as a new one. A hard cap on keys bounds memory under a flood of random keys; when
// a shard is full, the entry closest to recovery among a small sample is evicted.
//
//	store := memory.New()
//	defer store.Close()
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//	if err == nil && !res.Allowed {
//		fmt.Println("retry after", res.RetryAfter)
//	}
package memory
