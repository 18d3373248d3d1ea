-- leakybucket.lua: core/leakybucket.go. State: the queue's TAT (fixedtime.lua).

local leaky_bucket = {load = load_fixed_time, commit = commit_fixed_time, refund = refund_fixed_time}

function leaky_bucket.step(tat, p, now, charge, reply, at)
  local depth = p.capacity * p.unit
  local queued, far = units_ahead(tat, now, p.refill, depth)
  local refused = far or queued > depth
  if refused or not charge then
    local retry, remaining = 0, 0
    if refused then
      retry = wait_until(tat, now, p.refill, depth)
    else
      remaining = quot(depth - queued, p.unit) + 1
    end
    put(reply, at, 0, remaining, retry, wait_until(tat, now, p.refill, 0), 0)
    return nil
  end
  local wait = queued
  queued = queued + p.cost * p.unit
  local remaining = 0
  if queued <= depth then
    remaining = quot(depth - queued, p.unit) + 1
  end
  put(reply, at, 1, remaining, 0, ceildiv(queued, p.refill), ceildiv(wait, p.refill))
  return fixed_after(now, queued, p.refill)
end

algorithms.lb = leaky_bucket
