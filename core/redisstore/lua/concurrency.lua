-- concurrency.lua: the concurrency limiter, core/internal/transition/concurrency.go. A request is admitted
-- when the costs of the live leases, plus its own, are at most the limit; its lease
-- lives until Release (release below, stack.lua's release mode) or for period ms.
-- State: a list of leases "id expires cost", in the order they were taken. Expired
-- leases are dropped when a lease is taken, as in core. A missing key holds none.

local function load(key, p)
  local entries = redis.pcall('LRANGE', key, 0, -1)
  if entries.err then
    return nil, entries.err
  end
  local leases = {}
  for i, entry in ipairs(entries) do
    local id, expires, cost = match(entry, '^(%d+) (%d+) (%d+)$')
    if not id then
      return nil, 'malformed state'
    end
    leases[i] = {expires = tonumber(expires), cost = tonumber(cost), entry = entry}
  end
  return leases
end

local function step(leases, p, now, charge)
  local in_flight, live, expired = 0, {}, {}
  for _, lease in ipairs(leases) do
    if lease.expires <= now then
      expired[#expired + 1] = lease
    else
      in_flight = in_flight + lease.cost
      live[#live + 1] = lease
    end
  end
  local refused = in_flight + p.cost > p.limit
  if refused or not charge then
    local hint, last, retry = 1000, 0, 0 -- retry: a short hint, the first lease to expire
    for _, lease in ipairs(live) do
      hint = math.min(hint, lease.expires - now)
      last = math.max(last, lease.expires - now)
    end
    if refused then
      retry = math.max(hint, 1)
    end
    return 0, p.limit - in_flight, retry, last, 0
  end
  local last = now + p.period
  for _, lease in ipairs(live) do
    last = math.max(last, lease.expires)
  end
  return 1, p.limit - in_flight - p.cost, 0, p.period, 0, {expired = expired, last = last}
end

-- entry is the lease a charge of p takes at now.
local function entry(p, now)
  return format('%s %d %d', p.lease, now + p.period, p.cost)
end

-- commit drops the expired leases and appends the new one; the key expires with its
-- last lease, plus the margin.
local function commit(key, leases, change, p, now, margin)
  for _, lease in ipairs(change.expired) do
    redis.call('LREM', key, 1, lease.entry)
  end
  redis.call('RPUSH', key, entry(p, now))
  redis.call('PEXPIRE', key, format('%d', change.last - now + margin))
end

-- refund is transition.Refund, which leaves leases alone: they end with Release.
local function refund(key, leases, p, now, margin)
  return leases
end

-- undo removes the lease a charge took at the same now (a stack refused on another
-- Cluster slot), as Release would.
local function undo(key, leases, p, now, margin)
  local taken = entry(p, now)
  local back, last, found = {}, nil, false
  for _, lease in ipairs(leases) do
    if not found and lease.entry == taken then
      found = true
    else
      back[#back + 1] = lease
      last = math.max(last or lease.expires, lease.expires)
    end
  end
  if not found then
    return leases
  end
  redis.call('LREM', key, 1, taken)
  if last then
    local ttl = last - now + margin
    redis.call('PEXPIRE', key, format('%d', ttl > 1 and ttl or 1))
  end
  return back
end

-- release ends a lease (transition.ReleaseLease): it removes the first lease whose id is
-- p.lease and returns {1}, or returns {0} when there is none. Redis deletes the list with
-- its last lease.
local function release(key, p)
  local entries = redis.pcall('LRANGE', key, 0, -1)
  if entries.err then
    return redis.error_reply('RATELIMIT ' .. entries.err)
  end
  for _, entry in ipairs(entries) do
    local id = match(entry, '^(%d+) %d+ %d+$')
    if not id then
      return redis.error_reply('RATELIMIT malformed state')
    elseif id == p.lease then
      redis.call('LREM', key, 1, entry)
      return {1}
    end
  end
  return {0}
end

algorithms.cc = {load = load, step = step, commit = commit, refund = refund, undo = undo, release = release}
