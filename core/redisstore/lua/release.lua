-- release.lua: ends a concurrency lease (core.ReleaseLease): removes the first lease
-- of KEYS[1] whose id is ARGV[1]. Returns 1 when a lease was removed, 0 otherwise.
-- Redis deletes the list with its last lease. It runs alone, without common.lua.

local id = ARGV[1]
if #ARGV ~= 1 or #id > 20 or not string.match(id, '^%d+$') then
  return redis.error_reply('RATELIMIT malformed arguments: lease id')
end
local entries = redis.pcall('LRANGE', KEYS[1], 0, -1)
if type(entries) == 'table' and entries.err then
  return redis.error_reply('RATELIMIT ' .. entries.err)
end
for _, entry in ipairs(entries) do
  local lease = string.match(entry, '^(%d+) %d+ %d+$')
  if not lease then
    return redis.error_reply('RATELIMIT malformed state')
  end
  if lease == id then
    redis.call('LREM', KEYS[1], 1, entry)
    return 1
  end
end
return 0
