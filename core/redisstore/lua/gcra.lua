-- gcra.lua: core/gcra.go. State: the theoretical arrival time (fixedtime.lua).

local gcra = {load = load_fixed_time}

function gcra.step(tat, p, now, charge)
  local tolerance = p.capacity * p.unit
  local need = p.cost * p.unit
  local r = result()
  local queued, far = units_ahead(tat, now, p.refill, tolerance)
  local refused = far or queued + need > tolerance
  if refused or not charge then
    if refused then
      r.retry = wait_until(tat, now, p.refill, tolerance - need)
    end
    r.reset = wait_until(tat, now, p.refill, 0)
    if not far then
      r.remaining = quot(tolerance - queued, p.unit)
    end
    return r
  end
  queued = queued + need
  r.allowed = 1
  r.remaining = quot(tolerance - queued, p.unit)
  r.reset = ceildiv(queued, p.refill)
  return r, fixed_after(now, queued, p.refill)
end

gcra.commit = commit_fixed_time
gcra.refund = refund_fixed_time
algorithms.gcra = gcra
