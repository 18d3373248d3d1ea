-- single.lua: the single-decision driver, the hot path of Store.Decide. It charges
-- one request exactly as stack.lua charges a stack of one, in a script made for one
-- policy: scripts.go (singleSource) writes the policy's algorithm and numbers into
-- the line below, as a spec holds them ("tb unit refill capacity" for the buckets,
-- "fw limit period" and a 0 for the others), and nothing else differs between the
-- scripts of two policies. It spares parsing a spec and walking stack.lua's loops.
local code, x, y, z = ${POLICY}
--
-- KEYS[1] is the policy's state. ARGV: now margin cost lease (as stack.lua reads them).
-- Reply: as stack.lua's for one policy: now, allowed, then allowed remaining
-- retry_after_ms reset_after_ms delay_ms.

local p
if code == 'tb' or code == 'gcra' or code == 'lb' then
  p = {unit = x, refill = y, capacity = z, cost = tonumber(ARGV[3]), lease = ARGV[4]}
else
  p = {limit = x, period = y, capacity = x, cost = tonumber(ARGV[3]), lease = ARGV[4]}
end
local now, margin = arguments(ARGV[1], ARGV[2])
local cost, lease = p.cost, p.lease
if #ARGV ~= 4 or not now or not margin or not cost or cost % 1 ~= 0 or cost < 1 or cost > p.capacity
    or #lease > 20 or (code == 'cc' and not match(lease, '^%d+$')) then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local value = redis.pcall('GET', KEYS[1])
if type(value) == 'table' then -- WRONGTYPE
  return redis.error_reply('RATELIMIT ' .. value.err)
end
local allowed, remaining, retry, reset, delay, write, ttl = algorithms[code].step(value, p, now, true)
if not allowed then
  return redis.error_reply('RATELIMIT ' .. remaining)
elseif write then
  put(KEYS[1], write, ttl, margin)
end
return {now, allowed, allowed, remaining, retry, reset, delay}
