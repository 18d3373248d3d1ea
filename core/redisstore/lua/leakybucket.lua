-- leakybucket.lua: the leaky bucket (a queue), core/leakybucket.go. State: the TAT of
-- the queue, the instant its last request leaves, "millis frac" (common.lua's
-- fixed-point instants). A request takes the slot s = max(now, TAT); it is admitted
-- when s - now is at most depth (capacity × unit) units away, waits s - now, and moves
-- the TAT to s + cost × unit. A missing key is an empty queue.

local leaky_bucket = {load = load_instant, refund = refund_instant}

function leaky_bucket.step(tat, p, now, charge)
  local depth = p.capacity * p.unit
  local queued, far = units_ahead(tat, now, p.refill, depth)
  local refused = far or queued > depth
  if refused or not charge then
    local retry, remaining = 0, 0
    if refused then
      retry = wait_until(tat, now, p.refill, depth)
    else
      remaining = floordiv(depth - queued, p.unit) + 1
    end
    return 0, remaining, retry, wait_until(tat, now, p.refill, 0), 0
  end
  local wait = queued
  queued = queued + p.cost * p.unit
  local remaining = 0
  if queued <= depth then
    remaining = floordiv(depth - queued, p.unit) + 1
  end
  return 1, remaining, 0, ceildiv(queued, p.refill), ceildiv(wait, p.refill), instant_after(now, queued, p.refill)
end

-- commit writes the new TAT; the key expires when it has passed, plus the margin.
function leaky_bucket.commit(key, tat, change, p, now, margin)
  save_instant(key, change, now, margin)
end

algorithms.lb = leaky_bucket
