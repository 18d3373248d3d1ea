-- single.lua: the arguments of one charge on one key (Store.Decide) for the lean
-- scripts that skip decide.lua's stack driver. The algorithm's *_single.lua file
-- follows and must decide exactly as decide.lua with that algorithm's file does.
--
-- KEYS[1] is the state. ARGV: now margin unit refill capacity cost
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
-- unit refill capacity: the bucket's token unit, refill per ms and capacity
-- cost:   the request's effective cost
-- single_now.lua and single_state.lua follow, then the algorithm's file.
-- Reply: allowed remaining reset_after_ms retry_after_ms delay_ms, the fields of
-- decide.lua's reply for one policy with reset before retry; trailing zeros may be
-- left out, so an admission that does not wait is {1, remaining, reset}. Each reply
-- integer costs the server more than computing it. Alone (not in a batch), such an
-- admission is packed into one integer (single_reply.lua). parseLeanReply reads
-- this reply.
-- Every argument is validated before the first write. Errors do not name the
-- policy: the store adds its name.

local MAX_EXACT = 9007199254740992 -- 2^53
local floor, format, tonumber = math.floor, string.format, tonumber

-- quot (Go's truncating a / b) comes from quot.lua, which precedes this file.

-- numbers converts its arguments as tonumber does, by arithmetic, which costs no call:
-- a string that is not a number raises instead, and pcall then answers false.
local function numbers(a, b, c, d, e)
  return a + 0, b + 0, c + 0, d + 0, e + 0
end

-- Every number must be an integer in range, as decide.lua's int checks: x % 1 ~= 0
-- rejects fractions, NaN and infinities, and the range checks reject the rest.
local now = ARGV[1]
local numeric, margin, unit, refill, capacity, cost = pcall(numbers, ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
if #KEYS ~= 1 or #ARGV ~= 6 or not numeric or
    margin % 1 ~= 0 or unit % 1 ~= 0 or refill % 1 ~= 0 or capacity % 1 ~= 0 or cost % 1 ~= 0 or
    margin < 0 or margin > 31622400000 or -- at most 366 days
    unit < 1 or refill < 1 or refill > MAX_EXACT or capacity < 1 or capacity * unit > MAX_EXACT or
    cost < 1 or cost > capacity then
  return redis.error_reply('RATELIMIT malformed arguments')
end
