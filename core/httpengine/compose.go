package httpengine

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Composition: a request that passes through several Limiters (an app-wide
// middleware, then a route's) gets one decision.
//
// Each Limiter decides when the request reaches it, because no router tells a
// middleware whether another limiter waits further down the chain (echo builds a
// route's middlewares inside an opaque handler, chi and net/http wrap handlers
// in closures). A Limiter that finds an admitted decision of the same store in
// the request's scope merges its own rules into it:
//
//   - a policy both declare for the same key is charged once, at the inner
//     declaration's cost: the inner Limiter charges only the difference (or
//     refunds the excess). Declared under different keys, it is two buckets,
//     both charged (decideAll, in turns), and listed once in the fields (shownFor);
//   - the merged rules decide all-or-nothing: when the inner rules are refused,
//     what the outer Limiter charged is given back (refunded, leases released),
//     so a refusal by a route's policy spends nothing of the app-wide one; a
//     sliding window's or leaky bucket's difference refused beside the outer
//     charge of its policy is decided again at the whole cost once that charge is
//     given back (refusedBeside). Rules
//     that only a Limiter in shadow mode declares, merged with an enforcing one,
//     never refuse nor delay the request (withoutObservedRefusals), and a policy
//     both declare is enforced as the enforcing one declares it;
//   - the inner Limiter writes the fields of the merged decision, so the response
//     lists each policy once, and its observers (and the outer one's) see one
//     event for the request, at its end.
//
// Limiters on different stores (or one in shadow mode and one enforcing, with no
// policy in common) decide separately, but still all-or-nothing: a Limiter that
// refuses gives back what the request's other decisions charged
// (refuseSeparate), as one that fails to decide does (scope.giveBackOuter).
//
// Giving back needs a store that implements core.Refunder (the memory and Redis
// stores do); on a store without it, what an outer Limiter charged stays charged.

// mergeEntry is what a merge knows of one of the merged rules besides its request.
type mergeEntry struct {
	from     int       // the index of the rule in prev.reqs, or -1 (t's own)
	held     int64     // what prev charged for the rule that the merged decision counts: a cost, or 1 for a held lease
	replaced int64     // what prev charged for a declaration of another plan, which t's replaced: given back, whatever the decision
	observed bool      // only a Limiter in shadow mode declares it, merged with one that enforces: it never refuses the request
	decided  bool      // decided by the merge: its whole cost, or the difference beside held
	at       time.Time // decided: the instant a refund of its charge names (chargedAt), taken before its wait is shortened
}

// merge decides t's own prepared requests together with prev's decision, which
// prev's Limiter made on the same store, and leaves the merged requests and
// results in t.
func (l *Limiter) merge(ctx context.Context, t, prev *Ticket) error {
	own := t.reqs
	n := len(prev.reqs) + len(own)
	t.mergedReqs = growRequests(t.mergedReqs, n)
	t.mergedResults = growResults(t.mergedResults, n)
	t.mergedSettlers = growSettlers(t.mergedSettlers, n)
	reqs, results, settlers := t.mergedReqs[:0], t.mergedResults[:n], t.mergedSettlers[:0]
	entries := make([]mergeEntry, 0, n)
	taken := make([]bool, len(own))
	// The settle function of a policy is the one of the innermost Limiter that
	// declares the policy and has one.
	var settler *Limiter
	if l.settle != nil {
		settler = l
	}
	for i := range prev.reqs {
		p := &prev.reqs[i]
		req, by := *p, prev.settlerOf(i)
		en := mergeEntry{from: i}
		if prev.allowed {
			en.held = heldBy(p, &prev.results[i])
		}
		// The same policy under another key is another bucket, charged beside
		// this one: the inner declaration replaces prev's only for the same key.
		j := indexOfRule(own, p)
		declared := j >= 0
		if declared {
			taken[j] = true
		}
		// A Limiter in shadow mode never changes what another enforces: the
		// enforcing declaration stands (a shadow route's trial weight of 4 refused
		// requests the app-wide cost of 1 admitted).
		if declared && (!t.shadow || prev.shadow) {
			req = own[j]
			if settler != nil {
				by = settler
			}
			if req.Policy.ID() != p.Policy.ID() { // another plan, say
				en.held, en.replaced = 0, en.held
			}
		}
		// Observed: declared by prev's shadow Limiter alone, or by none that
		// enforces when prev's merge kept its refusal within an admitted decision.
		keptRefusal := prev.allowed && !prev.results[i].Allowed
		en.observed = (prev.shadow && !t.shadow || keptRefusal) && (!declared || t.shadow)
		reqs, entries, settlers = append(reqs, req), append(entries, en), append(settlers, by)
	}
	for j := range own {
		if !taken[j] {
			reqs, settlers = append(reqs, own[j]), append(settlers, settler)
			entries = append(entries, mergeEntry{from: -1, observed: t.shadow && !prev.shadow})
		}
	}

	// Decide what is left to charge: the new policies, and the difference of those
	// prev charged at a lower cost.
	allowed, err := l.decideMerged(ctx, t, reqs, entries, results)
	if err != nil {
		return err
	}
	if !allowed && prev.allowed && l.refunder != nil && refusedBeside(reqs, entries, results) {
		// A sliding window's or leaky bucket's difference was refused beside prev's
		// charge of its policy: give prev's charges back, and decide the merged
		// rules again as one decision at their whole costs. Its answer is the one a
		// single Limiter declaring them would give: a sliding window's retry at the
		// difference's Retry-After was refused again, and a leaky bucket admits a
		// request at the queue's end whatever its cost, where the difference did not
		// fit beside the request's own slot.
		givenBack := l.giveBackPrev(t, prev, reqs, results, entries)
		prev.finished = true // nothing of it is left to give back, should the second decision fail
		if givenBack {
			if allowed, err = l.decideMerged(ctx, t, reqs, entries, results); err != nil {
				return err
			}
		}
	}

	// Settle with prev: carry its results, and give back what the merged decision
	// does not keep.
	for e := range reqs {
		en := &entries[e]
		if en.decided {
			en.at = chargedAt(&reqs[e], &results[e]) // its slot, where the store queued it
			switch {
			case en.observed:
				results[e].Delay = 0 // only a shadow Limiter declares it: it never makes anyone wait
			case allowed && en.held > 0 && reqs[e].Policy.Algorithm() == core.LeakyBucket:
				// The difference queues behind prev's own charge, which holds the
				// request's slot: its wait counts only what came between (others
				// queued meanwhile), less what prev's adapter already waited. Waiting
				// for the whole difference's slot made a route's cost 5 under an
				// app-wide cost 1 wait an emission interval more than one decision at
				// cost 5 does.
				results[e].Delay = max(0, results[e].Delay-queueSpan(&reqs[e].Policy, en.held))
			}
			continue
		}
		res := prev.results[en.from] // not decided again: prev's admission
		if !allowed {
			res.Allowed, res.RetryAfter = false, 0 // given back below
			if !prev.shadow {
				// prev's adapter served the wait before this decision: the queue has
				// moved on by as much since prev's answer.
				res.ResetAfter = max(0, res.ResetAfter-res.Delay)
			}
		}
		// A carried slot's wait is over when prev's adapter served it. A Limiter in
		// shadow mode never waits: merged with one that enforces, the request waits
		// here (an app-wide shadow leaky bucket made an enforcing route's never wait).
		if !prev.shadow || t.shadow || en.observed {
			res.Delay = 0
		}
		results[e] = res
	}
	if !allowed {
		// Refused: prev's charges are given back (a store that cannot refund keeps
		// them, but releases leases), and the results show what is left without them.
		l.giveBackPrev(t, prev, reqs, results, entries)
	}
	for e := range entries { // admitted, what the merged costs do not keep (refused, nothing is left)
		en := &entries[e]
		excess := en.held - reqs[e].EffectiveCost()
		switch {
		case en.replaced > 0:
			l.giveBackOne(t, prev, en.from, en.replaced)
		case !en.decided && excess > 0 && reqs[e].Policy.Algorithm() != core.Concurrency:
			if l.giveBackOne(t, prev, en.from, excess) {
				earnedBack(&reqs[e].Policy, &results[e], excess)
			}
		}
	}

	var parts [][]chargePart // made only when a rule was charged by more than one decision
	for e := range entries {
		if p := mergedParts(prev, &reqs[e], &results[e], &entries[e]); p != nil {
			if parts == nil {
				parts = make([][]chargePart, len(reqs))
			}
			parts[e] = p
		}
	}
	t.reqs, t.results, t.mergedSettlers, t.mergedParts, t.allowed, t.merged = reqs, results[:len(reqs)], settlers, parts, allowed, true
	t.shadow = t.shadow && prev.shadow
	t.fields |= prev.fields
	t.fellBack = t.fellBack || prev.fellBack
	for _, o := range append([]Observer{prev.l.observer}, prev.extraObservers...) {
		if o != nil && !sameObserver(o, l.observer) && !containsObserver(t.extraObservers, o) {
			t.extraObservers = append(t.extraObservers, o)
		}
	}
	prev.absorbed = true
	return nil
}

// decideMerged decides the merged requests that prev's charges do not cover,
// all-or-nothing, into results, and marks them decided: a request prev did not
// charge at its whole cost, one prev charged less at the difference. A refusal by
// the observed rules alone (withoutObservedRefusals) does not refuse. It reports
// whether the decision admits.
func (l *Limiter) decideMerged(ctx context.Context, t *Ticket, reqs []core.Request, entries []mergeEntry, results []core.Result) (bool, error) {
	var asked []core.Request
	var at []int
	for e := range reqs {
		req, en := reqs[e], &entries[e]
		en.decided = en.held == 0 || req.Policy.Algorithm() != core.Concurrency && req.EffectiveCost() > en.held
		if !en.decided {
			continue // prev's charge, or its lease, covers it
		}
		if en.held > 0 {
			req.Cost = req.EffectiveCost() - en.held // the difference
		}
		asked, at = append(asked, req), append(at, e)
	}
	if len(asked) == 0 {
		return true, nil
	}
	answers := make([]core.Result, len(asked))
	allowed, err := l.decideAll(ctx, t, asked, answers)
	if err == nil && !allowed {
		allowed, err = l.withoutObservedRefusals(ctx, t, asked, answers, at, entries)
	}
	if err != nil {
		return false, err
	}
	for k, e := range at {
		results[e] = answers[k]
	}
	return allowed, nil
}

// giveBackPrev gives back everything prev charged that the merged entries hold,
// and what the inner declarations replaced, and the entries hold nothing more:
// the merged decision was refused, or is decided again. The results show what is
// left. It reports whether the store took all of it back.
func (l *Limiter) giveBackPrev(t, prev *Ticket, reqs []core.Request, results []core.Result, entries []mergeEntry) bool {
	all := true
	for e := range entries {
		en := &entries[e]
		amount := en.held + en.replaced // one of them
		if amount == 0 {
			continue
		}
		if !l.giveBackOne(t, prev, en.from, amount) {
			all = false
		} else if en.held > 0 {
			earnedBack(&reqs[e].Policy, &results[e], en.held)
		}
		en.held, en.replaced = 0, 0
	}
	return all
}

// refusedBeside reports whether one of the decided requests refused the difference
// of a sliding window or a leaky bucket beside prev's charge of it (held), where
// the whole cost's answer differs. The other algorithms refuse the difference
// beside the charge exactly when they refuse the whole cost, and at the same
// Retry-After: their results, once the charge is given back (earnedBack), are the
// whole cost's, with no second round trip. (A refusal by a policy prev did not
// charge is the whole cost's already.)
func refusedBeside(reqs []core.Request, entries []mergeEntry, results []core.Result) bool {
	for e := range entries {
		switch reqs[e].Policy.Algorithm() {
		case core.SlidingWindow, core.LeakyBucket:
			if entries[e].decided && entries[e].held > 0 && refused(&results[e]) {
				return true
			}
		}
	}
	return false
}

// withoutObservedRefusals decides asked again without its observed rules (those only
// a Limiter in shadow mode declares), when they alone refused it: shadow mode never
// refuses a request. Merged with an app-wide limiter over a policy in common, a
// shadow route's own trial policy refused the request (TestShadowPolicyMergedWith-
// AnEnforcedOneNeverRefuses). The observed rules keep their refusals, uncharged as a
// refused decision leaves them; answers gets the others' new results. It reports
// whether those admitted. asked[k] is the merged entry at[k].
func (l *Limiter) withoutObservedRefusals(ctx context.Context, t *Ticket, asked []core.Request, answers []core.Result, at []int, entries []mergeEntry) (bool, error) {
	var rest []core.Request
	var restAt []int
	observed := false
	for k, e := range at {
		switch {
		case entries[e].observed:
			observed = true
		case refused(&answers[k]):
			return false, nil // an enforced rule refused
		case !answers[k].Allowed:
			rest, restAt = append(rest, asked[k]), append(restAt, k)
		}
		// Admitted: a turn that a store without core.Refunder keeps charged
		// (decideAll). Asked again, it would be charged twice.
	}
	if !observed || len(rest) == 0 {
		return observed, nil
	}
	again := make([]core.Result, len(rest))
	allowed, err := l.decideAll(ctx, t, rest, again)
	for i, k := range restAt {
		answers[k] = again[i]
	}
	return allowed, err
}

// giveBackOne gives back amount of prev's charge of its i-th request for t, the
// merged decision (giveBackCharge).
func (l *Limiter) giveBackOne(t, prev *Ticket, i int, amount int64) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(prev.r.Context()), l.releaseTimeout)
	defer cancel()
	return l.giveBackCharge(ctx, t, &prev.reqs[i], &prev.results[i], prev.partsOf(i), amount)
}

