-- leakybucket.lua: core/leakybucket.go. State: the queue's TAT (fixedtime.lua).

local leaky_bucket = {load = load_fixed_time}

function leaky_bucket.step(tat, p, now, charge)
  local depth = p.capacity * p.unit
  local r = result()
  local queued, far = units_ahead(tat, now, p.refill, depth)
  local refused = far or queued > depth
  if refused or not charge then
    if refused then
      r.retry = wait_until(tat, now, p.refill, depth)
    else
      r.remaining = quot(depth - queued, p.unit) + 1
    end
    r.reset = wait_until(tat, now, p.refill, 0)
    return r
  end
  local wait = queued
  queued = queued + p.cost * p.unit
  r.allowed = 1
  r.delay = ceildiv(wait, p.refill)
  if queued <= depth then
    r.remaining = quot(depth - queued, p.unit) + 1
  end
  r.reset = ceildiv(queued, p.refill)
  return r, fixed_after(now, queued, p.refill)
end

leaky_bucket.commit = commit_fixed_time
leaky_bucket.refund = refund_fixed_time
algorithms.lb = leaky_bucket
