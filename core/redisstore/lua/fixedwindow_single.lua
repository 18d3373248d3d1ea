-- fixedwindow_single.lua: one fixed window charge (fixedwindow.lua's load, step and
-- commit, inlined). Follows single_state.lua; single_write.lua follows.

local window, count = quot(now, period), 0
if state then
  local w, c = string.match(state, '^(%d+) (%d+)$')
  if not w then
    return redis.error_reply('RATELIMIT malformed state')
  end
  w, c = w + 0, c + 0 -- digits (see common.lua)
  if c > limit or w * period > 1125899906842624 then -- a window beyond 2^50 ms
    return redis.error_reply('RATELIMIT malformed state')
  end
  if w >= window then -- a clock behind the newest window still counts in it
    window, count = w, c
  end
end
local until_end = (window + 1) * period - now
if count + cost > limit then
  return {0, limit - count, until_end, until_end}
end
count = count + cost
local ttl = until_end + margin
local value, expiry = format('%d %d', window, count), format('%d', ttl > 1 and ttl or 1)
local left, resets, waits = limit - count, until_end, 0 -- the admission's reply fields (single_write.lua)
