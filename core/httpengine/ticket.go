package httpengine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Disposition is what a decided request calls for: what the adapter does next.
type Disposition uint8

const (
	// Skipped: the request is exempt (a skipper or the allow-list); run the handler.
	Skipped Disposition = iota
	// Admitted: wait (Ticket.Wait), run the handler, then call Ticket.Finish.
	Admitted
	// Denied: write the refusal (Ticket.Denial); the fields are already set.
	Denied
	// Failed: the request could not be decided; write the error (Ticket.Err).
	Failed
)

// String names the disposition.
func (d Disposition) String() string {
	switch d {
	case Skipped:
		return "skipped"
	case Admitted:
		return "admitted"
	case Denied:
		return "denied"
	case Failed:
		return "failed"
	}
	return "disposition(" + strconv.Itoa(int(d)) + ")"
}

// Ticket is one request's passage through a Limiter, from Start to Finish. Tickets
// are pooled: after Finish the Ticket must not be used. A nil *Ticket is a skipped
// request; its methods do nothing.
type Ticket struct {
	l       *Limiter
	r       *http.Request
	reqs    []core.Request
	results []core.Result

	disposition Disposition
	allowed     bool          // every policy admitted the request and charged it
	fellBack    bool          // a key function failed and the fallback key was used
	delay       time.Duration // the leaky-bucket wait before the handler runs
	finished    bool          // leases released and costs settled (or given back)
	shadow      bool          // a refusal lets the request through (every merged Limiter is in shadow mode)
	fields      Fields        // the fields to write: the Limiter's, and those of the Limiters merged into t
	merged      bool          // reqs and results hold a decision merged with an outer Limiter's
	absorbed    bool          // an inner Limiter merged this decision into its own, and finishes it
	eventDue    bool          // the observers are told at Finish
	err         error

	next           *http.Request // the request to pass on: r, with the scope in its context
	scope          *scope        // the request's scope, where this ticket is an admitted decision
	outer          *Ticket       // the request's admitted decision before this one, not finished yet
	extraObservers []Observer    // observers of absorbed tickets other than the Limiter's own
	giveBackErrors []error       // what failed to be given back (of t, or of the outer decision it merged), reported at Finish
	ownReqs        []core.Request
	ownResults     []core.Result
	mergedReqs     []core.Request
	mergedResults  []core.Result
	mergedSettlers []*Limiter     // of a merged decision: the Limiter that settles each policy's charge, or nil
	mergedParts    [][]chargePart // of a merged decision: how each rule that several decisions charged was charged (partsOf)

	denial Denial
	event  Event
	buf    []byte    // scratch space for building field values
	values valueSlab // where the field values handed to responses live

	fieldMemo      fieldMemo     // the last RateLimit value, for a static stack
	retryAfterMemo numberMemo    // the last long Retry-After
	legacyMemo     [3]numberMemo // the last long legacy limit, remaining and reset

	// The storage of a single policy's request, result and memo, and the scratch
	// buffer, inside the Ticket: small separate objects would share cache lines
	// with those of the Ticket another processor is using, and every request
	// writes them.
	oneRequest [1]core.Request
	oneResult  [1]core.Result
	oneMemo    [2]int64
	scratch    [64]byte

	_ [64]byte // keeps the fields written per request off a neighbouring object's cache lines
}

func newTicket(l *Limiter, n int, static bool) *Ticket {
	t := &Ticket{l: l}
	if n == 1 {
		t.reqs, t.results, t.buf = t.oneRequest[:], t.oneResult[:], t.scratch[:0]
		if static {
			t.fieldMemo = fieldMemo{rt: t.oneMemo[:]}
		}
	} else {
		t.reqs, t.results, t.buf = make([]core.Request, n), make([]core.Result, n), make([]byte, 0, 64*n)
		if static {
			t.fieldMemo = newFieldMemo(n)
		}
	}
	t.ownReqs, t.ownResults = t.reqs, t.results
	return t
}

