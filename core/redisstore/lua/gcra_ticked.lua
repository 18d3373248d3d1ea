-- gcra_ticked.lua: one GCRA charge on a ticked state (gcra.lua's step, inlined), after
-- ticked_state.lua charged it with INCRBY; ticked_write.lua follows. reach is the
-- tolerance burst×unit.

if ahead + need > reach then
  -- Refused, so the TAT lay after now (need <= reach) and the key existed: give the
  -- charge back.
  redis.call('DECRBY', KEYS[1], delta)
  -- wait_until: whole ms from now until the TAT lies at most allowance units ahead
  local function wait_until(allowance)
    local units = ahead - allowance
    return units > 0 and quot(units + refill - 1, refill) or 0
  end
  local remaining = 0
  if quot(ahead, refill) <= quot(reach + refill, refill) + 1 then -- not far ahead (fixedtime.lua)
    remaining = quot(reach - ahead, unit)
  end
  return {0, remaining, wait_until(0), wait_until(reach - need)}
end
local queued = (ahead > 0 and ahead or 0) + need
local left, waits = unit == 1 and reach - queued or quot(reach - queued, unit), 0 -- the admission's reply fields
