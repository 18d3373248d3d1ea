package reserve

import (
	"context"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// decideLeased decides a request of a leased policy: from the live lease when its
// balance covers cost (no lock, no round trip), as a refusal when the backing store
// refused this cost for this key moments ago, and otherwise by taking a new lease,
// one requester per entry at a time.
func (s *Store) decideLeased(ctx context.Context, t *table, key string, cost int64) (core.Result, error) {
	for {
		now := s.nowNanos()
		e, found := t.lookup(key)
		if found {
			if res, ok := s.spend(t, e, cost, now); ok {
				return res, nil
			}
			if r, ok := e.refusedAt(cost, now); ok {
				return s.refusedLocally(t, e, r, now), nil
			}
		} else if e, found = t.insert(key, &s.keys, int64(s.cfg.maxKeys)); !found {
			return s.backing.Decide(ctx, core.Request{Policy: t.lease.Policy, Key: key, Cost: cost})
		}
		if err := e.lock(ctx); err != nil {
			return core.Result{}, fmt.Errorf("reserve: policy %q: waiting for a lease: %w", t.lease.Policy.Name(), err)
		}
		if s.closed.Load() {
			// Close may already have returned this entry's balance: take no lease it
			// would not return.
			e.unlock()
			return core.Result{}, ErrClosed
		}
		if e.dead {
			e.unlock()
			continue
		}
		res, err := s.refill(ctx, t, e, key, cost)
		e.unlock()
		return res, err
	}
}

// returnBalance gives what is left of key's live lease back to the backing store
// before a request larger than a lease is decided there, so that the backing store
// decides it against the key's whole budget, not the budget less this replica's
// balance. Such a request is also how core/resilient settles what Local mode admitted
// during an outage: without the return, the settlement drains the backing store and
// the balance is still spent. A failed return loses the balance (the key admits
// less, never more); a caller whose ctx ends before the entry is free decides
// without the return.
func (s *Store) returnBalance(ctx context.Context, t *table, key string) {
	e, found := t.lookup(key)
	if !found || e.balance.Load() == 0 || e.lock(ctx) != nil {
		return
	}
	var left int64
	chargedAt := e.leaseChargedAt()
	if !e.dead {
		left = e.endLease()
	}
	e.unlock()
	if left > 0 {
		_ = s.giveBack(ctx, t, key, left, chargedAt)
	}
}

// refill decides a request that the live lease cannot cover, by taking a new lease
// from the backing store. Requires e.sem.
func (s *Store) refill(ctx context.Context, t *table, e *entry, key string, cost int64) (core.Result, error) {
	now := s.nowNanos()
	// Another requester may have taken a lease (or a refusal) while this one waited.
	if res, ok := s.spend(t, e, cost, now); ok {
		return res, nil
	}
	if r, ok := e.refusedAt(cost, now); ok {
		return s.refusedLocally(t, e, r, now), nil
	}
	if expired := e.takeExpired(now); expired > 0 {
		// The lease ended: what is left of it goes back before a new one is taken.
		s.giveBack(ctx, t, key, expired, e.leaseChargedAt())
	}
	// Spenders only ever lower the balance, and it is below cost: hold on to it, and
	// take only what completes a lease.
	leftover := e.balance.Swap(0)
	if leftover > 0 && slidingWindows(t.lease.Policy) {
		// The new lease may be charged in the next window, where a request paid from
		// both leases, refunded at the new lease's instant, would take back more than
		// that window counted. The leftover goes back to its own window first (a round
		// trip, only when a weighted request finds part of its cost); a failed return
		// loses it, so the key admits less, never more.
		leftover = s.returnLeftover(ctx, t, key, e, leftover)
	}
	if leftover >= cost { // not reached: kept for safety should that ever change
		e.balance.Add(leftover - cost)
		return s.admitted(t, e, leftover-cost, now), nil
	}
	grant, res, err := s.take(ctx, t.lease, key, t.lease.Size-leftover, cost-leftover)
	if err == nil && leftover > 0 && !res.Unenforced && !sameFixedWindow(t.lease.Policy, e.chargedAt.Load(), res.DecidedAt) {
		// The round trip crossed a fixed window's end: the backing store dated this
		// decision in a later window than the leftover's lease, whose window has
		// closed, and spending the leftover now would admit more than this window's
		// Limit. It goes back (a closed window takes nothing back, as for any lease
		// returned late). Should what was just taken not cover the request alone, it
		// goes back to its own window too, and a whole lease is taken anew.
		leftover = s.returnLeftover(ctx, t, key, e, leftover)
		if res.Allowed && grant < cost {
			_ = s.giveBack(ctx, t, key, grant, res.DecidedAt)
			grant, res, err = s.take(ctx, t.lease, key, t.lease.Size, cost)
		}
	}
	if err == nil && res.Unenforced {
		// The backing store let the request through without counting it: there is no
		// budget to hold, so this request alone is admitted, as unenforced.
		e.balance.Add(leftover)
		return res, nil
	}
	if err != nil || !res.Allowed {
		e.balance.Add(leftover)
		if err != nil {
			return core.Result{}, err
		}
		if res.RetryAfter > 0 {
			e.refused.Store(&refusal{until: now + int64(res.RetryAfter), cost: cost, remaining: res.Remaining})
		}
		res.Remaining = min(t.lease.Policy.Capacity(), res.Remaining+leftover)
		return res, nil
	}
	s.stats.leases.Add(1)
	s.stats.leased.Add(grant)
	expires := now + int64(t.lease.Lifetime)
	if t.lease.Policy.Algorithm() == core.FixedWindow {
		// A fixed window's budget belongs to its window: the lease ends with it. The
		// backing store counts ResetAfter from its clock truncated to the millisecond,
		// up to 1ms before the instant now stands for: the lease ends up to 1ms early,
		// never in the next window.
		expires = min(expires, now+int64(res.ResetAfter-time.Millisecond))
	}
	if leftover > 0 {
		expires = min(expires, e.expires.Load())
	}
	left := leftover + grant - cost
	e.remaining.Store(res.Remaining)
	e.resetAt.Store(now + int64(res.ResetAfter))
	e.refused.Store(nil)
	e.chargedAt.Store(max(res.DecidedAt.UnixMilli(), 0))
	e.balance.Add(left)
	e.expires.Store(expires)
	return s.admitted(t, e, left, now), nil
}

// take asks the backing store for want units of key's budget, and when it refuses
// that much, for as much as it said remains, and then for need, what the request
// itself lacks. It reports how much it got; res is the backing store's last answer.
func (s *Store) take(ctx context.Context, l Lease, key string, want, need int64) (int64, core.Result, error) {
	req := core.Request{Policy: l.Policy, Key: key, Cost: want}
	res, err := s.backing.Decide(ctx, req)
	if err != nil || res.Allowed || want == need {
		return want, res, err
	}
	if slice := min(res.Remaining, want-1); slice > need {
		req.Cost = slice
		if res, err = s.backing.Decide(ctx, req); err != nil || res.Allowed {
			return slice, res, err
		}
	}
	req.Cost = need
	res, err = s.backing.Decide(ctx, req)
	return need, res, err
}

// spend admits a request of cost from the live lease at now, if it covers it. The
// lease's charge instant is read before and after the spend: when a refill replaced
// the lease in between, the units may be of either lease (spentCharge).
func (s *Store) spend(t *table, e *entry, cost, now int64) (core.Result, bool) {
	before := e.chargedAt.Load()
	left, ok := e.trySpend(cost, now)
	if !ok {
		return core.Result{}, false
	}
	res := s.admitted(t, e, left, now)
	if after := e.chargedAt.Load(); after != before {
		res.DecidedAt = spentCharge(t.lease.Policy, before, after)
	}
	return res, true
}

// spentCharge is the DecidedAt of an admission whose units may be of a lease
// charged at before or of one charged at after (ms since the epoch; 0 when
// unknown), where its refund finds them (core.Refunder). A bucket gets the earlier
// known instant: it gives back what has not refilled since then, which is never
// more than either lease's units would give. A zero time would give it the whole
// cost however late the refund. A window gets none: it gives nothing back rather
// than units another window counted.
func spentCharge(p core.Policy, before, after int64) time.Time {
	if slidingWindows(p) || p.Algorithm() == core.FixedWindow {
		return time.Time{}
	}
	switch {
	case before > 0 && (after <= 0 || before <= after):
		return time.UnixMilli(before)
	case after > 0:
		return time.UnixMilli(after)
	}
	return time.Time{}
}

// admitted is the result of a request admitted from a lease that has left units
// now. Remaining adds them to what the backing store said remained when the lease
// was taken: an estimate, since other replicas have spent and time has refilled since.
func (s *Store) admitted(t *table, e *entry, left, now int64) core.Result {
	return core.Result{
		Policy:     t.lease.Policy.Name(),
		Allowed:    true,
		Limit:      t.lease.Policy.Capacity(),
		Remaining:  min(t.lease.Policy.Capacity(), left+e.remaining.Load()),
		ResetAfter: durationUntil(now, e.resetAt.Load()),
		DecidedAt:  e.leaseChargedAt(), // the lease's charge, which a refund gives back to
	}
}

// refusedLocally is the result of a request refused by a remembered refusal.
func (s *Store) refusedLocally(t *table, e *entry, r *refusal, now int64) core.Result {
	retry := durationUntil(now, r.until)
	return core.Result{
		Policy:     t.lease.Policy.Name(),
		Limit:      t.lease.Policy.Capacity(),
		Remaining:  min(t.lease.Policy.Capacity(), e.balance.Load()+r.remaining),
		RetryAfter: retry,
		ResetAfter: max(retry, durationUntil(now, e.resetAt.Load())),
	}
}

// sameFixedWindow reports whether decidedAt, a backing store's decision of a fixed
// window policy p, falls in the window of the lease charged at chargedMs (ms since
// the epoch; 0 when unknown). It reports true for other algorithms, and when either
// instant is unknown: the lease's end, timed by ResetAfter, then bounds it alone.
func sameFixedWindow(p core.Policy, chargedMs int64, decidedAt time.Time) bool {
	if p.Algorithm() != core.FixedWindow || chargedMs <= 0 || decidedAt.IsZero() {
		return true
	}
	period := p.PeriodMillis()
	return chargedMs/period == decidedAt.UnixMilli()/period
}

// slidingWindows reports whether p's windows slide, so that a lease's units belong
// to the window its charge fell in, which a fixed window's lease never outlives.
func slidingWindows(p core.Policy) bool {
	return p.Algorithm() == core.SlidingWindow || p.Algorithm() == core.SlidingLog
}

// returnLeftover gives what is left of e's lease back to the window that counted it
// and ends the lease, and returns the leftover the request may still spend: none. A
// failed return loses the leftover, so the key admits less, never more.
func (s *Store) returnLeftover(ctx context.Context, t *table, key string, e *entry, leftover int64) int64 {
	_ = s.giveBack(ctx, t, key, leftover, e.leaseChargedAt())
	e.expires.Store(0)
	return 0
}
