package resilient

import (
	"hash/maphash"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// memoShards splits the memo's map to keep its locks apart.
const memoShards = 16

// memo remembers, per (policy, key), the last answer the shared store gave, so that a
// decision the shared store cannot take continues from what it last said instead of
// from a fresh bucket:
//
//   - a slow call while the breaker is closed is decided from the last answer, without
//     refill, however old the answer: admitted while this replica's share of its
//     Remaining (less what such decisions spent since) covers the cost (decideSlow);
//   - Local mode seeds each key's local allowance from what is left of that share,
//     and never raises it while it runs (localKey, localDecided);
//   - Local mode starts a concurrency key with the leases its latest answer said
//     were in flight, held until those leases lapse (seedLeases);
//   - back on the shared store, the first answer for a key whose local allowance is
//     still recovering is followed by a charge of the difference, so that the shared
//     store, which never saw the local admissions, does not grant them again (debt).
//
// Memory is bounded: at most maxKeys entries, each dropped once its key has fully
// recovered everywhere it was decided. An answer that finds its shard full of live
// entries takes the place of one that recovers sooner and owes nothing (evict), or
// is not remembered, and the key is then unknown (its replica's share).
type memo struct {
	seed     maphash.Seed
	perShard int
	gen      atomic.Uint64 // numbers local allowances, so each seed from an answer starts on a fresh local key
	shards   [memoShards]memoShard
}

type memoShard struct {
	mu       sync.Mutex
	entries  map[preKey]memoEntry
	earliest int64 // no entry expires before this (ns)
}

type memoEntry struct {
	known      bool          // a shared answer is known
	at         int64         // ns: when the shared store answered
	remaining  int64         // its Remaining
	retryUntil int64         // ns: refused until then (0 when it admitted)
	resetAt    int64         // ns: when the key fully recovers, by its ResetAfter
	recovered  int64         // ns: when it also recovers from what slow-call decisions spent since (recoveryAfter)
	spent      int64         // spent by slow-call decisions since the answer
	absorbed   int64         // of spent, what the local allowance was charged (localKey)
	unsettled  int64         // spent by slow-call decisions (and a leaky bucket's queue debt, queueDebt) and not yet charged to the shared store
	turnEnds   chan struct{} // while a decision that settles the key is in flight (takeTurn): closed when it ends
	settling   int64         // the cost of that decision's own request, on its way to the shared store with the charge

	gen            uint64 // the local allowance's number; 0: none
	seededFrom     int64  // at of the answer the local allowance (or a concurrency key's seed) was seeded from
	seed           uint64 // a concurrency key's seed lease in the local store (seedLeases); 0: none
	localRemaining int64  // Remaining of the last local decision
	localAt        int64  // ns: when the last local decision was taken
	localUntil     int64  // ns: when the local allowance fully recovers
	localCharged   int64  // what the allowance's local decisions charged and no refund gave back
}

// expires is when the entry stops mattering: the key has fully recovered in the
// shared store's last answer and in the local store.
func (e *memoEntry) expires() int64 { return max(e.recovered, e.localUntil) }

func newMemo(maxKeys int) *memo {
	m := &memo{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/memoShards)}
	for i := range m.shards {
		m.shards[i].entries = make(map[preKey]memoEntry)
	}
	return m
}

func (m *memo) shard(k preKey) *memoShard { return &m.shards[m.shardIndex(k)] }

// shardIndex is the index of k's shard.
func (m *memo) shardIndex(k preKey) uint64 { return maphash.Comparable(m.seed, k) % memoShards }

// lock locks the shard of req's (policy, key) and returns it with the entry's key;
// the caller unlocks sh.mu.
func (m *memo) lock(req *core.Request) (sh *memoShard, k preKey) {
	k = preKey{req.Policy.ID(), req.Key}
	sh = m.shard(k)
	sh.mu.Lock()
	return sh, k
}

// remember records the shared store's answer res to req at now.
func (m *memo) remember(req *core.Request, res *core.Result, now int64) {
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok && !sh.room(m.perShard, now) && !sh.evict(now+int64(res.ResetAfter), now) {
		return
	}
	// What slow calls admitted and the shared store has not been charged (unsettled)
	// is not in its Remaining: reset to 0, a slow call racing a settlement was
	// forgotten by the slow calls after it. settling stays until the settler's turn
	// ends: this answer may be another decision's.
	e.known, e.at, e.remaining, e.spent, e.absorbed = true, now, res.Remaining, e.unsettled, 0
	e.retryUntil = 0
	if !res.Allowed && res.RetryAfter > 0 {
		e.retryUntil = now + int64(res.RetryAfter)
	}
	e.resetAt = now + int64(res.ResetAfter)
	e.recovered = e.resetAt
	sh.entries[k] = e
	if x := e.expires(); len(sh.entries) == 1 || x < sh.earliest {
		sh.earliest = x
	}
}

