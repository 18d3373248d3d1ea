// Package reserve leases slices of hot keys' budgets to replicas, so that one
// global key can take more traffic than a single Redis shard could decide: quota
// reservation, opt-in and approximate by design.
//
// A Store wraps a backing core.Store (typically Redis) that is also a
// core.Refunder. For each policy it is told to lease, a replica takes Size units of
// a key's budget from the backing store in one decision, spends them in process
// memory (an atomic decrement, no round trip), and gives back what it did not spend
// when the lease's Lifetime ends, or on Close. The same shape is the regional quota
// pattern: each region's store holds an allocation of the global budget.
//
//	backing, err := redisstore.New(client)
//	if err != nil {
//		return err
//	}
//	search := core.MustPolicy("search", core.TokenBucket, core.PerSecond(50_000), core.WithBurst(50_000))
//	store, err := reserve.New(backing, []reserve.Lease{{Policy: search, Size: 500}})
//	if err != nil {
//		return err
//	}
//	defer store.Close() // returns unspent balances, closes backing
//	res, err := store.Decide(ctx, core.Request{Policy: search, Key: "global"})
//
// Lease policies whose keys are few and hot (one global key, a tenant, a region's
// allocation). Every key of a leased policy gets its own lease on every replica that
// sees it, so a policy keyed by client IP would park a slice of budget per active
// client per replica.
//
// # Never silently
//
// Only the policies named in a Lease are leased, matched by ID (name and
// parameters). Every other request — other policies, a leased policy's name with
// other parameters, requests costing more than the lease size, stacks, releases,
// refunds — passes through to the backing store unchanged and is decided exactly. A
// request costing more than the lease size first returns the key's unspent balance,
// so the backing store decides it against the key's whole budget (and a settlement
// of core/resilient's Local mode drains the balance too).
// Leaky bucket and concurrency policies cannot be leased; New refuses them, and a
// size outside 1..Capacity, with an error naming the policy. Leased reports which
// policies are leased.
//
// # The overage bound
//
// With R replicas leasing a policy with lease size S, over any interval I the
// requests admitted for one key satisfy
//
//	admitted(I) <= exact(I) + R × (S − 1)
//
// where exact(I) is what the policy itself admits over I (for a token bucket or
// GCRA, Capacity + Limit × |I| / Period). The reason: everything spent in I was
// either charged to the backing store during I, which enforces the policy exactly,
// or was held by a replica when I began, and a replica never holds more than S − 1
// units after a request (it takes a lease for a request and spends that request's
// cost at once). Held units are budget charged earlier and spent later: a bucket
// that refilled meanwhile admits them a second time. Sliding windows (log and
// counter) let them be counted in an earlier window than the one they are spent in.
// Fixed windows are the exception: a lease ends when the window it was charged in
// ends (timed by the backing store's ResetAfter, so clocks need not agree), and when
// a refill's round trip crosses the window's end (the backing store dates the new
// lease in the next window), what was left of the old lease goes back instead of
// paying for part of the request: so every window admits at most its Limit, counted
// by the windows the backing store dates its decisions in.
//
// # Under-grant
//
// The other side: a replica's unspent units are parked. While another replica is
// refused, up to (R − 1) × (S − 1) units may sit in other replicas until they spend
// them or their leases end (Lifetime, plus up to one sweep interval); a returned
// balance the policy cannot take back (a full bucket, a closed window) is lost. A
// bucket takes back only what it has not refilled since the lease was taken
// (core.Refunder), so a lease that lives longer than its size takes to refill
// returns nothing: on a bucket that never fills, those units are lost. Low
// traffic is not refused while the backing store has budget: when a full lease is
// refused, a replica asks for what the backing store said remains, then for the
// request's own cost, and only that last refusal is returned. A refused key is
// refused locally, without a round trip, until the backing store's Retry-After for
// that cost has passed (a larger cost, which waits longer, asks the backing store).
//
// # Results
//
// A request admitted from a lease reports Remaining as its replica's unspent units
// plus what the backing store said remained when the lease was taken, and the
// ResetAfter the backing store gave then: estimates, as the budget is shared. A
// refusal is the backing store's own result (or, when remembered, its Retry-After
// minus the time since), so Retry-After is honest.
//
// An admission's DecidedAt is when the backing store charged its lease, where a
// refund (core.Refunder) gives its cost back. For sliding windows, a weighted
// request that finds only part of its cost left returns that part to its own
// window before taking a new lease (one more round trip), so no refund gives a
// window back units that another window counted. A request admitted while its
// replica replaced the lease names the earlier lease's charge for a bucket (its
// refund gives back no more than either lease's would) and no DecidedAt for a
// window (its refund gives the window nothing).
//
// # Stacks
//
// DecideStack passes stacks through to the backing store unleased, so a stack stays
// all-or-nothing and exact; its leased policies draw on the same budget as the
// leases.
//
// # Under core/resilient
//
// Wrapped in core/resilient (resilient.New(leasedStore, …)), a replica's last shared
// answer for a leased key is its last lease: the Remaining it reports is what the
// backing store said then. When the backing store fails, Local mode continues from
// that answer, so entering fallback can over-grant what the other replicas spent
// since each replica's last lease, divided by WithReplicas, on top of R × (S − 1)
// (docs/failure.md). A lease's Lifetime bounds how old a busy replica's last lease
// is. TestUnderResilientFallbackStartsFromLastLease measures it.
//
// Requests waiting for a lease on one key take it one at a time: the first takes
// the lease, the others spend from it. A background goroutine returns expired leases
// (WithSweepInterval); Close stops it.
package reserve
