-- single_now.lua: the instant of a lean single-charge script. Follows single.lua or
-- single_window.lua, which validated the arguments and left now (ARGV[1]) to parse
-- here. It ends the script's prologue: everything up to here depends on the arguments
-- alone, so a batch of decisions that share them runs it once (see batchDriver).
-- single_state.lua follows.

if now == 'redis' then
  local time = redis.call('TIME')
  local micros = time[2] + 0 -- TIME's digits convert by arithmetic, without a call
  now = time[1] * 1000 + (micros - micros % 1000) / 1000
else
  now = tonumber(now)
  if not now or now % 1 ~= 0 or now < 0 or now > 1125899906842624 then -- 2^50 ms: far beyond any real clock
    return redis.error_reply('RATELIMIT malformed arguments: now')
  end
end
