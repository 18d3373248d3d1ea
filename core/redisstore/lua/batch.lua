-- batch.lua: the batch driver. It charges a batch of single decisions in one script
-- call, in order, each exactly as stack.lua charges a stack of one, at one instant.
--
-- KEYS[i] is the key of decision i. ARGV: now margin, then per decision: spec cost lease
-- (as stack.lua reads them).
-- Reply, per decision in order: allowed remaining retry_after_ms reset_after_ms
-- delay_ms; or, when that decision failed, minus the length of its error message and
-- then its bytes. A decision's error leaves the others intact: each reads and checks
-- its state before it writes. Arguments of another shape fail the call before any
-- decision runs.

local n = #KEYS
local now, margin = arguments(ARGV[1], ARGV[2])
if n < 1 or #ARGV ~= 2 + 3 * n or not margin then
  return redis.error_reply('RATELIMIT malformed batch arguments')
end
if not now then
  return redis.error_reply('RATELIMIT malformed batch arguments: now')
end

-- Consecutive decisions of one policy, cost and lease share one parse of them: Lua
-- compares strings by identity. A decision's error comes back from load as a value,
-- not raised under pcall: a pcall per decision cost the server about 2k instructions
-- (cmd/servercost), and only load can fail (WRONGTYPE, a malformed state).
local out, spec, cost, lease, p = {}, nil, nil, nil, nil
for i = 1, n do
  if ARGV[3 * i] ~= spec or ARGV[1 + 3 * i] ~= cost or ARGV[2 + 3 * i] ~= lease then
    spec, cost, lease = ARGV[3 * i], ARGV[1 + 3 * i], ARGV[2 + 3 * i]
    p = policy(spec, cost, lease)
  end
  local state, err = nil, 'malformed arguments'
  if p then
    state, err = p.alg.load(KEYS[i], p)
  end
  local k = #out
  if state then
    local change
    out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5], change = p.alg.step(state, p, now, true)
    if change then
      p.alg.commit(KEYS[i], state, change, p, now, margin)
    end
  else
    err = string.sub('RATELIMIT ' .. tostring(err), 1, 200)
    out[k + 1] = -#err
    for j = 1, #err do
      out[k + 1 + j] = string.byte(err, j)
    end
  end
end
return out
