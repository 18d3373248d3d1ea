-- gcra.lua: core/gcra.go. State: the theoretical arrival time (fixedtime.lua).

local gcra = {load = load_fixed_time, commit = commit_fixed_time, refund = refund_fixed_time}

function gcra.step(tat, p, now, charge, reply, at)
  local tolerance = p.capacity * p.unit
  local need = p.cost * p.unit
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
    put(reply, at, 0, remaining, retry, wait_until(tat, now, p.refill, 0), 0)
    return nil
  end
  queued = queued + need
  put(reply, at, 1, quot(tolerance - queued, p.unit), 0, ceildiv(queued, p.refill), 0)
  return fixed_after(now, queued, p.refill)
end

algorithms.gcra = gcra
