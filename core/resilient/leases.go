package resilient

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxFallbackLeases bounds how many leases granted by a failure mode are remembered.
const maxFallbackLeases = 100_000

// leaseBook remembers the concurrency leases a failure mode granted (in the local
// store, or unenforced), so that releasing them does not call the shared store, which
// never saw them, and so that the local ones still in flight when the shared store is
// back can be handed over to it (Store.handOver). Entries expire with their lease
// timeout, and are swept once per lease timeout (and more often while the book is
// full of local leases, localFull). The book holds at most
// maxFallbackLeases unenforced leases: beyond, one is not remembered, and its release
// goes to the shared store, where releasing an unknown lease is harmless. A local
// lease is always remembered, and Local mode grants none while the book holds
// maxFallbackLeases of them (localFull): forgotten, a local lease's release went to
// the shared store and never to the local store, which held its slot for the lease
// timeout, and it was not handed over, which admitted 4 in flight of 2 on the
// shared store's return (TestLocalLeasesInFlightCountOnReturnWhenTheLeaseBookIsFull).
//
// The book also remembers the shared leases whose requests ended while their
// release could not reach the shared store (ended): the shared store holds them
// until they lapse, which left a key's slots taken for up to a lease timeout after
// the outage by requests long ended. They are released there once it answers
// again: before the key's next decision (handOver), and, once the breakers close,
// in the prober's bounded passes (releasePass; Store.endedAt wakes the prober).
// Releasing a lease twice, or after it lapsed, is harmless: lease IDs are unique.
//
// A failure mode's lease may be held on the shared store too: the call that
// carried its acquire failed or was cancelled after the acquire may have landed
// (a reply past the deadline). Such a phantom held a slot there for a lease
// timeout after its request ended. Its entry says so (leaseEntry.shared): the
// lease's release goes where it was granted and also to the ended leases, and its
// hand-over acquires it there under its ID, which holds the phantom once. It is not
// released while the request runs: a lease handed over under the same ID would be
// released in its place, and the key over-granted. The mark of such a lease waits
// in pending while the failure mode decides it, for add to take; a lease the
// failure mode did not grant, or the full book did not remember, is released at
// once instead (Store.acquiresUnsure). An entry swept at its lease timeout forgets
// its phantom, which lapses on the shared store about then.
type leaseBook struct {
	mu        sync.Mutex
	leases    map[leaseKey]leaseEntry
	local     map[preKey]map[uint64]struct{} // the local leases of each key
	nLocal    atomic.Int64                   // how many local leases the book holds
	ended     map[preKey]*endedLeases        // each key's shared leases whose release failed
	nEnded    atomic.Int64                   // how many such leases the book holds
	pending   map[leaseKey]struct{}          // leases whose acquire's call failed, being decided
	swept     int64                          // ns: last sweep
	fullSwept int64                          // ns: last sweep of localFull
	timeout   int64                          // ns: the longest lease timeout seen, the sweep interval
}

// endedLeases are the shared leases of one key whose requests ended while their
// release failed, with the policy and key that name them.
type endedLeases struct {
	policy core.Policy
	key    string
	leases []endedLease
}

// endedLease is a shared lease whose request ended, and until when the shared store
// may hold it (a lease timeout after its release failed, later than it lapses).
type endedLease struct {
	lease uint64
	until int64 // ns
}

type leaseKey struct {
	policy, key string // policy ID, key
	lease       uint64
}

type leaseEntry struct {
	expires int64 // ns
	cost    int64
	local   bool // granted by the local store (else unenforced)
	moving  bool // being handed over to the shared store
	shared  bool // the shared store may hold it too: its acquire's call failed late
}

func newLeaseBook() *leaseBook {
	return &leaseBook{
		leases:  map[leaseKey]leaseEntry{},
		local:   map[preKey]map[uint64]struct{}{},
		ended:   map[preKey]*endedLeases{},
		pending: map[leaseKey]struct{}{},
	}
}

