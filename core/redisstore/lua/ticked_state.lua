-- ticked_state.lua: the state of a ticked lean script (see ticked.lua) after
-- charge_in_place.lua charged it in one command: INCRBY added the charge to the
-- stored TAT, as if it were admitted and the TAT lay at or after now. That is the
-- common case of a busy key, which then needs no other command (ticked_write.lua
-- keeps the TTL). A missing key counts as 0, a TAT long past. The algorithm's
-- *_ticked.lua file follows: a refusal takes the charge back with DECRBY, leaving the
-- value and TTL as they were, and an admission with the TAT before now stores now +
-- need instead.

local tat = charged
local old = tat - need -- the stored TAT, exact: a valid one lies below 2^52 (ticked_now.lua)
if old < 0 or old > 4503599627370496 then
  redis.call('DECRBY', KEYS[1], delta)
  return redis.error_reply('RATELIMIT malformed state')
end
local ahead = old - nowu -- how far the TAT lay after now, in units; not after now when <= 0
