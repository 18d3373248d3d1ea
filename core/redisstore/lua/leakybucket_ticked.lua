-- leakybucket_ticked.lua: one leaky bucket charge on a ticked state (leakybucket.lua's
-- step, inlined), after ticked_state.lua charged it with INCRBY; ticked_write.lua
-- follows. reach is the queue's depth burst×unit.

local queued = ahead > 0 and ahead or 0
if queued > reach then
  -- Refused, so the TAT lay after now and the key existed: give the charge back.
  redis.call('DECRBY', KEYS[1], delta)
  -- wait_until: whole ms from now until the TAT lies at most allowance units ahead
  local function wait_until(allowance)
    local units = ahead - allowance
    return units > 0 and quot(units + refill - 1, refill) or 0
  end
  return {0, 0, wait_until(0), wait_until(reach)}
end
local wait = queued
queued = queued + need
local left = 0
if queued <= reach then
  left = (unit == 1 and reach - queued or quot(reach - queued, unit)) + 1
end
local waits = wait -- ⌈wait/refill⌉ ms, as ticked_write.lua rounds: the admission's reply fields
if refill ~= 1 then
  waits = (wait + refill - 1) / refill
  waits = waits - waits % 1
end
