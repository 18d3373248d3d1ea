-- counted_args.lua: the arguments of the shared counted lean script of the fixed
-- window, after single_window.lua validated them. A counted policy (counted.lua) keeps
-- window × stride + count as one integer, which INCRBY charges in place;
-- fixedwindow.lua reads and writes the same state. A policy's own lean script bakes
-- these locals instead (baked.go).

local cost_arg, stride = ARGV[5], counted_stride(limit, period)
if not stride then
  return redis.error_reply('RATELIMIT malformed arguments')
end
