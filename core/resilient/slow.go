package resilient

import (
	"context"

	"github.com/go-ratelimit/ratelimit/core"
)

// Decisions whose shared-store call failed while the breakers stayed closed (slow
// calls): from each key's last answer, for Local policies.

// continuesLastAnswer reports whether req's policy is decided from its key's last
// shared answer while the store is slow: a Local policy, other than a concurrency
// limit, whose leases are not continued.
func (s *Store) continuesLastAnswer(req *core.Request) bool {
	return s.cfg.modeOf(req.Policy.Name()) == Local && req.Policy.Algorithm() != core.Concurrency
}

// fromLastAnswer decides req at now from its key's last shared answer, as a slow
// call is (memo.decideSlow), and records the decision; false when no answer is known.
func (s *Store) fromLastAnswer(req *core.Request, now int64) (core.Result, bool) {
	capQ, ok := s.localCapacity(req)
	if !ok {
		return core.Result{}, false
	}
	res, ok := s.memo.decideSlow(req, capQ, now)
	if ok {
		s.decidedInMemory(req, &res, now)
		s.decided(req, outcomeOf(&res), ViaLastShared)
	}
	return res, ok
}

// localCapacity is the capacity of req's policy in Local mode: this replica's share
// (WithReplicas, WithDegrade), of which slow calls spend the same share of a last
// answer. ok is false when WithDegrade made the policy invalid; the key's answer is
// then not used.
func (s *Store) localCapacity(req *core.Request) (int64, bool) {
	q, err := s.degrade.policy(req.Policy)
	return q.Capacity(), err == nil
}

// localCapacities is localCapacity for each member of a stack.
func (s *Store) localCapacities(reqs []core.Request) ([]int64, bool) {
	capQs := make([]int64, len(reqs))
	for i := range reqs {
		var ok bool
		if capQs[i], ok = s.localCapacity(&reqs[i]); !ok {
			return nil, false
		}
	}
	return capQs, true
}

// stackFromLastAnswers is fromLastAnswer for a stack of Local policies, all-or-nothing
// (memo.decideSlowStack): ok is false when a member's answer is not known.
func (s *Store) stackFromLastAnswers(reqs []core.Request, results []core.Result, now int64) (allowed, ok bool) {
	capQs, ok := s.localCapacities(reqs)
	if !ok {
		return false, false
	}
	if allowed, ok = s.memo.decideSlowStack(reqs, capQs, results, now); ok {
		for i := range reqs {
			s.decidedInMemory(&reqs[i], &results[i], now)
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), ViaLastShared)
		}
	}
	return allowed, ok
}

// unknownSlow decides req, whose call failed while the breakers stayed closed,
// when no shared answer is known for its key: an Open policy admits it unenforced, a
// Closed one refuses it as unavailable, and a Local one refuses it with a Retry-After
// of the deadline's ceiling. Local mode's share of a key the store never answered for
// is for outages; while the store is only slow, nothing is known, and many instances
// each granting a share would over-grant together.
func (s *Store) unknownSlow(ctx context.Context, req core.Request, cause error, now int64) (core.Result, error) {
	if s.cfg.modeOf(req.Policy.Name()) != Local {
		return s.fallback(ctx, req, cause, now, false)
	}
	res := s.unknownRefusal(&req)
	s.decided(&req, OutcomeDenied, ViaLastShared)
	return res, nil
}

// unknownRefusal is the refusal of req by a slow call when no shared answer is known:
// nothing charged, a Retry-After of the deadline's ceiling.
func (s *Store) unknownRefusal(req *core.Request) core.Result {
	return core.Result{Policy: req.Policy.Name(), Limit: req.Policy.Capacity(), RetryAfter: s.deadline.ceiling}
}

// busyFromLastAnswers decides a stack one of whose members' settlement another
// decision is charging (takeTurns) from its members' last answers, as a slow call
// is, when they are all Local and known; ok is false otherwise, and the stack then
// waits for the settlement (waitForTurns). Such a stack never goes to the shared
// store while the charge is on its way: the store does not hold it yet and would
// grant its units again. Sent to the store, logins from addresses Redis had not
// answered for got an account 6–7 attempts of 5 when a stopped Cluster master
// resumed (TestStackThatWaitsForTheSettlement, and examples/server's
// TestClusterLoginStackOnAStuckMaster).
func (s *Store) busyFromLastAnswers(reqs []core.Request, results []core.Result, now int64) (allowed, ok bool) {
	if !s.allLocal(reqs) {
		return false, false
	}
	return s.stackFromLastAnswers(reqs, results, now)
}

// slowMixedStack decides a stack that holds Open or Closed policies beside Local
// ones, whose call failed while the breakers stayed closed, member by member as a
// single slow call is: a Closed member fails the stack closed, the Local members
// decide from their last shared answers (all-or-nothing, without refill; the stack
// is refused when one is not known), and the Open members are unenforced. Deciding
// the Local members from a fresh local allowance instead let a second instance
// admit 5 more attempts at an account its first had spent.
func (s *Store) slowMixedStack(ctx context.Context, reqs []core.Request, results []core.Result, cause error, now int64) (bool, error) {
	var local []int
	for i := range reqs {
		switch s.cfg.modeOf(reqs[i].Policy.Name()) {
		case Closed:
			return s.fallbackStack(ctx, reqs, results, cause, now, false)
		case Local:
			local = append(local, i)
		}
	}
	return s.localStackFromLastAnswers(reqs, results, local, now), nil
}

// localStackFromLastAnswers decides at now the stack reqs, whose members at the
// indexes local are Local and the others Open: the Local members from their last
// shared answers (all-or-nothing, without refill; the stack is refused, as
// unknownSlowStack refuses it, when one is not known), the Open ones unenforced.
func (s *Store) localStackFromLastAnswers(reqs []core.Request, results []core.Result, local []int, now int64) bool {
	localReqs := make([]core.Request, len(local))
	localResults := make([]core.Result, len(local))
	for j, i := range local {
		localReqs[j] = reqs[i]
	}
	var allowed bool
	capQs, known := s.localCapacities(localReqs)
	if known {
		allowed, known = s.memo.decideSlowStack(localReqs, capQs, localResults, now)
	}
	if !known {
		return s.unknownSlowStack(reqs, results)
	}
	for j, i := range local {
		results[i] = localResults[j]
		s.decidedInMemory(&reqs[i], &results[i], now)
	}
	s.finishStack(reqs, results, allowed, ViaLastShared, now)
	return allowed
}

// unknownSlowStack refuses a stack of Local policies whose call failed while the
// breakers stayed closed and whose members' answers are not all known, as
// unknownSlow refuses a single request: without an answer, each instance granting
// its share in memory would over-grant together (a login admitted a sixth attempt
// of five a minute, its first one having been slow). Nothing is charged; each
// member reports a Retry-After of the deadline's ceiling.
func (s *Store) unknownSlowStack(reqs []core.Request, results []core.Result) bool {
	for i := range reqs {
		results[i] = s.unknownRefusal(&reqs[i])
		s.decided(&reqs[i], OutcomeDenied, ViaLastShared)
	}
	return false
}
