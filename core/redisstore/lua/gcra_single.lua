-- gcra_single.lua: one GCRA charge (gcra.lua's step, inlined). Follows single.lua and
-- single_tat.lua, whose reach is the tolerance burst×unit; single_write.lua follows.

if far or queued + need > reach then
  -- wait_until: whole ms from now until the TAT lies at most allowance units ahead
  local function wait_until(allowance)
    local q = floor((allowance - frac) / refill) -- floordiv
    if q * refill > allowance - frac then
      q = q - 1
    elseif (q + 1) * refill <= allowance - frac then
      q = q + 1
    end
    local wait = diff - q
    return wait < 0 and 0 or wait
  end
  local remaining = 0
  if not far then
    remaining = quot(reach - queued, unit)
  end
  return {0, remaining, wait_until(0), wait_until(reach - need)}
end
queued = queued + need
local whole = refill == 1 and queued or quot(queued, refill)
millis, frac = now + whole, queued - whole * refill
local reset = whole -- ⌈queued/refill⌉: whole ms until the TAT
if frac > 0 then
  reset = whole + 1
end
local ttl = reset + margin
local value, expiry = format('%d %d', millis, frac), format('%d', ttl > 1 and ttl or 1)
local left, resets, waits = unit == 1 and reach - queued or quot(reach - queued, unit), reset, 0 -- the admission's reply fields (single_write.lua)
