package reserve

import (
	"context"
	"sync/atomic"
	"time"
)

// entry is one replica's share of one (policy, key): the unspent balance of its
// live lease and what the backing store said when the lease was taken.
//
// The balance is spent lock-free (trySpend). Everything else that changes an
// entry — taking a lease, returning one, remembering a refusal, retiring the entry —
// happens while holding sem, a one-slot semaphore that is also how concurrent
// requesters of an empty balance wait for one lease instead of each taking their own.
type entry struct {
	balance   atomic.Int64 // unspent units of the live lease
	expires   atomic.Int64 // ns on the store's clock when the lease ends; 0 when there is none
	remaining atomic.Int64 // the backing store's Remaining when the lease was taken
	resetAt   atomic.Int64 // ns: when the backing store said the key fully recovers
	chargedAt atomic.Int64 // ms since the epoch: the backing store's DecidedAt of the live lease; 0 when unknown
	refused   atomic.Pointer[refusal]

	sem  chan struct{}
	dead bool // the entry left its table (requires sem): look the key up again
}

// refusal remembers that the backing store refused cost until a time: no request
// of at least that cost can be admitted before then, so none is sent.
type refusal struct {
	until     int64 // ns
	cost      int64
	remaining int64 // the backing store's Remaining in its refusal
}

func newEntry() *entry { return &entry{sem: make(chan struct{}, 1)} }

// trySpend takes cost from the live lease's balance and returns what is left. It
// fails when there is no live lease at now or its balance is below cost.
func (e *entry) trySpend(cost, now int64) (int64, bool) {
	if now >= e.expires.Load() {
		return 0, false
	}
	for {
		b := e.balance.Load()
		if b < cost {
			return b, false
		}
		if e.balance.CompareAndSwap(b, b-cost) {
			return b - cost, true
		}
	}
}

// refusedAt reports the remembered refusal of cost that holds at now, if any. A
// larger cost would be refused too, but its wait is longer than the one remembered:
// it goes to the backing store, which knows it.
func (e *entry) refusedAt(cost, now int64) (*refusal, bool) {
	r := e.refused.Load()
	if r == nil || now >= r.until || cost != r.cost {
		return nil, false
	}
	return r, true
}

// lock takes sem, or gives up when ctx ends.
func (e *entry) lock(ctx context.Context) error {
	select {
	case e.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryLock takes sem when it is free.
func (e *entry) tryLock() bool {
	select {
	case e.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (e *entry) unlock() { <-e.sem }

// takeExpired removes the balance of a lease that has ended at now and returns it;
// requires sem.
func (e *entry) takeExpired(now int64) int64 {
	exp := e.expires.Load()
	if exp == 0 || now < exp {
		return 0
	}
	e.expires.Store(0)
	return e.balance.Swap(0)
}

// endLease ends the live lease and returns its unspent balance; requires sem. The
// lease ends first, so spenders that have not yet checked it take nothing more.
func (e *entry) endLease() int64 {
	e.expires.Store(0)
	return e.balance.Swap(0)
}

// idle reports whether the entry holds nothing worth keeping at now; requires sem.
func (e *entry) idle(now int64) bool {
	if e.expires.Load() != 0 || e.balance.Load() != 0 {
		return false
	}
	r := e.refused.Load()
	return r == nil || now >= r.until
}

// leaseChargedAt is when the backing store charged the live lease, where a refund
// of its units finds them (core.Refunder), or the zero time.
func (e *entry) leaseChargedAt() time.Time {
	if ms := e.chargedAt.Load(); ms > 0 {
		return time.UnixMilli(ms)
	}
	return time.Time{}
}
