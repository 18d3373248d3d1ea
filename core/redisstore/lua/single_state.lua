-- single_state.lua: the stored state of a lean single-charge script, read from
-- KEYS[1]. It begins the script's body, which a batch runs once per key. Follows
-- single_now.lua; the algorithm's *_single.lua follows (through single_tat.lua for
-- GCRA and the leaky bucket).

local speculate = false -- only a batch speculates (batch_state.lua)
local state = redis.pcall('GET', KEYS[1])
if type(state) == 'table' then
  return redis.error_reply('RATELIMIT ' .. state.err)
end
