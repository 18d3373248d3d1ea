-- slidinglog.lua: the sliding log, core/internal/transition/slidinglog.go. A request is admitted when the
-- costs admitted in (now - period, now], plus its own, are at most the limit.
-- State: a list of the admitted requests as flat pairs "at", "cost", oldest first.
-- Requests admitted at one instant share one entry, which decides exactly as
-- separate entries would (they age out together). A missing key is an empty log.

local function load(key, p)
  local flat = redis.pcall('LRANGE', key, 0, -1)
  if flat.err then
    return nil, flat.err
  elseif #flat % 2 ~= 0 then
    return nil, 'malformed state'
  end
  local st = {at = {}, cost = {}, sum = 0}
  for i = 1, #flat, 2 do
    local at, cost = tonumber(flat[i]), tonumber(flat[i + 1])
    if not at or not cost then
      return nil, 'malformed state'
    end
    st.at[#st.at + 1], st.cost[#st.cost + 1] = at, cost
    st.sum = st.sum + cost
  end
  return st
end

local function step(st, p, now, charge)
  local n, sum = #st.at, st.sum
  local instant = now
  if n > 0 and st.at[n] > instant then -- a clock that went back logs at the newest entry
    instant = st.at[n]
  end
  local drop = 0 -- the entries that have aged out
  while drop < n and st.at[drop + 1] <= instant - p.period do
    drop = drop + 1
    sum = sum - st.cost[drop]
  end
  local refused = sum + p.cost > p.limit
  if refused or not charge then
    local retry, reset = 0, 0
    local freed, excess = 0, sum + p.cost - p.limit
    for i = drop + 1, n do
      freed = freed + st.cost[i]
      if refused and freed >= excess then
        retry = st.at[i] + p.period - now
        break
      end
    end
    if n > drop then
      reset = st.at[n] + p.period - now
    end
    return 0, p.limit - sum, retry, reset, 0
  end
  sum = sum + p.cost
  return 1, p.limit - sum, 0, instant + p.period - now, 0, {drop = drop, at = instant}
end

-- commit drops the aged-out entries and appends the admitted request; the key
-- expires when that request ages out, plus the margin.
local function commit(key, st, change, p, now, margin)
  if change.drop > 0 then
    redis.call('LTRIM', key, 2 * change.drop, -1)
  end
  local n = #st.at
  if n > change.drop and st.at[n] == change.at then
    redis.call('LSET', key, -1, st.cost[n] + p.cost)
  else
    redis.call('RPUSH', key, change.at, p.cost)
  end
  local ttl = change.at + p.period - now + margin
  redis.call('PEXPIRE', key, format('%d', ttl > 1 and ttl or 1))
end

-- refund is transition.Refund (refundLog): the cost comes out of the entry logged
-- when the charge was taken, while it is in the window; an emptied entry is removed.
local function refund(key, st, p, now, margin)
  local n = #st.at
  local newest = n > 0 and math.max(now, st.at[n]) or now
  for i = n, 1, -1 do
    if st.at[i] == p.charged and st.at[i] > newest - p.period then
      local left = math.max(st.cost[i] - p.cost, 0)
      st.sum, st.cost[i] = st.sum - (st.cost[i] - left), left
      redis.call('LSET', key, 2 * i - 1, left > 0 and left or 'x')
      if left == 0 then -- entries are flat pairs: mark both, then drop them
        redis.call('LSET', key, 2 * i - 2, 'x')
        redis.call('LREM', key, 2, 'x')
        table.remove(st.at, i)
        table.remove(st.cost, i)
      end
      break
    end
  end
  return st
end

algorithms.log = {load = load, step = step, commit = commit, refund = refund}
