-- batch_state.lua: single_state.lua in a lean script's batch form (newBatchScript).
-- A speculating decision (see batchDriver) does not read the key: it decides as for a
-- missing key, and the *_single.lua files then write with SET NX, which writes only
-- if the key is indeed missing; when it is not, the decision returns nil without a
-- write, and the driver decides again without speculating. Otherwise the state is
-- read as single_state.lua reads it.

local state = false
if not speculate then
  state = redis.pcall('GET', KEYS[1])
  if type(state) == 'table' then
    return redis.error_reply('RATELIMIT ' .. state.err)
  end
end
