-- single.lua: the single-decision driver, the hot path of Store.Decide. It charges
-- one request exactly as stack.lua charges a stack of one, in a script made for one
-- policy: scripts.go (singleSource) writes the policy's algorithm and numbers into
-- the line below, as a spec holds them ("tb unit refill capacity" for the buckets,
-- "fw limit period" and a 0 for the others), and nothing else differs between the
-- scripts of two policies. A GCRA charge costs the server 99.5k instructions here
-- against 115.4k through stack.lua, which parses a spec and walks its loops
-- (callgrind, one key).
local code, x, y, z = ${POLICY}
--
-- KEYS[1] is the policy's state. ARGV: now margin cost lease (as stack.lua reads them).
-- Reply: as stack.lua's for one policy: now, allowed, then allowed remaining
-- retry_after_ms reset_after_ms delay_ms.

local bucket = code == 'tb' or code == 'gcra' or code == 'lb'
local p = {alg = algorithms[code], unit = bucket and x, refill = bucket and y, capacity = bucket and z or x,
  limit = not bucket and x, period = not bucket and y, cost = tonumber(ARGV[3]), lease = ARGV[4],
  written_units = false, written_value = false, written_px = false}
local now, margin = arguments(ARGV[1], ARGV[2])
local cost, lease = p.cost, p.lease
if #ARGV ~= 4 or not now or not margin or not cost or cost % 1 ~= 0 or cost < 1 or cost > p.capacity
    or #lease > 20 or (code == 'cc' and not match(lease, '^%d+$')) then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local state, err = p.alg.load(KEYS[1], p)
if not state then
  return redis.error_reply('RATELIMIT ' .. err)
end
local allowed, remaining, retry, reset, delay, change = p.alg.step(state, p, now, true)
if change then
  p.alg.commit(KEYS[1], state, change, p, now, margin)
end
return {now, allowed, allowed, remaining, retry, reset, delay}
