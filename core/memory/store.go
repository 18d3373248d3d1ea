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
	"github.com/go-ratelimit/ratelimit/core/internal/ownentry"
	"github.com/go-ratelimit/ratelimit/core/internal/transition"
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

	// overflow maps each policy's ID to its overflow entry: new keys are decided
	// against it while their shard is full of entries that still restrict their
	// keys. The map is copied on write (under overflowMu) and read without a lock.
	overflowMu sync.Mutex
	overflow   atomic.Pointer[map[string]*entry]

	evicted    atomic.Int64 // recovered keys removed by sweeps
	overflowed atomic.Int64 // decisions taken against an overflow entry
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

// overflowEntry returns the overflow entry of policy p, creating it when missing.
func (s *Store) overflowEntry(p core.Policy) *entry {
	if e := s.existingOverflow(p.ID()); e != nil {
		return e
	}
	s.overflowMu.Lock()
	defer s.overflowMu.Unlock()
	old := s.overflowMap()
	if e := old[p.ID()]; e != nil {
		return e
	}
	e := &entry{id: p.ID(), key: overflowKey, policy: p}
	next := make(map[string]*entry, len(old)+1)
	for id, o := range old {
		next[id] = o
	}
	next[p.ID()] = e
	s.overflow.Store(&next)
	return e
}

// lockOverflow returns the overflow entry of policy p with its mutex held, never
// one that a sweep has just dropped.
func (s *Store) lockOverflow(p core.Policy) *entry {
	for {
		e := s.overflowEntry(p)
		e.mu.Lock()
		if !e.dead {
			return e
		}
		e.mu.Unlock()
	}
}

// overflowMap is the current map of overflow entries (nil when there is none).
func (s *Store) overflowMap() map[string]*entry {
	if m := s.overflow.Load(); m != nil {
		return *m
	}
	return nil
}

// overflowKey names the overflow entries in their own fields; it is no client's key.
const overflowKey = "\x00overflow"

// existingOverflow returns the overflow entry of the policy with that ID, or nil.
func (s *Store) existingOverflow(id string) *entry {
	return s.overflowMap()[id]
}

// checkContext returns ctx's error, wrapped, when ctx is done (core.Store's contract).
func checkContext(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	return nil
}

// Decide applies one request. It allocates nothing when the key already has state.
// A key without an entry, in a shard full of entries that still restrict their keys,
// is decided against its policy's overflow entry.
func (s *Store) Decide(ctx context.Context, req core.Request) (res core.Result, err error) {
	if s.closed.Load() {
		return res, ErrClosed
	}
	if err := checkContext(ctx); err != nil {
		return res, err
	}
	if err := req.Check(); err != nil {
		return res, err
	}
	now := s.now()
	h := s.hash(req.Policy.ID(), req.Key)
	e := s.shard(h).acquire(h, req.Policy, req.Key, s.perShard, now)
	if e == nil {
		if ownentry.Requested(ctx) { // a charge that must stay with its key: none here
			return res, fmt.Errorf("memory: policy %q: %w", req.Policy.Name(), ownentry.ErrNoRoom)
		}
		e = s.lockOverflow(req.Policy)
		s.overflowed.Add(1)
	}
	switch req.Policy.Algorithm() {
	case core.SlidingLog:
		e.makeRoomInLog()
		transition.StepInPlace(&e.state, &req, now, &res) // appends in place
	case core.Concurrency:
		leases := e.state.Leases
		transition.StepInPlace(&e.state, &req, now, &res)
		if res.Allowed {
			e.state.Leases = anchor(leases, e.state.Leases)
		}
	default:
		transition.StepInPlace(&e.state, &req, now, &res) // without touching the slices' cache line
	}
	e.mu.Unlock()
	return res, nil
}

// maxInlineStack is the stack size DecideStack handles without allocating.
const maxInlineStack = 8

