-- common.lua: exact integer arithmetic and argument parsing shared by every algorithm.
--
-- Lua numbers are doubles. Policy construction (core.NewPolicy) guarantees that every
-- value an algorithm computes stays below 2^53, where doubles are exact integers, so
-- these helpers reproduce Go's int64 arithmetic exactly. Numbers are written to Redis
-- with string.format('%d'), never tostring, which prints 15+ digit numbers in exponent form.

local MAX_EXACT = 9007199254740992 -- 2^53
local floor, format = math.floor, string.format

-- algorithms maps the scripts' algorithm codes to their implementations; each
-- algorithm's file registers itself, so a script holds only the algorithms it needs.
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

-- quot is Go's a / b for b > 0: truncated towards zero.
local function quot(a, b)
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  if q < 0 and q * b ~= a then
    q = q + 1
  end
  return q
end

-- ceildiv is Go's ceilDiv: (a + b - 1) / b, meant for a >= 0.
local function ceildiv(a, b)
  return quot(a + b - 1, b)
end

-- ceildiv_signed is ⌈a/b⌉ for b > 0 and any sign of a.
local function ceildiv_signed(a, b)
  return -floordiv(-a, b)
end

-- int parses a token of digits (the callers' patterns admit nothing else) as an
-- integer in [lo, hi], or returns nil. Decimal integers below 2^53 convert exactly.
local function int(token, lo, hi)
  local n = tonumber(token)
  if not (n and n >= lo and n <= hi) then
    return nil
  end
  return n
end

local function fmt(n)
  return format('%d', n)
end

-- result is one policy's decision; fields mirror core.Result in milliseconds.
-- stamp identifies what a charge wrote (a window or log instant) so that it can be refunded.
local function result()
  return {allowed = 0, remaining = 0, retry = 0, reset = 0, delay = 0, stamp = 0}
end

-- read runs a read command and turns a Redis error (WRONGTYPE, …) into a return value.
local function read(...)
  local v = redis.pcall(...)
  if type(v) == 'table' and v.err then
    return nil, v.err
  end
  return v
end

-- expire sets key's TTL to ms milliseconds (at least one).
local function expire(key, ms)
  redis.call('PEXPIRE', key, fmt(math.max(ms, 1)))
end