// sweep forgets, once per the longest lease timeout seen (timeout, which it first
// raises), the leases that have lapsed at now. Requires b.mu.
func (b *leaseBook) sweep(now int64, timeout time.Duration) {
	b.timeout = max(b.timeout, int64(timeout))
	if now-b.swept < b.timeout {
		return
	}
	b.forgetLapsed(now)
	for k, e := range b.ended {
		live := liveEnded(e.leases, now)
		b.nEnded.Add(int64(len(live) - len(e.leases)))
		if e.leases = live; len(live) == 0 {
			delete(b.ended, k)
		}
	}
	b.swept = now
}

// add remembers a lease of cost granted at now for timeout, and takes its pending
// mark (mayHold) into its entry: the shared store may hold it too. An unenforced
// lease beyond maxFallbackLeases of them is left out, and its mark with it.
func (b *leaseBook) add(k leaseKey, local bool, cost, now int64, timeout time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now, timeout)
	if !local && len(b.leases)-int(b.nLocal.Load()) >= maxFallbackLeases {
		return
	}
	old, again := b.leases[k]
	if again { // the same ID granted again (a retried acquire): one entry, counted once
		b.forget(k, old)
	}
	_, shared := b.pending[k]
	delete(b.pending, k)
	b.leases[k] = leaseEntry{expires: now + int64(timeout), cost: cost, local: local, shared: shared || again && old.shared}
	if local {
		of := preKey{k.policy, k.key}
		if b.local[of] == nil {
			b.local[of] = map[uint64]struct{}{}
		}
		b.local[of][k.lease] = struct{}{}
		b.nLocal.Add(1)
	}
}

// fullSweepInterval is how often localFull, while the book is full of local
// leases, looks for lapsed ones: each look walks the whole book.
const fullSweepInterval = int64(100 * time.Millisecond)

// localFull reports whether the book holds maxFallbackLeases local leases at now:
// Local mode grants no more until some end or lapse. A full book first forgets the
// leases that lapsed (at most every fullSweepInterval): the sweep of add never ran
// while Local mode refused, and 100,000 leases left to lapse refused every local
// lease for good (TestLapsedLocalLeasesFreeTheFullBook).
func (b *leaseBook) localFull(now int64) bool {
	if b.nLocal.Load() < maxFallbackLeases {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now-b.fullSwept >= fullSweepInterval {
		b.fullSwept = now
		b.forgetLapsed(now)
	}
	return b.nLocal.Load() >= maxFallbackLeases
}

// forgetLapsed forgets the leases that have lapsed at now. Requires b.mu.
func (b *leaseBook) forgetLapsed(now int64) {
	for k, e := range b.leases {
		if now >= e.expires {
			b.forget(k, e)
		}
	}
}

// forget removes the entry e of k. Requires b.mu.
func (b *leaseBook) forget(k leaseKey, e leaseEntry) {
	delete(b.leases, k)
	if !e.local {
		return
	}
	of := preKey{k.policy, k.key}
	delete(b.local[of], k.lease)
	if len(b.local[of]) == 0 {
		delete(b.local, of)
	}
	b.nLocal.Add(-1)
}

// take forgets the lease k and reports whether it was granted by a failure mode,
// whether by the local store, and whether the shared store may hold it too.
func (b *leaseBook) take(k leaseKey) (found, local, shared bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.leases[k]
	if ok {
		b.forget(k, e)
	}
	return ok, e.local, e.shared
}

// mayHold marks the lease k, whose acquire's call to the shared store failed after
// it may have landed, until the failure mode has decided it: add takes the mark into
// the lease's entry, and unsure then reports false.
func (b *leaseBook) mayHold(k leaseKey) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[k] = struct{}{}
}

// unsure ends the mark of mayHold, and reports whether add did not take it: the
// failure mode did not grant the lease, or the book had no room to remember it.
func (b *leaseBook) unsure(k leaseKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.pending[k]
	delete(b.pending, k)
	return ok
}

// movingLease is a local lease being handed over: its ID and cost.
type movingLease struct {
	lease uint64
	cost  int64
}

