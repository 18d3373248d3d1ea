-- decide.lua: decides a stack of policies, one per key, as one atomic step.
--
-- KEYS[i] is the state of policy i. ARGV holds three arguments, then nine per policy:
--   mode now margin, then: name algorithm unit refill capacity limit period cost lease
-- mode:   charge (decide all-or-nothing), peek (decide, spend nothing), refund
--         (core.Refund, then peek) or undo (refund a charge taken at now, releasing
--         its lease, then peek)
-- now:    milliseconds since the Unix epoch, or "redis" for the server's TIME
-- margin: milliseconds added to every TTL beyond the state's full recovery
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
if n < 1 or #ARGV ~= 3 + 9 * n or not margin or
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
  local a = 3 + 9 * (i - 1)
  local code = ARGV[a + 2]
  local p = {
    name = ARGV[a + 1], alg = algorithms[code],
    unit = int(ARGV[a + 3], 1, MAX_EXACT), refill = int(ARGV[a + 4], 1, MAX_EXACT),
    capacity = int(ARGV[a + 5], 1, MAX_EXACT), limit = int(ARGV[a + 6], 1, MAX_EXACT),
    period = int(ARGV[a + 7], 1, MAX_PERIOD), lease = ARGV[a + 9],
  }
  p.cost = p.capacity and int(ARGV[a + 8], 1, p.capacity)
  local bucket = code == 'tb' or code == 'gcra' or code == 'lb'
  if #p.name > 64 or not (p.alg and p.unit and p.refill and p.capacity and p.limit and p.period and p.cost) or
      (bucket and p.capacity * p.unit > MAX_EXACT) or (code == 'cc' and not string.match(p.lease, '^%d+$')) or #p.lease > 20 then
    return redis.error_reply('RATELIMIT policy "' .. p.name .. '": malformed arguments')
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
    return redis.error_reply('RATELIMIT policy "' .. p.name .. '": ' .. err)
  end
  states[i] = st
end

local reply, all = {now, 1}, 1
if mode == 'charge' then
  local changes = {}
  for i, p in ipairs(policies) do
    changes[i] = p.alg.step(states[i], p, now, true, reply, 2 + 5 * (i - 1))
    if not changes[i] then
      all = 0
    end
  end
  for i, p in ipairs(policies) do
    if all == 1 then
      p.alg.commit(KEYS[i], states[i], changes[i], p, now, margin)
    elseif changes[i] then -- admitted alone: report it as a peek (core.RefuseStack)
      p.alg.step(states[i], p, now, false, reply, 2 + 5 * (i - 1))
    end
  end
else
  all = 0
  for i, p in ipairs(policies) do
    local st = states[i]
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
