-- counted.lua: which fixed-window policies keep a counted state, one integer
-- window × stride + count (the index of the newest window seen and the cost admitted
-- in it), which their lean scripts charge in place with INCRBY
-- (fixedwindow_counted.lua); fixedwindow.lua reads and writes the same state. Go's
-- countedStride decides alike; a policy's own lean script bakes the stride instead
-- (baked.go).
--
-- counted_stride is the smallest power of two above the limit, so that a count never
-- reaches the window's digits, or nil for a policy that is not counted: one whose
-- states until the year 2109 (2^42 ms) would not fit below 2^53, where Lua's numbers
-- are exact integers. That is any limit below 2^20 a second, 2^26 a minute or 2^37 a
-- day.
-- (q + 2) × stride is exact: stride is a power of two.
local function counted_stride(limit, period)
  local stride = 1
  while stride <= limit do
    stride = stride + stride
  end
  if (quot(4398046511104, period) + 2) * stride > 9007199254740992 then
    return nil
  end
  return stride
end
