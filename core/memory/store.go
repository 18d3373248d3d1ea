package memory

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("memory: store closed")

// Store is the in-memory core.Store. Create it with New and stop it with Close.
type Store struct {
	shards   []shard
	mask     uint64
	seed     maphash.Seed
	clock    func() int64 // ms since the Unix epoch
	perShard int          // the key cap of one shard

	closed   atomic.Bool
	stop     chan struct{}
	finished sync.WaitGroup

	evicted      atomic.Int64 // recovered keys removed by sweeps
	evictedEarly atomic.Int64 // live keys removed because a shard was full
}

var _ core.Store = (*Store)(nil)

// New returns a Store and starts its janitor, unless WithSweepInterval(0).
func New(options ...Option) (*Store, error) {
	cfg := config{maxKeys: DefaultMaxKeys, shards: DefaultShards, sweepInterval: DefaultSweepInterval}
	for _, option := range options {
		if err := option(&cfg); err != nil {
			return nil, err
		}
	}
	n := 1 << bits.Len(uint(cfg.shards-1))
	for n > 1 && n > cfg.maxKeys { // at least one key per shard, and never more than the cap in all
		n /= 2
	}
	s := &Store{
		shards:   make([]shard, n),
		mask:     uint64(n - 1),
		seed:     maphash.MakeSeed(),
		clock:    monotonicMillis(),
		perShard: cfg.maxKeys / n,
		stop:     make(chan struct{}),
	}
	if cfg.clock != nil {
		clock := cfg.clock
		s.clock = func() int64 { return clock().UnixMilli() }
	}
	for i := range s.shards {
		s.shards[i].init(maphash.Comparable(s.seed, i))
	}
	if cfg.sweepInterval > 0 {
		s.finished.Add(1)
		go s.janitor(cfg.sweepInterval)
	}
	return s, nil
}

// MustNew is New for static configuration: it panics on an invalid option.
func MustNew(options ...Option) *Store {
	s, err := New(options...)
	if err != nil {
		panic(err)
	}
	return s
}

func (s *Store) now() int64 { return s.clock() }

// monotonicMillis is the default clock: the wall clock at construction advanced by
// the monotonic clock. Reading only the monotonic clock halves the cost of
// time.Now, and the store's time can never go backwards when the wall clock is stepped.
func monotonicMillis() func() int64 {
	base := time.Now()
	baseMs := base.UnixMilli()
	return func() int64 { return baseMs + time.Since(base).Milliseconds() }
}

// hash is the seeded hash of a key; its low bits pick the shard. The policy is not
// hashed: the few policies that share a key share a chain of entries.
func (s *Store) hash(_, key string) uint64 {
	return maphash.String(s.seed, key)
}

func (s *Store) shard(h uint64) *shard { return &s.shards[h&s.mask] }

// Decide applies one request. It allocates nothing when the key already has state.
func (s *Store) Decide(_ context.Context, req core.Request) (res core.Result, err error) {
	if s.closed.Load() {
		return res, ErrClosed
	}
	if err := req.Check(); err != nil {
		return res, err
	}
	now := s.now()
	h := s.hash(req.Policy.ID(), req.Key)
	e, evictedLive := s.shard(h).acquire(h, req.Policy, req.Key, s.perShard, now)
	if keepsSlices(req.Policy.Algorithm()) {
		log, leases := e.state.Log, e.state.Leases
		core.StepInPlace(&e.state, &req, now, &res)
		if res.Allowed {
			e.anchor(log, leases)
		}
	} else {
		core.StepInPlace(&e.state, &req, now, &res) // without touching the slices' cache line
	}
	e.mu.Unlock()
	if evictedLive {
		s.evictedEarly.Add(1)
	}
	return res, nil
}

// keepsSlices reports whether the algorithm's state has slices (see entry.anchor).
func keepsSlices(a core.Algorithm) bool { return a == core.SlidingLog || a == core.Concurrency }

// maxInlineStack is the stack size DecideStack handles without allocating.
const maxInlineStack = 8

