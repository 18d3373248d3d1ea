package resilient

import (
	"context"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// The prober's passes over the shared leases whose requests ended while their
// release failed (leaseBook.endedAt).

// maxReleasesPerPass bounds the leases one pass takes out of the book. While the
// pass holds them, their keys' decisions do not release them (nor twice); the pass
// gives back those it did not release. At a loopback round trip of 0.1–0.2 ms, 256
// releases fit in a pass's budget; at 0.5 ms about 100 do, and the lease book's
// bound (maxFallbackLeases) takes about 1,000 passes, some 50 s.
const maxReleasesPerPass = 256

// releasePassBudget bounds a pass in the Store's time: the prober goes back to its
// tick between passes, and a slow store whose releases each take most of the
// deadline ends the pass after a few. Released in one go, the book's leases held the
// prober for as long as they took, and a breaker that opened meanwhile waited that
// long for its probe.
const releasePassBudget = maxProbeTick

// releasePass is one pass of the prober, which makes them while every breaker is
// closed, once per tick, from the tick that closes the last one: it releases on the
// shared store the leases whose requests ended while their release failed, so that
// the keys no decision reaches (here or on another replica) have their slots back
// too. A pass makes at most maxReleasesPerPass releases, within releasePassBudget,
// and ends at once when a breaker opens: its probe comes first. Each release is a
// call of its key under the deadline (Store.call), counted by the breakers and seen
// by the observers. The first release that does not succeed ends the pass, and the
// next one waits a cooldown: a store that fails again gets one call a cooldown, not
// one per lease. The leases a pass does not release stay in the book, for a later
// pass or their key's next decision (handOver); at the latest they lapse with their
// lease timeout, as the shared store's do. It reports whether the book holds more
// such leases, for which the prober keeps running.
func (s *Store) releasePass() (more bool) {
	if s.closed.Load() {
		return false
	}
	p := s.prober
	start := s.now()
	if s.anyOpen() || start < p.nextPass.Load() {
		return s.leases.nEnded.Load() > 0
	}
	taken := s.leases.takeSomeEnded(start, maxReleasesPerPass)
	if len(taken) == 0 {
		return s.leases.nEnded.Load() > 0
	}
	ctx, cancel := p.untilStopped(context.Background()) // Close ends the calls
	defer cancel()
	goOn := func() bool { return !s.anyOpen() && time.Duration(s.now()-start) < releasePassBudget }
	for i, ended := range taken {
		released, o, _ := s.releaseEnded(ctx, ended, goOn)
		if released {
			continue
		}
		for _, rest := range taken[i+1:] {
			s.leases.restoreEnded(rest.policy, rest.key, rest.leases)
		}
		if o != succeeded { // a release failed, not the pass's bounds
			p.nextPass.Store(s.now() + int64(s.cfg.cooldown))
		}
		break
	}
	return s.leases.nEnded.Load() > 0
}

// endedAt remembers a shared lease whose release failed (leaseBook.endedAt) and wakes
// the prober, whose passes release it once every breaker is closed. A release that
// fails while the breakers stay closed (one timeout) would otherwise be left to the
// key's next decision here, its slot taken on the shared store for every replica
// until then, or until its lease timeout.
func (s *Store) endedAt(req *core.Request, lease uint64, now int64) {
	s.leases.endedAt(req, lease, now)
	s.releaseLater()
}

// releaseLater wakes the prober, unless it runs, for the leases the book holds as
// ended: a key's decision whose releases of them failed leaves them to its passes.
func (s *Store) releaseLater() {
	if !s.prober.running.Load() {
		s.wake()
	}
}