// startMoving marks the local leases of policy's key that are live at now, and not
// being handed over already, as being handed over, and returns them. It does not
// lock while the book holds no local lease, the case of every decision but those
// just after an outage.
func (b *leaseBook) startMoving(policy, key string, now int64) []movingLease {
	if b.nLocal.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var moving []movingLease
	for lease := range b.local[preKey{policy, key}] {
		k := leaseKey{policy, key, lease}
		if e := b.leases[k]; !e.moving && now < e.expires {
			e.moving = true
			b.leases[k] = e
			moving = append(moving, movingLease{lease, e.cost})
		}
	}
	return moving
}

// moved ends the hand-over of the lease k: taken says the shared store now holds it,
// so the book forgets it (its release goes to the shared store); otherwise it stays
// local, and landed says the shared store may now hold it too (the hand-over's
// acquire failed after it may have landed). It reports false when the lease's
// request ended meanwhile (take found it).
func (b *leaseBook) moved(k leaseKey, taken, landed bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.leases[k]
	switch {
	case !ok:
		return false
	case taken:
		b.forget(k, e)
	default:
		e.moving, e.shared = false, e.shared || landed
		b.leases[k] = e
	}
	return true
}

// endedAt remembers that the request of req's shared lease ended at now while its
// release failed, so that the lease is released when the shared store answers
// again. When the book holds maxFallbackLeases such leases, the lease lapses at its
// timeout instead.
func (b *leaseBook) endedAt(req *core.Request, lease uint64, now int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now, req.Policy.Period())
	b.appendEnded(req.Policy, req.Key, endedLease{lease: lease, until: now + int64(req.Policy.Period())})
}

// takeEnded forgets the shared leases of policy's key whose release failed, and
// returns those the shared store may still hold at now. It does not lock while the
// book holds none, the case of every decision but those just after an outage.
func (b *leaseBook) takeEnded(policy, key string, now int64) []endedLease {
	if b.nEnded.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k := preKey{policy, key}
	e := b.ended[k]
	if e == nil {
		return nil
	}
	delete(b.ended, k)
	b.nEnded.Add(-int64(len(e.leases)))
	return liveEnded(e.leases, now)
}

// takeSomeEnded forgets up to n of the shared leases whose release failed and that
// the shared store may still hold at now, and returns them, by key: whole keys, and
// part of the last one when it has more than are left of n. The lapsed leases of the
// keys it looks at are forgotten too.
func (b *leaseBook) takeSomeEnded(now int64, n int) []*endedLeases {
	if b.nEnded.Load() == 0 || n <= 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var taken []*endedLeases
	for k, e := range b.ended {
		if n == 0 {
			break
		}
		live := liveEnded(e.leases, now)
		if len(live) > n { // the rest stay for a later pass
			taken = append(taken, &endedLeases{policy: e.policy, key: e.key, leases: slices.Clone(live[:n])})
			b.nEnded.Add(-int64(len(e.leases) - (len(live) - n)))
			e.leases = live[n:]
			break
		}
		delete(b.ended, k)
		b.nEnded.Add(-int64(len(e.leases)))
		if len(live) > 0 {
			e.leases = live
			taken = append(taken, e)
			n -= len(live)
		}
	}
	return taken
}

// liveEnded is the leases of ended the shared store may still hold at now.
func liveEnded(ended []endedLease, now int64) []endedLease {
	live := ended[:0]
	for _, l := range ended {
		if now < l.until {
			live = append(live, l)
		}
	}
	return live
}

// restoreEnded remembers again leases of policy's key that takeEnded or
// takeSomeEnded returned and that were not released.
func (b *leaseBook) restoreEnded(policy core.Policy, key string, leases []endedLease) {
	if len(leases) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.appendEnded(policy, key, leases...)
}

// appendEnded remembers leases of policy's key as ended, as many as the book has
// room for (maxFallbackLeases in all): the others lapse at their timeout. Requires
// b.mu.
func (b *leaseBook) appendEnded(policy core.Policy, key string, leases ...endedLease) {
	n := min(len(leases), maxFallbackLeases-int(b.nEnded.Load()))
	if n <= 0 {
		return
	}
	k := preKey{policy.ID(), key}
	e := b.ended[k]
	if e == nil {
		e = &endedLeases{policy: policy, key: key}
		b.ended[k] = e
	}
	e.leases = append(e.leases, leases[:n]...)
	b.nEnded.Add(int64(n))
}
