-- common.lua: exact integer arithmetic shared by every algorithm.
--
-- Lua numbers are doubles. Policy construction (core.NewPolicy) guarantees that every
-- value an algorithm computes stays below 2^53, where doubles are exact integers, so
-- these helpers reproduce Go's int64 arithmetic exactly. Numbers go to Redis through
-- string.format('%d') (TTLs, and states joined into one value), or as Lua numbers,
-- which Redis prints exactly but with a slower "%.17g"; never through tostring or '..',
-- which print 15+ digit numbers in exponent form.
--
-- A state's digits, matched by string.match with %d+, become numbers by arithmetic
-- (digits + 0), not tonumber: Lua converts them alike, and arithmetic costs no call.
-- The lean scripts do the same, so that both read every state alike, also on miniredis,
-- whose tonumber reads some digit strings (a leading zero, beyond 2^63) otherwise.
--
-- Each algorithm's file defines load(key, p, now) -> state (or nil, error), step(state, p,
-- now, charge, reply, at) -> new state when admitted, commit(key, old, new, p, now,
-- margin) and refund(key, state, p, now, margin) -> state after core.Refund, and
-- registers itself in algorithms. step writes its result into reply[at+1 .. at+5]
-- (see put).

local MAX_EXACT = 9007199254740992 -- 2^53
local floor, format, tonumber = math.floor, string.format, tonumber
local algorithms = {}

-- floordiv is ⌊a/b⌋ for b > 0: the quotient of a double division, corrected by one
-- where rounding pushed it across an integer.
local function floordiv(a, b)
  local q = floor(a / b)
  if q * b > a then
    return q - 1
  elseif (q + 1) * b <= a then
    return q + 1
  end
  return q
end

-- quot (Go's truncating a / b) comes from quot.lua, which precedes this file.

-- ceildiv is Go's ceilDiv: (a + b - 1) / b, meant for a >= 0.
local function ceildiv(a, b)
  return quot(a + b - 1, b)
end

-- put writes one policy's result into reply after index at: the fields of
-- core.Result, durations in milliseconds.
local function put(reply, at, allowed, remaining, retry, reset, delay)
  reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5] = allowed, remaining, retry, reset, delay
end

-- get reads a string key; a Redis error (WRONGTYPE) becomes a second return value.
local function get(key)
  local v = redis.pcall('GET', key)
  if type(v) == 'table' then
    return nil, v.err
  end
  return v
end

-- expire sets key's TTL to ms milliseconds (at least one).
local function expire(key, ms)
  redis.call('PEXPIRE', key, format('%d', ms > 1 and ms or 1))
end
