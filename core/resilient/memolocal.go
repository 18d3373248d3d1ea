package resilient

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/go-ratelimit/ratelimit/core"
)

// Local mode's allowances: seeded from a key's last answer, and settled with the
// shared store on its return.

// localKey is the local store's key for req's local allowance on the degraded policy
// q at now. A new allowance is spent down to its start by spend (called with the
// memo's lock held, so that no decision sees it full; spend must not call the memo);
// when spend fails, nothing is recorded, and the key's next decision seeds again.
// It starts from the last shared answer, less what slow calls spent since, scaled
// from the policy to q (the replica's share), or at q's capacity when no answer is
// known (the replica's share, the conservative assumption without information) or
// when the key has recovered from the answer and from that spending (recovered). A
// live allowance is kept, unless a newer shared answer leaves less than it: the
// allowance only ever goes down to what the shared store says, never up.
func (m *memo) localKey(req *core.Request, q *core.Policy, now int64, spend func(key string, cost int64) error) (string, error) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok && !sh.room(m.perShard, now) {
		return localKeyName(req.Key, 0), nil // not remembered: the replica's share, on the plain key
	}
	capQ := q.Capacity()
	target := capQ
	if e.known && now < e.recovered {
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
	// An answer's allowance starts on a fresh local key. Without an answer to start
	// from, it is the key's own state in the local store: the replica's share when
	// fresh, and what Local mode left of it while the memo had no room for the key.
	// Put on a fresh local key, such a key started afresh a second time once the
	// memo had room: 15 admitted in 2 s under 5 a minute
	// (TestLocalModeDoesNotStartAKeyTwiceWhenTheMemoFrees).
	e.gen = plainAllowance
	if e.known {
		e.gen = m.gen.Add(1)
	}
	key := localKeyName(req.Key, e.gen)
	charge := capQ - target
	if e.known && req.Policy.Algorithm() == core.LeakyBucket {
		charge = e.seedQueue(q, now) // Remaining cannot say how far the queue goes: queue.go
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
// now, with the leases its latest shared answer said were in flight (scaled to q):
// take acquires them in the local store as one lease, the seed. Their releases go
// to the shared store, so the local store holds the seed until they have all
// lapsed, when the answer's ResetAfter says (drop releases it then): it may admit
// less, never more. Left to its own lease timeout, counted from the outage rather
// than from the answer, a seed taken 50 s into a minute's leases refused every
// request for 60 s more (TestSeedLapsesWithTheLeasesItCounts). A key with no known
// answer starts empty (q is the replica's share).
//
// A seed stands for one answer. While no newer answer is known it is kept; a newer
// one (the shared store came back, even for a hand-over alone, and failed again)
// replaces it: drop releases the old seed, whose leases may have ended, and the new
// seed counts those the shared store held at its latest answer, leases handed over
// to it included. Kept instead, the first outage's seed let a second outage admit
// beside leases handed over since (3 in flight of 2, TestSecondOutageCounts-
// TheLeasesHandedOver), and a second seed that did not fit beside the first was
// refused (TestSecondOutageReplacesTheFirstSeed). take and drop are called with the
// memo's lock held; when take fails, the key is not seeded (its old seed is
// dropped all the same), and its next decision seeds it.
func (m *memo) seedLeases(req *core.Request, q *core.Policy, now int64, take func(cost int64, lease uint64) error, drop func(lease uint64) error) error {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || !e.known {
		return nil
	}
	dropSeed := func() error {
		if e.seed == 0 {
			return nil
		}
		if err := drop(e.seed); err != nil {
			return err
		}
		e.seed = 0
		sh.entries[k] = e
		return nil
	}
	if e.gen != 0 && now < e.localUntil && e.at <= e.seededFrom {
		if now >= e.recovered {
			// Every lease the answer counted has lapsed: the shared store would
			// admit beside their requests now, whatever they do.
			return dropSeed()
		}
		return nil
	}
	if err := dropSeed(); err != nil {
		return err
	}
	capQ := q.Capacity()
	held := capQ - min(capQ, scale(e.available(req.Policy.Capacity(), now), capQ, req.Policy.Capacity()))
	gen := m.gen.Add(1)
	var seed uint64
	if held > 0 {
		// A request's lease ID is random: it matches this one with a chance of 2⁻⁶⁴.
		seed = 1<<63 | gen
		if err := take(held, seed); err != nil {
			return err // not seeded: the key's next decision seeds it
		}
	}
	e.gen, e.seed, e.seededFrom, e.localUntil = gen, seed, e.at, now+int64(req.Policy.Period())
	sh.entries[k] = e
	return nil
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
	left := scale(e.leftAt(req.Policy.Algorithm(), capQ, now), capP, capQ)
	cost := req.EffectiveCost()
	if left < cost {
		owed, refuse = max(0, res.Remaining-left), true
	} else {
		left -= cost
		owed = max(0, res.Remaining-left)
	}
	// Until the charge lands, concurrent decisions of the key pay from what is left.
	e.localRemaining, e.localAt = scale(left, capQ, capP), now
	sh.entries[k] = e
	return owed, refuse
}

// settled ends the settlement of req's local allowance at now: the next outage seeds
// from the shared store's answers.
//
// A concurrency key owes nothing: its seed is replaced when Local mode next finds a
// newer answer (seedLeases), and the entry, which names the seed to release then,
// lives as long as the seed does.
func (m *memo) settled(req *core.Request, now int64) {
	if req.Policy.Algorithm() == core.Concurrency {
		return
	}
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

// plainAllowance is the gen of a local allowance kept on the key itself: one started
// without a known answer (localKey). The memo's generations never reach it.
const plainAllowance = math.MaxUint64

// localKeyName is the local store's key of allowance gen of key: the key itself for
// 0 (no allowance: the memo had no room for the key) and plainAllowance, else the
// key and the number, hashed when that would be too long for a key.
func localKeyName(key string, gen uint64) string {
	if gen == 0 || gen == plainAllowance {
		return key
	}
	if len(key) > core.MaxKeyLength-24 {
		sum := sha256.Sum256([]byte(key))
		key = hex.EncodeToString(sum[:])
	}
	return key + "\x1f" + strconv.FormatUint(gen, 10)
}
