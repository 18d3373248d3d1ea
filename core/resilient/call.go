package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Shared-store calls under the deadline, and what their outcomes tell the breakers.

// membersFailed counts a failed stack call, already counted in the slot of its
// first member, in the slots of its other members: the master that failed may hold
// any of them. The breaker of a slot whose master is healthy is cleared by its
// confirming probe.
func (s *Store) membersFailed(first int, members []core.Request, now int64) {
	for i := range members {
		slot := s.slots.of(&members[i])
		if slot == first {
			continue
		}
		if b := s.slots.record(slot, failed, now); b != nil {
			s.confirm(b, slot)
		}
	}
}

// call runs fn against the shared store under the deadline, for a decision of slot,
// and reports how it ended. start is the real time the decision began (from instant),
// which the latency is measured from. It reports the call to the observers (unless the
// caller's ctx ended it) and to the breakers; a failure also to those of the slots of
// members, a stack's other requests (membersFailed).
func (s *Store) call(ctx context.Context, slot int, start time.Time, fn func(context.Context) error, members ...core.Request) (outcome, error) {
	return s.callWithin(ctx, slot, start, s.deadline.get(), fn, members...)
}

// callWithin is call with the deadline d. fn must write only to memory that the
// caller reads after it succeeded (see guard.run).
func (s *Store) callWithin(ctx context.Context, slot int, start time.Time, d time.Duration, fn func(context.Context) error, members ...core.Request) (outcome, error) {
	err, timedOut := s.guard.run(ctx, d, fn)
	return s.finish(ctx, slot, start, d, err, timedOut, members...)
}

// finish classifies how a call to the shared store under deadline d ended (err, and
// timedOut when its deadline or ctx ended it first) and reports it, for call and
// decideDirect.
func (s *Store) finish(ctx context.Context, slot int, start time.Time, d time.Duration, err error, timedOut bool, members ...core.Request) (outcome, error) {
	end, now := s.instant()
	latency := end.Sub(start)
	if errors.Is(err, ErrClosed) && !timedOut {
		return canceled, err
	}
	o, kind := classify(ctx, err, timedOut)
	if o == failed && kind == KindTimeout {
		err = fmt.Errorf("%w (%v): %w", ErrTimeout, d, err)
	}
	if o == succeeded {
		s.deadline.observe(latency)
	}
	counted := o
	if o == failed && kind == KindTimeout && late(latency, d) {
		counted = canceled // the client was late, not the store: load, not failure
	}
	if s.breaker.record(counted, now) {
		s.confirm(s.breaker, -1)
	}
	if b := s.slots.record(slot, counted, now); b != nil {
		s.confirm(b, slot)
	}
	if counted == failed && s.slots != nil {
		s.membersFailed(slot, members, now)
	}
	if o != canceled {
		s.storeCall(latency, kind, err)
	}
	if (o == succeeded || o == broken) && s.falls.active.Load() > 0 && !s.anyOpen() {
		s.recovered(now)
	}
	return o, err
}

// late reports whether a call that timed out under deadline d after latency was
// noticed late: its goroutine ran well after the deadline fired, because the client's
// CPU is saturated. Such a timeout says nothing about the store (its answer may have
// been waiting in the socket), so it does not count toward the breakers; the call is
// still decided as a slow one.
func late(latency, d time.Duration) bool {
	return latency-d > max(2*time.Millisecond, d/20)
}
