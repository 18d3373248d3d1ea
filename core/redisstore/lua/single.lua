-- single.lua: the arguments of one charge on one key (Store.Decide) for the lean
-- scripts that skip decide.lua's stack driver. The algorithm's *_single.lua file
-- follows and must decide exactly as decide.lua with that algorithm's file does.
--
-- KEYS[1] is the state. ARGV: now margin unit refill capacity cost
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
-- unit refill capacity: the bucket's token unit, refill per ms and capacity
-- cost:   the request's effective cost
-- Reply as decide.lua's: now, allowed, then allowed remaining retry_after_ms
-- reset_after_ms delay_ms. Every argument is validated before the first write. Errors
-- do not name the policy: the store adds its name.

local MAX_EXACT = 9007199254740992 -- 2^53
local floor, format, tonumber = math.floor, string.format, tonumber

-- int parses an argument as an integer in [lo, hi], or returns nil (decide.lua's int).
local function int(arg, lo, hi)
  local n = tonumber(arg)
  if n and n >= lo and n <= hi and n == floor(n) then
    return n
  end
  return nil
end

-- quot is Go's a / b for b > 0: truncated towards zero (common.lua's quot).
local function quot(a, b)
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  if q < 0 and q * b ~= a then
    q = q + 1
  end
  return q
end

local margin = int(ARGV[2], 0, 31622400000) -- at most 366 days
local unit, refill, capacity = int(ARGV[3], 1, MAX_EXACT), int(ARGV[4], 1, MAX_EXACT), int(ARGV[5], 1, MAX_EXACT)
local cost = capacity and int(ARGV[6], 1, capacity)
if #KEYS ~= 1 or #ARGV ~= 6 or not (margin and unit and refill and cost) or capacity * unit > MAX_EXACT then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local now = ARGV[1]
if now == 'redis' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + floor(tonumber(time[2]) / 1000)
else
  now = int(now, 0, 1125899906842624) -- 2^50 ms: far beyond any real clock
  if not now then
    return redis.error_reply('RATELIMIT malformed arguments: now')
  end
end
local state = redis.pcall('GET', KEYS[1])
if type(state) == 'table' then
  return redis.error_reply('RATELIMIT ' .. state.err)
end
