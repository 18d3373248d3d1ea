-- single_tat.lua: the fixed-point TAT (millis + frac/refill) of GCRA and the leaky
-- bucket for their lean scripts: fixedtime.lua's load and units_ahead. Follows
-- single_state.lua; the algorithm's *_single.lua follows it. It defines no function, so it
-- adds no closure to a call (the refusal paths define wait_until where they need it).

local millis, frac = 0, 0 -- a missing key: a TAT long past, an empty queue
if state then
  local m, f = string.match(state, '^(%d+) (%d+)$')
  if not m then
    return redis.error_reply('RATELIMIT malformed state')
  end
  millis, frac = m + 0, f + 0 -- digits (see common.lua)
  if frac >= refill then
    return redis.error_reply('RATELIMIT malformed state')
  end
end
-- reach is the bucket's tolerance (GCRA) or the queue's depth (leaky bucket)
local reach, need = capacity * unit, cost * unit
-- units_ahead: how far the TAT lies after now in token units, or far beyond reach
local queued, far, diff = 0, false, millis - now
if diff > 0 or (diff == 0 and frac ~= 0) then
  if diff > (refill == 1 and reach + 2 or quot(reach + refill, refill) + 1) then
    far = true
  else
    queued = diff * refill + frac
  end
end
