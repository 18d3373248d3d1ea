package resilient

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// stackTurns marks the members of a stack that hold their key's settlement turn
// (memo.takeTurn), one bit each: members past the 64th take no turn.
type stackTurns uint64

// takeTurn is memo.takeTurn for req at now when its policy continues its last
// answer while the store is slow (the only policies whose slow calls owe the store).
func (s *Store) takeTurn(req *core.Request, now int64) (settler, busy, wait bool) {
	if !s.continuesLastAnswer(req) {
		return false, false, false
	}
	return s.memo.takeTurn(req, now)
}

// takeTurns takes the settlement turn of each Local rate member of a stack at now,
// and reports busy when another decision holds a member's turn, and wait when it
// must wait for it (see memo.takeTurn), as Decide does for a single request. The
// caller gives the turns back with endTurns.
func (s *Store) takeTurns(reqs []core.Request, now int64) (turns stackTurns, busy, wait bool) {
	for i := range min(len(reqs), 64) {
		settler, b, w := s.takeTurn(&reqs[i], now)
		if settler {
			turns |= 1 << i
		}
		busy, wait = busy || b, wait || w
	}
	return turns, busy, wait
}

// endTurns gives back the turns takeTurns took.
func (s *Store) endTurns(reqs []core.Request, turns stackTurns) {
	turns.each(reqs, s.memo.endTurn)
}

// callFailed records that the call of the stack holding turns failed
// (memo.callFailed).
func (s *Store) callFailed(reqs []core.Request, turns stackTurns) {
	turns.each(reqs, s.memo.callFailed)
}

// each calls fn for each member of reqs that holds its turn.
func (turns stackTurns) each(reqs []core.Request, fn func(*core.Request)) {
	for i := range min(len(reqs), 64) {
		if turns&(1<<i) != 0 {
			fn(&reqs[i])
		}
	}
}

// waitForTurns waits, at most a deadline, until no other decision holds the
// settlement turn of a member of reqs, and takes the members' turns (takeTurns) at
// start and now, the instant the wait ended (see instant). It reports busy, holding
// no turn, when the wait ends first or another decision took a turn again. A
// decision that waits rather than being refused reaches the store: on a Cluster
// whose master holding the stack's addresses was stuck, logins from an address Redis
// had not answered for were refused, without calling the store, for as long as the
// outage lasted, so that the slot of that address never failed and never went to
// Local mode.
func (s *Store) waitForTurns(ctx context.Context, reqs []core.Request) (turns stackTurns, start time.Time, now int64, busy bool) {
	if !s.memo.waitTurns(ctx, reqs, s.deadline.get()) {
		return 0, start, now, true
	}
	start, now = s.instant()
	if turns, busy, _ = s.takeTurns(reqs, now); busy {
		s.endTurns(reqs, turns)
		return 0, start, now, true
	}
	return turns, start, now, false
}
