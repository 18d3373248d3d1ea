-- fixedtime.lua: the fixed-point instants of GCRA and the leaky bucket (core/fixedtime.go):
-- an instant is millis + frac/refill, with 0 <= frac < refill. A ticked policy (see
-- ticked) stores its TAT as one integer of token units since the epoch, millis × refill
-- + frac (ticked.lua), which its lean scripts charge in place with INCRBY (ticked_state.lua); any
-- other policy stores "millis frac".

local MAX_TICKS = 4503599627370496 -- 2^52: the most a ticked state may hold

-- ticked reports whether p keeps a ticked state, and gives p its granule
-- (ticked_granule, from ticked.lua).
local function ticked(p)
  if p.ticked == nil then
    p.granule = ticked_granule(p.unit, p.refill, p.capacity)
    p.ticked = p.granule ~= nil
  end
  return p.ticked
end

local function load_fixed_time(key, p, now)
  if ticked(p) and now * p.refill + p.capacity * p.unit + p.refill > MAX_TICKS then
    return nil, 'malformed arguments: now' -- beyond the instants a ticked state holds (ticked_now.lua)
  end
  local v, err = get(key)
  if err then
    return nil, err
  elseif not v then
    return {seen = false, millis = 0, frac = 0}
  end
  if p.ticked then
    -- Redis's INCRBY reads exactly these digits: no sign, no leading zero.
    if not (v == '0' or string.match(v, '^[1-9]%d*$')) or v + 0 > MAX_TICKS then
      return nil, 'malformed state'
    end
    local units = v + 0
    local millis = quot(units, p.refill)
    return {seen = true, millis = millis, frac = units - millis * p.refill}
  end
  local millis, frac = string.match(v, '^(%d+) (%d+)$')
  if not millis then
    return nil, 'malformed state'
  end
  millis, frac = millis + 0, frac + 0 -- digits (see common.lua)
  if frac >= p.refill then
    return nil, 'malformed state'
  end
  return {seen = true, millis = millis, frac = frac}
end

-- units_ahead is how far t lies after now in token units; far reports a distance past horizon.
local function units_ahead(t, now, refill, horizon)
  local diff = t.millis - now
  if diff < 0 or (diff == 0 and t.frac == 0) then
    return 0, false
  end
  if diff > quot(horizon + refill, refill) + 1 then
    return 0, true
  end
  return diff * refill + t.frac, false
end

-- wait_until is how many whole ms from now until t lies at most allowance units ahead:
-- (millis - now) + ⌈(frac - allowance)/refill⌉, at least zero.
local function wait_until(t, now, refill, allowance)
  local wait = t.millis - now - floordiv(allowance - t.frac, refill)
  if wait < 0 then
    return 0
  end
  return wait
end

local function fixed_after(now, units, refill)
  local whole = quot(units, refill)
  return {millis = now + whole, frac = units - whole * refill}
end

-- save_fixed_time stores t with a TTL that ends when t has passed, plus the margin;
-- for a ticked state, at the end of t's granule (see ticked_write.lua).
local function save_fixed_time(key, t, p, now, margin)
  if ticked(p) then
    local units = t.millis * p.refill + t.frac
    local edge = units - units % p.granule + p.granule
    local ttl = quot(edge + p.refill - 1, p.refill) + margin - now
    redis.call('SET', key, format('%d', units), 'PX', format('%d', ttl > 1 and ttl or 1))
    return
  end
  local ttl = t.millis - now + margin
  if t.frac > 0 then
    ttl = ttl + 1
  end
  redis.call('SET', key, format('%d %d', t.millis, t.frac), 'PX', format('%d', ttl > 1 and ttl or 1))
end

-- commit_fixed_time stores a charged TAT.
local function commit_fixed_time(key, old, t, p, now, margin)
  save_fixed_time(key, t, p, now, margin)
end

-- refund_fixed_time is core.Refund: the TAT moves back by the cost, to no earlier
-- than now, unless it lies beyond reach (a clock that went far back).
local function refund_fixed_time(key, t, p, now, margin)
  if not t.seen then
    return t
  end
  local queued, far = units_ahead(t, now, p.refill, 2 * p.capacity * p.unit)
  if far then
    return t
  end
  local back = fixed_after(now, math.max(0, queued - p.cost * p.unit), p.refill)
  back.seen = true
  save_fixed_time(key, back, p, now, margin)
  return back
end
