package transition

import (
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// Step applies one request of cost at now (milliseconds since the Unix epoch) to the
// state of one key under policy p. It is a pure function: it reads no clock, keeps
// nothing, and returns the new state with the decision. A refused request returns s
// unchanged, so refusals spend nothing. Every store runs exactly this transition
// (the Redis store as Lua); the conformance suite holds them to it.
//
// For a concurrency policy the new lease gets the given ID. The caller must have
// checked the cost with core.Policy.CheckCost; Step refuses a cost it can never admit.
func Step(s State, p *core.Policy, now, cost int64, lease uint64) (State, core.Result) {
	var r core.Result
	step(&s, p, now, cost, lease, true, &r)
	return s, r
}

// Peek is what Step would report without spending anything: Allowed is always false,
// RetryAfter is zero when Step would admit the request, and Remaining and ResetAfter
// describe the state as it is. A stack that is refused reports its admitting
// policies this way, and the returned state equals s (apart from expired
// concurrency leases it drops).
func Peek(s State, p *core.Policy, now, cost int64) (State, core.Result) {
	var r core.Result
	step(&s, p, now, cost, 0, false, &r)
	return s, r
}

// StepRequest is Step for a Request: it applies the request's effective cost and lease.
func StepRequest(s State, r *core.Request, now int64) (State, core.Result) {
	return Step(s, &r.Policy, now, r.EffectiveCost(), r.Lease)
}

// StepInPlace is StepRequest for stores that own the state: it updates *s in place
// when the request is admitted and leaves it untouched when refused, without
// copying the state. New sliding-log entries and leases are appended past the end of
// s's slices, so a copy of *s taken before the call still reads its old value.
// The decision is written to *res, so that a store can decide straight into the
// result it returns.
func StepInPlace(s *State, r *core.Request, now int64, res *core.Result) {
	step(s, &r.Policy, now, r.EffectiveCost(), r.Lease, true, res)
}

// step decides on *s, writing it only when charge is set and the request is admitted.
// It writes the policy's name and quota into *r; the algorithms fill in the rest.
func step(s *State, policy *core.Policy, now, cost int64, lease uint64, charge bool, r *core.Result) {
	if !policy.Valid() {
		*r = core.Result{}
		return
	}
	p, name, algorithm := paramsOf(policy), policy.Name(), policy.Algorithm()
	*r = core.Result{Policy: name, Limit: p.capacity, DecidedAt: time.UnixMilli(now)}
	if cost < 1 || cost > p.capacity {
		return
	}
	switch algorithm {
	case core.TokenBucket:
		stepTokenBucket(s, &p, now, cost, charge, r)
	case core.GCRA:
		stepGCRA(s, &p, now, cost, charge, r)
	case core.FixedWindow:
		stepFixedWindow(s, &p, now, cost, charge, r)
	case core.SlidingLog:
		stepSlidingLog(s, &p, now, cost, charge, r)
	case core.SlidingWindow:
		stepSlidingWindow(s, &p, now, cost, charge, r)
	case core.LeakyBucket:
		stepLeakyBucket(s, &p, now, cost, charge, r)
	case core.Concurrency:
		acquireLease(s, &p, now, cost, lease, charge, r)
	}
}
