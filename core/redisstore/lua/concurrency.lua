-- concurrency.lua: the concurrency limiter, core/internal/transition/concurrency.go. A
-- request is admitted when the live leases' costs plus its own are at most the limit,
-- or when its ID (not 0) holds a live lease already, which then stands as it was. A
-- lease lives until Release (release below) or for period ms. State: the leases in
-- the order taken, "id expires cost" joined by commas; expired ones are dropped when a
-- lease is taken. A missing key holds none. The key expires with its last lease.

-- leases reads a stored value: the texts, expiry instants and costs of its leases; or
-- nil and an error.
local function leases(value)
  local texts, expires, cost = {}, {}, {}
  if not value then
    return texts, expires, cost
  end
  for text in string.gmatch(value .. ',', '([^,]*),') do
    local id, ends, spent = match(text, '^(%d+) (%d+) (%d+)$')
    if not id then
      return nil, 'malformed state'
    end
    local n = #texts + 1
    texts[n], expires[n], cost[n] = text, ends + 0, spent + 0
  end
  return texts, expires, cost
end

-- without is the value of leases texts without the i-th, and its TTL: until the
-- last lease left expires.
local function without(texts, expires, i, now)
  table.remove(texts, i)
  table.remove(expires, i)
  local last = now
  for j = 1, #expires do
    last = math.max(last, expires[j])
  end
  return table.concat(texts, ','), last - now
end

local function step(value, p, now, charge)
  local texts, expires, cost = leases(value)
  if not texts then
    return nil, expires
  end
  local in_flight, live, hint, last, held = 0, {}, 1000, now, false -- hint: the first lease to expire, at most 1 s
  for i = 1, #texts do
    if expires[i] > now then
      in_flight = in_flight + cost[i]
      live[#live + 1] = texts[i]
      hint = math.min(hint, expires[i] - now)
      last = math.max(last, expires[i])
      held = held or charge and p.lease ~= '0' and match(texts[i], '^%d+') == p.lease
    end
  end
  if held then -- an acquire retried after it landed
    return 1, p.limit - in_flight, 0, last - now, 0, table.concat(live, ','), last - now
  end
  local refused = in_flight + p.cost > p.limit
  if refused or not charge then
    return 0, p.limit - in_flight, refused and math.max(hint, 1) or 0, last - now, 0
  end
  live[#live + 1] = format('%s %d %d', p.lease, now + p.period, p.cost)
  return 1, p.limit - in_flight - p.cost, 0, p.period, 0, table.concat(live, ','),
    math.max(last, now + p.period) - now
end

-- refund is transition.Refund, which leaves leases alone: they end with Release.
local function refund() end

-- undo removes the lease a charge took at the same now (a stack refused on another
-- Cluster slot), as Release would; also one its ID held from a charge at that now,
-- whose request, refused, does not run.
local function undo(value, p, now)
  local texts, expires = leases(value)
  if not texts then
    return
  end
  local taken = format('%s %d %d', p.lease, now + p.period, p.cost)
  for i = 1, #texts do
    if texts[i] == taken then
      return without(texts, expires, i, now)
    end
  end
end

-- release ends a lease (transition.ReleaseLease): it removes the first lease whose id
-- is p.lease and returns 1 with the new value and its TTL, or 0 when there is none.
local function release(value, p, now)
  local texts, expires = leases(value)
  if not texts then
    return nil, expires
  end
  for i = 1, #texts do
    if match(texts[i], '^%d+') == p.lease then
      return 1, without(texts, expires, i, now)
    end
  end
  return 0
end

algorithms.cc = {step = step, refund = refund, undo = undo, release = release}
