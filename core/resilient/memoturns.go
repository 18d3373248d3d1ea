package resilient

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// A key's settlement turn: one decision at a time charges the shared store what
// the key owes it.

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
	e.settling = req.EffectiveCost()
	sh.entries[k] = e
	return true, false, false
}

// endTurn ends the turn takeTurn gave req's decision.
func (m *memo) endTurn(req *core.Request) {
	sh, k := m.lock(req)
	if e, ok := sh.entries[k]; ok && e.turnEnds != nil {
		close(e.turnEnds)
		e.turnEnds, e.settling = nil, 0
		sh.entries[k] = e
	}
	sh.mu.Unlock()
}

// callFailed records that the call of the decision holding req's turn failed: its
// request is not on its way to the shared store, and the slow-call decision that
// follows must not count it twice.
func (m *memo) callFailed(req *core.Request) {
	sh, k := m.lock(req)
	if e, ok := sh.entries[k]; ok && e.turnEnds != nil {
		e.settling = 0
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
