-- gcra.lua: GCRA, core/internal/transition/gcra.go. It decides as the token bucket
-- with one number of state: the theoretical arrival time (TAT), the instant at which
-- the bucket would be full again, "millis frac" (instant.lua). A request of cost c is
-- admitted when the TAT, moved on by c × unit, lies at most the tolerance
-- (capacity × unit) ahead of now. A missing key is a TAT long past: a full bucket.

local function step(value, p, now, charge)
  local unit, refill = p.unit, p.refill
  local tolerance, need = p.capacity * unit, p.cost * unit
  local millis, frac, queued, far = ahead(value, refill, now, tolerance)
  if not millis then
    return nil, frac
  end
  local refused = far or queued + need > tolerance
  if refused or not charge then
    local retry, remaining = 0, 0
    if refused then
      retry = wait_until(millis, frac, now, refill, tolerance - need)
    end
    if not far then -- far looks at whole milliseconds: the queue may be past the tolerance
      remaining = floordiv(math.max(0, tolerance - queued), unit)
    end
    return 0, remaining, retry, wait_until(millis, frac, now, refill, 0), 0
  end
  queued = queued + need -- at most tolerance: the divisions below need no sign care
  return 1, floordiv(tolerance - queued, unit), 0, ceildiv(queued, refill), 0,
    after(now, queued, refill)
end

algorithms.gcra = {step = step, refund = refund_instant}