// room reports whether the shard has room for one more entry at now, sweeping the
// entries that no longer matter when it is full. Requires sh.mu.
func (sh *memoShard) room(perShard int, now int64) bool {
	return len(sh.entries) < perShard || (now >= sh.earliest && sh.sweep(now))
}

// evictSamples is how many entries a full shard looks at to make room (evict).
const evictSamples = 8

// evict makes room in a full shard for an answer whose key recovers at x: of a few
// entries (a map's order is random), it drops the one that recovers soonest, if
// before x, that owes the shared store nothing (no unsettled spending, no settlement
// turn, no live local allowance) and was not refused until later, and reports
// whether it dropped one. An entry is
// what keeps Local mode and slow calls from treating its key as never answered, and
// the one nearest its full recovery says the least. Without it, 70,000 keys of one
// request each left no room for a key that then spent 4 of 5, and Local mode started
// it afresh: 9 admitted under 5 a minute (TestAnswersStillMatterWhenTheMemoIsFull).
// Requires sh.mu.
func (sh *memoShard) evict(x, now int64) bool {
	var victim preKey
	found, soonest, seen := false, x, 0
	for k, e := range sh.entries {
		if seen++; seen > evictSamples {
			break
		}
		if e.unsettled == 0 && e.turnEnds == nil && (e.gen == 0 || now >= e.localUntil) && now >= e.retryUntil && e.expires() < soonest {
			victim, soonest, found = k, e.expires(), true
		}
	}
	if found {
		delete(sh.entries, victim)
	}
	return found
}

// sweep drops the entries that no longer matter and reports whether any was. Requires sh.mu.
func (sh *memoShard) sweep(now int64) bool {
	freed := false
	earliest := int64(1<<63 - 1)
	for k, e := range sh.entries {
		if now >= e.expires() {
			delete(sh.entries, k)
			freed = true
			continue
		}
		earliest = min(earliest, e.expires())
	}
	sh.earliest = earliest
	return freed
}

// available is what the last answer leaves for the key at now: its Remaining less
// what slow-call decisions spent since, the whole capacity less that once the
// answer's ResetAfter has passed, and the whole capacity once the key has recovered
// from both.
func (e *memoEntry) available(capacity, now int64) int64 {
	if now >= e.recovered {
		return capacity
	}
	return max(0, min(capacity, e.answered(capacity, now)-e.spent))
}

// answered is what the last answer leaves for the key at now, before slow calls:
// its Remaining, or the whole capacity once its ResetAfter has passed.
func (e *memoEntry) answered(capacity, now int64) int64 {
	if now >= e.resetAt {
		return capacity
	}
	return e.remaining
}

// share is this replica's share of base, units left of a policy of capacity capP,
// where it enforces capQ without the shared store (WithReplicas, WithDegrade), less
// what its slow calls spent since the answer: base·capQ/capP, never more than base.
// Slow calls and Local mode both spend from it: scaling only what the slow calls
// left, a replica with 10 left of 10, on 2 replicas, spent 5 in slow calls and then
// seeded 2 more in Local mode.
func (e *memoEntry) share(base, capP, capQ int64) int64 {
	return max(0, min(base, scale(base, capQ, capP))-e.spent)
}

// scale is ⌊v·num/den⌋ for v, num >= 0 and den > 0, without overflow.
func scale(v, num, den int64) int64 {
	hi, lo := bits.Mul64(uint64(v), uint64(num))
	if hi >= uint64(den) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(den))
	return int64(min(q, math.MaxInt64))
}

// remaining is what the last answer says is left for req at now (for the members of
// a stack the pre-limiter refuses), and when the key fully recovers; an unknown key
// reports its full capacity, as a store that never saw it does.
func (m *memo) remaining(req *core.Request, now int64) (int64, time.Duration) {
	capacity := req.Policy.Capacity()
	sh, k := m.lock(req)
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	if !ok || !e.known {
		return capacity, 0
	}
	return e.available(capacity, now), time.Duration(max(0, e.recovered-now))
}
