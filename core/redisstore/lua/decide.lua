-- decide.lua: decides a stack of policies, one per key, as one atomic step.
--
-- KEYS[i] is the state of policy i. ARGV[1] is one line of tokens, separated by one space:
--   mode now margin, then per policy: name algorithm unit refill capacity limit period cost lease stamp
-- mode:   charge (decide all-or-nothing), peek (decide, spend nothing) or refund (undo
--         a charge taken at now, then peek)
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
-- Reply: now, 1 when every policy admitted, then per policy:
--   allowed remaining retry_after_ms reset_after_ms delay_ms stamp
-- Every argument is validated and every state read before the first write. The
-- script holds the algorithms registered before it (see scripts.go).

local MAX_NOW = 1125899906842624 -- 2^50 ms: far beyond any real clock
local MAX_PERIOD = 31622400000 -- 366 days in ms

local function fail(name, message)
  return redis.error_reply('RATELIMIT policy "' .. name .. '": ' .. message)
end

local n, line = #KEYS, ARGV[1] or ''
local _, at, mode, clock, margin = string.find(line, '^(%a+) (%w+) (%d+)')
margin = margin and int(margin, 0, MAX_PERIOD)
if n < 1 or #ARGV ~= 1 or not margin or (mode ~= 'charge' and mode ~= 'peek' and mode ~= 'refund') then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local now = nil
if clock ~= 'redis' then
  now = int(clock, 0, MAX_NOW)
  if not now then
    return redis.error_reply('RATELIMIT malformed arguments: now')
  end
end

-- Each policy is ten tokens; the pattern admits only digits where numbers belong (and
-- decimal integers below 2^53 convert exactly), and the policies must make up the
-- whole rest of the line.
local policies = {}
for i = 1, n do
  local _, last, name, code, unit, refill, capacity, limit, period, cost, lease, stamp = string.find(line,
    '^ (%S+) (%a+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)', at + 1)
  if not last then
    return redis.error_reply('RATELIMIT malformed arguments: policy ' .. i)
  end
  at = last
  local p = {
    name = name, alg = algorithms[code], lease = lease, unit = tonumber(unit), refill = tonumber(refill),
    capacity = tonumber(capacity), limit = tonumber(limit), period = tonumber(period),
    cost = tonumber(cost), stamp = tonumber(stamp),
  }
  local bucket = code == 'tb' or code == 'gcra' or code == 'lb'
  if not p.alg or #name > 64 or #lease > 20 or p.unit < 1 or p.refill < 1 or p.capacity < 1 or p.limit < 1 or
      p.period < 1 or p.period > MAX_PERIOD or p.cost < 1 or p.cost > p.capacity or p.stamp > MAX_NOW or
      p.refill > MAX_EXACT or p.limit > MAX_EXACT or (bucket and p.capacity * p.unit > MAX_EXACT) then
    return fail(name, 'malformed arguments')
  end
  policies[i] = p
end
if at ~= #line then
  return redis.error_reply('RATELIMIT malformed arguments: ' .. (#line - at) .. ' bytes after the policies')
end

if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local states = {}
for i, p in ipairs(policies) do
  local st, err = p.alg.load(KEYS[i], p)
  if not st then
    return fail(p.name, err)
  end
  states[i] = st
end

local results, all = {}, 1
if mode == 'charge' then
  local changes = {}
  for i, p in ipairs(policies) do
    results[i], changes[i] = p.alg.step(states[i], p, now, true)
    all = math.min(all, results[i].allowed)
  end
  for i, p in ipairs(policies) do
    if all == 1 then
      p.alg.commit(KEYS[i], states[i], changes[i], p, now, margin)
    elseif results[i].allowed == 1 then
      results[i] = p.alg.step(states[i], p, now, false)
    end
  end
else
  all = 0
  for i, p in ipairs(policies) do
    local st = states[i]
    if mode == 'refund' then
      st = p.alg.refund(KEYS[i], st, p, now, margin)
    end
    results[i] = p.alg.step(st, p, now, false)
  end
end

local reply = {now, all}
for _, r in ipairs(results) do
  local k = #reply
  reply[k + 1], reply[k + 2], reply[k + 3] = r.allowed, r.remaining, r.retry
  reply[k + 4], reply[k + 5], reply[k + 6] = r.reset, r.delay, r.stamp
end
return reply
