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

-- refund is transition.Refund (refundLog): the cost comes out of the newest entries still
-- in the window, and the log is rewritten without the emptied ones.
local function refund(key, st, p, now, margin)
  local n = #st.at
  if n == 0 then
    return st
  end
  local costs, cost, cutoff = {}, p.cost, math.max(now, st.at[n]) - p.period
  for i = 1, n do
    costs[i] = st.cost[i]
  end
  for i = n, 1, -1 do
    if cost <= 0 or st.at[i] <= cutoff then
      break
    end
    local take = math.min(cost, costs[i])
    costs[i], cost = costs[i] - take, cost - take
  end
  local back, flat = {at = {}, cost = {}, sum = 0}, {}
  for i = 1, n do
    if costs[i] > 0 then
      back.at[#back.at + 1], back.cost[#back.cost + 1] = st.at[i], costs[i]
      back.sum = back.sum + costs[i]
    end
  end
  redis.call('DEL', key)
  for i = 1, #back.at do
    flat[#flat + 1], flat[#flat + 2] = back.at[i], back.cost[i]
    if #flat >= 1000 or i == #back.at then -- RPUSH in chunks: unpack has a limit
      redis.call('RPUSH', key, unpack(flat))
      flat = {}
    end
  end
  if #back.at > 0 then
    local ttl = back.at[#back.at] + p.period - now + margin
    redis.call('PEXPIRE', key, format('%d', ttl > 1 and ttl or 1))
  end
  return back
end

algorithms.log = {load = load, step = step, commit = commit, refund = refund}
