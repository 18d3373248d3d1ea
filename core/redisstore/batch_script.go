package redisstore

import (
	"fmt"
	"strings"
)

// maxBatchErrorBytes bounds the bytes of one decision's error message in a batch reply.
const maxBatchErrorBytes = 200

// maxBatchReplyInts bounds the integers of one decision's reply in a batch reply, so
// that its header (see batchDriver) stays an exact Lua number. Single decisions reply
// with 3 to 5 (lean scripts) or 7 (decide.lua).
const maxBatchReplyInts = 40

// batchDriver decides a batch of keys with one script's batch form (newBatchScript):
// prepare, which runs the script's prologue and returns its body as a function of the
// key, or the prologue's reply (an error) when it returned early. KEYS[i] is the key
// of decision i, in order. ARGV holds runs of decisions that share their arguments
// (one policy's decisions differ only in their keys): per run the number of its
// decisions, the count of their arguments, the position of the instant argument when
// that asks for the server's TIME (0 when it does not), and then the arguments. A run
// shares one run of the prologue: the server parses and validates the arguments once,
// not once per key. The driver reads TIME once and gives every decision that asks for
// it that instant in milliseconds, the number the script computes from TIME: the
// batch's decisions happen at one instant, in order. A decision's error leaves the
// others intact: each runs under pcall, and the scripts validate everything before
// their first write. The scripts never write to KEYS or ARGV, so the driver passes
// one key table to every decision.
//
// A lean script's batch form may speculate (the script speculates): its body then
// skips the GET and decides as for a missing key, which every lean algorithm admits,
// and writes with SET NX, which fails when the key exists (lua/batch_state.lua). A
// speculating decision counts only when it was admitted, and so wrote to a key that
// was missing: exactly what reading the key first would have done. Otherwise it wrote
// nothing, and it is decided again with the GET. The first such miss ends speculation
// for the rest of the batch, so a batch of existing keys (one hot key, say) pays for
// one miss; a batch of keys whose states have expired (per-user keys with a short
// expiry margin) saves a GET per decision.
//
// Per decision the reply holds a header and then integers. When the script answered
// with an error or raised one, the header is minus the length of the message, and its
// bytes follow. Otherwise the header is m + 64 × mask, where m is the length of the
// script's reply and bit j−1 of mask is set when its integer j follows; an integer
// that does not follow equals integer j of the reply of the last decision before it
// that did not fail. One policy's decisions in one instant mostly repeat the instant,
// the verdict and often the counts, and every integer costs the server more to reply
// than to compare. Arguments of another shape are an error of the whole call, found
// before any decision runs.
const batchDriver = `
local KEYS, ARGV, pcall, tonumber, type = KEYS, ARGV, pcall, tonumber, type
do -- the shape of the arguments, checked before any decision runs
  local pos, keys = 1, 0
  while keys < #KEYS do
    local decisions, count, at = tonumber(ARGV[pos]), tonumber(ARGV[pos + 1]), tonumber(ARGV[pos + 2])
    if not (decisions and count and at) or decisions %% 1 ~= 0 or count %% 1 ~= 0 or at %% 1 ~= 0 or
        decisions < 1 or keys + decisions > #KEYS or count < 0 or pos + 2 + count > #ARGV or
        at < 0 or at > count then
      return redis.error_reply('RATELIMIT malformed batch arguments')
    end
    keys, pos = keys + decisions, pos + count + 3
  end
  if pos ~= #ARGV + 1 then
    return redis.error_reply('RATELIMIT malformed batch arguments')
  end
end
local out, n, pos, now, last, key, i = {}, 0, 1, nil, {}, {}, 0
while i < #KEYS do
  local decisions, count, at = tonumber(ARGV[pos]), tonumber(ARGV[pos + 1]), tonumber(ARGV[pos + 2])
  local args = {unpack(ARGV, pos + 3, pos + 2 + count)}
  pos = pos + count + 3
  if at > 0 then
    if not now then
      local time = redis.call('TIME')
      now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    end
    args[at] = now
  end
  key[1] = KEYS[i + 1]
  local ok, decide = pcall(prepare, key, args)
  if not ok then -- raised: an error reply for every decision with these arguments
    decide = {err = type(decide) == 'table' and decide.err or decide}
  end
  local prepared = type(decide) == 'function'
  for k = i + 1, i + decisions do
    key[1] = KEYS[k]
    local ok, reply = true, decide
    if prepared and speculative then
      ok, reply = pcall(decide, key, true)
      if not (ok and type(reply) == 'table' and reply[1] == 1) then
        -- Not admitted with a write to a missing key: nothing was written, so decide
        -- again reading the key, and stop speculating in this batch.
        speculative = false
        ok, reply = pcall(decide, key, false)
      end
    elseif prepared then
      ok, reply = pcall(decide, key, false)
    end
    local err
    if not ok then
      err = type(reply) == 'table' and reply.err or reply
    elseif type(reply) ~= 'table' then
      err = 'batch: the script did not reply with an array'
    elseif reply.err then
      err = reply.err
    end
    if not err and #reply > %d then
      err = 'batch: the script replied with more than %d integers'
    end
    if err then
      err = string.sub(tostring(err), 1, %d)
      out[n + 1] = -#err
      for j = 1, #err do
        out[n + 1 + j] = string.byte(err, j)
      end
      n = n + 1 + #err
    else
      local m, head, mask, bit = #reply, n + 1, 0, 64
      n = head
      for j = 1, m do
        local v = reply[j]
        if v ~= last[j] then
          n = n + 1
          out[n] = v
          mask = mask + bit
        end
        bit = bit + bit
      end
      out[head] = m + mask
      last = reply
    end
  end
  i = i + decisions
end
return out
`

