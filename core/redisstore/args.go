package redisstore

import (
	"strconv"

	"github.com/go-ratelimit/ratelimit/core"
)

// The modes of the decide script.
const (
	modeCharge = "charge" // decide all-or-nothing and spend
	modePeek   = "peek"   // decide and spend nothing
	modeRefund = "refund" // undo a charge taken at the same instant, then peek
)

// serverTime is the now argument that makes the script read Redis TIME.
const serverTime = -1

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

// decideArgument is ARGV[1] of the decide script (see lua/decide.lua): the mode, the
// instant (serverTime for Redis TIME), the TTL margin, then ten tokens per request.
// stamps may be nil outside refunds.
func decideArgument(mode string, now, marginMs int64, reqs []core.Request, stamps []int64) string {
	var inline [256]byte
	b := append(inline[:0], mode...)
	b = append(b, ' ')
	if now == serverTime {
		b = append(b, "redis"...)
	} else {
		b = strconv.AppendInt(b, now, 10)
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, marginMs, 10)
	for i := range reqs {
		p := &reqs[i].Policy
		b = append(b, ' ')
		b = append(b, p.Name()...)
		b = append(b, ' ')
		b = append(b, algorithmCode(p.Algorithm())...)
		for _, v := range [...]int64{p.TokenUnit(), p.RefillPerMilli(), p.Capacity(), p.Limit(), p.PeriodMillis(), reqs[i].EffectiveCost()} {
			b = append(b, ' ')
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ' ')
		b = strconv.AppendUint(b, reqs[i].Lease, 10)
		b = append(b, ' ')
		stamp := int64(0)
		if stamps != nil {
			stamp = stamps[i]
		}
		b = strconv.AppendInt(b, stamp, 10)
	}
	return string(b)
}
