-- slidingwindow.lua: core/slidingwindow.go. State "window count previous": the current
-- window's index and cost, and the cost of the window before it.

local sliding_window = {}

function sliding_window.load(key, p)
  local v, err = get(key)
  if err then
    return nil, err
  elseif not v then
    return {seen = false}
  end
  local window, count, previous = string.match(v, '^(%d+) (%d+) (%d+)$')
  if not window then
    return nil, 'malformed state'
  end
  window, count, previous = window + 0, count + 0, previous + 0 -- digits (see common.lua)
  if count > p.limit or previous > p.limit or window * p.period > 1125899906842624 then -- beyond 2^50 ms
    return nil, 'malformed state'
  end
  return {seen = true, window = window, count = count, previous = previous}
end

-- count_before is countBefore: ⌊count×e/period⌋ for 0 <= e <= period, computed as
-- whole×e + ⌊rest×e/period⌋ with count = whole×period + rest, so no intermediate
-- exceeds min(count, period)×period.
local function count_before(count, e, period)
  local whole = floordiv(count, period)
  return whole * e + floordiv((count - whole * period) * e, period)
end

-- first_offset is firstOffset: the smallest e in [0, period] with
-- count_before(count, e, period) >= need, from core's floating-point estimate (the same
-- IEEE operations, so the same estimate) corrected exactly.
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

-- first_admitting_offset is slidingWindowWait: the first offset from the current
-- window's start at which cost is admitted.
local function first_admitting_offset(period, limit, cur, prev, cost)
  local spare = limit - cur - cost
  if spare >= 0 then
    local e = first_offset(prev, prev - spare, period)
    if e < period then
      return e
    end
    return period
  end
  local e = first_offset(cur, cur - (limit - cost), period)
  if e < period then
    return period + e
  end
  return 2 * period
end

local function until_recovered(start, period, cur, prev, now)
  if cur > 0 then
    return start + 2 * period - now
  elseif prev > 0 then
    return start + period - now
  end
  return 0
end

function sliding_window.step(st, p, now, charge, reply, at)
  local period = p.period
  local window, cur, prev = floordiv(now, period), 0, 0
  if st.seen then
    if st.window >= window then
      window, cur, prev = st.window, st.count, st.previous
    elseif st.window == window - 1 then
      prev = st.count
    end
  end
  local start = window * period
  local weighted = prev - count_before(prev, math.max(now - start, 0), period) -- ⌈prev×(period-elapsed)/period⌉
  local spare = p.limit - cur - p.cost
  if weighted > spare or not charge then
    local retry = 0
    if weighted > spare then
      retry = start + first_admitting_offset(period, p.limit, cur, prev, p.cost) - now
    end
    put(reply, at, 0, math.max(p.limit - cur - weighted, 0), retry, until_recovered(start, period, cur, prev, now), 0)
    return nil
  end
  cur = cur + p.cost
  put(reply, at, 1, math.max(p.limit - cur - weighted, 0), 0, until_recovered(start, period, cur, prev, now), 0)
  return {seen = true, window = window, count = cur, previous = prev}
end

local function save_counts(key, st, p, now, margin)
  local ttl = (st.window + 2) * p.period - now + margin
  redis.call('SET', key, format('%d %d %d', st.window, st.count, st.previous), 'PX', format('%d', ttl > 1 and ttl or 1))
end

function sliding_window.commit(key, old, st, p, now, margin)
  save_counts(key, st, p, now, margin)
end

-- refund is core.Refund: the cost comes out of the current window's count, unless
-- that window has closed by now.
function sliding_window.refund(key, st, p, now, margin)
  if not st.seen or floordiv(now, p.period) > st.window then
    return st
  end
  local back = {seen = true, window = st.window, count = math.max(st.count - p.cost, 0), previous = st.previous}
  save_counts(key, back, p, now, margin)
  return back
end

algorithms.sw = sliding_window
