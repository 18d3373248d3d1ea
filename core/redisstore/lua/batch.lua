-- batch.lua: the batch driver. It charges a batch of single decisions in one script
-- call, in order, each exactly as stack.lua charges a stack of one, at one instant.
--
-- KEYS[i] is the key of decision i. ARGV: now margin, then per decision: spec cost lease
-- (as stack.lua reads them).
-- Reply, per decision in order: allowed remaining retry_after_ms reset_after_ms
-- delay_ms; or, when that decision failed, minus the length of its error message and
-- then its bytes. A decision's error leaves the others intact: each runs under pcall,
-- and reads its state before it writes. Arguments of another shape fail the call
-- before any decision runs.

local n = #KEYS
local now, margin = arguments(ARGV[1], ARGV[2])
if n < 1 or #ARGV ~= 2 + 3 * n or not margin then
  return redis.error_reply('RATELIMIT malformed batch arguments')
end
if not now then
  return redis.error_reply('RATELIMIT malformed batch arguments: now')
end

-- charge decides one request of p on key; an error raises.
local function charge(key, p)
  local state, err = p.alg.load(key, p)
  if not state then
    error('RATELIMIT ' .. err)
  end
  local allowed, remaining, retry, reset, delay, change = p.alg.step(state, p, now, true)
  if change then
    p.alg.commit(key, state, change, p, now, margin)
  end
  return allowed, remaining, retry, reset, delay
end

-- Consecutive decisions of one policy, cost and lease share one parse of them: Lua
-- compares strings by identity.
local out, spec, cost, lease, p, valid = {}, nil, nil, nil, nil, false
for i = 1, n do
  local ok, allowed, remaining, retry, reset, delay
  if ARGV[3 * i] ~= spec or ARGV[1 + 3 * i] ~= cost or ARGV[2 + 3 * i] ~= lease then
    spec, cost, lease = ARGV[3 * i], ARGV[1 + 3 * i], ARGV[2 + 3 * i]
    p = policy(spec, cost, lease)
    valid = p ~= nil
  end
  if not valid then
    ok, allowed = false, 'RATELIMIT malformed arguments'
  else
    ok, allowed, remaining, retry, reset, delay = pcall(charge, KEYS[i], p)
  end
  local k = #out
  if ok then
    out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5] = allowed, remaining, retry, reset, delay
  else
    local err = string.sub(tostring(type(allowed) == 'table' and allowed.err or allowed), 1, 200)
    out[k + 1] = -#err
    for j = 1, #err do
      out[k + 1 + j] = string.byte(err, j)
    end
  end
end
return out
