-- ticked_args.lua: the arguments of the shared ticked lean scripts of GCRA and the
-- leaky bucket, after single.lua validated them. A ticked policy keeps its TAT as one
-- integer of token units since the epoch (millis × refill + frac), which INCRBY
-- charges in place; fixedtime.lua reads and writes the same state. Its refill is at
-- most 1024 units per ms and its reach (capacity × unit) at most 2^40 units, so that
-- every instant until the year 2109 fits below 2^52 (ticked_now.lua checks). A
-- policy's own lean script bakes these locals instead (baked.go).
-- granule: the power of two in units that the state's TTL steps by (ticked_write.lua):
-- the smallest one at least the policy's reach or one second of refill, whichever is
-- less.

local cost_arg, granule = ARGV[6], 1
if refill > 1024 or capacity * unit > 1099511627776 then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local span = capacity * unit
if span > 1000 * refill then
  span = 1000 * refill
end
while granule < span do
  granule = granule + granule
end
