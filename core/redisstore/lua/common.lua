-- common.lua: what every script shares. It comes first, then the algorithms' files,
-- then a driver (single.lua, stack.lua or batch.lua), joined into one script by
-- scripts.go.
--
-- Lua numbers are doubles. Policy construction (core.NewPolicy) keeps every value an
-- algorithm computes below 2^53, where doubles are exact integers, so these helpers
-- reproduce Go's int64 arithmetic exactly. Numbers go to Redis through
-- string.format('%d'), never through tostring or '..', which print 15+ digit numbers
-- in exponent form; TTLs too, as a number argument costs the server 1k more. A
-- state's digits, matched with %d+, become numbers by arithmetic (digits + 0), which
-- converts them as Redis and Go read them.
--
-- An algorithm is a pure function of its key's value, as in core/internal/transition:
-- every state is one string, which the drivers read with GET and write with put. Each
-- algorithm's file registers a table in algorithms with
--   step(value, p, now, charge) -> allowed remaining retry reset delay [write ttl]
--       value is the key's string, false when the key is missing. When it charged,
--       write is the new value and ttl the ms from now until the key may expire. A
--       malformed value returns nil and an error.
--   refund(value, p, now)       -> write ttl, or nothing when the value stays:
--       transition.Refund of p.cost charged at p.charged
-- and, for the concurrency limiter, undo and release (concurrency.lua). A write of ''
-- deletes the key. p holds the policy's numbers (unit refill capacity, or limit
-- period), cost, lease and charged. Times are ms.
--
-- Every call of a script runs its whole chunk: each function defined costs the server
-- a closure per call (0.5-1k instructions), each call of one about 400, and each table
-- 1.5k and more (a hash field about 0.4k). Passing each algorithm its value as a
-- string and taking the new one back, rather than state tables and read and write
-- functions, took a GCRA decision from 99.9k to 96.9k server instructions, and a token
-- bucket's from 102.5k to 92.4k (cmd/servercost).

local MAX_EXACT = 9007199254740992 -- 2^53
local MAX_NOW = 1125899906842624 -- 2^50 ms: far beyond any real clock
local MAX_PERIOD = 31622400000 -- 366 days in ms
local format, match, tonumber = string.format, string.match, tonumber
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

-- ceildiv is Go's ceilDiv: (a + b - 1) / b, meant for a >= 0.
local function ceildiv(a, b)
  return floordiv(a + b - 1, b)
end

-- put writes a key's new value, which expires ttl + margin ms from now (at least 1);
-- '' deletes the key. It keeps the text of its last TTL: the keys of a batch often
-- share one.
local put_ttl, put_px
local function put(key, value, ttl, margin)
  if value == '' then
    redis.call('DEL', key)
    return
  end
  ttl = ttl + margin
  if ttl ~= put_ttl then
    put_ttl, put_px = ttl, format('%d', ttl > 1 and ttl or 1)
  end
  redis.call('SET', key, value, 'PX', put_px)
end

-- policy reads a request's arguments: the policy's spec, "tb unit refill capacity" for
-- the buckets (tb, gcra, lb) or "fw limit period" for the others (fw, sw, log, cc), the
-- cost and the lease (a concurrency lease id). It returns nil when they are malformed.
-- The checks are written out rather than calling a helper per number: each Lua call
-- costs the server about 400 instructions, and this runs for every decision.
local function policy(spec, cost, lease)
  local code, x, y, z = match(spec, '^(%a+) (%d+) (%d+) ?(%d*)$')
  local alg = algorithms[code]
  cost = tonumber(cost)
  if not alg or not cost or cost % 1 ~= 0 or cost < 1 or #lease > 20 then
    return nil
  end
  x, y = x + 0, y + 0 -- digits, converted by arithmetic
  if z ~= '' and (code == 'tb' or code == 'gcra' or code == 'lb') then
    z = z + 0
    if x >= 1 and y >= 1 and z >= 1 and z * x <= MAX_EXACT and y <= MAX_EXACT and cost <= z then
      return {alg = alg, unit = x, refill = y, capacity = z, cost = cost, lease = lease, charged = false}
    end
  elseif z == '' and code ~= 'tb' and code ~= 'gcra' and code ~= 'lb' then
    if x >= 1 and x <= MAX_EXACT and y >= 1 and y <= MAX_PERIOD and cost <= x
        and (code ~= 'cc' or match(lease, '^%d+$')) then
      return {alg = alg, limit = x, period = y, capacity = x, cost = cost, lease = lease, charged = false}
    end
  end
  return nil
end

-- arguments reads the now and margin arguments: now is ms since the Unix epoch, or
-- "redis" for the server's TIME; margin is ms in [0, MAX_PERIOD]. It returns nil for
-- either when malformed.
local function arguments(now_arg, margin_arg)
  local now, margin = nil, tonumber(margin_arg)
  if not margin or margin < 0 or margin > MAX_PERIOD or margin % 1 ~= 0 then
    margin = nil
  end
  if now_arg == 'redis' then
    local time = redis.call('TIME')
    local micros = time[2] + 0 -- digits, converted by arithmetic
    return time[1] * 1000 + (micros - micros % 1000) / 1000, margin
  end
  now = tonumber(now_arg)
  if now and now >= 0 and now <= MAX_NOW and now % 1 == 0 then
    return now, margin
  end
  return nil, margin
end
