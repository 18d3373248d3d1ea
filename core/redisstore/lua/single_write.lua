-- single_write.lua: the write of every lean single-charge script, after the algorithm's
-- *_single.lua decided to admit and left value (the new state), expiry (its TTL in ms,
-- formatted) and the admission's reply fields: left (remaining), resets (ms until
-- the state has recovered) and waits (the delay). A speculating batch
-- (batch_state.lua) writes only to a missing key, with NX; when the key exists,
-- nothing is written, and nil tells the batch to decide again, reading the key.
-- single_reply.lua (batch_reply.lua in the batch form) follows and replies.

if not speculate then
  redis.call('SET', KEYS[1], value, 'PX', expiry)
elseif not redis.call('SET', KEYS[1], value, 'PX', expiry, 'NX') then
  return nil -- the key exists: the batch decides again, reading it (batch_state.lua)
end
