-- fixedwindow.lua: the fixed window, core/internal/transition/fixedwindow.go. Windows
-- are [k × period, (k+1) × period); a request is admitted when count + cost <= limit.
-- State "window count": the index k of the newest window seen and the cost admitted
-- in it. A missing key is an empty window. The key expires when its window ends.

-- window reads a stored value: the window's index and count, or nil and an error.
local function window(value, p)
  local index, count = match(value, '^(%d+) (%d+)$')
  if not index or count + 0 > p.limit or index * p.period > MAX_NOW then
    return nil, 'malformed state'
  end
  return index + 0, count + 0
end

local function step(value, p, now, charge)
  local index, count = floordiv(now, p.period), 0
  if value then
    local stored, counted = window(value, p)
    if not stored then
      return nil, counted
    elseif stored >= index then -- a clock that went back stays in the newest window
      index, count = stored, counted
    end
  end
  local until_end = (index + 1) * p.period - now
  if count + p.cost > p.limit then
    return 0, p.limit - count, until_end, until_end, 0
  elseif not charge then
    return 0, p.limit - count, 0, until_end, 0
  end
  count = count + p.cost
  return 1, p.limit - count, 0, until_end, 0, format('%d %d', index, count), until_end
end

-- refund is transition.Refund: the cost comes out of the window that counted the
-- charge, unless a later one has opened or that window has closed by now.
local function refund(value, p, now)
  local charged = floordiv(p.charged, p.period)
  local index, count = false, 0
  if value then
    index, count = window(value, p)
  end
  if index ~= charged or floordiv(now, p.period) > charged then
    return
  end
  return format('%d %d', index, math.max(count - p.cost, 0)), (index + 1) * p.period - now
end

algorithms.fw = {step = step, refund = refund}
