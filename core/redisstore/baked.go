package redisstore

import (
	"fmt"
	"strings"

	"github.com/go-ratelimit/ratelimit/core"
)

// maxBakedPolicies bounds the policies that get a lean script of their own. Every
// such script stays in each server's script cache (Redis before 7.4 never evicts
// one), so policies computed per request (a limit from a header, say) must not mint
// scripts without bound: beyond this many, a policy's single charges run the
// algorithm's shared lean script, which takes the policy's numbers as arguments.
const maxBakedPolicies = 256

// Most a baked number may be, as single.lua and single_window.lua bound the same
// arguments: a policy beyond them is left to the shared script, which refuses it
// with its own error. The checks compare float64s, as Lua compares its numbers.
const (
	maxExact  = 1 << 53     // MAX_EXACT
	maxPeriod = 31622400000 // MAX_PERIOD, and the margin's bound: 366 days in ms
)

// bakedArgsLua replaces single.lua (the buckets, with ticked.lua and ticked_args.lua
// for ticked policies) or single_window.lua (the windows, with counted.lua and
// counted_args.lua for counted fixed windows) in a policy's own lean script: the
// store's margin and the policy's numbers (the second %s: the locals that name them,
// most, the largest cost, and a ticked policy's granule or a counted one's stride)
// are written into the source, so a call sends only the cost (ARGV[1]) and, when the
// store has a clock, the instant (ARGV[2]). Parsing and checking five arguments on
// every call cost the server about a fifth of a decision. The first %s is
// bakedHelpers when the script's body calls them. A cost of 1, most decisions', is
// read and checked without a call to tonumber: Lua compares strings by identity, and
// 1 is a valid cost of every policy. That saves the server about 1,100 instructions.
const bakedArgsLua = `%slocal margin = %d
%s -- the policy's, checked by the store
local now, cost_arg = %s, ARGV[1]
local cost = 1
if cost_arg ~= '1' then
  cost = tonumber(cost_arg)
  if not cost or cost %% 1 ~= 0 or cost < 1 or cost > most then
    return redis.error_reply('RATELIMIT malformed arguments')
  end
end
if #KEYS ~= 1 or #ARGV ~= %d then
  return redis.error_reply('RATELIMIT malformed arguments')
end
`

// bakedHelpers names, as locals, the library functions that the lean bodies that
// format their state (all but the ticked and counted ones) call. Reading them costs
// the server about 1,000 instructions, which the others skip.
const bakedHelpers = "local floor, format, tonumber = math.floor, string.format, tonumber\n"

// leanNumbers are the numbers of p that its lean script takes as arguments after the
// margin: the bucket's unit, refill and capacity, or the window's limit and period.
func leanNumbers(p *core.Policy) []int64 {
	switch p.Algorithm() {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		return []int64{p.TokenUnit(), p.RefillPerMilli(), p.Capacity()}
	}
	return []int64{p.Limit(), p.PeriodMillis()}
}

// bakedLean is the lean script of one policy's single charges, for algorithm alg with
// numbers (leanNumbers) on a store with the given margin (ms) and clock (callerClock:
// the instant comes from the caller); nil when the algorithm has no lean script or a
// number lies outside the bounds that the shared script checks. It decides exactly
// as the algorithm's shared lean script called with the same numbers.
func bakedLean(alg core.Algorithm, margin int64, numbers []int64, callerClock bool) *script {
	files, ok := singleFiles[alg]
	if !ok || margin < 0 || float64(margin) > maxPeriod {
		return nil
	}
	if len(numbers) == 3 && ticked(alg, numbers[0], numbers[1], numbers[2]) {
		files = tickedFiles[alg]
	} else if alg == core.FixedWindow && countedStride(numbers[0], numbers[1]) != 0 {
		files = countedFiles
	}
	now, argc := "'redis'", 1
	if callerClock {
		now, argc = "ARGV[2]", 2
	}
	var locals string
	switch alg {
	case core.TokenBucket, core.GCRA, core.LeakyBucket:
		unit, refill, capacity := numbers[0], numbers[1], numbers[2]
		if unit < 1 || refill < 1 || float64(refill) > maxExact || capacity < 1 || float64(capacity)*float64(unit) > maxExact {
			return nil
		}
		locals = fmt.Sprintf("local unit, refill, capacity, most = %d, %d, %d, %d", unit, refill, capacity, capacity)
		if files.args == 3 { // ticked_args.lua's local, from ticked.lua's ticked_granule
			locals += fmt.Sprintf("\nlocal granule = %d", tickedGranule(unit, refill, capacity))
		}
	default:
		limit, period := numbers[0], numbers[1]
		if limit < 1 || float64(limit) > maxExact || period < 1 || float64(period) > maxPeriod {
			return nil
		}
		locals = fmt.Sprintf("local limit, period, most = %d, %d, %d", limit, period, limit)
		if files.args == 3 { // counted_args.lua's local, from counted.lua's counted_stride
			locals += fmt.Sprintf("\nlocal stride = %d", countedStride(limit, period))
		}
	}
	body := concat(files.body)
	helpers := bakedHelpers
	if files.args == 3 { // ticked or counted: the state is one integer, never formatted
		helpers = ""
	}
	args := fmt.Sprintf(bakedArgsLua, helpers, margin, locals, now, argc)
	// files.prologue is quot.lua, the arguments' files, then the instant's. quot is a
	// closure made on every call: a script that never calls it goes without.
	rest := concat(files.prologue[1+files.args:])
	if strings.Contains(rest+body, "quot(") {
		args = concat(files.prologue[:1]) + args
	}
	return newLeanScript(args+rest, body, "", false)
}

// bakedArgs are the arguments of one EVALSHA of a policy's own lean script: the
// command, the SHA, one key, the cost, and the instant when it is the caller's.
func bakedArgs(lean *script, now int64, req *core.Request, key string) []any {
	if now == serverTime {
		return []any{"evalsha", lean.sha, 1, key, req.EffectiveCost()}
	}
	return []any{"evalsha", lean.sha, 1, key, req.EffectiveCost(), now}
}
