package httpengine

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Giving back: what a request was charged and does not keep (a refusal by
// another of its decisions, a failure to decide it, a wait it left early, a
// settle function's verdict) goes back to the store, and its results show what
// is left. Failures are kept in a ticket and reported when it finishes.

// reportGiveBackErrors tells t's observers (its Limiter's, and those of the
// Limiters t merged) what failed to be given back of t, or of the outer decision t
// merged. Finish calls it once t's own leases are given back, so that an observer
// that panics leaks none of them, and outside the request's scope lock, which a
// panic would leave held.
func (t *Ticket) reportGiveBackErrors() {
	for _, err := range t.giveBackErrors {
		t.tellError(err)
	}
}

// giveBackMode is what giveBack gives back of each rate policy's charge.
type giveBackMode uint8

const (
	giveBackLeases  giveBackMode = iota // nothing: the handler panicked
	giveBackSettled                     // what the policy's settle function does not keep
	giveBackAll                         // everything: the request never reached its handler
)

// giveBack releases t's concurrency leases and gives back what how says of each
// rate policy's charge, on a context detached from the (perhaps cancelled)
// request and bounded by the release timeout. Failures are kept in t, and go to
// its observers when it finishes (reportGiveBackErrors): a refusal gives back the
// request's other decisions under the scope's lock.
func (l *Limiter) giveBack(t *Ticket, how giveBackMode, status int) {
	if t.allowed {
		l.giveBackFrom(t, how, status, 0)
	}
}

// giveBackFrom is giveBack from t's from-th request on. A settle function that
// panics (a bug in the application) panics the request, but first the requests
// after the one it concerned are given back as a panicking handler's are: their
// leases released, their charges kept.
func (l *Limiter) giveBackFrom(t *Ticket, how giveBackMode, status int, from int) {
	var ctx releaseContext // made on first use: most requests give nothing back
	i := from
	defer func() {
		ctx.end()
		if i < len(t.reqs) { // unwinding a panic at request i: the panic goes on after this
			l.giveBackFrom(t, giveBackLeases, 0, i+1)
		}
	}()
	for ; i < len(t.reqs); i++ {
		req, res := &t.reqs[i], &t.results[i]
		var amount int64 // the lease, or what is given back of the cost
		switch held := heldBy(req, res); {
		case res.Lease != 0, how == giveBackAll:
			amount = held
		case how == giveBackSettled && held > 0 && l.refunder != nil:
			if s := t.settlerOf(i); s != nil {
				amount = held - min(max(s.settle(t.r, status, held), 0), held)
			}
		}
		if amount > 0 {
			l.giveBackCharge(ctx.of(t.r, l.releaseTimeout), t, req, res, t.partsOf(i), amount)
		}
	}
}

// releaseContext is the context of a request's releases and refunds: detached
// from the request (which may have ended), bounded by the release timeout, and
// made when first needed.
type releaseContext struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// of returns the context, making it from r's on first use.
func (c *releaseContext) of(r *http.Request, timeout time.Duration) context.Context {
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
	}
	return c.ctx
}

// end releases the context's timer, if it was made.
func (c *releaseContext) end() {
	if c.cancel != nil {
		c.cancel()
	}
}

// heldBy is what req holds of its policy by its result res: its cost, or 1 for
// the lease of a concurrency policy. A lease is released even when unenforced,
// which clears it from the store that granted it. A rate policy holds nothing
// when it was admitted without being counted (core.Result.Unenforced), or not
// admitted: refused within an admitted decision (a rule only a shadow Limiter
// declares), or by a refused one. Nothing of it is given back.
func heldBy(req *core.Request, res *core.Result) int64 {
	switch {
	case res.Lease != 0:
		return 1
	case req.Policy.Algorithm() == core.Concurrency, res.Unenforced, !res.Allowed:
		return 0
	}
	return req.EffectiveCost()
}

// earnedBack updates res, a result of a policy p, for amount of a charge given
// back: Remaining grows by it, and a bucket is full again sooner by the time it
// takes to earn amount (rounded down to the millisecond, so never sooner than the
// store would say). A window fully recovered has nothing left to wait for; one
// that still counts other charges keeps its reset, which is then at most later
// than the store would say (a sliding log's, when the charge given back was its
// newest entry). A concurrency policy's lease is gone.
func earnedBack(p *core.Policy, res *core.Result, amount int64) {
	res.Remaining = min(res.Limit, res.Remaining+amount)
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		earn := time.Duration(amount*p.TokenUnit()/p.RefillPerMilli()) * time.Millisecond
		res.ResetAfter = max(0, res.ResetAfter-earn)
		return
	case core.Concurrency:
		res.Lease = 0
	}
	if res.Remaining == res.Limit {
		res.ResetAfter = 0
	}
}

// giveBackCharge gives back amount of the charge res records of req on l's store:
// its lease, when res holds one, or a refund. It reports whether the store took
// it back; a store without core.Refunder keeps a cost. A failure is kept in owner
// and goes to its observers when owner finishes (reportGiveBackErrors): an
// observer that panics (a bug in the application) then panics the request after
// its leases are released, not midway through a decision, where it would leak
// the leases just taken, or leave the request's scope locked.
func (l *Limiter) giveBackCharge(ctx context.Context, owner *Ticket, req *core.Request, res *core.Result, parts []chargePart, amount int64) bool {
	var err error
	switch {
	case res.Lease != 0:
		if err = l.store.Release(ctx, *req, res.Lease); err == nil {
			res.Lease = 0
			return true
		}
		err = fmt.Errorf("%w: release lease of policy %q: %w", ErrStore, req.Policy.Name(), err)
	case l.refunder == nil || amount < 1:
		return false
	default:
		if err = l.refund(ctx, req, res, parts, amount); err == nil {
			return true
		}
		err = fmt.Errorf("%w: refund policy %q: %w", ErrStore, req.Policy.Name(), err)
	}
	owner.giveBackErrors = append(owner.giveBackErrors, err)
	return false
}

// chargedAt is the instant a refund of res's charge names (core.Refunder): when
// the store decided, or for a leaky bucket's queued request when its slot began, a
// Result.Delay after that. A bucket gives back only what it has not refilled since
// that instant, and a queue's slot drains from its start: the slot an app-wide queue
// waited for comes back whole when a route refuses the request right after. Delay
// is rounded up to the millisecond, so the instant named is a millisecond earlier:
// never after the slot began, so that a refund never returns time the queue served.
func chargedAt(req *core.Request, res *core.Result) time.Time {
	if req.Policy.Algorithm() != core.LeakyBucket || res.Delay <= 0 || res.DecidedAt.IsZero() {
		return res.DecidedAt
	}
	return res.DecidedAt.Add(res.Delay - time.Millisecond)
}

// uncharge gives back everything res, the store's answer to req, holds of it
// (heldBy), and once the store took it back shows res uncharged, with what is
// left. A failure is kept in owner (see giveBackCharge); res then shows the
// charge kept.
func (l *Limiter) uncharge(ctx context.Context, owner *Ticket, req *core.Request, res *core.Result, parts []chargePart) {
	if amount := heldBy(req, res); amount > 0 && l.giveBackCharge(ctx, owner, req, res, parts, amount) {
		earnedBack(&req.Policy, res, amount)
		res.Allowed, res.Delay = false, 0
	}
}
