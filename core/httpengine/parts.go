package httpengine

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// chargePart is the part of a merged rule's charge that one decision made: an
// outer Limiter's charge, or the difference an inner one charged beside it. A
// refund names the instant of the decision that charged what it gives back (a
// bucket measures refill from it, a window finds the window that counted it), so
// a rule charged by two decisions is given back part by part.
type chargePart struct {
	amount int64     // what of the cost is still charged
	at     time.Time // chargedAt of the decision that charged it
}

// partsOf is how t's i-th rule was charged, oldest part first, when more than
// one decision charged it; nil when its result's instant covers its whole cost.
func (t *Ticket) partsOf(i int) []chargePart {
	if !t.merged || i >= len(t.mergedParts) {
		return nil
	}
	return t.mergedParts[i]
}

// refund gives back amount of req's charge, which res records: at res's instant,
// or, when parts says several decisions charged it, part by part, the newest
// first. A window gets each part at its own instant: the window (or log entry)
// that counted it. A bucket gets one refund at the newest part's instant of what
// the parts still hold then (unrefilled): refunded part by part, each refund
// would take off the refill since the newest instant again, and a route's cost 3
// over an app-wide 1, charged in one millisecond, got back less than one decision
// of 3. The parts keep what is still charged of each, lowered as each refund
// succeeds, so that a failure midway never has a part given back twice. What the
// parts hold less than amount stays charged (less admitted, never more).
func (l *Limiter) refund(ctx context.Context, req *core.Request, res *core.Result, parts []chargePart, amount int64) error {
	if len(parts) == 0 {
		return l.refunder.Refund(ctx, core.Request{Policy: req.Policy, Key: req.Key, Cost: amount}, chargedAt(req, res))
	}
	switch req.Policy.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		held, at := unrefilled(&req.Policy, parts)
		if give := min(amount, held); give > 0 {
			if err := l.refunder.Refund(ctx, core.Request{Policy: req.Policy, Key: req.Key, Cost: give}, at); err != nil {
				return err
			}
		}
		for k := len(parts) - 1; k >= 0 && amount > 0; k-- {
			take := min(amount, parts[k].amount)
			parts[k].amount -= take
			amount -= take
		}
		return nil
	}
	for k := len(parts) - 1; k >= 0 && amount > 0; k-- {
		take := min(amount, parts[k].amount)
		if take <= 0 {
			continue
		}
		if err := l.refunder.Refund(ctx, core.Request{Policy: req.Policy, Key: req.Key, Cost: take}, parts[k].at); err != nil {
			return err
		}
		parts[k].amount -= take
		amount -= take
	}
	return nil
}

// unrefilled is what a bucket's parts hold that it has not refilled by the last
// part's instant, in whole units of cost (rounded down), and that instant. The
// refill between two parts earns back the older ones first, as one decision's
// refund counts each millisecond's refill once. A part dated before the one ahead
// of it (a store's clock that went back) adds no refill, and the earlier instant
// named makes the store count more refill: less given back, never more.
func unrefilled(p *core.Policy, parts []chargePart) (int64, time.Time) {
	unit, refill := p.TokenUnit(), p.RefillPerMilli()
	if unit < 1 || refill < 1 {
		return 0, time.Time{}
	}
	var units int64
	at := parts[0].at
	for _, part := range parts {
		if gap := part.at.Sub(at).Milliseconds(); gap > 0 {
			// gap < ⌈units/refill⌉ keeps gap×refill below units + refill: no overflow.
			if gap < (units+refill-1)/refill {
				units -= gap * refill
			} else {
				units = 0
			}
		}
		units += part.amount * unit
		at = part.at
	}
	return units / unit, at
}

// mergedParts is how the merged rule e is charged, once prev's excess went back:
// prev's parts (or its one charge) and, when the merge charged the difference
// beside them, that difference at its own instant: for a leaky bucket, where its
// slot began, not the wait that the merge shortened to what came between. It is nil when one decision
// charged the rule: t's own, or prev's alone.
func mergedParts(prev *Ticket, req *core.Request, res *core.Result, en *mergeEntry) []chargePart {
	if en.from < 0 || en.held == 0 || req.Policy.Algorithm() == core.Concurrency || !res.Allowed {
		return nil
	}
	earlier := prev.partsOf(en.from)
	if !en.decided {
		return append([]chargePart(nil), earlier...) // prev's charge covers the rule
	}
	if earlier == nil {
		earlier = []chargePart{{amount: en.held, at: chargedAt(&prev.reqs[en.from], &prev.results[en.from])}}
	} else {
		earlier = append([]chargePart(nil), earlier...)
	}
	return append(earlier, chargePart{amount: req.EffectiveCost() - en.held, at: en.at})
}