// indexOfRule is the index of the request of req's policy (by name) and key, or -1.
func indexOfRule(reqs []core.Request, req *core.Request) int {
	for i := range reqs {
		if reqs[i].Policy.Name() == req.Policy.Name() && reqs[i].Key == req.Key {
			return i
		}
	}
	return -1
}

// indexOfPolicy is the index of the request of the named policy, or -1.
func indexOfPolicy(reqs []core.Request, name string) int {
	for i := range reqs {
		if reqs[i].Policy.Name() == name {
			return i
		}
	}
	return -1
}

func growRequests(s []core.Request, n int) []core.Request {
	if cap(s) < n {
		return make([]core.Request, n)
	}
	return s[:n]
}

func growSettlers(s []*Limiter, n int) []*Limiter {
	if cap(s) < n {
		return make([]*Limiter, n)
	}
	return s[:n]
}

func growResults(s []core.Result, n int) []core.Result {
	if cap(s) < n {
		return make([]core.Result, n)
	}
	clear(s[:n])
	return s[:n]
}

// sameStore reports whether a and b are the same store. Stores of a type that
// cannot be compared are never the same.
func sameStore(a, b core.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// sameObserver reports whether a and b are the same observer. Observers of a type
// that cannot be compared are never the same.
func sameObserver(a, b Observer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func containsObserver(list []Observer, o Observer) bool {
	for _, x := range list {
		if sameObserver(x, o) {
			return true
		}
	}
	return false
}

// queueSpan is the time a leaky bucket's queue takes to serve cost units of p,
// cost×period/limit, rounded up to the millisecond as Result.Delay is.
func queueSpan(p *core.Policy, cost int64) time.Duration {
	span := time.Duration(float64(cost) * float64(p.Period()) / float64(p.Limit()))
	return (span + time.Millisecond - 1).Truncate(time.Millisecond)
}