// Start decides r: it runs the skippers, resolves each policy and key, computes
// the cost, asks the store, writes the rate-limit fields (and Retry-After, on a
// refusal) into h, and tells the observer of a refusal (of an admitted request,
// at Finish). The adapter then acts on Ticket.Disposition, passes Ticket.Request
// on to the handler, and calls Finish exactly once. Start returns nil for a
// skipped request.
//
// When r already passed through a Limiter on the same store that admitted it (an
// app-wide middleware, say), Start merges the two into one decision, as
// httplimit's package documentation says under "Composition".
func (l *Limiter) Start(r *http.Request, h http.Header) *Ticket {
	for _, skip := range l.skip {
		if skip(r) {
			return nil
		}
	}
	t := l.tickets.Get().(*Ticket)
	t.r, t.shadow, t.fields = r, l.shadow, l.fields
	sc := scopeOf(r)
	err := l.prepare(t, r)
	sc.unbindValues() // the keys are known: see WithRouterValues
	if err != nil {
		if err == errSkip { // SkipFallback: exempt, as a skipper would
			t.reset()
			l.tickets.Put(t)
			return nil
		}
		if !clientFault(err) {
			sc.giveBackOuter()
		}
		if r.Context().Err() != nil { // a key function's lookup ended with the request
			err = endedEarly(r.Context(), err)
		}
		return l.fail(t, err)
	}
	ctx := r.Context()
	merged, err := l.mergeWithOuter(ctx, t, sc)
	if !merged {
		if len(t.reqs) == 1 {
			t.results[0], err = l.store.Decide(ctx, t.reqs[0])
			t.allowed = t.results[0].Allowed
		} else {
			t.allowed, err = l.store.DecideStack(ctx, t.reqs, t.results)
		}
	}
	if err != nil {
		sc.giveBackOuter()
		if ctx.Err() != nil {
			return l.fail(t, endedEarly(ctx, fmt.Errorf("httplimit: the request ended before its decision: %w", err)))
		}
		return l.fail(t, fmt.Errorf("%w: policy %q: %w", ErrStore, t.reqs[0].Policy.Name(), err))
	}
	if sc == nil {
		l.writeFields(t, h, nil)
	} else {
		l.writeFieldsBeside(t, h, sc)
	}
	switch {
	case t.allowed:
		t.disposition = Admitted
		if !t.shadow {
			for i := range t.results {
				t.delay = max(t.delay, t.results[i].Delay)
			}
		}
	case t.shadow:
		t.disposition = Admitted
	default:
		t.disposition = Denied
		var seconds int64 = 1
		for i := range t.results {
			if refused(&t.results[i]) {
				seconds = max(seconds, ceilSeconds(t.results[i].RetryAfter))
			}
		}
		t.denial.Results = t.results
		t.denial.RetryAfter = time.Duration(seconds) * time.Second
		t.denial.contentType = l.problemType
		h[headerRetryAfter] = t.number(seconds, &t.retryAfterMemo)
		l.notify(t)
		return t
	}
	// Admitted: the request goes on, and an inner Limiter may merge its decision.
	t.next = r
	if sc == nil {
		sc = &scope{Context: ctx}
		t.next = r.WithContext(sc)
	}
	sc.push(t)
	t.scope = sc
	t.eventDue = true
	return t
}

