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
			results[i].ResetAfter = m.shard(k).spendSlow(k, &reqs[i], now)
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
	res := core.Result{Policy: req.Policy.Name(), Limit: capacity, ResetAfter: time.Duration(max(0, e.recovered-now))}
	// No refill, not even once the answer's ResetAfter has passed: other instances
	// may have spent the key since, and this one has not heard. Counting the recovery
	// let 64 starved instances admit 45–53 against a bound of 44, on a saturated client.
	// The request of a decision settling the key is on its way, not in the answer yet:
	// without it, a slow call racing a settlement admitted 4 of 3
	// (TestSlowCallRacingASettlementCountsTheSettlersRequest).
	avail := max(0, min(capacity, e.share(e.remaining, capacity, capQ))-e.settling)
	// A live local allowance knows what Local mode spent: slow calls right after a
	// return, its settlement still owed, admitted from the answer as if Local mode
	// had admitted nothing (7 of 5, TestSlowCallsAfterAReturnCountWhatLocalModeSpent).
	// Both bound this replica's share; the smaller holds.
	if e.gen != 0 && now < e.localUntil {
		avail = max(0, min(avail, e.leftAt(req.Policy.Algorithm(), capQ, now)-(e.spent-e.absorbed)))
	}
	if avail >= cost {
		res.Allowed, res.Remaining = true, avail-cost
		if spend {
			res.ResetAfter = sh.spendSlow(k, req, now)
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

// spendSlow records that a slow-call decision admitted req, whose entry is k, at
// now, and returns when the key then fully recovers. Requires sh.mu.
func (sh *memoShard) spendSlow(k preKey, req *core.Request, now int64) time.Duration {
	e, ok := sh.entries[k]
	if !ok {
		return 0
	}
	cost := req.EffectiveCost()
	e.spent += cost
	e.unsettled += cost
	e.recovered = recoveryAfter(&req.Policy, e.recovered, cost, now)
	sh.entries[k] = e
	return time.Duration(e.recovered - now)
}

// recoveryAfter is when a key of p that was to recover fully at recovered, charged
// cost at now, has recovered from that charge too. A bucket earns the charge back at
// its rate after what it already lacked, as a queue drains (exact: a token bucket
// and GCRA lack what a leaky bucket queues). A window forgets the charge once every
// window that counts it has passed: one period, and two for the sliding window, whose
// estimate weighs the previous window's count.
func recoveryAfter(p *core.Policy, recovered, cost, now int64) int64 {
	switch p.Algorithm() {
	case core.FixedWindow, core.SlidingLog:
		return max(recovered, now+int64(p.Period()))
	case core.SlidingWindow:
		return max(recovered, now+2*int64(p.Period()))
	}
	return max(recovered, now) + queueMillis(p, cost)*1_000_000
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
