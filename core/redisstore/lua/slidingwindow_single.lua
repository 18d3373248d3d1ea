-- slidingwindow_single.lua: one sliding window charge (slidingwindow.lua's load, step
-- and commit, inlined). Follows single_state.lua; single_write.lua follows.

-- count_before is ⌊count×e/period⌋ for 0 <= e <= period, computed as whole×e +
-- ⌊rest×e/period⌋ with count = whole×period + rest, so no intermediate exceeds
-- min(count, period)×period (slidingwindow.lua's).
local function count_before(count, e)
  local whole = quot(count, period)
  return whole * e + quot((count - whole * period) * e, period)
end

local window, cur, prev = quot(now, period), 0, 0
if state then
  local w, c, p = string.match(state, '^(%d+) (%d+) (%d+)$')
  if not w then
    return redis.error_reply('RATELIMIT malformed state')
  end
  w, c, p = w + 0, c + 0, p + 0 -- digits (see common.lua)
  if c > limit or p > limit or w * period > 1125899906842624 then -- beyond 2^50 ms
    return redis.error_reply('RATELIMIT malformed state')
  end
  if w >= window then
    window, cur, prev = w, c, p
  elseif w == window - 1 then
    prev = c
  end
end
local start = window * period
local elapsed = now - start
if elapsed < 0 then
  elapsed = 0
end
local weighted = prev - count_before(prev, elapsed) -- ⌈prev×(period-elapsed)/period⌉
local spare = limit - cur - cost
local reset = 0 -- until_recovered, after this decision
if weighted > spare then
  -- first_offset: the smallest e in [0, period] with count_before(count, e) >= need,
  -- from core's floating-point estimate corrected exactly (slidingwindow.lua's)
  local function first_offset(count, need)
    if need <= 0 then
      return 0
    end
    local e = math.min(math.max(math.ceil(need * period / count), 0), period)
    while e > 0 and count_before(count, e - 1) >= need do
      e = e - 1
    end
    while e < period and count_before(count, e) < need do
      e = e + 1
    end
    return e
  end
  local offset -- first_admitting_offset: from the window's start
  if spare >= 0 then
    offset = first_offset(prev, prev - spare)
  else
    local e = first_offset(cur, cur - (limit - cost))
    offset = e < period and period + e or 2 * period
  end
  if cur > 0 then
    reset = start + 2 * period - now
  elseif prev > 0 then
    reset = start + period - now
  end
  local remaining = limit - cur - weighted
  return {0, remaining > 0 and remaining or 0, reset, start + offset - now}
end
cur = cur + cost
reset = start + 2 * period - now
local remaining = limit - cur - weighted
local ttl = reset + margin
local value, expiry = format('%d %d %d', window, cur, prev), format('%d', ttl > 1 and ttl or 1)
local left, resets, waits = remaining > 0 and remaining or 0, reset, 0 -- the admission's reply fields (single_write.lua)
