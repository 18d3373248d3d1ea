package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/internal/ownentry"
)

// fallback decides req by its policy's failure mode, because the shared store could
// not (cause) at now. enter says that a breaker is open: the policy enters its
// failure mode (a transition, logged and reported), unless it is in it already.
func (s *Store) fallback(ctx context.Context, req core.Request, cause error, now int64, enter bool) (core.Result, error) {
	mode := s.cfg.modeOf(req.Policy.Name())
	if enter {
		s.enterFallback(req.Policy.Name(), mode, cause, now)
	}
	switch mode {
	case Open:
		res := s.unenforced(&req, true, now)
		s.grantedLease(&req, &res, false, now)
		s.decided(&req, OutcomeUnenforced, ViaOpen)
		return res, nil
	case Closed:
		s.decided(&req, OutcomeUnavailable, ViaClosed)
		return core.Result{}, &UnavailableError{Policies: []string{req.Policy.Name()}, RetryAfter: s.retryAfter(&req, now), Err: cause}
	}
	degraded, err := s.degrade.policy(req.Policy)
	if err != nil {
		return core.Result{}, err
	}
	lreq, err := s.seeded(ctx, &req, &degraded, now)
	if errors.Is(err, errNoRoom) {
		return s.withoutRoom(&req, now), nil
	}
	if err != nil {
		return core.Result{}, fmt.Errorf("resilient: policy %q: local store: %w", req.Policy.Name(), err)
	}
	res, err := s.local.Decide(ctx, lreq)
	if err != nil {
		return core.Result{}, fmt.Errorf("resilient: policy %q: local store: %w", req.Policy.Name(), err)
	}
	if req.Policy.Algorithm() != core.Concurrency {
		s.memo.localDecided(&req, &res, chargedBy(&lreq, res.Allowed), now)
	}
	s.decidedInMemory(&req, &res, now)
	s.grantedLease(&req, &res, true, now)
	s.decided(&req, outcomeOf(&res), ViaLocal)
	return res, nil
}

// seeded is req on the degraded policy q for the local store, on the key of its local
// allowance, which starts from the key's last shared answer (see memo.localKey): a new
// allowance is first spent down to it. Concurrency requests keep their key (their
// leases are released there), which holds the leases the latest answer saw in flight.
// errNoRoom says that the local store had no room to seed the key, or, for a
// concurrency key, that the lease book has no room for another local lease
// (leaseBook.localFull): a lease it did not remember would never be released
// locally, nor handed over when the shared store is back.
func (s *Store) seeded(ctx context.Context, req *core.Request, q *core.Policy, now int64) (core.Request, error) {
	lreq := localRequest(*req, *q)
	if req.Policy.Algorithm() == core.Concurrency {
		if s.leases.localFull(now) {
			return lreq, errNoRoom
		}
		err := s.memo.seedLeases(req, q, now, func(cost int64, lease uint64) error {
			return s.spendOwn(ctx, core.Request{Policy: *q, Key: req.Key, Cost: cost, Lease: lease})
		}, func(lease uint64) error {
			return s.local.Release(ctx, core.Request{Policy: *q, Key: req.Key}, lease)
		})
		return lreq, err
	}
	key, err := s.memo.localKey(req, q, now, func(key string, cost int64) error {
		return s.spendOwn(ctx, core.Request{Policy: *q, Key: key, Cost: cost})
	})
	if err != nil {
		return core.Request{}, err
	}
	lreq.Key = key
	return lreq, nil
}

// errNoRoom is spendOwn's answer when the local store has no room for the key's
// charge.
var errNoRoom = errors.New("resilient: no room for the key in the local store")

// spendOwn charges req, a seed, to its key's own state in the local store, or
// returns errNoRoom when that state cannot take it: the local store has no room for
// the key (a memory store full of keys that still restrict their clients), or the
// key's own state refuses the charge (a concurrency key's seed beside local leases
// the shared store would not take over). A seed must stay with its key, and be held
// before it counts: charged to the policy's overflow entry, it was lost once a slot
// freed, and the key's own entry started full; recorded though refused, a second
// outage admitted 4 requests in flight of 2 (TestSeedThatDoesNotFitIsNotHeld).
func (s *Store) spendOwn(ctx context.Context, req core.Request) error {
	res, own, err := ownentry.Decide(ctx, s.local, req)
	if err == nil && (!own || !res.Allowed) {
		return errNoRoom
	}
	return err
}

// withoutRoom decides req at now when the local store had no room to seed its key's
// allowance: from the key's last shared answer, as a slow call is (this replica's
// share of it, without refill), or, for a concurrency limit or a key whose answer is
// not known, refused with a short Retry-After. The seed waits for room: the key's
// next decision seeds its allowance again, less what these decisions spent, and the
// return charges the shared store for them, as for slow calls. Seeded on the policy's
// overflow entry instead, the key's own entry started full once a slot had freed: 5
// admitted where the allowance had earned 1 (TestSeedThatFindsTheLocalStoreFullIsKept).
func (s *Store) withoutRoom(req *core.Request, now int64) core.Result {
	if res, ok := s.fromLastAnswer(req, now); ok {
		return res
	}
	res := s.unknownRefusal(req)
	s.decided(req, OutcomeDenied, ViaLocal)
	return res
}

// chargedBy is what the local request lreq charged: its cost when admitted.
func chargedBy(lreq *core.Request, admitted bool) int64 {
	if !admitted {
		return 0
	}
	return lreq.EffectiveCost()
}

