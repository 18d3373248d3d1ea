package resilient

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// settle settles, after the shared store admitted req with res, what the key's local
// allowance admitted during an outage and the shared store never saw (memo.debt), so
// that returning to the shared store grants no second bucket: it refuses req when the
// allowance cannot pay for it, and charges the shared store the difference. A charge
// the shared store refuses (concurrent decisions spent some of it) is retried at what
// the refusal says is left. When what slow calls admitted does not fit in what the
// shared store has left, the shared store admitted req with a unit those calls had
// already granted: req is refused, and its charge stands for theirs.
//
// The settlement ends once the charge of a request that stays admitted lands (or it
// owes nothing); a refusal leaves it open, and a charge that fails is retried by the
// key's next admission. Ended by a refusal, the settlement forgot the debt of the
// admissions racing it: 19 admitted in a second under 10/min
// (TestRefusalAfterRecoveryKeepsLocalDebt), and 6 of 5 when the request the
// allowance could not pay for ended it (TestShortDecisionDoesNotEndTheSettlement).
func (s *Store) settle(ctx context.Context, req *core.Request, res *core.Result, now int64) {
	if s.settleKey(ctx, req, res, now) && res.Allowed {
		res.Allowed = false
		res.RetryAfter = emission(req)
	}
}

// settleKey charges the shared store what req's key owes after its answer res at
// now (debtOf, charge), and ends the key's settlement when res admitted req and the
// key could pay for it. short reports that it could not: its local allowance has
// nothing left for req, or what slow calls admitted does not fit in what the shared
// store has left (chargeUnpaid); the caller refuses req. A policy not in Local mode
// owes nothing.
func (s *Store) settleKey(ctx context.Context, req *core.Request, res *core.Result, now int64) (short bool) {
	owed, unsettled, short, local := s.debtOf(req, res, now)
	if !local {
		return false
	}
	o := s.charge(ctx, req, res, owed, unsettled)
	short = short || o == chargeUnpaid
	if res.Allowed && !short && o != chargeFailed {
		s.memo.settled(req, now)
	}
	return short
}

// debtOf is what req's key owes the shared store after its answer res at now: what
// its local allowance admitted during an outage (memo.debt, short when the allowance
// cannot pay for req) plus what slow calls admitted from the last answer (unsettled,
// taken from the memo: the caller charges it). local is false for a policy that is
// not in Local mode, which owes nothing.
func (s *Store) debtOf(req *core.Request, res *core.Result, now int64) (owed, unsettled int64, short, local bool) {
	if s.cfg.modeOf(req.Policy.Name()) != Local {
		return 0, 0, false, false
	}
	q, err := s.degrade.policy(req.Policy)
	if err != nil {
		return 0, 0, false, true
	}
	owed, short = s.memo.debt(req, res, &q, now)
	// Slow calls decided from the last answer admitted requests the shared store
	// never saw; without this charge each new answer would grant its Remaining again
	// (a saturated client admitted 46 against a bound of 44 with one instance).
	unsettled = s.memo.takeUnsettled(req)
	return owed + unsettled, unsettled, short, true
}

// emission is one emission interval of req's cost under its policy, at least 1ms:
// the Retry-After of a refusal decided without the store's answer (a hint; the store
// knows better).
func emission(req *core.Request) time.Duration {
	return max(time.Millisecond, time.Duration(int64(req.Policy.Period())/max(1, req.Policy.Limit())*req.EffectiveCost()))
}

// chargeOutcome is how a settling charge (Store.charge) ended.
type chargeOutcome uint8

const (
	chargeLanded chargeOutcome = iota // the shared store took what it could (or nothing was owed)
	chargeFailed                      // the call failed: the key's next admission charges again
	chargeUnpaid                      // the store had less left than slow calls admitted
)

// charge charges the shared store owed for req's key, on top of its answer res.
// unsettled is the part of owed that slow calls admitted: when the charge fails
// (chargeFailed), the key's next admission charges it. chargeUnpaid reports that
// the shared store took less than unsettled because it had less left: then it
// granted units those calls had granted already, and res, when it admitted, is
// refused by the caller, its charge standing for theirs; what that charge does not
// cover, all of it after a refusal, which holds no charge, stays for the key's next
// admission to charge. The rest of owed, the local allowance's debt, only brings
// the shared store down to what that allowance has left, and may fall short without
// granting anything twice. The caller ends the settlement (memo.settled) when req
// stays admitted and the charge did not fail.
func (s *Store) charge(ctx context.Context, req *core.Request, res *core.Result, owed, unsettled int64) chargeOutcome {
	owed = min(owed, req.Policy.Capacity())
	var landed int64
	for attempt := 0; owed > 0 && attempt < 3; attempt++ {
		charge := core.Request{Policy: req.Policy, Key: req.Key, Cost: owed}
		var answer core.Result
		err, _ := s.guard.run(ctx, s.deadline.get(), func(ctx context.Context) error {
			var err error
			answer, err = s.shared.Decide(ctx, charge)
			return err
		})
		if err != nil {
			s.memo.addUnsettled(req, unsettled) // the key's next admission charges it
			return chargeFailed
		}
		if answer.Allowed {
			res.Remaining = max(0, res.Remaining-owed)
			landed = owed
			break
		}
		owed = min(owed, answer.Remaining) // charge what is left
		res.Remaining = 0
	}
	if landed >= unsettled {
		return chargeLanded
	}
	owing := unsettled - landed
	if res.Allowed {
		owing -= req.EffectiveCost()
	}
	if owing > 0 {
		s.memo.addUnsettled(req, owing)
	}
	return chargeUnpaid
}