// DecideStack applies the requests as one all-or-nothing decision. It locks the
// shards involved in ascending order, so concurrent stacks cannot deadlock, and
// then the entries: an entry is only ever locked by a stack that holds its shard.
func (s *Store) DecideStack(_ context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := core.CheckStack(reqs, results); err != nil {
		return false, err
	}
	var (
		inlineShards  [maxInlineStack]int
		inlineHashes  [maxInlineStack]uint64
		inlineEntries [maxInlineStack]*entry
		inlineNext    [maxInlineStack]core.State
	)
	shardIDs, hashes, entries, next := inlineShards[:0], inlineHashes[:0], inlineEntries[:0], inlineNext[:0]
	if len(reqs) > maxInlineStack {
		shardIDs, hashes = make([]int, 0, len(reqs)), make([]uint64, 0, len(reqs))
		entries, next = make([]*entry, 0, len(reqs)), make([]core.State, 0, len(reqs))
	}
	for i := range reqs {
		h := s.hash(reqs[i].Policy.ID(), reqs[i].Key)
		hashes = append(hashes, h)
		shardIDs = insertSorted(shardIDs, int(h&s.mask))
	}
	for _, id := range shardIDs {
		s.shards[id].mu.Lock()
	}
	now := s.now()
	allowed, evictions := true, int64(0)
	for i := range reqs {
		e, evictedLive := s.shard(hashes[i]).lookupLocked(hashes[i], reqs[i].Policy, reqs[i].Key, s.perShard, now)
		if evictedLive {
			evictions++
		}
		if !slices.Contains(entries, e) {
			e.mu.Lock() // now no later insert of this stack can evict it
		}
		entries = append(entries, e)
		st, res := core.StepRequest(e.state, &reqs[i], now)
		next, results[i] = append(next, st), res
		allowed = allowed && res.Allowed
	}
	for i, e := range entries {
		switch {
		case allowed:
			e.commit(next[i])
		case results[i].Allowed:
			_, results[i] = core.Peek(e.state, &reqs[i].Policy, now, reqs[i].EffectiveCost())
		}
	}
	for i, e := range entries {
		if !slices.Contains(entries[:i], e) {
			e.mu.Unlock()
		}
	}
	for i := len(shardIDs) - 1; i >= 0; i-- {
		s.shards[shardIDs[i]].mu.Unlock()
	}
	if evictions > 0 {
		s.evictedEarly.Add(evictions)
	}
	return allowed, nil
}

// insertSorted adds id to the ascending, duplicate-free ids.
func insertSorted(ids []int, id int) []int {
	i := 0
	for i < len(ids) && ids[i] < id {
		i++
	}
	if i < len(ids) && ids[i] == id {
		return ids
	}
	ids = append(ids, 0)
	copy(ids[i+1:], ids[i:])
	ids[i] = id
	return ids
}

// Release ends a concurrency lease.
func (s *Store) Release(_ context.Context, req core.Request, lease uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if req.Policy.Algorithm() != core.Concurrency {
		return fmt.Errorf("memory: release: policy %q is %s, not concurrency", req.Policy.Name(), req.Policy.Algorithm())
	}
	h := s.hash(req.Policy.ID(), req.Key)
	e := s.shard(h).acquireExisting(h, req.Policy.ID(), req.Key)
	if e == nil {
		return nil
	}
	e.state = core.ReleaseLease(e.state, lease)
	e.mu.Unlock()
	return nil
}

// Sweep evicts every key whose state has recovered and returns how many it evicted.
// The janitor calls it periodically; tests call it with an injected clock.
func (s *Store) Sweep() int {
	now, total := s.now(), 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		total += sh.sweep(now)
		sh.mu.Unlock()
	}
	s.evicted.Add(int64(total))
	return total
}

func (s *Store) janitor(interval time.Duration) {
	defer s.finished.Done()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ticker.C:
			s.Sweep()
		}
	}
}

// Stats describes the store's contents.
type Stats struct {
	Keys         int   // keys held now
	Evicted      int64 // recovered keys evicted by sweeps
	EvictedEarly int64 // unrecovered keys evicted because a shard hit the key cap
}

// Stats counts the keys held and evicted. It locks each shard in turn.
func (s *Store) Stats() Stats {
	st := Stats{Evicted: s.evicted.Load(), EvictedEarly: s.evictedEarly.Load()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += sh.live
		sh.mu.Unlock()
	}
	return st
}

// Close stops the janitor. Later calls fail with ErrClosed. Close is idempotent.
func (s *Store) Close() error {
	if s.closed.CompareAndSwap(false, true) {
		close(s.stop)
		s.finished.Wait()
	}
	return nil
}

var _ core.Refunder = (*Store)(nil)

// Refund gives back req's effective cost (see core.Refund).
func (s *Store) Refund(_ context.Context, req core.Request) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := req.Check(); err != nil {
		return err
	}
	now := s.now()
	h := s.hash(req.Policy.ID(), req.Key)
	if e := s.shard(h).acquireExisting(h, req.Policy.ID(), req.Key); e != nil {
		e.state = core.Refund(e.state, &req.Policy, now, req.EffectiveCost())
		e.mu.Unlock()
	}
	return nil
}

// BoundedByContext reports true: a decision never waits, so it always ends in time
// (resilient.ContextBounded).
func (s *Store) BoundedByContext() bool { return true }
