package resilient

import (
	"context"

	"github.com/go-ratelimit/ratelimit/core"
)

// handOver gives the shared store, before it decides req, the concurrency leases
// that Local mode granted on req's key and whose requests still run, after
// releasing there the key's leases whose requests ended while their release
// failed. The shared store never saw the local leases: without this it would
// admit its whole limit again on top of them (4 in flight against a limit of 2).
// Each is acquired there under its own ID, so that its release goes there, and
// released from the local store. A lease the shared store refuses (the key is
// full) or that cannot be handed over now stays local, and is offered again at the
// key's next decision. A request that ends during its lease's hand-over releases
// it locally; the hand-over then releases what it took. A lease the shared store
// may hold already, because the call that carried its acquire, or an earlier
// hand-over's, failed after it may have landed (leaseEntry.shared), is acquired
// there all the same: an acquire under the ID of a lease the store holds is
// admitted and holds it once (core.Request.Lease). Releasing that phantom first
// was one call more, and a release that landed late, after the acquire, freed the
// slot of a request still running. A lease whose hand-over's acquire may have
// landed is marked so.
//
// The hand-over's calls, releases included, count as the key's calls (in slot) for
// the breakers, and reach the observers, as the decision's own call does. A lease's
// hand-over that does not succeed ends the hand-over and returns its outcome and
// error, and so does a release of an ended lease that fails (the lease is released
// later): the shared store does not hold the key's local leases still in flight,
// and the caller must not decide the key there as if it held nothing, which
// admitted a lease beside two that failed to go over (3 in flight of 2,
// TestFailedHandOverKeepsTheLocalLeasesCounted). The caller decides as for a
// failed call of its own, locally, where those leases are held. The outcome is
// succeeded when every call was (a lease the full key refused included).
func (s *Store) handOver(ctx context.Context, req *core.Request, slot int, now int64) (outcome, error) {
	if req.Policy.Algorithm() != core.Concurrency {
		return succeeded, nil
	}
	// First the shared store's own leases whose requests ended while their release
	// failed: it still holds them. A release that fails again ends the hand-over: on
	// a store that hangs, each call after it would wait out the deadline too.
	if ended := s.leases.takeEnded(req.Policy.ID(), req.Key, now); len(ended) > 0 {
		if released, o, err := s.releaseEnded(ctx, &endedLeases{policy: req.Policy, key: req.Key, leases: ended}, nil); !released {
			return o, err
		}
	}
	moving := s.leases.startMoving(req.Policy.ID(), req.Key, now)
	for i, m := range moving {
		k := leaseKey{req.Policy.ID(), req.Key, m.lease}
		lease := core.Request{Policy: req.Policy, Key: req.Key, Cost: m.cost, Lease: m.lease}
		var res core.Result
		start, _ := s.instant()
		o, err := s.call(ctx, slot, start, func(ctx context.Context) error {
			var err error
			res, err = s.shared.Decide(ctx, lease)
			return err
		})
		if o == succeeded {
			// The key's latest answer, which counts the lease: should the key's
			// decision fail now, Local mode seeds from it (seedLeases).
			s.memo.remember(&lease, &res, now)
		}
		taken := o == succeeded && res.Allowed
		landed := mayHaveLanded(o, err) // a new phantom, released at the next hand-over
		running := s.leases.moved(k, taken, landed)
		switch {
		case taken && !running: // the request ended meanwhile, and released it locally
			start, _ := s.instant()
			if o, _ := s.call(ctx, slot, start, func(ctx context.Context) error { return s.shared.Release(ctx, lease, m.lease) }); o != succeeded {
				s.endedAt(&lease, m.lease, now) // released when the store answers again
			}
		case taken:
			if q, err := s.degrade.policy(req.Policy); err == nil {
				_ = s.local.Release(ctx, localRequest(lease, q), m.lease)
			}
		default: // the key is full or the store failed: the rest stay local too
			if landed && !running { // the request ended meanwhile: its phantom is left
				s.endedAt(&lease, m.lease, now)
			}
			s.stayLocal(req, moving[i+1:])
			return o, err
		}
	}
	return succeeded, nil
}

// stayLocal ends the hand-over of the leases rest of req's key, which was not
// tried: they stay local, as they were.
func (s *Store) stayLocal(req *core.Request, rest []movingLease) {
	for _, m := range rest {
		s.leases.moved(leaseKey{req.Policy.ID(), req.Key, m.lease}, false, false)
	}
}
