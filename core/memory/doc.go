// Package memory is the in-process Store: the default store, and the one core/resilient
// decides in while Redis fails (Local mode).
//
// Each key's state has its own mutex, and a decision finds it through a hash table
// that is read without locks, so decisions on different keys do not contend, a hot
// key is held only for its own transition, and a decision on an existing key
// allocates nothing. The table is split into shards whose mutexes serialise only
// inserts and evictions.
//
// Keys whose state has fully recovered (a full bucket, an elapsed window) are
// evicted by a janitor goroutine, which is invisible to clients: a recovered key
// decides exactly as a new one.
//
// A cap on keys (WithMaxKeys) bounds memory under a flood of new keys without
// giving the flood a way around a limit. A full shard makes room by evicting a
// recovered entry; it never evicts an entry that still restricts its key (a
// locked account, an empty bucket), so a flood cannot unlock anyone. When the
// sampled entries all still restrict their keys, the new key is decided against
// its policy's shared overflow entry instead, so that the flood is limited as
// one client; Stats.Overflowed counts those decisions. A refused stack creates
// no entries for the keys it did not charge. A context that is cancelled or has
// expired is returned as ctx.Err(), wrapped, before anything is decided.
//
// Each key costs about 230 to 260 bytes of heap with a scalar state (token
// bucket, GCRA, windows) and about 380 to 412 bytes with a 5-entry sliding log,
// key strings of 14 to 35 bytes included; measure with
//
//	go test -run '^$' -bench HeapPerKey -benchtime 1x ./core/memory
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
