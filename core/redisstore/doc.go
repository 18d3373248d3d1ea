// Package redisstore is the Redis core.Store: every algorithm of package core runs as
// a Lua script that reads, refills, decides, writes and expires in one atomic step, so
// that any number of replicas share exact limits. The scripts mirror the pure Go
// transitions of the algorithms (core/internal/transition) in exact integer
// arithmetic, and the conformance suite (core/storetest) holds them to identical
// results on miniredis, a real server and a real Cluster.
//
//	store, err := redisstore.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}))
//	if err != nil {
//		return err
//	}
//	api := core.MustPolicy("api", core.TokenBucket, core.PerSecond(10), core.WithBurst(20))
//	res, err := store.Decide(ctx, core.Request{Policy: api, Key: "user-42"})
//	if err == nil && !res.Allowed {
//		fmt.Println("retry after", res.RetryAfter)
//	}
//
// # Clients
//
// New takes any go-redis v9 UniversalClient: a Client (standalone or a Sentinel
// failover client), a ClusterClient or a Ring. Dial makes a Client for one address or
// a ClusterClient for several. Package embedded runs the store on an in-process
// miniredis, for tests and demos; it lives apart so that this package does not link
// miniredis.
//
// # One round trip
//
// A decision is one EVALSHA (EVAL once after a restart, failover or SCRIPT FLUSH). So is
// a stack whose keys share a slot, which is always the case on a standalone server.
//
// # Scripts
//
// The scripts are plain Lua files (lua/), one per algorithm, each readable top to
// bottom. An algorithm is a pure function from its key's value, one string, to its
// decision and the new value: tokenbucket.lua ("tokens updated"), gcra.lua and
// leakybucket.lua (the TAT, "millis frac"), fixedwindow.lua ("window count"),
// slidingwindow.lua ("window count previous"), slidinglog.lua ("at cost" entries
// joined by commas) and concurrency.lua ("id expires cost" leases joined by commas).
// A script is common.lua (exact integer arithmetic, argument parsing, the write),
// instant.lua for GCRA and the leaky bucket (their fixed-point TAT), the files of
// the algorithms it decides, and a driver, which does every read and write:
// single.lua charges a single decision, in a script per policy whose numbers (and
// the store's TTL margin) it holds in its first line; stack.lua decides a stack, a peek, a refund or a lease's
// release; batch.lua decides a batch of single decisions. A state of another
// format, or a key of another type, is an error, never a fresh start.
// docs/redis-scripts.md walks through each file.
//
// # Batching
//
// WithBatching trades a little latency under load for throughput: concurrent Decide
// calls bound for one Redis node (one queue per Cluster master) share one round trip.
//
//	store, err := redisstore.New(client, redisstore.WithBatching(redisstore.DefaultBatchWindow, redisstore.DefaultMaxBatch))
//
// Two goroutines per node send what is waiting as one pipeline. A decision that finds
// no batch in flight to its node leaves at once, so a lone request waits for nothing;
// while a batch is in flight, arrivals gather until maxBatch wait or the oldest has
// waited the window (a zero window sends them as soon as a sender is free). In the
// pipeline, decisions of one algorithm and one instant whose keys one script call may
// touch (any keys on a standalone server, one slot on a Cluster, one hash tag on a
// Ring) go as one call of the batch script, which decides each of them in order,
// exactly as a single decision: an error reading a decision's state (WRONGTYPE, say)
// fails that decision alone; an error writing (out of memory, a read-only replica)
// fails the call, whose earlier decisions stay charged (never over-admitting). A batch with the server's clock reads Redis TIME once, so its
// decisions happen at one instant. A NOSCRIPT reply means that call did not run; it is
// sent again as EVAL, so nothing is charged twice. A caller whose ctx ends returns at
// once; if its decision had not left, it is never sent. The added latency is at most
// the window plus one round trip, and only while another batch to that node is in
// flight. Close stops the goroutines. Stacks, refunds and releases are not batched.
//
// On a Cluster with the default hash tags every key has its own slot, so a batch is a
// pipeline of one script call per decision: it saves round trips and system calls, not
// script calls. TagByKey or TagPolicies put keys in shared slots.
//
// # Keys
//
// A policy's state for a key lives at
//
//	rl:{api#tb.10.1000.20:user-42}
//
// the prefix (WithPrefix), then, as the hash tag, the policy's ID (its name and
// parameters, so a changed plan never misreads old state) and the key. Keys come from
// the key functions, which hash API keys: a raw API key never reaches Redis. Every key
// has a TTL that ends when its state has fully recovered, plus a margin
// (WithExpiryMargin): a missing key decides exactly as a recovered one.
//
// # Stacks on a Cluster
//
// By default each (policy, key) has its own slot. WithHashTag (TagByKey, TagPolicies)
// puts the keys of a stack in one slot, and the stack is one call. A stack across slots
// is still all-or-nothing: the store charges each slot's group in order, at one
// instant, and when a group refuses it refunds the groups charged before it (with
// the Go transitions' Refund at the charge's instant, which restores what any later decision sees,
// and releasing leases taken) and peeks at the rest. On a Ring, a call holds the keys
// of one hash tag. Between a charge and its refund, concurrent decisions on those keys see the
// charge, so they may be refused (never wrongly admitted); a process that dies between
// the two leaves the charge in place.
//
// # Errors
//
// A failed decision is an error naming the policy, never an admission:
// core.ErrStoreUnavailable when the server cannot serve (unreachable, LOADING,
// READONLY, CLUSTERDOWN, …), ErrUnexpectedReply when it answers unexpectedly
// (WRONGTYPE, CROSSSLOT, state the scripts did not write); a cancelled context is
// returned as such. Refund (core.Refunder) gives cost back exactly as the Go
// transitions do; Release ends a concurrency lease.
//
// # Time
//
// By default the scripts read Redis TIME, so the replicas' clocks do not matter.
// WithClock uses the caller's clock instead, which the simulator needs to replay traces.
// Timestamps never move backwards, as in core: a clock that goes back mints nothing.
//
// # Without resilient
//
// Used on its own, the store fails every decision while Redis is down: each one
// returns an error wrapping core.ErrStoreUnavailable after at most about 250ms (with
// Dial's client), and the HTTP middleware answers 503 with Retry-After, for every
// request, until Redis answers again. Nothing is admitted unenforced, and nothing is
// decided either. To keep enforcing limits through an outage (a failure mode per
// policy, local decisions that continue from Redis's last answers, recovery in the
// background), wrap the store in core/resilient, with core/prommetrics attached.
package redisstore