// DecideStack applies the requests as one all-or-nothing decision. It locks the
// shards involved in ascending order, then the entries of their tables: an entry
// is only ever locked by a stack that holds its shard. The policies' overflow
// entries belong to no shard, and two stacks may both need two of them: they are
// locked last, in ascending order of policy ID, so concurrent stacks cannot
// deadlock. A key without an entry is decided on a fresh state, and its entry is
// inserted only when the stack is admitted: a refused stack creates no entries.
func (s *Store) DecideStack(ctx context.Context, reqs []core.Request, results []core.Result) (bool, error) {
	if s.closed.Load() {
		return false, ErrClosed
	}
	if err := checkContext(ctx); err != nil {
		return false, err
	}
	if err := core.CheckStack(reqs, results); err != nil {
		return false, err
	}
	var (
		inlineShards     [maxInlineStack]int
		inlineHashes     [maxInlineStack]uint64
		inlineEntries    [maxInlineStack]*entry
		inlineNext       [maxInlineStack]transition.State
		inlineFresh      [maxInlineStack]bool
		inlineOverflowed [maxInlineStack]int
	)
	shardIDs, hashes, entries, next, fresh := inlineShards[:0], inlineHashes[:0], inlineEntries[:0], inlineNext[:0], inlineFresh[:0]
	overflowed := inlineOverflowed[:0] // the requests decided against an overflow entry
	if len(reqs) > maxInlineStack {
		shardIDs, hashes = make([]int, 0, len(reqs)), make([]uint64, 0, len(reqs))
		entries, next = make([]*entry, 0, len(reqs)), make([]transition.State, 0, len(reqs))
		fresh, overflowed = make([]bool, 0, len(reqs)), make([]int, 0, len(reqs))
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
	for i := range reqs {
		sh, req := s.shard(hashes[i]), &reqs[i]
		e, isFresh := sh.table.Load().find(hashes[i], req.Policy.ID(), req.Key), false
		switch {
		case e != nil:
		case sh.reserve(s.perShard, now):
			// A fresh entry, published only if the stack is admitted.
			e, isFresh = sh.newEntry(hashes[i], req.Policy, req.Key, now), true
		default:
			overflowed = insertByPolicyID(overflowed, reqs, i) // locked below, in order
		}
		if e != nil && !slices.Contains(entries, e) {
			e.mu.Lock() // now no later insert of this stack can evict it
		}
		entries, fresh = append(entries, e), append(fresh, isFresh)
	}
	for _, i := range overflowed {
		entries[i] = s.lockOverflow(reqs[i].Policy) // one per policy: the stack's policies differ
	}
	allowed := true
	for i, e := range entries {
		if reqs[i].Policy.Algorithm() == core.SlidingLog {
			e.makeRoomInLog() // the state moves, unchanged, should the stack be refused
		}
		st, res := transition.StepRequest(e.state, &reqs[i], now)
		next, results[i] = append(next, st), res
		allowed = allowed && res.Allowed
	}
	for i, e := range entries {
		switch {
		case allowed:
			e.commit(next[i])
			if fresh[i] {
				s.shard(hashes[i]).insertReserved(e)
			}
		default:
			if fresh[i] {
				s.shard(hashes[i]).live-- // give back the reservation
			}
			if results[i].Allowed {
				_, results[i] = transition.Peek(e.state, &reqs[i].Policy, now, reqs[i].EffectiveCost())
			}
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
	if len(overflowed) > 0 {
		s.overflowed.Add(int64(len(overflowed)))
	}
	return allowed, nil
}

// insertByPolicyID adds request i to the indexes of reqs, kept in ascending order of
// their policies' IDs: the order in which a stack locks overflow entries.
func insertByPolicyID(indexes []int, reqs []core.Request, i int) []int {
	at := len(indexes)
	for at > 0 && reqs[indexes[at-1]].Policy.ID() > reqs[i].Policy.ID() {
		at--
	}
	indexes = append(indexes, 0)
	copy(indexes[at+1:], indexes[at:])
	indexes[at] = i
	return indexes
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

// Release ends a concurrency lease. A lease taken from the policy's overflow entry
// (the key had no entry then) is released there, even when the key has an entry
// of its own since: lease numbers are unique.
func (s *Store) Release(ctx context.Context, req core.Request, lease uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := checkContext(ctx); err != nil {
		return err
	}
	if req.Policy.Algorithm() != core.Concurrency {
		return fmt.Errorf("memory: release: policy %q is %s, not concurrency", req.Policy.Name(), req.Policy.Algorithm())
	}
	h := s.hash(req.Policy.ID(), req.Key)
	if e := s.shard(h).acquireExisting(h, req.Policy.ID(), req.Key); e != nil {
		released := release(e, lease)
		e.mu.Unlock()
		if released {
			return nil
		}
	}
	if e := s.existingOverflow(req.Policy.ID()); e != nil {
		e.mu.Lock()
		release(e, lease)
		e.mu.Unlock()
	}
	return nil
}

// release removes the lease from e's state and reports whether e held it. Requires e.mu.
func release(e *entry, lease uint64) bool {
	held := len(e.state.Leases)
	e.state = transition.ReleaseLease(e.state, lease)
	return len(e.state.Leases) < held
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
	s.sweepOverflow(now)
	return total
}

// sweepOverflow forgets the overflow entries that have recovered: a later overflow
// starts a fresh one, which decides the same.
func (s *Store) sweepOverflow(now int64) {
	s.overflowMu.Lock()
	defer s.overflowMu.Unlock()
	old := s.overflowMap()
	if len(old) == 0 {
		return
	}
	next := make(map[string]*entry, len(old))
	for id, e := range old {
		if e.mu.TryLock() {
			recovered := e.recoveredAt(now) <= now
			if recovered {
				e.dead = true // a decision that found it before the swap decides on it harmlessly
			}
			e.mu.Unlock()
			if recovered {
				continue
			}
		}
		next[id] = e
	}
	if len(next) < len(old) {
		s.overflow.Store(&next)
	}
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
	Keys    int   // keys held now
	Evicted int64 // recovered keys evicted by sweeps
	// EvictedEarly counts recovered keys evicted, before a sweep, to make room
	// for a new key in a full shard. A key that still restricts its client is
	// never evicted.
	EvictedEarly int64
	// Overflowed counts decisions taken against a policy's shared overflow entry
	// because the new key's shard was full of keys that still restrict their
	// clients (see WithMaxKeys).
	Overflowed int64
}

// Stats counts the keys held and evicted. It locks each shard in turn.
func (s *Store) Stats() Stats {
	st := Stats{Evicted: s.evicted.Load(), Overflowed: s.overflowed.Load()}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		st.Keys += sh.live
		st.EvictedEarly += sh.early
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

// Refund gives back req's effective cost, charged at chargedAt (see
// core.Refunder), to the key's entry, only when that entry may be the one charged.
// A key without an entry (evicted once recovered, or decided against the overflow
// entry) gets nothing back, and neither does the entry it gets later for a charge
// that went elsewhere: in a shard that has been full, an entry takes back only
// charges made since it was created (a zero chargedAt gives it nothing).
func (s *Store) Refund(ctx context.Context, req core.Request, chargedAt time.Time) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := checkContext(ctx); err != nil {
		return err
	}
	if err := req.Check(); err != nil {
		return err
	}
	now := s.now()
	h := s.hash(req.Policy.ID(), req.Key)
	if e := s.shard(h).acquireExisting(h, req.Policy.ID(), req.Key); e != nil {
		if charged := chargedAt.UnixMilli(); charged >= e.chargedFrom {
			e.state = transition.Refund(e.state, &req.Policy, now, charged, req.EffectiveCost())
		}
		e.mu.Unlock()
	}
	return nil
}

// BoundedByContext reports true: a decision never waits, so it always ends in time
// (resilient decides on the caller's goroutine for such a store).
func (s *Store) BoundedByContext() bool { return true }
