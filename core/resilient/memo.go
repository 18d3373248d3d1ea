package resilient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// memoShards splits the memo's map to keep its locks apart.
const memoShards = 16

// memo remembers, per (policy, key), the last answer the shared store gave, so that a
// decision the shared store cannot take continues from what it last said instead of
// from a fresh bucket:
//
//   - a slow call while the breaker is closed is decided from the last answer, without
//     refill, however old the answer: admitted while this replica's share of its
//     Remaining (less what such decisions spent since) covers the cost (decideSlow);
//   - Local mode seeds each key's local allowance from what is left of that share,
//     and never raises it while it runs (localKey, localDecided);
//   - Local mode starts a concurrency key with the leases its last answer said were
//     in flight, held until the lease timeout (seedLeases);
//   - back on the shared store, the first answer for a key whose local allowance is
//     still recovering is followed by a charge of the difference, so that the shared
//     store, which never saw the local admissions, does not grant them again (debt).
//
// Memory is bounded: at most maxKeys entries, each dropped once its key has fully
// recovered everywhere it was decided; an answer that finds its shard full of live
// entries is not remembered, and the key is then unknown (its replica's share).
type memo struct {
	seed     maphash.Seed
	perShard int
	gen      atomic.Uint64 // numbers local allowances, so each seed starts on a fresh local key
	shards   [memoShards]memoShard
}

type memoShard struct {
	mu       sync.Mutex
	entries  map[preKey]memoEntry
	earliest int64 // no entry expires before this (ns)
}

type memoEntry struct {
	known      bool          // a shared answer is known
	at         int64         // ns: when the shared store answered
	remaining  int64         // its Remaining
	retryUntil int64         // ns: refused until then (0 when it admitted)
	resetAt    int64         // ns: when the key fully recovers, by its ResetAfter
	spent      int64         // spent by slow-call decisions since the answer
	absorbed   int64         // of spent, what the local allowance was charged (localKey)
	unsettled  int64         // spent by slow-call decisions (and a leaky bucket's queue debt, queueDebt) and not yet charged to the shared store
	turnEnds   chan struct{} // while a decision that settles the key is in flight (takeTurn): closed when it ends

	gen            uint64 // the local allowance's number; 0: none
	seededFrom     int64  // at of the answer the local allowance was seeded from
	localRemaining int64  // Remaining of the last local decision
	localAt        int64  // ns: when the last local decision was taken
	localUntil     int64  // ns: when the local allowance fully recovers
	localCharged   int64  // what the allowance's local decisions charged and no refund gave back
}

// expires is when the entry stops mattering: the key has fully recovered in the
// shared store's last answer and in the local store.
func (e *memoEntry) expires() int64 { return max(e.resetAt, e.localUntil) }

func newMemo(maxKeys int) *memo {
	m := &memo{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/memoShards)}
	for i := range m.shards {
		m.shards[i].entries = make(map[preKey]memoEntry)
	}
	return m
}

func (m *memo) shard(k preKey) *memoShard { return &m.shards[m.shardIndex(k)] }

// shardIndex is the index of k's shard.
func (m *memo) shardIndex(k preKey) uint64 { return maphash.Comparable(m.seed, k) % memoShards }

// lock locks the shard of req's (policy, key) and returns it with the entry's key;
// the caller unlocks sh.mu.
func (m *memo) lock(req *core.Request) (sh *memoShard, k preKey) {
	k = preKey{req.Policy.ID(), req.Key}
	sh = m.shard(k)
	sh.mu.Lock()
	return sh, k
}

// remember records the shared store's answer res to req at now.
func (m *memo) remember(req *core.Request, res *core.Result, now int64) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok && len(sh.entries) >= m.perShard && (now < sh.earliest || !sh.sweep(now)) {
		return
	}
	e.known, e.at, e.remaining, e.spent, e.absorbed = true, now, res.Remaining, 0, 0
	e.retryUntil = 0
	if !res.Allowed && res.RetryAfter > 0 {
		e.retryUntil = now + int64(res.RetryAfter)
	}
	e.resetAt = now + int64(res.ResetAfter)
	sh.entries[k] = e
	if x := e.expires(); len(sh.entries) == 1 || x < sh.earliest {
		sh.earliest = x
	}
}

// sweep drops the entries that no longer matter and reports whether any was. Requires sh.mu.
func (sh *memoShard) sweep(now int64) bool {
	freed := false
	earliest := int64(1<<63 - 1)
	for k, e := range sh.entries {
		if now >= e.expires() {
			delete(sh.entries, k)
			freed = true
			continue
		}
		earliest = min(earliest, e.expires())
	}
	sh.earliest = earliest
	return freed
}

