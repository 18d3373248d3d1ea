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
// or when parts says several decisions charged it, from the newest part first,
// each at its own instant. Each part keeps what is still charged of it. A part
// refunds no more than it holds: should they hold less than amount, the rest
// stays charged (the key admits less, never more).
func (l *Limiter) refund(ctx context.Context, req *core.Request, res *core.Result, parts []chargePart, amount int64) error {
	if len(parts) == 0 {
		return l.refunder.Refund(ctx, core.Request{Policy: req.Policy, Key: req.Key, Cost: amount}, chargedAt(req, res))
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

// mergedParts is how the merged rule e is charged, once prev's excess went back:
// prev's parts (or its one charge) and, when the merge charged the difference
// beside them, that difference at its own instant. It is nil when one decision
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
	return append(earlier, chargePart{amount: req.EffectiveCost() - en.held, at: chargedAt(req, res)})
}
