-- slidingwindow.lua: the sliding window, core/internal/transition/slidingwindow.go. A request is admitted
-- when cur + ⌈prev × (period - elapsed) / period⌉ + cost <= limit, where cur and prev
-- are the costs admitted in the current and the previous window and elapsed is the
-- time since the current window began.
-- State "window count previous": the current window's index, its cost, and the cost
-- of the window before it. A missing key is two empty windows.

local function load(key, p)
  local v = redis.pcall('GET', key)
  if not v then
    return {}
  elseif type(v) == 'table' then -- WRONGTYPE
    return nil, v.err
  end
  local window, count, previous = match(v, '^(%d+) (%d+) (%d+)$')
  if not window or count + 0 > p.limit or previous + 0 > p.limit or window * p.period > MAX_NOW then
    return nil, 'malformed state'
  end
  return {window = window + 0, count = count + 0, previous = previous + 0}
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

local function step(st, p, now, charge)
  local period = p.period
  local window, cur, prev = floordiv(now, period), 0, 0
  if st.window and st.window >= window then -- a clock that went back stays in the newest window
    window, cur, prev = st.window, st.count, st.previous
  elseif st.window == window - 1 then
    prev = st.count
  end
  local start = window * period
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
    {window = window, count = cur, previous = prev}
end

-- commit writes both windows, the change (a whole state); the key expires when the
-- current one has stopped counting (the end of the next window), plus the margin.
local function commit(key, _, st, p, now, margin)
  local ttl = (st.window + 2) * p.period - now + margin
  redis.call('SET', key, format('%d %d %d', st.window, st.count, st.previous), 'PX', format('%d', ttl > 1 and ttl or 1))
end

-- refund is transition.Refund: the cost comes out of the window that counted the
-- charge, the state's or the previous one, while that window still weighs.
local function refund(key, st, p, now, margin)
  local w, current = floordiv(p.charged, p.period), floordiv(now, p.period)
  local back = {window = st.window, count = st.count, previous = st.previous}
  if not st.window then
    return st
  elseif w == st.window and current <= w + 1 then
    back.count = math.max(st.count - p.cost, 0)
  elseif w == st.window - 1 and current <= st.window then
    back.previous = math.max(st.previous - p.cost, 0)
  else
    return st
  end
  commit(key, st, back, p, now, margin)
  return back
end

algorithms.sw = {load = load, step = step, commit = commit, refund = refund, after = true}
