-- leakybucket.lua: the leaky bucket (a queue), core/internal/transition/leakybucket.go.
-- State: the TAT of the queue, the instant its last request leaves, "millis frac"
-- (instant.lua). A request takes the slot s = max(now, TAT); it is admitted when
-- s - now is at most depth (capacity × unit) units away, waits s - now, and moves the
-- TAT to s + cost × unit. A missing key is an empty queue.

local function step(value, p, now, charge)
  local unit, refill = p.unit, p.refill
  local depth = p.capacity * unit
  local millis, frac, queued, far = ahead(value, refill, now, depth)
  if not millis then
    return nil, frac
  end
  local refused = far or queued > depth
  if refused or not charge then
    local retry, remaining = 0, 0
    if refused then
      retry = wait_until(millis, frac, now, refill, depth)
    else
      remaining = floordiv(depth - queued, unit) + 1
    end
    return 0, remaining, retry, wait_until(millis, frac, now, refill, 0), 0
  end
  local wait = queued
  queued = queued + p.cost * unit
  local remaining = 0
  if queued <= depth then
    remaining = floordiv(depth - queued, unit) + 1
  end
  return 1, remaining, 0, ceildiv(queued, refill), ceildiv(wait, refill),
    after(now, queued, refill)
end

algorithms.lb = {step = step, refund = refund_instant}
