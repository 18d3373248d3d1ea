-- leakybucket_single.lua: one leaky bucket charge (fixedtime.lua's load and commit,
-- leakybucket.lua's step, inlined). Follows single.lua. The queue's TAT is millis +
-- frac/refill.

local millis, frac = 0, 0 -- a missing key: an empty queue
if state then
  local m, f = string.match(state, '^(%d+) (%d+)$')
  millis, frac = tonumber(m), tonumber(f)
  if not millis or frac >= refill then
    return redis.error_reply('RATELIMIT malformed state')
  end
end
local depth, need = capacity * unit, cost * unit
-- units_ahead: how far the TAT lies after now in token units, or far beyond reach
local queued, far, diff = 0, false, millis - now
if diff > 0 or (diff == 0 and frac ~= 0) then
  if diff > quot(depth + refill, refill) + 1 then
    far = true
  else
    queued = diff * refill + frac
  end
end
if far or queued > depth then
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
  return {now, 0, 0, 0, wait_until(depth), wait_until(0), 0}
end
local wait = queued
queued = queued + need
local remaining = 0
if queued <= depth then
  remaining = quot(depth - queued, unit) + 1
end
local whole = quot(queued, refill)
millis, frac = now + whole, queued - whole * refill
local ttl = millis - now + margin
if frac > 0 then
  ttl = ttl + 1
end
redis.call('SET', KEYS[1], format('%d %d', millis, frac), 'PX', ttl > 1 and ttl or 1)
return {now, 1, 1, remaining, 0, quot(queued + refill - 1, refill), quot(wait + refill - 1, refill)}
