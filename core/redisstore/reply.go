package redisstore

import (
	"fmt"
	"slices"
	"time"

	"github.com/go-ratelimit/ratelimit/core"
)

// fieldsPerResult is how many integers the decide script returns per policy.
const fieldsPerResult = 5

// maxReplyValue bounds every integer of a reply: the scripts compute below 2^53.
const maxReplyValue = int64(1) << 53

// parseDecision checks the decide script's reply and fills results for reqs. It
// reports the instant the script decided at and whether every policy admitted. A
// reply of another shape is an error naming the policies; it never yields an
// admission.
func parseDecision(reply []int64, reqs []core.Request, results []core.Result) (now int64, allowed bool, err error) {
	if len(reply) != 2+fieldsPerResult*len(reqs) {
		return 0, false, fmt.Errorf("%d integers for %d policies", len(reply), len(reqs))
	}
	now, all := reply[0], reply[1]
	if now < 0 || now >= maxReplyValue || all < 0 || all > 1 {
		return 0, false, fmt.Errorf("now %d, allowed %d", now, all)
	}
	every := true
	for i := range reqs {
		f := reply[2+fieldsPerResult*i : 2+fieldsPerResult*(i+1)]
		admitted, remaining, retry, reset, delay := f[0], f[1], f[2], f[3], f[4]
		if !fillResult(&reqs[i], admitted, remaining, retry, reset, delay, &results[i]) {
			return 0, false, fmt.Errorf("policy %q: fields %v", reqs[i].Policy.Name(), f)
		}
		every = every && admitted == 1
	}
	if (all == 1) != every {
		return 0, false, fmt.Errorf("stack allowed %d disagrees with its policies", all)
	}
	return now, all == 1, nil
}

// packedResetBits splits a packed admission (lua/single_reply.lua): remaining ×
// 2^packedResetBits + reset.
const packedResetBits = 27

// parseLeanReply checks the reply of a lean single-charge script called alone (the
// value of a redis.Cmd) and fills result for req: an admission packed into one
// integer (lua/single_reply.lua), or an array that parseLean reads. A reply of
// another shape is an error; it never yields an admission.
func parseLeanReply(reply any, req *core.Request, result *core.Result) error {
	var buf [fieldsPerResult]int64
	ints, err := leanInts(reply, &buf)
	if err != nil {
		return err
	}
	return parseLean(ints, req, result)
}

// leanInts are the integers of a lean script's reply as parseLean reads them, in buf:
// a packed admission unpacked into {1, remaining, reset}, or an array's integers.
func leanInts(reply any, buf *[fieldsPerResult]int64) ([]int64, error) {
	switch v := reply.(type) {
	case int64:
		if v < 0 || v >= maxReplyValue {
			return nil, fmt.Errorf("packed admission %d", v)
		}
		buf[0], buf[1], buf[2] = 1, v>>packedResetBits, v&(1<<packedResetBits-1)
		return buf[:3], nil
	case []any:
		if len(v) > len(buf) {
			return nil, fmt.Errorf("%d values, want at most %d", len(v), len(buf))
		}
		for i, x := range v {
			n, ok := x.(int64)
			if !ok {
				return nil, fmt.Errorf("value %d is %T, not an integer", i+1, x)
			}
			buf[i] = n
		}
		return buf[:len(v)], nil
	}
	return nil, fmt.Errorf("a reply of type %T", reply)
}

// parseLean checks the reply of a lean single-charge script (lua/single.lua: allowed
// remaining reset retry delay, trailing zeros left out) and fills result for req. A
// reply of another shape is an error; it never yields an admission.
func parseLean(reply []int64, req *core.Request, result *core.Result) error {
	if len(reply) < 3 || len(reply) > fieldsPerResult {
		return fmt.Errorf("%d integers, want 3 to %d", len(reply), fieldsPerResult)
	}
	var f [fieldsPerResult]int64
	copy(f[:], reply)
	admitted, remaining, reset, retry, delay := f[0], f[1], f[2], f[3], f[4]
	if !fillResult(req, admitted, remaining, retry, reset, delay, result) {
		return fmt.Errorf("fields %v", slices.Clone(reply)) // a copy, so that reply does not escape
	}
	return nil
}

// fillResult checks one policy's fields of a reply and, when they are well formed,
// fills result with them.
func fillResult(req *core.Request, admitted, remaining, retry, reset, delay int64, result *core.Result) bool {
	p := &req.Policy
	if admitted < 0 || admitted > 1 || remaining > p.Capacity()+1 || -remaining >= maxReplyValue ||
		!inRange(retry) || !inRange(reset) || !inRange(delay) || admitted == 1 && retry != 0 {
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
	}
	if admitted == 1 && p.Algorithm() == core.Concurrency {
		result.Lease = req.Lease
	}
	return true
}

func inRange(v int64) bool { return v >= 0 && v < maxReplyValue }