// mergeWithOuter merges t with the outer decision in sc that l merges with
// (outerDecision), and reports whether there was one. It holds the scope's lock
// throughout, so that the outer Limiter's Finish cannot recycle that decision
// mid-merge when the outer handler returns before the inner one
// (http.TimeoutHandler between the layers, or a goroutine that outlives its
// handler); a Finish that comes first leaves nothing to merge with.
func (l *Limiter) mergeWithOuter(ctx context.Context, t *Ticket, sc *scope) (bool, error) {
	if sc == nil {
		return false, nil
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	prev := outerDecision(sc, l, t)
	if prev == nil {
		return false, nil
	}
	return true, l.merge(ctx, t, prev)
}

// outerDecision is the admitted decision of an outer Limiter on l's store that t,
// l's prepared decision, merges with, or nil. Limiters on other stores may lie
// between them (httplimit's PerIP builds its own store): they decide separately.
// So do a Limiter in shadow mode and one enforcing its policies, unless they
// declare a policy in common: merged, a policy declared by both is charged once,
// and enforced, and those only the shadow one declares never refuse the request
// (withoutObservedRefusals).
func outerDecision(sc *scope, l *Limiter, t *Ticket) *Ticket {
	for prev := sc.latest; prev != nil; prev = prev.outer {
		if prev.disposition == Admitted && !prev.absorbed && !prev.finished && sameStore(prev.l.store, l.store) &&
			(prev.shadow == t.shadow || declareOne(prev.reqs, t.reqs)) {
			return prev
		}
	}
	return nil
}

// declareOne reports whether a and b declare a policy of the same name.
func declareOne(a, b []core.Request) bool {
	for i := range b {
		if indexOfPolicy(a, b[i].Policy.Name()) >= 0 {
			return true
		}
	}
	return false
}

// writeFieldsBeside writes the fields of t, decided in scope sc, beside the
// request's decisions that t did not merge with (see writeFields), which t's
// refusal gives back (refuseSeparate). Under the scope's lock: an outer
// decision's Finish may run now (a TimeoutHandler between the layers), and
// recycles it only once removed.
func (l *Limiter) writeFieldsBeside(t *Ticket, h http.Header, sc *scope) {
	var room [4]*Ticket
	sc.mu.Lock()
	defer sc.mu.Unlock()
	others := sc.separate(room[:0])
	if !t.allowed && !t.shadow {
		refuseSeparate(others)
	}
	l.writeFields(t, h, others)
}

// notify tells t's observers about its decision.
func (l *Limiter) notify(t *Ticket) {
	if l.observer == nil && len(t.extraObservers) == 0 {
		return
	}
	t.event = Event{Request: t.r, Requests: t.reqs, Results: t.results, Allowed: t.allowed, Shadow: t.shadow, FellBack: t.fellBack}
	if l.observer != nil {
		l.observer.OnDecision(&t.event)
	}
	for _, o := range t.extraObservers {
		o.OnDecision(&t.event)
	}
}

// Request is the request to pass on to the handler: the one given to Start, with a
// context that lets a Limiter nested inside merge its decision with this one.
func (t *Ticket) Request() *http.Request {
	if t == nil {
		return nil
	}
	if t.next != nil {
		return t.next
	}
	return t.r
}

// prepare resolves the policy, key and cost of each rule into t.reqs.
func (l *Limiter) prepare(t *Ticket, r *http.Request) error {
	cost := l.cost
	if l.routeCosts != nil {
		if c, ok := l.routeCost(r.Pattern); ok {
			cost = c
		}
	}
	if l.costFunc != nil {
		c, err := l.costFunc(r)
		if err != nil {
			return fmt.Errorf("%w: %w", errCostFunc, err)
		}
		if c < 1 {
			return fmt.Errorf("%w: the cost function returned %d", core.ErrInvalidCost, c)
		}
		cost = c
	}
	dynamic := l.costFunc != nil
	for i := range l.rules {
		ru := &l.rules[i]
		req := &t.reqs[i] // written in place: a Request is large, and copies of it cost write barriers
		if ru.policyFunc == nil {
			req.Policy = ru.policy
		} else {
			dynamic = true
			p, err := ru.policyFunc(r)
			if err != nil {
				return fmt.Errorf("%w %d of the stack: %w", errPolicyFunc, i, err)
			}
			if !p.Valid() {
				return fmt.Errorf("%w: policy function %d of the stack returned the zero Policy", core.ErrInvalidPolicy, i)
			}
			req.Policy = p
		}
		key, fellBack, err := l.keyOf(ru, r, req.Policy.Name())
		if err != nil {
			return err
		}
		t.fellBack = t.fellBack || fellBack
		req.Key = key
		if req.Policy.Algorithm() == core.Concurrency {
			req.Cost, req.Lease = 0, l.leases.next()
		} else {
			req.Cost, req.Lease = cost, 0
		}
	}
	if dynamic {
		if err := core.CheckStack(t.reqs, t.results); err != nil {
			if l.costFunc != nil && errors.Is(err, core.ErrInvalidCost) { // the cost is at least 1: above a capacity
				return fmt.Errorf("%w: %w", ErrCostTooHigh, err)
			}
			return fmt.Errorf("httplimit: %w", err)
		}
	}
	return nil
}

// routeCost is the cost WithRouteCosts sets for the route pattern. A ServeMux
// pattern names a method ("GET /api/report") where the other routers name the
// path alone; a table entry without the method covers the route for every method,
// and one with the method wins over it.
func (l *Limiter) routeCost(pattern string) (int64, bool) {
	if c, ok := l.routeCosts[pattern]; ok {
		return c, true
	}
	if i := strings.IndexAny(pattern, " \t"); i >= 0 { // split as the ServeMux does
		c, ok := l.routeCosts[strings.TrimLeft(pattern[i+1:], " \t")]
		return c, ok
	}
	return 0, false
}

// fail ends t as Failed with err, logs it and tells the observer.
func (l *Limiter) fail(t *Ticket, err error) *Ticket {
	t.disposition, t.err = Failed, err
	l.errorLog.log(t.r, err)
	if l.observer != nil {
		l.observer.OnError(t.r, err)
	}
	return t
}

// Disposition is what the adapter must do with the request.
func (t *Ticket) Disposition() Disposition {
	if t == nil {
		return Skipped
	}
	return t.disposition
}

// Denial describes the refusal of a Denied request (nil otherwise).
func (t *Ticket) Denial() *Denial {
	if t == nil || t.disposition != Denied {
		return nil
	}
	return &t.denial
}

// Err is why a Failed request could not be decided (nil otherwise). It wraps
// ErrStore, ErrUnidentified, a context error or the failing function's error.
func (t *Ticket) Err() error {
	if t == nil {
		return nil
	}
	return t.err
}

// Results holds every policy's result, in stack order (nil before a decision).
func (t *Ticket) Results() []core.Result {
	if t == nil || t.disposition == Failed {
		return nil
	}
	return t.results
}

// Delay is how long an admitted request waits for its leaky-bucket slot.
func (t *Ticket) Delay() time.Duration {
	if t == nil {
		return 0
	}
	return t.delay
}

// Wait makes an admitted request wait for its leaky-bucket slot (Result.Delay;
// the longest of a stack). The wait is bounded by the policy's queue
// (burst×period/limit): a request that would wait longer was refused at once. When
// ctx ends first, Wait gives the request's slot and cost back to the store
// (refunds, when it is a core.Refunder, and releases leases), and what the
// request's other decisions charged on theirs, and returns an error wrapping
// ctx's: the adapter then returns without running the handler.
func (t *Ticket) Wait(ctx context.Context) error {
	if t == nil || t.disposition != Admitted || t.delay <= 0 {
		return nil
	}
	timer := time.NewTimer(t.delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		// The request never reaches its handler: as when a Limiter further in
		// cannot decide it, it spends nothing, of this decision nor of the
		// request's others on any store (t is the scope's latest), and the
		// observers hear an error, not an admission (counted "allowed", a
		// request that left the queue was never served nor charged).
		t.scope.giveBackOuter()
		err := endedEarly(ctx, ctx.Err())
		t.eventDue = false
		t.tellError(err)
		return err
	}
}

// Finish ends the request after the handler: it releases concurrency leases and,
// when the handler completed, settles each rate policy's charge with status and
// the settle function that covers the policy (WithSettle, of the Limiter that
// declared it, or of an outer one that declared it too), refunding the difference.
// completed is false when the handler panicked (the adapter calls Finish from a
// deferred function, so the panic continues after the leases are released); a
// panicking request keeps its whole cost. For Denied and Failed requests Finish
// only recycles the Ticket. Call it exactly once.
func (t *Ticket) Finish(status int, completed bool) {
	if t == nil {
		return
	}
	l := t.l
	if t.scope != nil {
		t.scope.remove(t) // after a merge with t in progress: absorbed is final
	}
	if t.absorbed {
		t.reportGiveBackErrors() // t's leases are the absorbing decision's to give back
		t.reset()
		l.tickets.Put(t)
		return
	}
	// The limiter settles before the observers run: an observer that panics (a bug
	// in metrics code) panics the request, but leaks no concurrency lease.
	if t.disposition == Admitted && !t.finished {
		how := giveBackLeases
		if completed {
			how = giveBackSettled
		}
		l.giveBack(t, how, status)
	}
	t.reportGiveBackErrors()
	if t.eventDue {
		l.notify(t)
	}
	t.reset()
	l.tickets.Put(t)
}

// settlerOf is the Limiter whose settle function settles the charge of t's i-th
// request, or nil.
func (t *Ticket) settlerOf(i int) *Limiter {
	if t.merged {
		return t.mergedSettlers[i]
	}
	if t.l.settle != nil {
		return t.l
	}
	return nil
}

// RecordsStatus reports whether Finish needs the response status: a settle
// function covers one of the decision's policies (WithSettle, set on this
// Limiter or on an outer one whose decision this one merged). An adapter that
// must wrap the response writer to learn the status asks after Start, and wraps
// only then.
func (t *Ticket) RecordsStatus() bool {
	if t == nil || t.disposition != Admitted {
		return false
	}
	for i := range t.reqs {
		if t.settlerOf(i) != nil {
			return true
		}
	}
	return false
}

func (l *Limiter) afterError(r *http.Request, err error) {
	if l.observer != nil {
		l.observer.OnError(r, err)
	}
}

// tellError tells err to t's observers: its Limiter's, and those of the Limiters t
// merged (distinct from it), which observe the same request.
func (t *Ticket) tellError(err error) {
	t.l.afterError(t.r, err)
	for _, o := range t.extraObservers {
		o.OnError(t.r, err)
	}
}

// keepScratch keeps buf, built by appending to t.buf[:0], as t's scratch buffer
// when appending outgrew it (storing an unchanged slice would cost write barriers
// while the collector runs).
func (t *Ticket) keepScratch(buf []byte) {
	if cap(buf) != cap(t.buf) {
		t.buf = buf
	}
}

// reset readies t for reuse, keeping its buffers. The requests and results are
// overwritten by the next Start and are not cleared (which costs write barriers
// on every request); they only keep the last request's keys alive while pooled.
func (t *Ticket) reset() {
	t.r = nil
	if t.disposition == Denied {
		t.denial = Denial{body: t.denial.body[:0]}
	}
	if t.event.Request != nil {
		t.event = Event{}
	}
	t.disposition, t.allowed, t.fellBack, t.finished = Skipped, false, false, false
	t.delay, t.err = 0, nil
	if t.next != nil || t.scope != nil || t.outer != nil {
		t.next, t.scope, t.outer = nil, nil, nil
	}
	t.eventDue, t.absorbed = false, false
	t.giveBackErrors = nil
	if t.merged {
		t.merged = false
		t.reqs, t.results = t.ownReqs, t.ownResults
		clear(t.mergedSettlers)
		t.mergedParts = nil
		clear(t.extraObservers)
		t.extraObservers = t.extraObservers[:0]
	}
}
