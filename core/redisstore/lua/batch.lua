-- batch.lua: the batch driver. It charges a batch of single decisions in one script
-- call, in order, each exactly as stack.lua charges a stack of one, at one instant.
--
-- KEYS[i] is the key of decision i. ARGV: now margin, then per run of consecutive
-- decisions with the same arguments: count spec cost lease (as stack.lua reads them).
-- Sent per run, not per decision, they cost the server 3.4k instructions less per
-- decision on per-user keys (cmd/servercost).
-- Reply: now, then per decision in order: allowed remaining retry_after_ms reset_after_ms
-- delay_ms; or, when that decision failed, minus the length of its error message and
-- then its bytes. A decision's error leaves the others intact: each reads and checks
-- its state before it writes. Arguments of another shape fail the call before any
-- decision runs.

local n, runs, counted = #KEYS, (#ARGV - 2) / 4, 0
local now, margin = arguments(ARGV[1], ARGV[2])
for r = 1, runs % 1 == 0 and runs or 0 do
  local count = tonumber(ARGV[4 * r - 1]) or 0
  counted = (count >= 1 and count % 1 == 0) and counted + count or -math.huge
end
if n < 1 or counted ~= n or not margin then
  return redis.error_reply('RATELIMIT malformed batch arguments')
elseif not now then
  return redis.error_reply('RATELIMIT malformed batch arguments: now')
end

-- A decision's error is a value, not raised under pcall: a pcall per decision cost the
-- server about 2k instructions (cmd/servercost).
--
-- Consecutive decisions of a run on one key (a hot key) read it once and write it
-- once: the next decision steps from the value the last charge left, and the run's
-- last decision on the key writes it. It ends as after a write per charge, since the
-- last write decides its value and TTL, and a refusal writes nothing. On one hot key
-- this saves a GET and a SET per decision, 50.2k -> 24.1k server instructions
-- (cmd/servercost).
local out, i = {now}, 0
for r = 1, runs do
  local count, p = ARGV[4 * r - 1] + 0, policy(ARGV[4 * r], ARGV[4 * r + 1], ARGV[4 * r + 2])
  local held, value, err, pending, ttl -- the key in memory, its value or error, an unwritten charge and its TTL
  for j = 1, count do
    i = i + 1
    local key = KEYS[i]
    if key ~= held then
      held, value, err = key, nil, 'malformed arguments'
      if p then
        value = redis.pcall('GET', key)
        if type(value) == 'table' then -- WRONGTYPE
          err = value.err
          value = nil
        end
      end
    end
    local k, allowed, write, expires = #out, nil, nil, nil
    if value ~= nil then
      allowed, out[k + 2], out[k + 3], out[k + 4], out[k + 5], write, expires = p.alg.step(value, p, now, true)
      if allowed then
        out[k + 1] = allowed
      else
        value, err = nil, out[k + 2]
        out[k + 2] = nil
      end
    end
    if write then
      value, pending, ttl = write, true, expires
    end
    if not allowed then
      err = string.sub('RATELIMIT ' .. tostring(err), 1, 200)
      out[k + 1] = -#err
      for b = 1, #err do
        out[k + 1 + b] = string.byte(err, b)
      end
    end
    if pending and (j == count or KEYS[i + 1] ~= key) then -- the run on key ends
      put(key, value, ttl, margin)
      pending, held = nil, nil
    end
  end
end
return out
