package resilient

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
	"github.com/go-ratelimit/ratelimit/core/memory"
)

// Store is a core.Store in front of a shared store (Redis) that keeps deciding when
// the shared store fails: every call has a deadline, a circuit breaker stops calling a
// failing store and probes it to come back, each policy's failure mode (Open, Closed,
// Local) decides in the meantime, and a pre-limiter refuses keys the shared store
// refused without asking it again. Create it with New; it is safe for concurrent use.
type Store struct {
	shared core.Store
	direct bool // shared is bounded by its context: decide on the caller's goroutine
	local  core.Store
	cfg    config
	epoch  time.Time
	// realClock reports that the Store's clock is time.Now, so that one read serves
	// both latency and the Store's time (see instant).
	realClock bool
	breaker   *breaker      // the whole store's
	slots     *slotBreakers // per Cluster slot, for a shared store that names its keys; nil otherwise
	deadline  *adaptiveDeadline
	prober    *prober
	guard     *guard
	pre       *preLimiter
	memo      *memo
	degrade   *degrader
	falls     *fallbacks
	leases    *leaseBook

	decisions atomic.Uint64 // decisions observed, for log sampling
	loudAt    atomic.Int64  // ns: last permanent-error log, to keep one a second
	buggyAt   atomic.Int64  // ns: last log of a panicking Monitor, to keep one a second

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

var _ core.Store = (*Store)(nil)

// New returns a Store deciding on shared while it works, and by each policy's failure
// mode while it does not. The Store owns shared: Close closes it. When New fails, shared
// is left open for the caller to close.
//
// The deadline is enforced here, whatever the shared store does with ctx: a call that
// has not answered by then is abandoned to finish in the background. A shared store
// that says its calls end with their context (the memory store, and a
// Redis store whose go-redis client has ContextTimeoutEnabled, as redisstore.Dial sets)
// decides single requests on the caller's goroutine instead, with the deadline in the
// call's context, which spares a goroutine and about 7 allocations per decision. For
// go-redis, enable ContextTimeoutEnabled on clients handed to redisstore.New, so that
// calls end at the deadline and give their connection back, instead of running to the
// client's read timeout.
func New(shared core.Store, options ...Option) (*Store, error) {
	if shared == nil {
		return nil, errors.New("resilient: New: nil shared store")
	}
	cfg, err := newConfig(options)
	if err != nil {
		return nil, err
	}
	local := cfg.local
	if local == nil {
		var memOptions []memory.Option
		if cfg.clock != nil { // else the memory store's own clock, which never steps back
			memOptions = append(memOptions, memory.WithClock(cfg.clock))
		}
		if local, err = memory.New(memOptions...); err != nil {
			return nil, fmt.Errorf("resilient: local store: %w", err)
		}
	}
	realClock := cfg.clock == nil
	if realClock {
		cfg.clock = time.Now
	}
	policy := breakerPolicy{
		rate: cfg.rate, minCalls: int64(cfg.minCalls), minFailures: int64(cfg.threshold),
		window: int64(cfg.window), cooldown: int64(cfg.cooldown), probes: cfg.probes,
	}
	slots := newSlotBreakers(shared, policy)
	storeWide := policy
	if slots != nil {
		storeWide.rate = max(policy.rate, storeWideRate)
	}
	return &Store{
		realClock: realClock,
		shared:    shared,
		direct:    boundedByContext(shared),
		local:     local,
		cfg:       cfg,
		epoch:     cfg.clock(),
		breaker:   newBreaker(storeWide),
		slots:     slots,
		deadline:  newAdaptiveDeadline(cfg.deadline, cfg.ceiling, cfg.multiple),
		prober:    newProber(),
		guard:     newGuard(cfg.deadline, cfg.maxInFlight),
		pre:       newPreLimiter(cfg.preKeys),
		memo:      newMemo(max(cfg.preKeys, DefaultPreLimitKeys)),
		degrade:   newDegrader(cfg.replicas, cfg.degrade),
		falls:     newFallbacks(),
		leases:    newLeaseBook(),
	}, nil
}

// instant reads the real time, which measures latency, and the Store's time. With the
// default clock the two come from one read.
func (s *Store) instant() (real time.Time, now int64) {
	real = time.Now()
	if s.realClock {
		return real, int64(real.Sub(s.epoch))
	}
	return real, s.now()
}

// wallMillis is the Store's time now (nanoseconds since New) as a time on its
// clock, to the millisecond: the instant a result decided in process memory names.
func (s *Store) wallMillis(now int64) time.Time {
	return time.UnixMilli(s.epoch.Add(time.Duration(now)).UnixMilli())
}

// now is the Store's time: nanoseconds since New on its clock (monotonic by default).
func (s *Store) now() int64 { return int64(s.cfg.clock().Sub(s.epoch)) }

// Breaker is the state of the store-wide circuit breaker. On a store that names its
// keys (the Redis store), failures are also tracked per Cluster slot: see BreakerFor.
func (s *Store) Breaker() BreakerState { return s.breaker.current() }

// BreakerFor is the state of the breaker that decides whether req calls the shared
// store: the store-wide one when it is not closed, else that of req's Cluster slot
// (closed when the slot never failed, or when slots are not tracked), or open when
// another slot of the master serving req's slot has opened its breaker.
func (s *Store) BreakerFor(req core.Request) BreakerState {
	if st := s.breaker.current(); st != BreakerClosed {
		return st
	}
	slot := s.slots.of(&req)
	if b := s.slots.get(slot); b != nil && !b.closed() {
		return b.current()
	}
	if !s.slots.closedFor(&req, slot) {
		return BreakerOpen
	}
	return BreakerClosed
}

// Deadline is the current deadline of shared-store calls (see WithAdaptiveDeadline).
func (s *Store) Deadline() time.Duration { return s.deadline.get() }

// Fallback reports whether the policy named policy is in its failure mode: its failure
// mode has decided since the shared store last answered.
func (s *Store) Fallback(policy string) bool { return s.falls.isActive(policy) }

// ModeOf is the failure mode of the policy named policy.
func (s *Store) ModeOf(policy string) Mode { return s.cfg.modeOf(policy) }

// PreLimitKeys is how many refused keys the pre-limiter holds (some may have expired
// and not yet been dropped).
func (s *Store) PreLimitKeys() int { return s.pre.len() }

// Close stops the Store: it refuses new decisions, closes the shared store (which ends
// its calls still in flight, when it owns its client), waits for those calls, and
// closes the local store. Close is idempotent.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.stopProber()
		s.guard.stop()
		errShared := s.shared.Close()
		s.guard.wait()
		errLocal := s.local.Close()
		if errShared != nil {
			errShared = fmt.Errorf("resilient: close shared store: %w", errShared)
		}
		if errLocal != nil {
			errLocal = fmt.Errorf("resilient: close local store: %w", errLocal)
		}
		s.closeErr = errors.Join(errShared, errLocal)
	})
	return s.closeErr
}