// available is what the last answer leaves for the key at now: its Remaining less
// what slow-call decisions spent since, or the whole capacity once the answer's
// ResetAfter has passed.
func (e *memoEntry) available(capacity, now int64) int64 {
	return max(0, min(capacity, e.answered(capacity, now)-e.spent))
}

// answered is what the last answer leaves for the key at now, before slow calls:
// its Remaining, or the whole capacity once its ResetAfter has passed.
func (e *memoEntry) answered(capacity, now int64) int64 {
	if now >= e.resetAt {
		return capacity
	}
	return e.remaining
}

// share is this replica's share of base, units left of a policy of capacity capP,
// where it enforces capQ without the shared store (WithReplicas, WithDegrade), less
// what its slow calls spent since the answer: base·capQ/capP, never more than base.
// Slow calls and Local mode both spend from it: scaling only what the slow calls
// left, a replica with 10 left of 10, on 2 replicas, spent 5 in slow calls and then
// seeded 2 more in Local mode.
func (e *memoEntry) share(base, capP, capQ int64) int64 {
	return max(0, min(base, scale(base, capQ, capP))-e.spent)
}

// scale is ⌊v·num/den⌋ for v, num >= 0 and den > 0, without overflow.
func scale(v, num, den int64) int64 {
	hi, lo := bits.Mul64(uint64(v), uint64(num))
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	return int64(min(q, math.MaxInt64))
}

// decideSlow decides req at now from the key's last shared answer, for a call that
// failed while the breaker stayed closed. It reports false when no answer is known.
// Deciding and spending happen under one lock: racing slow calls share what the
// answer left instead of each admitting it.
func (m *memo) decideSlow(req *core.Request, capQ, now int64) (core.Result, bool) {
	if req.Policy.Algorithm() == core.Concurrency {
		return core.Result{}, false
	}
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	return sh.decideSlow(k, req, capQ, now, true)
}

// decideSlowStack is decideSlow for a stack, all-or-nothing: it reports false when
// the answer of a member is not known. The members' shards are locked together, in
// ascending order, so that the stack decides and spends as one.
func (m *memo) decideSlowStack(reqs []core.Request, capQs []int64, results []core.Result, now int64) (allowed, ok bool) {
	var locked [memoShards]bool
	for i := range reqs {
		if reqs[i].Policy.Algorithm() == core.Concurrency {
			return false, false
		}
		locked[m.shardIndex(preKey{reqs[i].Policy.ID(), reqs[i].Key})] = true
	}
	for i := range locked {
		if locked[i] {
			m.shards[i].mu.Lock()
			defer m.shards[i].mu.Unlock()
		}
	}
	allowed = true
	for i := range reqs {
		k := preKey{reqs[i].Policy.ID(), reqs[i].Key}
		if results[i], ok = m.shard(k).decideSlow(k, &reqs[i], capQs[i], now, false); !ok {
			return false, false
		}
		allowed = allowed && results[i].Allowed
	}
	for i := range reqs {
		k := preKey{reqs[i].Policy.ID(), reqs[i].Key}
		switch {
		case allowed:
			m.shard(k).spendSlow(k, reqs[i].EffectiveCost())
		case results[i].Allowed: // refused by another member: unspent
			results[i].Allowed = false
			results[i].Remaining += reqs[i].EffectiveCost()
		}
	}
	return allowed, true
}

// decideSlow decides req, whose entry is k, at now from the last shared answer, and
// spends it when spend is set and this replica's share of the answer (capQ of the
// policy's capacity, share) covers it. Requires sh.mu.
func (sh *memoShard) decideSlow(k preKey, req *core.Request, capQ, now int64, spend bool) (core.Result, bool) {
	e, ok := sh.entries[k]
	if !ok || !e.known {
		return core.Result{}, false
	}
	capacity, cost := req.Policy.Capacity(), req.EffectiveCost()
	res := core.Result{Policy: req.Policy.Name(), Limit: capacity, ResetAfter: time.Duration(max(0, e.resetAt-now))}
	// No refill, not even once the answer's ResetAfter has passed: other instances
	// may have spent the key since, and this one has not heard. Counting the recovery
	// let 64 starved instances admit 45–53 against a bound of 44, on a saturated client.
	avail := min(capacity, e.share(e.remaining, capacity, capQ))
	if avail >= cost {
		res.Allowed, res.Remaining = true, avail-cost
		if spend {
			sh.spendSlow(k, cost)
		}
		return res, true
	}
	res.Remaining = avail
	res.RetryAfter = time.Duration(e.retryUntil - now)
	if res.RetryAfter <= 0 {
		res.RetryAfter = emission(req)
	}
	return res, true
}

