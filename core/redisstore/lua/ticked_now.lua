-- ticked_now.lua: the instant of a ticked lean script in token units (see
-- ticked.lua), after single_now.lua. The TAT lies at most reach + refill units
-- after it, and every state the script writes must stay below 2^52, where the
-- script's arithmetic is exact even after INCRBY adds a charge. It ends the prologue.

local reach, need, nowu = capacity * unit, cost * unit, now * refill
if nowu + reach + refill > 4503599627370496 then -- 2^52
  return redis.error_reply('RATELIMIT malformed arguments: now')
end
-- delta: the charge in units for charge_in_place.lua, as the caller sent it when the
-- unit is 1, which Redis reads without a conversion from a Lua number.
local delta, most_state = unit == 1 and cost_arg or need, 4503599627370496
