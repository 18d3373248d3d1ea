-- charge_in_place.lua: charges the one-integer state of a ticked (ticked.lua) or
-- counted (counted.lua) lean script in one command, INCRBY by delta, which the
-- prologue set (ticked_now.lua, counted_now.lua) with most_state, the largest state
-- either format holds. It begins the body; ticked_state.lua or
-- fixedwindow_counted.lua follows with charged, the state with the charge added, and
-- gives the charge back with DECRBY when it refuses.

local charged = redis.pcall('INCRBY', KEYS[1], delta)
if type(charged) == 'table' then
  -- INCRBY refused the stored value (not an integer, out of range, another type) or
  -- the argument; it wrote nothing. GET tells them apart: Redis's INCRBY and
  -- decide.lua read exactly these digits, no sign and no leading zero.
  local state = redis.pcall('GET', KEYS[1])
  if type(state) == 'table' then
    return redis.error_reply('RATELIMIT ' .. state.err)
  elseif state and not ((state == '0' or string.match(state, '^[1-9]%d*$')) and state + 0 <= most_state) then
    return redis.error_reply('RATELIMIT malformed state')
  end
  return redis.error_reply('RATELIMIT malformed arguments')
end
