-- fixedwindow.lua: core/fixedwindow.go. State "window count": the index k of the
-- newest window [k×period, (k+1)×period) seen and the cost admitted in it.

local fixed_window = {}

function fixed_window.load(key, p)
  local v, err = read('GET', key)
  if err then
    return nil, err
  end
  if not v then
    return {seen = false}
  end
  local window, count = string.match(v, '^(%d+) (%d+)$')
  window, count = tonumber(window), tonumber(count)
  if not window or count > p.limit then
    return nil, 'malformed state'
  end
  return {seen = true, window = window, count = count}
end

function fixed_window.step(st, p, now, charge)
  local window, count = floordiv(now, p.period), 0
  if st.seen and st.window >= window then
    window, count = st.window, st.count
  end
  local r = result()
  r.reset = (window + 1) * p.period - now
  r.stamp = window
  if count + p.cost > p.limit or not charge then
    r.remaining = p.limit - count
    if count + p.cost > p.limit then
      r.retry = r.reset
    end
    return r
  end
  count = count + p.cost
  r.allowed = 1
  r.remaining = p.limit - count
  return r, {seen = true, window = window, count = count}
end

local function save_window(key, st, p, now, margin)
  redis.call('SET', key, format('%d %d', st.window, st.count), 'PX', fmt(math.max((st.window + 1) * p.period - now + margin, 1)))
end

function fixed_window.commit(key, old, st, p, now, margin)
  save_window(key, st, p, now, margin)
end

-- refund takes the cost out of the window it was charged to (stamp), if that window
-- is still the current one; an emptied window is no state at all.
function fixed_window.refund(key, st, p, now, margin)
  if not st.seen or st.window ~= p.stamp then
    return st
  end
  local back = {seen = true, window = st.window, count = math.max(st.count - p.cost, 0)}
  if back.count == 0 then
    redis.call('DEL', key)
    return {seen = false}
  end
  save_window(key, back, p, now, margin)
  return back
end

algorithms.fw = fixed_window
