package resilient

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// preLimitShards splits the pre-limiter's map to keep its locks apart.
const preLimitShards = 16

// preLimiter remembers keys the shared store refused, and refuses them again in
// process memory, without a round trip, until the store's Retry-After has passed.
//
// It only refuses, and only what the shared store would refuse too: a refusal of cost
// c with Retry-After r means that no request of cost c or more can be admitted before
// r has passed (admissions elsewhere only spend more, and time only recovers it), so
// requests of at least cost c are refused until then, with the time that is left.
// Concurrency policies are never remembered: their leases can be released early.
// Two things can make the shared store admit sooner: a refund (core.Refunder) of that
// key, which this store's Refund accounts for once it succeeded (refunded; a refund
// through another replica, the pre-limiter does not see), and a policy whose
// parameters changed under the same name (a new ID, so the entry no longer matches).
//
// Memory is bounded: at most maxKeys entries, each dropped when its time has passed;
// a refusal that finds its shard full of live entries is not remembered.
type preLimiter struct {
	seed     maphash.Seed
	perShard int
	shards   [preLimitShards]preShard
}

type preShard struct {
	mu       sync.Mutex
	entries  map[preKey]preEntry
	earliest int64 // no entry expires before this (ns); a sweep before it frees nothing
}

type preKey struct{ policy, key string } // policy ID, key

type preEntry struct {
	until     int64 // ns: refused until then
	resetAt   int64 // ns: when the policy fully recovers, by the refusal's ResetAfter
	cost      int64 // the refused cost: smaller requests are not refused here
	remaining int64 // Remaining at the refusal: a lower bound of Remaining since
}

func newPreLimiter(maxKeys int) *preLimiter {
	if maxKeys == 0 {
		return nil
	}
	p := &preLimiter{seed: maphash.MakeSeed(), perShard: max(1, maxKeys/preLimitShards)}
	for i := range p.shards {
		p.shards[i].entries = make(map[preKey]preEntry)
	}
	return p
}

func (p *preLimiter) shard(k preKey) *preShard {
	return &p.shards[maphash.Comparable(p.seed, k)%preLimitShards]
}

// refuses reports whether req is known to be refused at now, and the result to answer.
func (p *preLimiter) refuses(req *core.Request, now int64) (core.Result, bool) {
	if p == nil || req.Policy.Algorithm() == core.Concurrency {
		return core.Result{}, false
	}
	k := preKey{req.Policy.ID(), req.Key}
	sh := p.shard(k)
	sh.mu.Lock()
	e, ok := sh.entries[k]
	if ok && now >= e.until {
		delete(sh.entries, k)
		ok = false
	}
	sh.mu.Unlock()
	if !ok || req.EffectiveCost() < e.cost {
		return core.Result{}, false
	}
	return core.Result{
		Policy:     req.Policy.Name(),
		Limit:      req.Policy.Capacity(),
		Remaining:  e.remaining,
		RetryAfter: time.Duration(e.until - now),
		ResetAfter: time.Duration(max(e.resetAt, e.until) - now),
	}, true
}

// remember records the shared store's answer res to req at now, when it is a refusal.
func (p *preLimiter) remember(req *core.Request, res *core.Result, now int64) {
	if p == nil || res.Allowed || res.RetryAfter <= 0 || req.Policy.Algorithm() == core.Concurrency {
		return
	}
	k := preKey{req.Policy.ID(), req.Key}
	e := preEntry{until: now + int64(res.RetryAfter), resetAt: now + int64(res.ResetAfter), cost: req.EffectiveCost(), remaining: res.Remaining}
	sh := p.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.entries[k]; !ok && len(sh.entries) >= p.perShard {
		if now < sh.earliest || !sh.sweep(now) {
			return
		}
	}
	sh.entries[k] = e
	if len(sh.entries) == 1 || e.until < sh.earliest {
		sh.earliest = e.until
	}
}

// refunded updates what the pre-limiter remembers of req's key once req's cost was
// given back to the shared store. A refusal of cost c stays true of cost c+x after a
// refund of x, since a refund gives back at most its cost (less, to a sliding window
// whose charge has aged into the previous period), with as much more remaining: the
// entry is kept, so a refused request that keeps coming after each refund (an HTTP
// merged decision refused beside an app-wide charge gives it back) is still refused
// without a round trip. A queue admits any cost once its slot is within reach, which
// the refund brings nearer: a leaky bucket's entry is dropped.
func (p *preLimiter) refunded(req *core.Request) {
	if p == nil || req.Policy.Algorithm() == core.Concurrency {
		return
	}
	k := preKey{req.Policy.ID(), req.Key}
	sh := p.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e, ok := sh.entries[k]
	switch {
	case !ok:
	case req.Policy.Algorithm() == core.LeakyBucket:
		delete(sh.entries, k)
	default:
		e.cost += req.EffectiveCost()
		e.remaining = min(e.remaining+req.EffectiveCost(), req.Policy.Capacity())
		sh.entries[k] = e
	}
}

// sweep drops the entries whose time has passed and reports whether any was. Requires sh.mu.
func (sh *preShard) sweep(now int64) bool {
	freed := false
	earliest := int64(1<<63 - 1)
	for k, e := range sh.entries {
		if now >= e.until {
			delete(sh.entries, k)
			freed = true
			continue
		}
		earliest = min(earliest, e.until)
	}
	sh.earliest = earliest
	return freed
}

// len is how many keys the pre-limiter holds, expired ones included.
func (p *preLimiter) len() int {
	if p == nil {
		return 0
	}
	n := 0
	for i := range p.shards {
		sh := &p.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}
