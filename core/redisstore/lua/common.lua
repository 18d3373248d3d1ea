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
-- Each algorithm's file registers a table in algorithms with:
--   load(key, p)                          -> state, or nil and an error
--   step(state, p, now, charge)           -> allowed, remaining, retry, reset, delay,
--                                            and the change to commit when it charged
--   commit(key, state, change, p, now, margin) writes the change, with its TTL
--   refund(key, state, p, now, margin)    -> the state after transition.Refund
--   after(state, change, p, now)          -> the state a change leaves (true: the change
--                                            is that state); only where commit writes the
--                                            whole state from change alone (batch.lua)
-- and, for the concurrency limiter, undo and release (concurrency.lua). p holds the
-- policy's numbers (unit, refill, capacity; or limit, period), the cost, the
-- lease, for a refund when the charge was taken, and the text of its last write
-- (commit_instant). Times are ms; margin is added to every TTL.
--
-- Every call of a script runs its whole chunk: each function defined here costs the
-- server a closure per call, each call of one about 500 instructions, and each table
-- one allocation for Lua's collector. The files therefore define one table per
-- algorithm, at its end, and read and write keys inline.

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

-- policy reads a request's arguments: the policy's spec, "tb unit refill capacity" for
-- the buckets (tb, gcra, lb) or "fw limit period" for the others (fw, sw, log, cc), the
-- cost and the lease (a concurrency lease id). It returns nil when they are malformed.
-- The checks are written out rather than calling a helper per number: each Lua call
-- costs the server about 500 instructions, and this runs for every decision.
local function policy(spec, cost, lease)
  local code, x, y, z = match(spec, '^(%a+) (%d+) (%d+) ?(%d*)$')
  local alg = algorithms[code]
  cost = tonumber(cost)
  if not alg or not cost or cost % 1 ~= 0 or cost < 1 or #lease > 20 then
    return nil
  end
  -- Every field is created here, sized once: a table grown field by field rehashes.
  local p = {alg = alg, unit = false, refill = false, capacity = false, limit = false, period = false,
    cost = cost, lease = lease, charged = false, state = false, change = false,
    written_units = false, written_value = false, written_px = false}
  x, y = x + 0, y + 0 -- digits, converted by arithmetic
  if z ~= '' and (code == 'tb' or code == 'gcra' or code == 'lb') then
    z = z + 0
    if x >= 1 and y >= 1 and z >= 1 and z * x <= MAX_EXACT and y <= MAX_EXACT and cost <= z then
      p.unit, p.refill, p.capacity = x, y, z
      return p
    end
  elseif z == '' and code ~= 'tb' and code ~= 'gcra' and code ~= 'lb' then
    if x >= 1 and x <= MAX_EXACT and y >= 1 and y <= MAX_PERIOD and cost <= x
        and (code ~= 'cc' or match(lease, '^%d+$')) then
      p.limit, p.period, p.capacity = x, y, x
      return p
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
