-- quot is Go's a / b for b > 0: truncated towards zero. Every script starts with this
-- file: the double division is corrected by one where rounding pushed it across an
-- integer, so the result is exact below 2^53.
local function quot(a, b)
  local q = math.floor(a / b)
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
