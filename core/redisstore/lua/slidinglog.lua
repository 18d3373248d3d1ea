-- slidinglog.lua: the sliding log, core/internal/transition/slidinglog.go. A request is
-- admitted when the costs admitted in (now - period, now], plus its own, are at most
-- the limit. State: the admitted requests, oldest first, as "at cost" entries joined by
-- commas. Requests admitted at one instant share one entry, which decides exactly as
-- separate entries would (they age out together). A missing key is an empty log. The
-- key expires when its newest entry ages out.

-- entries reads a stored log: the texts, instants and costs of its entries, oldest
-- first, and the sum of the costs; or nil and an error.
local function entries(value)
  local texts, at, cost, sum = {}, {}, {}, 0
  if not value then
    return texts, at, cost, 0
  end
  for text in string.gmatch(value .. ',', '([^,]*),') do
    local instant, spent = match(text, '^(%d+) (%d+)$')
    if not instant then
      return nil, 'malformed state'
    end
    local n = #texts + 1
    texts[n], at[n], cost[n] = text, instant + 0, spent + 0
    sum = sum + cost[n]
  end
  return texts, at, cost, sum
end

local function step(value, p, now, charge)
  local texts, at, cost, sum = entries(value)
  if not texts then
    return nil, at
  end
  local n, instant = #at, now
  if n > 0 and at[n] > instant then -- a clock that went back logs at the newest entry
    instant = at[n]
  end
  local drop = 0 -- the entries that have aged out
  while drop < n and at[drop + 1] <= instant - p.period do
    drop = drop + 1
    sum = sum - cost[drop]
  end
  local refused = sum + p.cost > p.limit
  if refused or not charge then
    local retry, reset = 0, 0
    local freed, excess = 0, sum + p.cost - p.limit
    for i = drop + 1, n do
      freed = freed + cost[i]
      if refused and freed >= excess then
        retry = at[i] + p.period - now
        break
      end
    end
    if n > drop then
      reset = at[n] + p.period - now
    end
    return 0, p.limit - sum, retry, reset, 0
  end
  sum = sum + p.cost
  -- The new log: the entries that have not aged out, then the request, in the newest
  -- entry when it was logged at the same instant.
  local kept, newest = n, format('%d %d', instant, p.cost)
  if n > drop and at[n] == instant then
    kept, newest = n - 1, format('%d %d', instant, cost[n] + p.cost)
  end
  local log = table.concat(texts, ',', drop + 1, kept)
  local ttl = instant + p.period - now
  return 1, p.limit - sum, 0, ttl, 0, log == '' and newest or log .. ',' .. newest, ttl
end

-- refund is transition.Refund (refundLog): the cost comes out of the entry logged
-- when the charge was taken, while it is in the window; an emptied entry is removed.
local function refund(value, p, now)
  local texts, at, cost = entries(value)
  if not texts then
    return
  end
  local n = #at
  local newest = n > 0 and math.max(now, at[n]) or now
  for i = n, 1, -1 do
    if at[i] == p.charged and at[i] > newest - p.period then
      local left = math.max(cost[i] - p.cost, 0)
      if left > 0 then
        texts[i] = format('%d %d', at[i], left)
      else
        table.remove(texts, i)
        table.remove(at, i)
      end
      return table.concat(texts, ','), #at > 0 and at[#at] + p.period - now or 0
    end
  end
end

algorithms.log = {step = step, refund = refund}