// retryAfter is when a request refused as unavailable may try again: until the next
// probe of the breaker that stops it.
func (s *Store) retryAfter(req *core.Request, now int64) time.Duration {
	if !s.breaker.closed() {
		return s.breaker.retryAfter(now)
	}
	if b := s.slots.get(s.slots.of(req)); b != nil {
		return b.retryAfter(now)
	}
	return s.breaker.retryAfter(now)
}

// fallbackStack decides a stack by its policies' failure modes (see DecideStack);
// enter as for fallback.
func (s *Store) fallbackStack(ctx context.Context, reqs []core.Request, results []core.Result, cause error, now int64, enter bool) (bool, error) {
	var closed []string
	var local []int
	for i := range reqs {
		mode := s.cfg.modeOf(reqs[i].Policy.Name())
		if enter {
			s.enterFallback(reqs[i].Policy.Name(), mode, cause, now)
		}
		switch mode {
		case Closed:
			closed = append(closed, reqs[i].Policy.Name())
		case Local:
			local = append(local, i)
		}
	}
	if len(closed) > 0 {
		for i := range reqs {
			results[i] = core.Result{Policy: reqs[i].Policy.Name(), Limit: reqs[i].Policy.Capacity()}
			s.decided(&reqs[i], OutcomeUnavailable, ViaClosed)
		}
		return false, &UnavailableError{Policies: closed, RetryAfter: s.retryAfter(&reqs[0], now), Err: cause}
	}
	allowed := true
	if len(local) > 0 {
		localReqs := make([]core.Request, len(local))
		localResults := make([]core.Result, len(local))
		for j, i := range local {
			degraded, err := s.degrade.policy(reqs[i].Policy)
			if err != nil {
				return false, err
			}
			if localReqs[j], err = s.seeded(ctx, &reqs[i], &degraded, now); errors.Is(err, errNoRoom) {
				return s.localStackFromLastAnswers(reqs, results, local, now), nil // see withoutRoom
			} else if err != nil {
				return false, fmt.Errorf("resilient: %s: local store: %w", policyNames(reqs), err)
			}
		}
		var err error
		if allowed, err = s.local.DecideStack(ctx, localReqs, localResults); err != nil {
			return false, fmt.Errorf("resilient: %s: local store: %w", policyNames(reqs), err)
		}
		for j, i := range local {
			results[i] = localResults[j]
			s.decidedInMemory(&reqs[i], &results[i], now)
			if reqs[i].Policy.Algorithm() != core.Concurrency {
				s.memo.localDecided(&reqs[i], &results[i], chargedBy(&localReqs[j], allowed), now)
			}
		}
	}
	s.finishStack(reqs, results, allowed, ViaLocal, now)
	return allowed, nil
}

// finishStack completes a stack that its Local members decided (allowed) without
// the shared store, through localVia: the other members, Open, are unenforced, and
// every member's decision is recorded, with the leases granted.
func (s *Store) finishStack(reqs []core.Request, results []core.Result, allowed bool, localVia Via, now int64) {
	for i := range reqs {
		local := s.cfg.modeOf(reqs[i].Policy.Name()) == Local
		if !local {
			results[i] = s.unenforced(&reqs[i], allowed, now)
		}
		if allowed {
			s.grantedLease(&reqs[i], &results[i], local, now)
		}
		switch {
		case local:
			s.decided(&reqs[i], stackOutcome(&results[i], allowed), localVia)
		case allowed:
			s.decided(&reqs[i], OutcomeUnenforced, ViaOpen)
		default:
			s.decided(&reqs[i], OutcomeUncharged, ViaOpen)
		}
	}
}

// unenforced is the result of an Open policy at now: admitted uncounted when the rest
// of its decision admits, else not admitted and unspent. Nothing is counted, so it
// reports what the key's last shared answer leaves, and when that answer said the key
// recovers (the whole capacity for a key never answered): a fresh bucket's numbers
// told a client that Redis had just refused that its quota was back.
func (s *Store) unenforced(req *core.Request, allowed bool, now int64) core.Result {
	remaining, resetAfter := s.memo.remaining(req, now)
	res := core.Result{
		Policy:     req.Policy.Name(),
		Allowed:    allowed,
		Limit:      req.Policy.Capacity(),
		Remaining:  remaining,
		ResetAfter: resetAfter,
		Unenforced: true,
	}
	if allowed && req.Policy.Algorithm() == core.Concurrency {
		res.Lease = req.Lease
	}
	return res
}

// grantedLease remembers the lease of an admitted concurrency request that a failure
// mode granted, so that Release does not look for it in the shared store.
func (s *Store) grantedLease(req *core.Request, res *core.Result, local bool, now int64) {
	if req.Policy.Algorithm() != core.Concurrency || !res.Allowed {
		return
	}
	s.leases.add(leaseKey{req.Policy.ID(), req.Key, res.Lease}, local, req.EffectiveCost(), now, req.Policy.Period())
}

// decidedInMemory marks res, decided for req at now in process memory (by the local
// store, or from the key's last shared answer), with the instant a refund of it
// names. Its cost reaches the shared store later, as the key's debt (memo.debt), at
// an instant not known yet. A window's DecidedAt is cleared: a refund at the local
// instant could come out of a shared window that never counted the cost while the
// debt lands in the next one, which lets that window admit more than the policy
// allows; without an instant a refund gives windows nothing back (less, never
// more). A bucket's is the Store's instant, to the millisecond: a refund gives back
// only what the bucket has not refilled since (Refund), and the debt lands no
// earlier, so the shared bucket has refilled no more than that since it counted it.
func (s *Store) decidedInMemory(req *core.Request, res *core.Result, now int64) {
	switch req.Policy.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		res.DecidedAt = s.wallMillis(now)
	default:
		res.DecidedAt = time.Time{}
	}
}
