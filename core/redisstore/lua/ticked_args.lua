-- ticked_args.lua: the arguments of the shared ticked lean scripts of GCRA and the
-- leaky bucket, after single.lua validated them. A ticked policy (ticked.lua) keeps its
-- TAT as one integer of token units, which INCRBY charges in place; fixedtime.lua
-- reads and writes the same state. A policy's own lean script bakes these locals
-- instead (baked.go).

local cost_arg, granule = ARGV[6], ticked_granule(unit, refill, capacity)
if not granule then
  return redis.error_reply('RATELIMIT malformed arguments')
end
