-- fixedwindow.lua: core/fixedwindow.go. State "window count": the index k of the
-- newest window [k×period, (k+1)×period) seen and the cost admitted in it. A counted
-- policy (counted.lua) stores them as one integer, window × stride + count, which its
-- lean script charges in place (fixedwindow_counted.lua).

local fixed_window = {}

-- counted reports whether p keeps a counted state, and gives p its stride
-- (counted_stride, from counted.lua).
local function counted(p)
  if p.counted == nil then
    p.stride = counted_stride(p.limit, p.period)
    p.counted = p.stride ~= nil
  end
  return p.counted
end

function fixed_window.load(key, p, now)
  if counted(p) and (floordiv(now, p.period) + 2) * p.stride > MAX_EXACT then
    return nil, 'malformed arguments: now' -- beyond the instants a counted state holds (counted_now.lua)
  end
  local v, err = get(key)
  if err then
    return nil, err
  elseif not v then
    return {seen = false}
  end
  local window, count
  if p.counted then
    -- Redis's INCRBY reads exactly these digits: no sign, no leading zero. A state
    -- must stay exact with a charge added (fixedwindow_counted.lua).
    if not (v == '0' or string.match(v, '^[1-9]%d*$')) or v + 0 > MAX_EXACT - 2 * p.stride then
      return nil, 'malformed state'
    end
    local value = v + 0
    count = value % p.stride -- exact: stride is a power of two
    window = (value - count) / p.stride
  else
    window, count = string.match(v, '^(%d+) (%d+)$')
    if not window then
      return nil, 'malformed state'
    end
    window, count = window + 0, count + 0 -- digits (see common.lua)
  end
  if count > p.limit or window * p.period > 1125899906842624 then -- a window beyond 2^50 ms
    return nil, 'malformed state'
  end
  return {seen = true, window = window, count = count}
end

function fixed_window.step(st, p, now, charge, reply, at)
  local window, count = floordiv(now, p.period), 0
  if st.seen and st.window >= window then
    window, count = st.window, st.count
  end
  local until_end = (window + 1) * p.period - now
  if count + p.cost > p.limit or not charge then
    local retry = 0
    if count + p.cost > p.limit then
      retry = until_end
    end
    put(reply, at, 0, p.limit - count, retry, until_end, 0)
    return nil
  end
  count = count + p.cost
  put(reply, at, 1, p.limit - count, 0, until_end, 0)
  return {seen = true, window = window, count = count}
end

local function save_window(key, st, p, now, margin)
  local ttl = (st.window + 1) * p.period - now + margin
  local value
  if counted(p) then
    value = format('%d', st.window * p.stride + st.count)
  else
    value = format('%d %d', st.window, st.count)
  end
  redis.call('SET', key, value, 'PX', format('%d', ttl > 1 and ttl or 1))
end

function fixed_window.commit(key, old, st, p, now, margin)
  save_window(key, st, p, now, margin)
end

-- refund is core.Refund: the cost comes out of the newest window, unless that window
-- has closed by now (the charge expired with it).
function fixed_window.refund(key, st, p, now, margin)
  if not st.seen or floordiv(now, p.period) > st.window then
    return st
  end
  local back = {seen = true, window = st.window, count = math.max(st.count - p.cost, 0)}
  save_window(key, back, p, now, margin)
  return back
end

algorithms.fw = fixed_window
