-- quot is Go's a / b for b > 0: truncated towards zero. Every script starts with this
-- file: the double division is corrected by one where rounding pushed it across an
-- integer, so the result is exact below 2^53. A non-negative quotient is floored by
-- q - q % 1, which the interpreter computes as q - ⌊q⌋ exactly, without calling
-- math.floor: quot runs several times in every decision, and calls cost more than
-- arithmetic. For the same reason the lean scripts write `b == 1 and a or quot(a, b)`
-- on their admission path when b is a policy's unit or refill (the integers they
-- divide are their own quotients by 1): a call to a Lua function costs the server
-- about 1,400 instructions, and most policies have a refill of 1 (one token unit per
-- ms: any rate up to 1000 a second).
local function quot(a, b)
  local q = a / b
  if q >= 0 then
    q = q - q % 1
  else
    q = math.floor(q)
  end
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