// newBatchScript wraps a one-key script into the script that decides a batch of keys
// with it (see batchDriver). The script's prologue and body run unchanged (the body in
// its batch form, batchBody, when it has one), the body as a function nested in the
// prologue's, whose parameters KEYS and ARGV shadow the globals, so a batched decision
// computes exactly what the script computes alone.
func newBatchScript(single *script) *script {
	var b strings.Builder
	body := single.body
	if single.batchBody != "" {
		body = single.batchBody
	}
	fmt.Fprintf(&b, "local speculative = %t\n", single.speculates)
	b.WriteString("local prepare = function(KEYS, ARGV)\n")
	b.WriteString(single.prologue)
	b.WriteString("\nreturn function(KEYS, speculate)\n")
	b.WriteString(body)
	b.WriteString("\nend\nend\n")
	fmt.Fprintf(&b, batchDriver, maxBatchReplyInts, maxBatchReplyInts, maxBatchErrorBytes)
	batch := newScript(b.String())
	batch.lean = single.lean // each decision replies as single would
	return batch
}

// batchReplyError is one decision's error from a batch reply: what Redis would have
// answered to that decision alone. It is a redis.Error, so that wrapError classifies it
// as it classifies the error reply of an unbatched call.
type batchReplyError string

func (e batchReplyError) Error() string { return string(e) }

// RedisError marks batchReplyError as an error reply of Redis.
func (batchReplyError) RedisError() {}

// batchEntry is one decision's part of a batch reply: the script's integers, or its
// error.
type batchEntry struct {
	ints []int64
	err  error
}

// splitBatchReply decodes a batch reply (see batchDriver) into the replies of its n
// decisions. A reply of another shape is an error, and then no entry is returned. The
// decisions' integers share one allocation.
func splitBatchReply(reply []int64, n int) ([]batchEntry, error) {
	total, err := walkBatchReply(reply, n, nil, nil)
	if err != nil {
		return nil, err
	}
	entries := make([]batchEntry, n)
	if _, err := walkBatchReply(reply, n, entries, make([]int64, 0, total)); err != nil {
		return nil, err
	}
	return entries, nil
}

// walkBatchReply checks the n decisions of a batch reply and counts their integers.
// Given entries, it also fills them, appending the integers to ints, which must have
// room for them all, so that every entry's slice stays valid.
func walkBatchReply(reply []int64, n int, entries []batchEntry, ints []int64) (int, error) {
	pos, total, lastLen := 0, 0, 0
	var last []int64 // the integers of the last decision that did not fail, when filling
	for i := 0; i < n; i++ {
		if pos >= len(reply) {
			return 0, fmt.Errorf("batch reply of %d integers ends before decision %d of %d", len(reply), i+1, n)
		}
		head := reply[pos]
		pos++
		if head < 0 {
			size, err := batchErrorSize(reply[pos:], -head, i)
			if err != nil {
				return 0, err
			}
			if entries != nil {
				msg := make([]byte, size)
				for j, v := range reply[pos : pos+size] {
					msg[j] = byte(v)
				}
				entries[i].err = batchReplyError(msg)
			}
			pos += size
			continue
		}
		m, mask := int(head%64), head/64
		if m > maxBatchReplyInts || mask >= 1<<m {
			return 0, fmt.Errorf("batch reply: decision %d has the header %d", i+1, head)
		}
		start := len(ints)
		for j := 0; j < m; j++ {
			var v int64
			switch {
			case mask&(1<<j) != 0:
				if pos >= len(reply) {
					return 0, fmt.Errorf("batch reply of %d integers ends within decision %d", len(reply), i+1)
				}
				v = reply[pos]
				pos++
			case j < lastLen:
				if entries != nil {
					v = last[j]
				}
			default:
				return 0, fmt.Errorf("batch reply: decision %d repeats integer %d, which no decision before it has", i+1, j+1)
			}
			if entries != nil {
				ints = append(ints, v)
			}
		}
		total, lastLen = total+m, m
		if entries != nil {
			entries[i].ints = ints[start:len(ints):len(ints)]
			last = entries[i].ints
		}
	}
	if pos != len(reply) {
		return 0, fmt.Errorf("batch reply: %d integers after the %d decisions", len(reply)-pos, n)
	}
	return total, nil
}

// batchErrorSize checks decision i's error message of size bytes at the start of
// rest: it must fit, within maxBatchErrorBytes, and every integer must be a byte.
func batchErrorSize(rest []int64, size int64, i int) (int, error) {
	if size > maxBatchErrorBytes || size > int64(len(rest)) {
		return 0, fmt.Errorf("batch reply: decision %d claims an error of %d bytes, %d integers remain", i+1, size, len(rest))
	}
	for _, v := range rest[:size] {
		if v < 0 || v > 255 {
			return 0, fmt.Errorf("batch reply: decision %d: error byte %d", i+1, v)
		}
	}
	return int(size), nil
}