// spendSlow records that a slow-call decision admitted cost on k. Requires sh.mu.
func (sh *memoShard) spendSlow(k preKey, cost int64) {
	if e, ok := sh.entries[k]; ok {
		e.spent += cost
		e.unsettled += cost
		sh.entries[k] = e
	}
}

// takeUnsettled returns what slow-call decisions admitted for req's key that the
// shared store never saw, and forgets it: the caller charges it (see Store.settle).
// A new answer does not cancel it: the shared store's Remaining never counted it.
func (m *memo) takeUnsettled(req *core.Request) int64 {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.unsettled == 0 {
		return 0
	}
	owed := e.unsettled
	e.unsettled = 0
	sh.entries[k] = e
	return owed
}

// takeTurn reports, for a decision of req about to call the shared store at now,
// whether it is the key's settler (the key owes what slow calls admitted, or its
// local allowance is settling (debt), and no other decision is charging it: the
// caller must call endTurn), or busy: another decision is charging it, and until
// that charge lands the shared store would grant those units again (6 of 5 in
// TestConcurrentReturnWaitsForTheSettlement and
// TestAdmissionRacingTheAllowanceSettlement). A busy decision does not call the
// shared store while the turn is held: it is decided from the last answer, as a slow
// call is, or, when it cannot be or wait is set, waits for the turn to end
// (Store.waitForTurns). wait is set for a key whose local allowance is settling: its
// last answer predates the outage, and the allowance knows more.
func (m *memo) takeTurn(req *core.Request, now int64) (settler, busy, wait bool) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	allowance := ok && e.gen != 0 && now < e.localUntil
	switch {
	case !ok:
		return false, false, false
	case e.turnEnds != nil:
		return false, true, allowance
	case e.unsettled == 0 && !allowance:
		return false, false, false
	}
	e.turnEnds = make(chan struct{})
	sh.entries[k] = e
	return true, false, false
}

// endTurn ends the turn takeTurn gave req's decision.
func (m *memo) endTurn(req *core.Request) {
	sh, k := m.lock(req)
	if e, ok := sh.entries[k]; ok && e.turnEnds != nil {
		close(e.turnEnds)
		e.turnEnds = nil
		sh.entries[k] = e
	}
	sh.mu.Unlock()
}

