package redisstore

import (
	"fmt"
	"strings"
)

// maxBatchErrorBytes bounds the bytes of one decision's error message in a batch reply.
const maxBatchErrorBytes = 200

// batchDriver runs a script's body, wrapped as the function decide_one, once per key,
// each with its own arguments, and concatenates the replies into one array of
// integers. KEYS[i] is the key of decision i; ARGV holds, per decision, the count of its
// arguments, the position of its instant argument when that asks for the server's
// TIME (0 when it does not), and then the arguments; or "=" for the arguments of the
// decision before (one policy's decisions differ only in their keys, and the server
// then parses three values per decision, not nine). The driver reads TIME once and
// gives every such decision that instant in milliseconds, as the script would have
// computed it: the batch's decisions happen at one instant, in order. Per decision the reply holds the count of the
// integers that follow and then the script's reply; or, when the script answered with
// an error or raised one, minus the length of the message and then its bytes. A
// decision's error leaves the others intact: each runs under pcall, and the scripts
// validate everything before their first write. The scripts never write to KEYS or
// ARGV, so the driver passes them one key table and the arguments' table of the last
// decision that spelled them out, without copying either per decision.
const batchDriver = `
local out, n, pos, now, last, key = {}, 0, 1, nil, nil, {}
for i = 1, #KEYS do
  local args
  if ARGV[pos] == '=' then
    args, pos = last, pos + 1
  else
    local count, at = tonumber(ARGV[pos]), tonumber(ARGV[pos + 1])
    args = {unpack(ARGV, pos + 2, pos + 1 + count)}
    pos = pos + count + 2
    if at > 0 then
      if not now then
        local time = redis.call('TIME')
        now = string.format('%%d', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))
      end
      args[at] = now
    end
    last = args
  end
  key[1] = KEYS[i]
  local ok, reply = pcall(decide_one, key, args)
  local err
  if not ok then
    err = type(reply) == 'table' and reply.err or reply
  elseif type(reply) ~= 'table' then
    err = 'batch: the script did not reply with an array'
  elseif reply.err then
    err = reply.err
  end
  if err then
    err = string.sub(tostring(err), 1, %d)
    out[n + 1] = -#err
    for j = 1, #err do
      out[n + 1 + j] = string.byte(err, j)
    end
    n = n + 1 + #err
  else
    out[n + 1] = #reply
    for j = 1, #reply do
      out[n + 1 + j] = reply[j]
    end
    n = n + 1 + #reply
  end
end
return out
`

// newBatchScript wraps a one-key script into the script that decides a batch of keys
// with it (see batchDriver). The script's body runs unchanged, as a function whose
// parameters KEYS and ARGV shadow the globals, so a batched decision computes exactly
// what the script computes alone.
func newBatchScript(single *script) *script {
	var b strings.Builder
	b.WriteString("local decide_one = function(KEYS, ARGV)\n")
	b.WriteString(single.source)
	b.WriteString("\nend\n")
	fmt.Fprintf(&b, batchDriver, maxBatchErrorBytes)
	return newScript(b.String())
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

// splitBatchReply cuts a batch reply into the replies of its n decisions. A reply of
// another shape is an error, and then no entry is returned.
func splitBatchReply(reply []int64, n int) ([]batchEntry, error) {
	entries := make([]batchEntry, n)
	pos := 0
	for i := range entries {
		if pos >= len(reply) {
			return nil, fmt.Errorf("batch reply of %d integers ends before decision %d of %d", len(reply), i+1, n)
		}
		count := reply[pos]
		pos++
		if count >= 0 {
			if count > int64(len(reply)-pos) {
				return nil, fmt.Errorf("batch reply: decision %d claims %d integers, %d remain", i+1, count, len(reply)-pos)
			}
			entries[i].ints = reply[pos : pos+int(count)]
			pos += int(count)
			continue
		}
		if count < -maxBatchErrorBytes || -count > int64(len(reply)-pos) {
			return nil, fmt.Errorf("batch reply: decision %d claims an error of %d bytes, %d integers remain", i+1, -count, len(reply)-pos)
		}
		msg := make([]byte, -count)
		for j, v := range reply[pos : pos+len(msg)] {
			if v < 0 || v > 255 {
				return nil, fmt.Errorf("batch reply: decision %d: error byte %d", i+1, v)
			}
			msg[j] = byte(v)
		}
		entries[i].err = batchReplyError(msg)
		pos += len(msg)
	}
	if pos != len(reply) {
		return nil, fmt.Errorf("batch reply: %d integers after the %d decisions", len(reply)-pos, n)
	}
	return entries, nil
}
