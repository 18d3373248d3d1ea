-- ticked_state.lua: reads and charges the state of a ticked lean script (see
-- ticked.lua) in one command: INCRBY adds the charge to the stored TAT, as if it
-- were admitted and the TAT lay at or after now. That is the common case of a busy key,
-- which then needs no other command (ticked_write.lua keeps the TTL). A missing key
-- counts as 0, a TAT long past. The algorithm's *_ticked.lua file follows: a refusal
-- takes the charge back with DECRBY, leaving the value and TTL as they were, and an
-- admission with the TAT before now stores now + need instead.
-- delta: the argument as the caller sent it when it is the charge in units (a unit of
-- 1), which Redis reads without a conversion from a Lua number.

local delta = unit == 1 and cost_arg or need
local tat = redis.pcall('INCRBY', KEYS[1], delta)
if type(tat) == 'table' then
  -- INCRBY refused the stored value (not an integer, out of range, another type) or
  -- the argument; it wrote nothing. GET tells them apart.
  local state = redis.pcall('GET', KEYS[1])
  if type(state) == 'table' then
    return redis.error_reply('RATELIMIT ' .. state.err)
  elseif state and not ((state == '0' or string.match(state, '^[1-9]%d*$')) and state + 0 <= 4503599627370496) then
    return redis.error_reply('RATELIMIT malformed state')
  end
  return redis.error_reply('RATELIMIT malformed arguments')
end
local old = tat - need -- the stored TAT, exact: a valid one lies below 2^52 (ticked_now.lua)
if old < 0 or old > 4503599627370496 then
  redis.call('DECRBY', KEYS[1], delta)
  return redis.error_reply('RATELIMIT malformed state')
end
local ahead = old - nowu -- how far the TAT lay after now, in units; not after now when <= 0