// waitTurns waits until no other decision holds the settlement turn of a request
// of reqs, at most d or until ctx ends, and reports whether none does.
func (m *memo) waitTurns(ctx context.Context, reqs []core.Request, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for i := range reqs {
		sh, k := m.lock(&reqs[i])
		ends := sh.entries[k].turnEnds
		sh.mu.Unlock()
		if ends == nil {
			continue
		}
		select {
		case <-ends:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// addUnsettled gives back to req's key what takeUnsettled took and could not be
// charged, for the key's next admission to charge.
func (m *memo) addUnsettled(req *core.Request, owed int64) {
	sh, k := m.lock(req)
	if e, ok := sh.entries[k]; ok {
		e.unsettled += owed
		sh.entries[k] = e
	}
	sh.mu.Unlock()
}

// remaining is what the last answer says is left for req at now (for the members of
// a stack the pre-limiter refuses), and when the key fully recovers; an unknown key
// reports its full capacity, as a store that never saw it does.
func (m *memo) remaining(req *core.Request, now int64) (int64, time.Duration) {
	capacity := req.Policy.Capacity()
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || !e.known {
		return capacity, 0
	}
	return e.available(capacity, now), time.Duration(max(0, e.resetAt-now))
}

// localKey is the local store's key for req's local allowance on the degraded policy
// q at now. A new allowance is spent down to its start by spend (called with the
// memo's lock held, so that no decision sees it full; spend must not call the memo).
// It starts from the last shared answer, scaled from the policy to q (the replica's
// share), or at q's capacity when no answer is known (the replica's share, the
// conservative assumption without information) or when the answer's ResetAfter has
// passed. A live allowance is kept, unless a newer shared answer leaves less than it:
// the allowance only ever goes down to what the shared store says, never up.
func (m *memo) localKey(req *core.Request, q *core.Policy, now int64, spend func(key string, cost int64) error) (string, error) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok && len(sh.entries) >= m.perShard && (now < sh.earliest || !sh.sweep(now)) {
		return localKeyName(req.Key, 0), nil // not remembered: the replica's share, on the plain key
	}
	capQ := q.Capacity()
	target := capQ
	if e.known {
		capP := req.Policy.Capacity()
		target = min(capQ, e.share(e.answered(capP, now), capP, capQ))
	}
	if e.gen != 0 && now < e.localUntil && !(e.at > e.seededFrom && target < e.leftAt(req.Policy.Algorithm(), capQ, now)) {
		key := localKeyName(req.Key, e.gen)
		if err := e.absorbSlowSpend(req, q, now, func(cost int64) error { return spend(key, cost) }); err != nil {
			return "", err
		}
		sh.entries[k] = e
		return key, nil
	}
	e.gen = m.gen.Add(1)
	key := localKeyName(req.Key, e.gen)
	charge := capQ - target
	if e.known && req.Policy.Algorithm() == core.LeakyBucket {
		charge = e.seedQueue(&req.Policy, q, now) // Remaining cannot say how far the queue goes: queue.go
	}
	if err := spendChunks(charge, capQ, func(cost int64) error { return spend(key, cost) }); err != nil {
		return "", err
	}
	if e.known {
		// The allowance starts below what the slow calls since the answer spent, so
		// the settlement's debt (debt) charges them: charged again as slow calls'
		// own, the key lost them twice (3 of 3 left, TestSlowThenLocalAdmissionsAre-
		// ChargedOnce).
		e.unsettled -= min(e.unsettled, e.spent)
		e.absorbed = e.spent
	}
	e.seededFrom = e.at
	e.localRemaining, e.localAt, e.localCharged = target, now, 0
	// Live until its first decision says when it recovers (localDecided), at least a
	// period: a decision racing this one must find it, not seed another. With now+1,
	// two first decisions under load each seeded a full allowance (12 admitted of 10).
	e.localUntil = max(e.localUntil, now+int64(q.Period()))
	sh.entries[k] = e
	if x := e.expires(); len(sh.entries) == 1 || x < sh.earliest {
		sh.earliest = x
	}
	return key, nil
}

// absorbSlowSpend charges the live local allowance, through spend, what slow calls
// admitted since it was seeded, which it does not hold: a shared answer after the
// allowance was seeded (its settlement still open), then failing calls decided from
// that answer. The allowance's settlement then charges the shared store for them, as
// for a new allowance. Kept unaware, the allowance granted those units again (12 in
// a sliding window of 5, TestOutagesNeverAdmitMoreThanThePolicy). Requires the
// memo's lock.
func (e *memoEntry) absorbSlowSpend(req *core.Request, q *core.Policy, now int64, spend func(cost int64) error) error {
	fresh := e.spent - e.absorbed
	if fresh <= 0 {
		return nil
	}
	units := ceilDiv(fresh*q.Capacity(), req.Policy.Capacity())
	if req.Policy.Algorithm() == core.LeakyBucket {
		units = queueUnits(q, queueMillis(&req.Policy, fresh))
		e.localUntil = max(e.localUntil, now) + queueMillis(q, units)*1_000_000
	}
	if err := spendChunks(units, q.Capacity(), spend); err != nil {
		return err
	}
	e.unsettled -= min(e.unsettled, fresh)
	e.absorbed = e.spent
	e.localRemaining = max(0, e.localRemaining-units)
	return nil
}

// spendChunks charges units to a local allowance of capacity capQ through spend, in
// charges of at most capQ: a leaky bucket's queue beyond its depth takes a second one.
func spendChunks(units, capQ int64, spend func(cost int64) error) error {
	for ; units > 0; units -= capQ {
		if err := spend(min(units, capQ)); err != nil {
			return err
		}
	}
	return nil
}

// ceilDiv is ⌈a/b⌉ for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// seedLeases starts req's concurrency key in Local mode, on the degraded policy q at
// now, with the leases its last shared answer said were in flight (scaled to q): take
// acquires them in the local store as one lease, which lapses at the lease timeout,
// as theirs do at the latest. Their releases go to the shared store, so the local
// store keeps them until then: it may admit less, never more. A key with no known
// answer starts empty (q is the replica's share). A key seeded within its lease
// timeout is not seeded again. take is called with the memo's lock held.
func (m *memo) seedLeases(req *core.Request, q *core.Policy, now int64, take func(cost int64, lease uint64) error) error {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || !e.known || (e.gen != 0 && now < e.localUntil) {
		return nil
	}
	capQ := q.Capacity()
	held := capQ - min(capQ, scale(e.available(req.Policy.Capacity(), now), capQ, req.Policy.Capacity()))
	e.gen = m.gen.Add(1)
	e.localUntil = now + int64(req.Policy.Period())
	sh.entries[k] = e
	if held == 0 {
		return nil
	}
	// The top bit keeps the seeded lease's ID apart from the IDs requests choose.
	return take(held, 1<<63|e.gen)
}

// localDecided records the local store's result res for req at now, which charged
// the local allowance charged (0 when it did not admit).
func (m *memo) localDecided(req *core.Request, res *core.Result, charged, now int64) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.gen == 0 {
		return
	}
	e.localRemaining, e.localAt = res.Remaining, now
	e.localCharged += charged
	e.localUntil = max(e.localUntil, now+int64(res.ResetAfter))
	sh.entries[k] = e
}

// debt settles an outage's local admissions with the shared store, after the shared
// store admitted req with res at now, until settled is called: the shared store
// never saw those admissions, so it may hold more than the key's local allowance
// (still recovering) has left. When the allowance cannot pay for req, req is refused
// (refuse); owed is what to charge the shared store on top of req so that it holds
// no more than the allowance leaves, scaled back from the degraded policy q. Both are
// zero when nothing is owed. A leaky bucket's debt goes to unsettled (queueDebt).
func (m *memo) debt(req *core.Request, res *core.Result, q *core.Policy, now int64) (owed int64, refuse bool) {
	if req.Policy.Algorithm() == core.Concurrency || !res.Allowed {
		return 0, false
	}
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || e.gen == 0 || now >= e.localUntil {
		return 0, false
	}
	if req.Policy.Algorithm() == core.LeakyBucket {
		refuse = e.queueDebt(req, res, now)
		sh.entries[k] = e
		return 0, refuse
	}
	capP, capQ := req.Policy.Capacity(), max(1, q.Capacity())
	left := e.leftAt(req.Policy.Algorithm(), capQ, now) * capP / capQ
	cost := req.EffectiveCost()
	if left < cost {
		owed, refuse = max(0, res.Remaining-left), true
	} else {
		left -= cost
		owed = max(0, res.Remaining-left)
	}
	// Until the charge lands, concurrent decisions of the key pay from what is left.
	e.localRemaining, e.localAt = left*capQ/capP, now
	sh.entries[k] = e
	return owed, refuse
}

// settled ends the settlement of req's local allowance at now: the next outage seeds
// from the shared store's answers.
func (m *memo) settled(req *core.Request, now int64) {
	sh, k := m.lock(req)
	if e, ok := sh.entries[k]; ok && e.localUntil > now {
		e.localUntil = now
		sh.entries[k] = e
	}
	sh.mu.Unlock()
}

// leftAt is what the local allowance of capacity capQ, of algorithm a, holds at
// now: its last Remaining, recovering to capQ by localUntil. A bucket recovers at a
// constant rate, so it holds its last Remaining plus a linear share of the rest
// (exact). A window recovers when its windows pass, which the memo does not follow:
// it holds its last Remaining until localUntil (never more than it holds). Counted
// linearly, a fixed window that Local mode spent at the start of its minute, with
// the shared store back 30 s later, looked half recovered, and the return admitted
// 15 in that window of 10 (TestWindowSpentInLocalModeStaysSpentOnReturn).
func (e *memoEntry) leftAt(a core.Algorithm, capQ, now int64) int64 {
	if now >= e.localUntil || e.localUntil <= e.localAt {
		return capQ
	}
	switch a {
	case core.FixedWindow, core.SlidingWindow, core.SlidingLog:
		return e.localRemaining
	}
	gained := (capQ - e.localRemaining) * (now - e.localAt) / (e.localUntil - e.localAt)
	return min(capQ, e.localRemaining+max(0, gained))
}

// localKeyName is the local store's key of allowance gen of key: the key itself for
// 0, else the key and the number, hashed when that would be too long for a key.
func localKeyName(key string, gen uint64) string {
	if gen == 0 {
		return key
	}
	if len(key) > core.MaxKeyLength-24 {
		sum := sha256.Sum256([]byte(key))
		key = hex.EncodeToString(sum[:])
	}
	return key + "\x1f" + strconv.FormatUint(gen, 10)
}
