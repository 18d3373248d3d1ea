-- instant.lua: the fixed-point instants of GCRA and the leaky bucket, after
-- common.lua in their scripts only (each function defined costs every call a closure).
-- An instant (core/internal/transition/fixedtime.go) is millis + frac/refill, 0 <= frac < refill, stored
-- as "millis frac".

-- units_ahead is how far the instant t lies after now in token units; far reports a
-- distance past horizon (a clock that went far back).
local function units_ahead(t, now, refill, horizon)
  local diff = t.millis - now
  if diff < 0 or (diff == 0 and t.frac == 0) then
    return 0, false
  elseif diff > floordiv(horizon + refill, refill) + 1 then
    return 0, true
  end
  return diff * refill + t.frac, false
end

-- wait_until is how many whole ms from now until t lies at most allowance units
-- ahead, at least zero.
local function wait_until(t, now, refill, allowance)
  local wait = t.millis - now - floordiv(allowance - t.frac, refill)
  return wait > 0 and wait or 0
end

-- load_instant reads a "millis frac" state; a missing key is an instant long past.
local function load_instant(key, p)
  local v = redis.pcall('GET', key)
  if not v then
    return {millis = 0, frac = 0, seen = false}
  elseif type(v) == 'table' then
    return nil, v.err
  end
  local millis, frac = match(v, '^(%d+) (%d+)$')
  if not millis then
    return nil, 'malformed state'
  end
  millis, frac = millis + 0, frac + 0 -- digits, converted once: each conversion is a strtod
  if frac >= p.refill or millis > MAX_NOW + MAX_EXACT then
    return nil, 'malformed state'
  end
  return {millis = millis, frac = frac, seen = true}
end

-- commit_instant is the commit of GCRA and the leaky bucket, whose change is the new
-- instant in token units after now: it writes that instant; the key expires when it
-- has passed, plus the margin. t, the instant before, is not needed. p keeps the text
-- of its last write (p lives for one call: one now, one margin): at one instant, every
-- key whose bucket was full writes the same instant and TTL, so a batch on per-user
-- keys formats them once, not per key (42.0k -> 37.2k server instructions per
-- decision, cmd/servercost).
local function commit_instant(key, t, units, p, now, margin)
  if units ~= p.written_units then
    local whole = floordiv(units, p.refill)
    local frac = units - whole * p.refill
    local ttl = whole + (frac > 0 and 1 or 0) + margin
    p.written_units, p.written_value = units, format('%d %d', now + whole, frac)
    p.written_px = format('%d', ttl > 1 and ttl or 1)
  end
  redis.call('SET', key, p.written_value, 'PX', p.written_px)
end

-- after_instant is the instant a change of units token units after now leaves, as
-- load_instant would read it back.
local function after_instant(t, units, p, now)
  local whole = floordiv(units, p.refill)
  return {millis = now + whole, frac = units - whole * p.refill, seen = true}
end

-- refund_instant is transition.Refund for a TAT: it moves back by the cost, to no earlier
-- than now, unless it lies beyond reach (a clock that went far back).
local function refund_instant(key, t, p, now, margin)
  if not t.seen then
    return t
  end
  local queued, far = units_ahead(t, now, p.refill, 2 * p.capacity * p.unit)
  if far then
    return t
  end
  queued = math.max(0, queued - p.cost * p.unit)
  commit_instant(key, t, queued, p, now, margin)
  return after_instant(t, queued, p, now)
end
