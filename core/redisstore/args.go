package redisstore

import (
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
const argsPerPolicy = 9

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

// policyArgs are the script arguments a policy always passes, boxed once: name,
// algorithm, unit, refill, capacity, limit and period.
type policyArgs [7]any

func newPolicyArgs(p *core.Policy) *policyArgs {
	return &policyArgs{p.Name(), algorithmCode(p.Algorithm()), p.TokenUnit(), p.RefillPerMilli(), p.Capacity(), p.Limit(), p.PeriodMillis()}
}

// maxCachedPolicies bounds argCache: policies computed per request (a limit from a
// header, say) could otherwise grow it without bound. Beyond it, arguments are boxed
// per call.
const maxCachedPolicies = 4096

// argCache holds the boxed arguments of the policies a store has seen, by policy ID.
type argCache struct {
	policies sync.Map // string -> *policyArgs
	size     atomic.Int64
}

func (c *argCache) get(p *core.Policy) *policyArgs {
	if v, ok := c.policies.Load(p.ID()); ok {
		return v.(*policyArgs)
	}
	args := newPolicyArgs(p)
	if c.size.Load() < maxCachedPolicies {
		if _, loaded := c.policies.LoadOrStore(p.ID(), args); !loaded {
			c.size.Add(1)
		}
	}
	return args
}

// scriptArgs are the arguments of one EVALSHA of the decide script (lua/decide.lua):
// the command, the SHA, the keys, the mode, the instant (serverTime for Redis TIME),
// the TTL margin, then nine per request.
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
		static := s.argCache.get(&reqs[i].Policy)
		args = append(args, static[:]...)
		args = append(args, reqs[i].EffectiveCost(), lease)
	}
	return args
}
