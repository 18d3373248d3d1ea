-- fixedwindow_counted.lua: one fixed window charge on a counted state (counted.lua;
-- fixedwindow.lua's load, step and commit, inlined), after charge_in_place.lua.
-- single_reply.lua (batch_reply.lua in the batch form) follows.
--
-- INCRBY adds the charge to the stored state as if it were admitted in the state's
-- window: the common case of a key already charged in this window, which then needs
-- no other command. The TTL its window's first write set stands (the key expires
-- when the window ends, plus the margin). A refusal takes the charge back with
-- DECRBY, leaving value and TTL as they were. A state of an earlier window (or a
-- missing key, which counts as 0) is written anew, window × stride + cost, with its
-- TTL. A state of a later window (a clock behind it) still counts in that window.

local old = charged - cost -- the stored state: exact for a valid one, below 2^53
local count = old % stride
if old < 0 or count > limit or old + stride + stride > 9007199254740992 then
  redis.call('DECRBY', KEYS[1], delta)
  return redis.error_reply('RATELIMIT malformed state')
end
-- resets: the ms until the state's window ends. (The prologue's locals are shared by
-- every decision of a batch, so the body never assigns them.)
local resets = until_end
if old >= base and old ~= 0 then
  if old >= base + stride then -- a later window: the clock lies behind it
    local later = (old - count) / stride
    if later * period > 1125899906842624 then -- a window beyond 2^50 ms
      redis.call('DECRBY', KEYS[1], delta)
      return redis.error_reply('RATELIMIT malformed state')
    end
    resets = (later + 1) * period - now
  end
  if count + cost > limit then
    redis.call('DECRBY', KEYS[1], delta)
    return {0, limit - count, resets, resets}
  end
  count = count + cost
else
  count = cost
  redis.call('SET', KEYS[1], base + cost, 'PX', until_end + margin)
end
local left, waits = limit - count, 0 -- the admission's reply fields, with resets
