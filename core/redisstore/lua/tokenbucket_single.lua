-- tokenbucket_single.lua: one token bucket charge (tokenbucket.lua's load, step and
-- commit, inlined). Follows single_state.lua; single_write.lua follows.

local full, need = capacity * unit, cost * unit
local level, updated = full, now -- a missing key is a full bucket
if state then
  local tokens, at = string.match(state, '^(%d+) (%d+)$')
  if not tokens then
    return redis.error_reply('RATELIMIT malformed state')
  end
  level, updated = tokens + 0, at + 0 -- digits (see common.lua)
  if level > full or updated > 1125899906842624 then -- an instant beyond 2^50 ms
    return redis.error_reply('RATELIMIT malformed state')
  end
  if now > updated then -- refillTokenBucket; a clock behind updated earns nothing
    if now - updated >= (refill == 1 and full - level or quot(full - level + refill - 1, refill)) then
      level = full
    else
      level = level + (now - updated) * refill
    end
    updated = now
  end
end
if level < need then
  return {0, quot(level, unit), quot(full - level + refill - 1, refill), quot(need - level + refill - 1, refill)}
end
level = level - need
local reset = refill == 1 and full - level or quot(full - level + refill - 1, refill)
local ttl = updated + reset - now + margin
local value, expiry = format('%d %d', level, updated), format('%d', ttl > 1 and ttl or 1)
local left, resets, waits = unit == 1 and level or quot(level, unit), reset, 0 -- the admission's reply fields (single_write.lua)
