package resilient

import (
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// What slow calls decide from a key's last answer, and what they then owe the
// shared store.

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
