-- single_window.lua: the arguments of one charge on one key (Store.Decide) for the
-- lean window scripts, as single.lua is for the buckets. The algorithm's
-- *_single.lua file follows and must decide exactly as decide.lua with that
-- algorithm's file does.
--
-- KEYS[1] is the state. ARGV: now margin limit period cost
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
-- limit period: the policy's limit per period (ms)
-- cost:   the request's effective cost
-- single_now.lua and single_state.lua follow, then the algorithm's file.
-- Reply: allowed remaining reset_after_ms retry_after_ms delay_ms, the fields of
-- decide.lua's reply for one policy with reset before retry; trailing zeros may be
-- left out, so an admission that does not wait is {1, remaining, reset}. Each reply
-- integer costs the server more than computing it. Alone (not in a batch), such an
-- admission is packed into one integer (single_reply.lua). parseLeanReply reads
-- this reply.
-- Every argument is validated before the first write, with decide.lua's bounds.
-- Errors do not name the policy: the store adds its name.

local MAX_EXACT = 9007199254740992 -- 2^53
local MAX_PERIOD = 31622400000 -- 366 days in ms
local floor, format, tonumber = math.floor, string.format, tonumber

-- quot (Go's truncating a / b, which is ⌊a/b⌋ for the non-negative numbers of these
-- scripts) comes from quot.lua, which precedes this file.

-- numbers converts its arguments as tonumber does, by arithmetic, which costs no call:
-- a string that is not a number raises instead, and pcall then answers false.
local function numbers(a, b, c, d)
  return a + 0, b + 0, c + 0, d + 0
end

-- x % 1 ~= 0 rejects fractions, NaN and infinities; the range checks reject the rest.
local now = ARGV[1]
local numeric, margin, limit, period, cost = pcall(numbers, ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if #KEYS ~= 1 or #ARGV ~= 5 or not numeric or
    margin % 1 ~= 0 or limit % 1 ~= 0 or period % 1 ~= 0 or cost % 1 ~= 0 or
    margin < 0 or margin > MAX_PERIOD or limit < 1 or limit > MAX_EXACT or
    period < 1 or period > MAX_PERIOD or cost < 1 or cost > limit then
  return redis.error_reply('RATELIMIT malformed arguments')
end
