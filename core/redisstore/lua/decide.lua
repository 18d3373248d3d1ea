-- decide.lua: decides a stack of policies, one per key, as one atomic step.
--
-- KEYS[i] is the state of policy i. ARGV[1] is one line of tokens:
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

local tokens = {}
for token in string.gmatch(ARGV[1] or '', '%S+') do
  tokens[#tokens + 1] = token
end
local n = #KEYS
if n < 1 or #ARGV ~= 1 or #tokens ~= 3 + 10 * n then
  return redis.error_reply('RATELIMIT malformed arguments: ' .. n .. ' keys, ' .. #tokens .. ' tokens')
end
local mode, now, margin = tokens[1], nil, int(tokens[3], 0, MAX_PERIOD)
if (mode ~= 'charge' and mode ~= 'peek' and mode ~= 'refund') or not margin then
  return redis.error_reply('RATELIMIT malformed arguments: mode or margin')
end
if tokens[2] ~= 'redis' then
  now = int(tokens[2], 0, MAX_NOW)
  if not now then
    return redis.error_reply('RATELIMIT malformed arguments: now')
  end
end

local policies = {}
for i = 1, n do
  local t = 3 + 10 * (i - 1)
  local name = tokens[t + 1]
  if #name > 64 or not string.match(name, '^[%w_%-%.:]+$') then
    return redis.error_reply('RATELIMIT malformed arguments: policy name')
  end
  local p = {
    name = name, alg = algorithms[tokens[t + 2]],
    unit = int(tokens[t + 3], 1, MAX_EXACT), refill = int(tokens[t + 4], 1, MAX_EXACT),
    capacity = int(tokens[t + 5], 1, MAX_EXACT), limit = int(tokens[t + 6], 1, MAX_EXACT),
    period = int(tokens[t + 7], 1, MAX_PERIOD), lease = tokens[t + 9], stamp = int(tokens[t + 10], 0, MAX_NOW),
  }
  p.cost = int(tokens[t + 8], 1, p.capacity or 0)
  local bucket = tokens[t + 2] == 'tb' or tokens[t + 2] == 'gcra' or tokens[t + 2] == 'lb'
  if not (p.alg and p.unit and p.refill and p.capacity and p.limit and p.period and p.cost and p.stamp) or
      bucket and p.capacity * p.unit > MAX_EXACT or #p.lease > 20 or not string.match(p.lease, '^%d+$') then
    return fail(name, 'malformed arguments')
  end
  policies[i] = p
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
