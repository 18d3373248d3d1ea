-- decide.lua: decides a stack of policies, one per key, as one atomic step.
--
-- KEYS[i] is the state of policy i. ARGV holds three arguments, then three per policy:
--   mode now margin, then: spec cost lease
-- mode:   charge (decide all-or-nothing), peek (decide, spend nothing), refund
--         (core.Refund, then peek) or undo (refund a charge taken at now, releasing
--         its lease, then peek)
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
-- spec:   "name algorithm unit refill capacity" for the buckets (tb, gcra, lb),
--         "name algorithm limit period" for the others (fw, sw, log, cc)
-- Reply: now, 1 when every policy admitted, then per policy:
--   allowed remaining retry_after_ms reset_after_ms delay_ms
-- Every argument is validated and every state read before the first write. The
-- script holds the algorithms registered before it (see scripts.go).

local MAX_NOW = 1125899906842624 -- 2^50 ms: far beyond any real clock
local MAX_PERIOD = 31622400000 -- 366 days in ms

-- int parses an argument as an integer in [lo, hi], or returns nil. Decimal integers
-- below 2^53 convert exactly; the comparisons also reject NaN.
local function int(arg, lo, hi)
  local n = tonumber(arg)
  if n and n >= lo and n <= hi and n == floor(n) then
    return n
  end
  return nil
end

local n = #KEYS
local mode, now, margin = ARGV[1], nil, int(ARGV[3], 0, MAX_PERIOD)
if n < 1 or #ARGV ~= 3 + 3 * n or not margin or
    (mode ~= 'charge' and mode ~= 'peek' and mode ~= 'refund' and mode ~= 'undo') then
  return redis.error_reply('RATELIMIT malformed arguments')
end
if ARGV[2] ~= 'redis' then
  now = int(ARGV[2], 0, MAX_NOW)
  if not now then
    return redis.error_reply('RATELIMIT malformed arguments: now')
  end
end

local policies = {}
for i = 1, n do
  local a = 3 + 3 * (i - 1)
  local name, code, x, y, z = string.match(ARGV[a + 1], '^(%S+) (%a+) (%d+) (%d+) ?(%d*)$')
  local p = {name = name or '?', alg = algorithms[code], lease = ARGV[a + 3]}
  local bucket = code == 'tb' or code == 'gcra' or code == 'lb'
  if bucket and z ~= '' then
    p.unit, p.refill, p.capacity = int(x, 1, MAX_EXACT), int(y, 1, MAX_EXACT), int(z, 1, MAX_EXACT)
    p.valid = p.unit and p.refill and p.capacity and p.capacity * p.unit <= MAX_EXACT
  elseif name and not bucket and z == '' then
    p.limit, p.period = int(x, 1, MAX_EXACT), int(y, 1, MAX_PERIOD)
    p.capacity, p.valid = p.limit, p.limit and p.period
  end
  p.cost = p.valid and int(ARGV[a + 2], 1, p.capacity)
  if not (p.alg and p.cost) or #p.name > 64 or #p.lease > 20 or (code == 'cc' and not string.match(p.lease, '^%d+$')) then
    return redis.error_reply('RATELIMIT policy "' .. p.name .. '": malformed arguments')
  end
  policies[i] = p
end

if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

for i, p in ipairs(policies) do
  local st, err = p.alg.load(KEYS[i], p, now)
  if not st then
    return redis.error_reply('RATELIMIT policy "' .. p.name .. '": ' .. err)
  end
  p.state = st
end

local reply, all = {now, 1}, 1
if mode == 'charge' then
  for i, p in ipairs(policies) do
    p.change = p.alg.step(p.state, p, now, true, reply, 2 + 5 * (i - 1))
    if not p.change then
      all = 0
    end
  end
  for i, p in ipairs(policies) do
    if all == 1 then
      p.alg.commit(KEYS[i], p.state, p.change, p, now, margin)
    elseif p.change then -- admitted alone: report it as a peek (core.RefuseStack)
      p.alg.step(p.state, p, now, false, reply, 2 + 5 * (i - 1))
    end
  end
else
  all = 0
  for i, p in ipairs(policies) do
    local st = p.state
    if mode == 'undo' and p.alg.undo then
      st = p.alg.undo(KEYS[i], st, p, now, margin)
    elseif mode ~= 'peek' then
      st = p.alg.refund(KEYS[i], st, p, now, margin)
    end
    p.alg.step(st, p, now, false, reply, 2 + 5 * (i - 1))
  end
end
reply[2] = all
return reply
