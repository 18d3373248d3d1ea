-- fixedwindow.lua: the fixed window, core/internal/transition/fixedwindow.go. Windows are
-- [k × period, (k+1) × period); a request is admitted when count + cost <= limit.
-- State "window count": the index k of the newest window seen and the cost admitted
-- in it. A missing key is an empty window.

local function load(key, p)
  local v = redis.pcall('GET', key)
  if not v then
    return {}
  elseif type(v) == 'table' then -- WRONGTYPE
    return nil, v.err
  end
  local window, count = match(v, '^(%d+) (%d+)$')
  if not window or count + 0 > p.limit or window * p.period > MAX_NOW then
    return nil, 'malformed state'
  end
  return {window = window + 0, count = count + 0}
end

local function step(st, p, now, charge)
  local window, count = floordiv(now, p.period), 0
  if st.window and st.window >= window then -- a clock that went back stays in the newest window
    window, count = st.window, st.count
  end
  local until_end = (window + 1) * p.period - now
  if count + p.cost > p.limit then
    return 0, p.limit - count, until_end, until_end, 0
  elseif not charge then
    return 0, p.limit - count, 0, until_end, 0
  end
  count = count + p.cost
  return 1, p.limit - count, 0, until_end, 0, {window = window, count = count}
end

-- commit writes a window, the change (a whole state); the key expires when the window
-- ends, plus the margin.
local function commit(key, _, st, p, now, margin)
  local ttl = (st.window + 1) * p.period - now + margin
  redis.call('SET', key, format('%d %d', st.window, st.count), 'PX', format('%d', ttl > 1 and ttl or 1))
end

-- refund is transition.Refund: the cost comes out of the window that counted the
-- charge, unless a later one has opened or that window has closed by now.
local function refund(key, st, p, now, margin)
  local w = floordiv(p.charged, p.period)
  if w ~= st.window or floordiv(now, p.period) > w then
    return st
  end
  local back = {window = w, count = math.max(st.count - p.cost, 0)}
  commit(key, st, back, p, now, margin)
  return back
end

algorithms.fw = {load = load, step = step, commit = commit, refund = refund, after = true}
