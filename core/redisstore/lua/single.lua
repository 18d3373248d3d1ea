-- single.lua: the single-decision driver, the hot path of Store.Decide. It charges
-- one request exactly as stack.lua charges a stack of one, in a script made for one
-- policy and store: scripts.go (singleSource) writes into the line below the policy's
-- code and numbers as a spec holds them, a 0 in place of a missing third, then the
-- store's TTL margin in ms. It spares parsing a spec and walking stack.lua's loops.
local code, x, y, z, margin = ${POLICY}
--
-- KEYS[1] is the policy's state. ARGV: now cost, then the lease for the concurrency
-- limiter only (as stack.lua reads them).
-- Reply: one string, "now allowed remaining retry_after_ms reset_after_ms delay_ms".
-- Each argument and reply element costs the server a Lua string, a table slot and
-- their garbage: sending the margin in the script and one formatted string back,
-- rather than seven integers, took a GCRA decision from 96.9k to 90.4k server
-- instructions on one hot key, 94.6k to 87.7k on per-user keys (cmd/servercost).

local p
if code == 'tb' or code == 'gcra' or code == 'lb' then
  p = {unit = x, refill = y, capacity = z, cost = tonumber(ARGV[2]), lease = ''}
else
  p = {limit = x, period = y, capacity = x, cost = tonumber(ARGV[2]), lease = ARGV[3] or ''}
end
local now = arguments(ARGV[1], margin)
local cost, lease = p.cost, p.lease
if #ARGV ~= (code == 'cc' and 3 or 2) or not now or not cost or cost % 1 ~= 0 or cost < 1 or cost > p.capacity
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
return format('%d %d %d %d %d %d', now, allowed, remaining, retry, reset, delay)
