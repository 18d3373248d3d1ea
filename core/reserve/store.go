package reserve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrClosed is returned by a Store's methods after Close.
var ErrClosed = errors.New("reserve: store closed")

// backingStore is what a Store wraps: a core.Store that can take back cost.
type backingStore interface {
	core.Store
	core.Refunder
}

// Store is a core.Store that decides the requests of leased policies from leases
// held in process memory, and passes every other request through to its backing
// store unchanged. It is safe for concurrent use. See the package documentation
// for what leasing admits.
type Store struct {
	backing backingStore
	tables  map[string]*table // by policy ID; read-only after New
	cfg     config
	keys    atomic.Int64

	stats counters

	epoch time.Time // the clock's reading at New: instants are measured from it (nowNanos)

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
	stop      chan struct{}
	sweeping  sync.WaitGroup
}

var (
	_ core.Store    = (*Store)(nil)
	_ core.Refunder = (*Store)(nil)
)

// New wraps backing, which must also be a core.Refunder (so that unspent balances
// can be returned; the memory and Redis stores are), and leases the given
// policies. Every other policy passes through. The Store owns backing: Close closes it.
//
// A lease that cannot be honoured fails here, with an error that names its policy:
// a leaky bucket or concurrency policy, a size outside 1..Capacity, a lifetime
// below 1ms, or one policy leased twice. When New fails, the caller still owns
// backing.
//
// To keep deciding when the backing store fails, wrap the Store (not its backing
// store) in core/resilient: a failed lease request is an error that the failure
// modes handle. A backing store that admits a request without counting it
// (core.Result.Unenforced) grants no lease: that request alone is admitted.
func New(backing core.Store, leases []Lease, options ...Option) (*Store, error) {
	if backing == nil {
		return nil, errors.New("reserve: nil backing store")
	}
	refunding, ok := backing.(backingStore)
	if !ok {
		return nil, fmt.Errorf("reserve: the backing store %T cannot take back cost (it is not a core.Refunder), so unspent leases could not be returned", backing)
	}
	cfg := defaultConfig()
	for _, option := range options {
		if err := option(&cfg); err != nil {
			return nil, err
		}
	}
	tables := make(map[string]*table, len(leases))
	for _, l := range leases {
		l, err := l.check()
		if err != nil {
			return nil, err
		}
		if _, dup := tables[l.Policy.ID()]; dup {
			return nil, fmt.Errorf("reserve: %w %q: leased twice", core.ErrInvalidPolicy, l.Policy.Name())
		}
		tables[l.Policy.ID()] = newTable(l)
	}
	s := &Store{backing: refunding, tables: tables, cfg: cfg, epoch: cfg.clock(), stop: make(chan struct{})}
	if cfg.sweepInterval > 0 && len(tables) > 0 {
		s.sweeping.Add(1)
		go s.sweepEvery(cfg.sweepInterval)
	}
	return s, nil
}

// MustNew is New for static configuration: it panics on an invalid configuration.
func MustNew(backing core.Store, leases []Lease, options ...Option) *Store {
	s, err := New(backing, leases, options...)
	if err != nil {
		panic(err)
	}
	return s
}

// Leased reports whether requests of policy p are decided from leases. Every other
// policy is decided by the backing store, exactly.
func (s *Store) Leased(p core.Policy) bool {
	_, ok := s.tables[p.ID()]
	return ok
}

// Decide decides req from a lease when its policy is leased, and by the backing
// store otherwise. A request that costs more than its policy's lease size, or whose
// key finds the Store full (WithMaxKeys), is decided by the backing store too.
func (s *Store) Decide(ctx context.Context, req core.Request) (core.Result, error) {
	if s.closed.Load() {
		return core.Result{}, ErrClosed
	}
	t, ok := s.tables[req.Policy.ID()]
	if !ok {
		return s.backing.Decide(ctx, req)
	}
	if err := req.Check(); err != nil {
		return core.Result{}, err
	}
	cost := req.EffectiveCost()
	if cost > t.lease.Size {
		s.returnBalance(ctx, t, req.Key)
		return s.backing.Decide(ctx, req)
	}
	return s.decideLeased(ctx, t, req.Key, cost)
}

// DecideStack passes the stack through to the backing store: a stack is decided
// exactly and all-or-nothing, leased policies included (their budget is shared with
// the leases, which the backing store has already charged).
func (s *Store) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	return s.backing.DecideStack(ctx, reqs, results)
}

// Release passes through to the backing store (concurrency policies are never leased).
func (s *Store) Release(ctx context.Context, req core.Request, lease uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.backing.Release(ctx, req, lease)
}

// Refund gives req's cost back to the backing store, leased policies included: the
// cost was charged there (as part of a lease, whose charge instant a leased
// result's DecidedAt carries), and the backing store knows whether it can still be
// given back (a closed window's charge cannot).
func (s *Store) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.backing.Refund(ctx, req, chargedAt)
}

// Close stops the sweeper, returns every unspent balance to the backing store and
// closes the backing store. Returns are bounded by WithReturnTimeout each; a
// balance that cannot be returned is reported in the error and lost (its key admits
// less, never more, until its policy recovers). Later calls return the first result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.stop)
		s.sweeping.Wait()
		errReturn := s.returnAll()
		errBacking := s.backing.Close()
		if errBacking != nil {
			errBacking = fmt.Errorf("reserve: close backing store: %w", errBacking)
		}
		s.closeErr = errors.Join(errReturn, errBacking)
	})
	return s.closeErr
}

// nowNanos reads the store's clock once, in ns since the Unix epoch. It measures
// the time elapsed since New, which for the default clock, time.Now, is the
// monotonic reading: a step of the wall clock (NTP) neither ends leases early nor
// stretches a fixed window's lease into the next window.
func (s *Store) nowNanos() int64 { return s.epoch.UnixNano() + int64(s.cfg.clock().Sub(s.epoch)) }

// durationUntil is the time from now to at, never negative.
func durationUntil(now, at int64) time.Duration { return time.Duration(max(0, at-now)) }
