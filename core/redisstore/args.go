package redisstore

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-ratelimit/ratelimit/core"
)

// The modes of the stack script (lua/stack.lua).
const (
	modeCharge  = "charge"  // decide all-or-nothing and spend
	modePeek    = "peek"    // decide and spend nothing
	modeRefund  = "refund"  // give the cost back (transition.Refund), then peek
	modeUndo    = "undo"    // refund a charge taken at the same instant and release its lease, then peek
	modeRelease = "release" // end a concurrency lease (transition.ReleaseLease)
)

// serverTime is the now argument that makes the scripts read Redis TIME.
const serverTime = -1

// argsPerPolicy is how many script arguments describe one request: spec, cost, lease
// (lua/stack.lua, lua/batch.lua).
const argsPerPolicy = 3

// algorithmCode is the scripts' name of an algorithm (the abbreviation of policy IDs).
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

// policySpec is the script argument that describes a policy: its algorithm and the
// numbers the algorithm uses, "tb 1 100 20" (token unit, refill per ms, capacity) for
// the buckets, "fw 100 60000" (limit, period) for the others (lua/common.lua's policy).
func policySpec(p *core.Policy) string {
	b := make([]byte, 0, 48)
	b = append(b, algorithmCode(p.Algorithm())...)
	numbers := [...]int64{p.Limit(), p.PeriodMillis(), 0}
	n := 2
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		numbers, n = [...]int64{p.TokenUnit(), p.RefillPerMilli(), p.Capacity()}, 3
	}
	for _, v := range numbers[:n] {
		b = append(b, ' ')
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}

// maxCachedPolicies bounds specCache: policies computed per request (a limit from a
// header, say) could otherwise grow it without bound. Beyond it, specs are built
// per call.
const maxCachedPolicies = 4096

// specCache holds the specs of the policies a store has seen, by policy ID, boxed once.
type specCache struct {
	specs sync.Map // string -> any (a string)
	size  atomic.Int64
}

func (c *specCache) get(p *core.Policy) any {
	if spec, ok := c.specs.Load(p.ID()); ok {
		return spec
	}
	var spec any = policySpec(p)
	if c.size.Load() >= maxCachedPolicies {
		return spec
	}
	if stored, loaded := c.specs.LoadOrStore(p.ID(), spec); loaded {
		return stored
	}
	c.size.Add(1)
	return spec
}

// instantArg is the now argument of the scripts: ms since the epoch, or "redis" for
// the server's TIME.
func instantArg(now int64) any {
	if now == serverTime {
		return "redis"
	}
	return now
}

// appendRequest appends req's arguments: its policy's spec, its cost and its lease.
func (s *Store) appendRequest(args []any, req *core.Request) []any {
	var lease any = 0 // unused but by the concurrency limiter: spare boxing it
	if req.Policy.Algorithm() == core.Concurrency {
		lease = req.Lease
	}
	return append(args, s.specs.get(&req.Policy), req.EffectiveCost(), lease)
}

// stackArgs are the arguments of one EVALSHA of a stack script (lua/stack.lua): the
// command, the SHA, the keys, the mode, the instant, the TTL margin, then per request
// its arguments (appendRequest).
func (s *Store) stackArgs(sha any, mode string, now int64, reqs []core.Request, keys []string) []any {
	args := make([]any, 0, 3+len(keys)+3+argsPerPolicy*len(reqs))
	args = append(args, "evalsha", sha, len(keys))
	for _, key := range keys {
		args = append(args, key)
	}
	args = append(args, mode, instantArg(now), s.margin)
	for i := range reqs {
		args = s.appendRequest(args, &reqs[i])
	}
	return args
}

// singleArgs are the arguments of one EVALSHA of a single-decision script
// (lua/single.lua): the command, the SHA, the key, the instant and the request's cost,
// then its lease for the concurrency limiter only (the script holds the TTL margin).
func singleArgs(sha any, now int64, req *core.Request, key string) []any {
	if req.Policy.Algorithm() == core.Concurrency {
		return []any{"evalsha", sha, 1, key, instantArg(now), req.EffectiveCost(), req.Lease}
	}
	return []any{"evalsha", sha, 1, key, instantArg(now), req.EffectiveCost()}
}
