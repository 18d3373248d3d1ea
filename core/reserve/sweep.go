package reserve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// sweepEvery returns expired leases every interval until Close.
func (s *Store) sweepEvery(interval time.Duration) {
	defer s.sweeping.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ticker.C:
			_ = s.ReturnExpired(context.Background()) // failures are counted in Stats
		}
	}
}

// ReturnExpired gives the unspent balance of every lease whose lifetime has ended
// back to the backing store, and forgets keys that hold nothing. The background
// sweeper calls it every WithSweepInterval; call it yourself when the sweeper is
// off. Entries busy taking a lease are skipped (that request returns an ended lease
// itself). Each return is bounded by WithReturnTimeout and by ctx; the error joins
// the failed returns.
func (s *Store) ReturnExpired(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	now := s.nowNanos()
	var errs []error
	var entries []keyed
	for _, t := range s.tables {
		entries = t.snapshot(entries[:0])
		for _, k := range entries {
			e := k.entry
			if !e.tryLock() {
				continue
			}
			expired, chargedAt := e.takeExpired(now), e.leaseChargedAt()
			if e.idle(now) {
				e.dead = true
				t.remove(k.key, e, &s.keys)
			}
			e.unlock()
			if expired > 0 {
				errs = append(errs, s.giveBack(ctx, t, k.key, expired, chargedAt))
			}
		}
	}
	return errors.Join(errs...)
}

// returnAll retires every entry and returns its balance, for Close.
func (s *Store) returnAll() error {
	var errs []error
	var entries []keyed
	for _, t := range s.tables {
		entries = t.snapshot(entries[:0])
		for _, k := range entries {
			e := k.entry
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.returnTimeout)
			if err := e.lock(ctx); err != nil {
				cancel()
				errs = append(errs, fmt.Errorf("reserve: policy %q: close: waiting for a lease request: %w", t.lease.Policy.Name(), err))
				continue
			}
			held, chargedAt := e.endLease(), e.leaseChargedAt()
			e.dead = true
			t.remove(k.key, e, &s.keys)
			e.unlock()
			if held > 0 {
				errs = append(errs, s.giveBack(ctx, t, k.key, held, chargedAt))
			}
			cancel()
		}
	}
	return errors.Join(errs...)
}

// giveBack returns units of key's budget, charged at chargedAt, to the backing
// store, within the return timeout.
func (s *Store) giveBack(ctx context.Context, t *table, key string, units int64, chargedAt time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.returnTimeout)
	defer cancel()
	err := s.backing.Refund(ctx, core.Request{Policy: t.lease.Policy, Key: key, Cost: units}, chargedAt)
	if err != nil {
		s.stats.returnFailures.Add(1)
		return fmt.Errorf("reserve: policy %q: returning %d unspent units: %w", t.lease.Policy.Name(), units, err)
	}
	s.stats.returned.Add(units)
	return nil
}
