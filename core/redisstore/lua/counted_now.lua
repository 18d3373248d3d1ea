-- counted_now.lua: the window of a counted lean script's instant (see counted.lua),
-- after single_now.lua: its index, ⌊now/period⌋ (quot's division and correction,
-- inlined: a call costs more than the arithmetic), its first state, base, and the
-- ms until it ends. Every state the script writes, with a charge added, must stay
-- below 2^53, where its arithmetic is exact. It ends the prologue.

local window = now / period
window = window - window % 1
if window * period > now then
  window = window - 1
elseif (window + 1) * period <= now then
  window = window + 1
end
local base, until_end = window * stride, (window + 1) * period - now
if base + stride + stride > 9007199254740992 then -- 2^53
  return redis.error_reply('RATELIMIT malformed arguments: now')
end
-- delta: the charge for charge_in_place.lua, as the caller sent it, which Redis reads
-- without a conversion from a Lua number.
local delta, most_state = cost_arg, 9007199254740992
