-- gcra.lua: GCRA, core/gcra.go. It decides as the token bucket with one number of
-- state: the theoretical arrival time (TAT), the instant at which the bucket would be
-- full again, "millis frac" (common.lua's fixed-point instants). A request of cost c
-- is admitted when the TAT, moved on by c × unit, lies at most the tolerance
-- (capacity × unit) ahead of now. A missing key is a TAT long past: a full bucket.

local gcra = {load = load_instant, refund = refund_instant}

function gcra.step(tat, p, now, charge)
  local tolerance, need = p.capacity * p.unit, p.cost * p.unit
  local queued, far = units_ahead(tat, now, p.refill, tolerance)
  local refused = far or queued + need > tolerance
  if refused or not charge then
    local retry, remaining = 0, 0
    if refused then
      retry = wait_until(tat, now, p.refill, tolerance - need)
    end
    if not far then
      remaining = quot(tolerance - queued, p.unit)
    end
    return 0, remaining, retry, wait_until(tat, now, p.refill, 0), 0
  end
  queued = queued + need
  return 1, quot(tolerance - queued, p.unit), 0, ceildiv(queued, p.refill), 0, instant_after(now, queued, p.refill)
end

-- commit writes the new TAT; the key expires when it has passed, plus the margin.
function gcra.commit(key, tat, change, p, now, margin)
  save_instant(key, change, now, margin)
end

algorithms.gcra = gcra
