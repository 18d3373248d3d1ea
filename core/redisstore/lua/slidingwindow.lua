-- slidingwindow.lua: the sliding window, core/internal/transition/slidingwindow.go. A
-- request is admitted when cur + ⌈prev × (period - elapsed) / period⌉ + cost <= limit,
-- where cur and prev are the costs admitted in the current and the previous window and
-- elapsed is the time since the current window began.
-- State "window count previous": the current window's index, its cost, and the cost
-- of the window before it. A missing key is two empty windows. The key expires when
-- its current window has stopped counting (the end of the next window).

-- windows reads a stored value: the window's index, its count and the previous
-- window's, or nil and an error.
local function windows(value, p)
  local index, count, previous = match(value, '^(%d+) (%d+) (%d+)$')
  if not index or count + 0 > p.limit or previous + 0 > p.limit or index * p.period > MAX_NOW then
    return nil, 'malformed state'
  end
  return index + 0, count + 0, previous + 0
end

-- count_before is countBefore: ⌊count × e / period⌋ for 0 <= e <= period, computed
-- as whole × e + ⌊rest × e / period⌋ with count = whole × period + rest, so that no
-- intermediate exceeds min(count, period) × period.
local function count_before(count, e, period)
  local whole = floordiv(count, period)
  return whole * e + floordiv((count - whole * period) * e, period)
end

-- first_offset is firstOffset: the smallest e in [0, period] with
-- count_before(count, e, period) >= need, from core's floating-point estimate (the
-- same IEEE operations, so the same estimate) corrected exactly.
local function first_offset(count, need, period)
  if need <= 0 then
    return 0
  end
  local e = math.min(math.max(math.ceil(need * period / count), 0), period)
  while e > 0 and count_before(count, e - 1, period) >= need do
    e = e - 1
  end
  while e < period and count_before(count, e, period) < need do
    e = e + 1
  end
  return e
end

-- admitting_offset is slidingWindowWait: the first offset from the current window's
-- start at which cost is admitted.
local function admitting_offset(period, limit, cur, prev, cost)
  local spare = limit - cur - cost
  if spare >= 0 then
    return math.min(first_offset(prev, prev - spare, period), period)
  end
  local e = first_offset(cur, cur - (limit - cost), period)
  if e < period then
    return period + e
  end
  return 2 * period
end

-- until_recovered is how long until both windows have emptied.
local function until_recovered(start, period, cur, prev, now)
  if cur > 0 then
    return start + 2 * period - now
  elseif prev > 0 then
    return start + period - now
  end
  return 0
end

local function step(value, p, now, charge)
  local period = p.period
  local index, cur, prev = floordiv(now, period), 0, 0
  if value then
    local stored, count, previous = windows(value, p)
    if not stored then
      return nil, count
    elseif stored >= index then -- a clock that went back stays in the newest window
      index, cur, prev = stored, count, previous
    elseif stored == index - 1 then
      prev = count
    end
  end
  local start = index * period
  local weighted = prev - count_before(prev, math.max(now - start, 0), period) -- ⌈prev × (period - elapsed) / period⌉
  local spare = p.limit - cur - p.cost
  if weighted > spare then
    local retry = start + admitting_offset(period, p.limit, cur, prev, p.cost) - now
    return 0, math.max(p.limit - cur - weighted, 0), retry, until_recovered(start, period, cur, prev, now), 0
  elseif not charge then
    return 0, math.max(p.limit - cur - weighted, 0), 0, until_recovered(start, period, cur, prev, now), 0
  end
  cur = cur + p.cost
  return 1, math.max(p.limit - cur - weighted, 0), 0, until_recovered(start, period, cur, prev, now), 0,
    format('%d %d %d', index, cur, prev), start + 2 * period - now
end

-- refund is transition.Refund: the cost comes out of the window that counted the
-- charge, the state's or the previous one, while that window still weighs.
local function refund(value, p, now)
  if not value then
    return
  end
  local index, count, previous = windows(value, p)
  local charged, current = floordiv(p.charged, p.period), floordiv(now, p.period)
  if not index then
    return
  elseif charged == index and current <= charged + 1 then
    count = math.max(count - p.cost, 0)
  elseif charged == index - 1 and current <= index then
    previous = math.max(previous - p.cost, 0)
  else
    return
  end
  return format('%d %d %d', index, count, previous), (index + 2) * p.period - now
end

algorithms.sw = {step = step, refund = refund}
