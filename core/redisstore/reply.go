package redisstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// fieldsPerResult is how many integers the scripts return per policy.
const fieldsPerResult = 5

// maxReplyValue bounds every integer of a reply: the scripts compute below 2^53.
const maxReplyValue = int64(1) << 53

// isInstant reports whether v may be the instant (ms since the epoch) a reply says
// its script decided at.
func isInstant(v int64) bool { return v >= 0 && v < maxReplyValue }

// parseDecision checks the stack script's reply (lua/stack.lua) and fills results for reqs. It
// reports the instant the script decided at and whether every policy admitted. A
// reply of another shape is an error naming the policies; it never yields an
// admission.
func parseDecision(reply []int64, reqs []core.Request, results []core.Result) (now int64, allowed bool, err error) {
	if len(reply) != 2+fieldsPerResult*len(reqs) {
		return 0, false, fmt.Errorf("%d integers for %d policies", len(reply), len(reqs))
	}
	now, all := reply[0], reply[1]
	if !isInstant(now) || all < 0 || all > 1 {
		return 0, false, fmt.Errorf("now %d, allowed %d", now, all)
	}
	every := true
	for i := range reqs {
		f := reply[2+fieldsPerResult*i : 2+fieldsPerResult*(i+1)]
		admitted, remaining, retry, reset, delay := f[0], f[1], f[2], f[3], f[4]
		if !fillResult(&reqs[i], now, admitted, remaining, retry, reset, delay, &results[i]) {
			return 0, false, fmt.Errorf("policy %q: fields %v", reqs[i].Policy.Name(), f)
		}
		every = every && admitted == 1
	}
	if (all == 1) != every {
		return 0, false, fmt.Errorf("stack allowed %d disagrees with its policies", all)
	}
	return now, all == 1, nil
}

// singleFields is how many numbers a single-decision script's reply holds: now, then
// the fields of its one policy.
const singleFields = 1 + fieldsPerResult

// parseSingle checks the reply of a single-decision script (lua/single.lua), "now
// allowed remaining retry_after_ms reset_after_ms delay_ms", and fills result for req.
// A reply of another shape is an error, never an admission.
func parseSingle(reply string, req *core.Request, result *core.Result) error {
	var f [singleFields]int64
	rest := reply
	for i := range f {
		field, tail, more := strings.Cut(rest, " ")
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil || more == (i == len(f)-1) { // a space after each number but the last
			return fmt.Errorf("reply %.80q: want %d numbers", reply, singleFields)
		}
		f[i], rest = n, tail
	}
	if !isInstant(f[0]) || !fillResult(req, f[0], f[1], f[2], f[3], f[4], f[5], result) {
		return fmt.Errorf("policy %q: fields %v", req.Policy.Name(), f)
	}
	return nil
}

// fillResult checks one policy's fields of a reply, decided at now, and, when they
// are well formed, fills result with them.
func fillResult(req *core.Request, now, admitted, remaining, retry, reset, delay int64, result *core.Result) bool {
	p := &req.Policy
	if admitted < 0 || admitted > 1 || remaining > p.Capacity()+1 || -remaining >= maxReplyValue ||
		!isDuration(retry) || !isDuration(reset) || !isDuration(delay) || admitted == 1 && retry != 0 {
		return false
	}
	*result = core.Result{
		Policy:     p.Name(),
		Allowed:    admitted == 1,
		Limit:      p.Capacity(),
		Remaining:  remaining,
		RetryAfter: time.Duration(retry) * time.Millisecond,
		ResetAfter: time.Duration(reset) * time.Millisecond,
		Delay:      time.Duration(delay) * time.Millisecond,
		DecidedAt:  time.UnixMilli(now),
	}
	if admitted == 1 && p.Algorithm() == core.Concurrency {
		result.Lease = req.Lease
	}
	return true
}

// maxDurationMs is the longest time.Duration in whole milliseconds: a reply's waits
// beyond it would overflow into negative durations.
const maxDurationMs = int64(math.MaxInt64 / time.Millisecond)

// isDuration reports whether v ms is a wait a reply may hold: not negative, and a
// time.Duration.
func isDuration(v int64) bool { return v >= 0 && v <= maxDurationMs }
