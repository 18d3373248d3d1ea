package redisstore

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// The modes of the decide script.
const (
	modeCharge = "charge" // decide all-or-nothing and spend
	modePeek   = "peek"   // decide and spend nothing
	modeRefund = "refund" // give the cost back (core.Refund), then peek
	modeUndo   = "undo"   // refund a charge taken at the same instant and release its lease, then peek
)

// serverTime is the now argument that makes the script read Redis TIME.
const serverTime = -1

// argsPerPolicy is how many script arguments describe one request (lua/decide.lua).
const argsPerPolicy = 3

// algorithmCode is the script's name of an algorithm (the abbreviation of policy IDs).
func algorithmCode(a core.Algorithm) string {
	switch a {
	case core.TokenBucket:
		return "tb"
	case core.GCRA:
		return "gcra"
	case core.LeakyBucket:
		return "lb"
	case core.FixedWindow:
		return "fw"
	case core.SlidingWindow:
		return "sw"
	case core.SlidingLog:
		return "log"
	case core.Concurrency:
		return "cc"
	}
	return "?"
}

// policySpec is the script argument that describes a policy, boxed once: its name,
// algorithm and the parameters the algorithm uses, "api tb 1 100 20" (token unit,
// refill per ms, capacity) for the buckets, "login fw 100 60000" (limit, period) for
// the others.
func policySpec(p *core.Policy) any {
	b := make([]byte, 0, 64)
	b = append(b, p.Name()...)
	b = append(b, ' ')
	b = append(b, algorithmCode(p.Algorithm())...)
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		for _, v := range [...]int64{p.TokenUnit(), p.RefillPerMilli(), p.Capacity()} {
			b = append(b, ' ')
			b = strconv.AppendInt(b, v, 10)
		}
	default:
		for _, v := range [...]int64{p.Limit(), p.PeriodMillis()} {
			b = append(b, ' ')
			b = strconv.AppendInt(b, v, 10)
		}
	}
	return string(b)
}

// maxCachedPolicies bounds specCache: policies computed per request (a limit from a
// header, say) could otherwise grow it without bound. Beyond it, specs are built
// per call.
const maxCachedPolicies = 4096

// policyArgs are a policy's script arguments, boxed once: its spec for decide.lua
// and the policy's arguments of its lean single-charge script; and the policy's own
// lean script (baked.go), nil when it has none.
type policyArgs struct {
	spec   any
	single []any // the policy's arguments of its lean script: single.lua's or single_window.lua's
	lean   *script
}

func newPolicyArgs(p *core.Policy) *policyArgs {
	args := &policyArgs{spec: policySpec(p)}
	for _, n := range leanNumbers(p) {
		args.single = append(args.single, n)
	}
	return args
}

// specCache holds the arguments of the policies a store has seen, by policy ID, and
// bakes the lean scripts of at most maxBakedPolicies of them, the first it sees, for
// the store's margin (ms) and clock.
type specCache struct {
	specs       sync.Map // string -> *policyArgs
	size        atomic.Int64
	baked       atomic.Int64
	margin      int64
	callerClock bool
}

func (c *specCache) get(p *core.Policy) *policyArgs {
	if args, ok := c.specs.Load(p.ID()); ok {
		return args.(*policyArgs)
	}
	args := newPolicyArgs(p)
	if c.size.Load() >= maxCachedPolicies {
		return args // built per call, with the shared lean script
	}
	if c.reserveBaked() {
		if args.lean = bakedLean(p.Algorithm(), c.margin, leanNumbers(p), c.callerClock); args.lean == nil {
			c.baked.Add(-1)
		}
	}
	stored, loaded := c.specs.LoadOrStore(p.ID(), args)
	if loaded { // another caller stored p first: its script counts, not this one
		if args.lean != nil {
			c.baked.Add(-1)
		}
		return stored.(*policyArgs)
	}
	c.size.Add(1)
	return args
}

// reserveBaked counts one more baked script unless maxBakedPolicies are counted
// already, so that concurrent first uses of new policies never bake more. (A
// reservation that loses the race to store its policy is given back; a policy that
// first appears meanwhile may go without a script of its own.)
func (c *specCache) reserveBaked() bool {
	for {
		n := c.baked.Load()
		if n >= maxBakedPolicies {
			return false
		}
		if c.baked.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// scriptArgs are the arguments of one EVALSHA of the decide script (lua/decide.lua):
// the command, the SHA, the keys, the mode, the instant (serverTime for Redis TIME),
// the TTL margin, then per request its policy's spec, its cost and its lease.
func (s *Store) scriptArgs(sha any, mode string, now int64, reqs []core.Request, keys []string) []any {
	args := make([]any, 0, 3+len(keys)+3+argsPerPolicy*len(reqs))
	args = append(args, "evalsha", sha, len(keys))
	for _, key := range keys {
		args = append(args, key)
	}
	var at any = "redis"
	if now != serverTime {
		at = now
	}
	args = append(args, mode, at, s.margin)
	for i := range reqs {
		lease := reqs[i].Lease
		if reqs[i].Policy.Algorithm() != core.Concurrency {
			lease = 0 // unused: spare the allocation of boxing it
		}
		args = append(args, s.specs.get(&reqs[i].Policy).spec, reqs[i].EffectiveCost(), lease)
	}
	return args
}

// singleArgs are the arguments of one EVALSHA of a shared lean single-charge script
// (lua/single.lua, lua/single_window.lua): the command, the SHA, one key, the instant
// (serverTime for Redis TIME), the TTL margin, the policy's arguments (policyArgs.single:
// the bucket's unit, refill and capacity, or the window's limit and period), and the
// cost.
func (s *Store) singleArgs(sha any, now int64, req *core.Request, key string, policy []any) []any {
	var at any = "redis"
	if now != serverTime {
		at = now
	}
	args := make([]any, 0, 10)
	args = append(args, "evalsha", sha, 1, key, at, s.margin)
	args = append(args, policy...)
	return append(args, req.EffectiveCost())
}
