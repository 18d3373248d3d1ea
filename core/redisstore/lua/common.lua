-- common.lua: what every script shares. It comes first, then the algorithms' files,
-- then a driver (stack.lua or batch.lua), joined into one script by scripts.go.
--
-- Lua numbers are doubles. Policy construction (core.NewPolicy) keeps every value an
-- algorithm computes below 2^53, where doubles are exact integers, so these helpers
-- reproduce Go's int64 arithmetic exactly. Numbers go to Redis through
-- string.format('%d'), never through tostring or '..', which print 15+ digit numbers
-- in exponent form. A state's digits, matched with %d+, become numbers by arithmetic
-- (digits + 0), which converts them as Redis and Go read them.
--
-- Each algorithm's file registers a table in algorithms with:
--   load(key, p)                          -> state, or nil and an error
--   step(state, p, now, charge)           -> allowed, remaining, retry, reset, delay,
--                                            and the change to commit when it charged
--   commit(key, state, change, p, now, margin) writes the change, with its TTL
--   refund(key, state, p, now, margin)    -> the state after core.Refund
-- p holds the policy's numbers (unit, refill, capacity; or limit, period), the cost
-- and the lease. Times are ms; margin is added to every TTL.

local MAX_EXACT = 9007199254740992 -- 2^53
local MAX_NOW = 1125899906842624 -- 2^50 ms: far beyond any real clock
local MAX_PERIOD = 31622400000 -- 366 days in ms
local format, tonumber = string.format, tonumber
local algorithms = {}

-- floordiv is ⌊a/b⌋ for b > 0, which is Go's a / b when a >= 0: the double
-- quotient, floored, then corrected by one where rounding pushed it across an
-- integer. q - q % 1 floors without calling math.floor: % is an operator, and a call
-- costs the server more than this arithmetic (every decision divides several times).
local function floordiv(a, b)
  local q = a / b
  q = q - q % 1
  if q * b > a then
    return q - 1
  elseif (q + 1) * b <= a then
    return q + 1
  end
  return q
end

-- quot is Go's a / b for b > 0, truncated towards zero for any sign of a.
local function quot(a, b)
  if a >= 0 then
    return floordiv(a, b)
  end
  return -floordiv(-a, b)
end

-- ceildiv is Go's ceilDiv: (a + b - 1) / b, meant for a >= 0.
local function ceildiv(a, b)
  return floordiv(a + b - 1, b)
end

-- int reads an argument as an integer in [lo, hi], or nil. The comparisons also
-- reject NaN and infinities.
local function int(arg, lo, hi)
  local n = tonumber(arg)
  if n and n >= lo and n <= hi and n % 1 == 0 then
    return n
  end
  return nil
end

-- get reads a string key; a Redis error (WRONGTYPE) becomes a second return value.
local function get(key)
  local v = redis.pcall('GET', key)
  if type(v) == 'table' then
    return nil, v.err
  end
  return v
end

-- set writes a string state that expires in ttl ms (at least one). Redis prints a
-- Lua number argument with %.17g: exact for integers below 2^53.
local function set(key, value, ttl)
  redis.call('SET', key, value, 'PX', ttl > 1 and ttl or 1)
end

-- policy parses a policy's spec, "tb unit refill capacity" for the buckets (tb, gcra,
-- lb) or "fw limit period" for the others (fw, sw, log, cc), or returns nil.
local function policy(spec)
  local code, x, y, z = string.match(spec, '^(%a+) (%d+) (%d+) ?(%d*)$')
  -- Every field is created here, sized once: a table grown field by field rehashes
  -- four times. With the comparisons that replaced the modes table in stack.lua,
  -- 138.3k -> 134.5k server instructions per GCRA decision (cmd/servercost).
  local p = {alg = algorithms[code], unit = false, refill = false, capacity = false, limit = false,
    period = false, cost = false, lease = false, state = false, change = false}
  if not p.alg then
    return nil
  elseif code == 'tb' or code == 'gcra' or code == 'lb' then
    p.unit, p.refill, p.capacity = int(x, 1, MAX_EXACT), int(y, 1, MAX_EXACT), int(z, 1, MAX_EXACT)
    if p.unit and p.refill and p.capacity and p.capacity * p.unit <= MAX_EXACT then
      return p
    end
  elseif z == '' then
    p.limit, p.period = int(x, 1, MAX_EXACT), int(y, 1, MAX_PERIOD)
    p.capacity = p.limit
    if p.limit and p.period then
      return p
    end
  end
  return nil
end

-- request gives p a request's cost and lease (a concurrency lease id), or returns
-- false when they are malformed.
local function request(p, cost, lease)
  p.cost = int(cost, 1, p.capacity)
  p.lease = lease
  return p.cost ~= nil and #lease <= 20 and (p.alg ~= algorithms.cc or string.match(lease, '^%d+$') ~= nil)
end

-- instant reads the now argument: ms since the Unix epoch, or "redis" for the
-- server's TIME. It returns nil when the argument is malformed.
local function instant(arg)
  if arg ~= 'redis' then
    return int(arg, 0, MAX_NOW)
  end
  local time = redis.call('TIME')
  local micros = time[2] + 0 -- digits, converted by arithmetic
  return time[1] * 1000 + (micros - micros % 1000) / 1000
end
