-- slidinglog.lua: core/slidinglog.go. State: a list of admitted requests as flat pairs
-- "at", "cost", oldest first. Requests admitted at one instant share one entry, which
-- decides exactly as separate entries would (they age out together).

local sliding_log = {}

function sliding_log.load(key, p)
  local flat, err = read('LRANGE', key, 0, -1)
  if err then
    return nil, err
  end
  if #flat % 2 ~= 0 then
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

function sliding_log.step(st, p, now, charge)
  local n, sum = #st.at, st.sum
  local at = now
  if n > 0 and st.at[n] > at then
    at = st.at[n]
  end
  local drop = 0
  while drop < n and st.at[drop + 1] <= at - p.period do
    drop = drop + 1
    sum = sum - st.cost[drop]
  end
  local r = result()
  local refused = sum + p.cost > p.limit
  if refused or not charge then
    r.remaining = p.limit - sum
    local freed, excess = 0, sum + p.cost - p.limit
    for i = drop + 1, n do
      freed = freed + st.cost[i]
      if refused and freed >= excess then
        r.retry = st.at[i] + p.period - now
        break
      end
    end
    if n > drop then
      r.reset = st.at[n] + p.period - now
    end
    return r
  end
  sum = sum + p.cost
  r.allowed = 1
  r.remaining = p.limit - sum
  r.reset = at + p.period - now
  r.stamp = at
  return r, {drop = drop, at = at}
end

-- commit drops the aged-out entries and appends the admitted request.
function sliding_log.commit(key, old, change, p, now, margin)
  if change.drop > 0 then
    redis.call('LTRIM', key, 2 * change.drop, -1)
  end
  local n = #old.at
  if n > change.drop and old.at[n] == change.at then
    redis.call('LSET', key, -1, fmt(old.cost[n] + p.cost))
  else
    redis.call('RPUSH', key, fmt(change.at), fmt(p.cost))
  end
  expire(key, change.at + p.period - now + margin)
end

-- refund takes the cost out of the entry it was added to (at the instant stamp) and
-- rewrites the log without it.
function sliding_log.refund(key, st, p, now, margin)
  local found = nil
  for i = #st.at, 1, -1 do
    if st.at[i] == p.stamp then
      found = i
      break
    end
  end
  if not found then
    return st
  end
  local back = {at = {}, cost = {}, sum = 0}
  for i = 1, #st.at do
    local cost = st.cost[i]
    if i == found then
      cost = cost - p.cost
    end
    if cost > 0 then
      back.at[#back.at + 1], back.cost[#back.cost + 1] = st.at[i], cost
      back.sum = back.sum + cost
    end
  end
  redis.call('DEL', key)
  local flat = {}
  for i = 1, #back.at do
    flat[#flat + 1], flat[#flat + 2] = fmt(back.at[i]), fmt(back.cost[i])
    if #flat >= 1000 or i == #back.at then
      redis.call('RPUSH', key, unpack(flat))
      flat = {}
    end
  end
  if #back.at > 0 then
    expire(key, back.at[#back.at] + p.period - now + margin)
  end
  return back
end

algorithms.log = sliding_log
