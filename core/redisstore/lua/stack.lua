-- stack.lua: the stack driver. It decides a stack of policies, one per key, as one
-- atomic step; a single decision is a stack of one.
--
-- KEYS[i] is the state of policy i. ARGV: mode now margin, then per policy: spec cost lease
--   mode:   charge (decide all-or-nothing and spend), peek (decide, spend nothing),
--           refund (transition.Refund, then peek), undo (refund a charge taken at now,
--           releasing its lease, then peek) or release (end the lease of one
--           concurrency policy, transition.ReleaseLease; the reply is {1} when the lease
--           was live, {0} when not)
--   now:    ms since the Unix epoch, or "redis" for the server's TIME
--   margin: ms added to every TTL beyond the state's full recovery
--   spec:   the policy's numbers (see policy in common.lua); cost: the request's
--           effective cost; lease: a concurrency lease id ("0" for the others), but
--           in refund mode the ms the charge was taken at (undo: now)
-- Reply: now, 1 when every policy admitted, then per policy:
--   allowed remaining retry_after_ms reset_after_ms delay_ms
-- Every argument is validated and every state read and checked before the first write.

local n, mode = #KEYS, ARGV[1]
local now, margin = arguments(ARGV[2], ARGV[3])
if n < 1 or #ARGV ~= 3 + 3 * n or not margin
    or not (mode == 'charge' or mode == 'peek' or mode == 'refund' or mode == 'undo' or mode == 'release') then
  return redis.error_reply('RATELIMIT malformed arguments')
end
local policies = {}
for i = 1, n do
  local refund = mode == 'refund' and ARGV[3 + 3 * i]
  local p = policy(ARGV[1 + 3 * i], ARGV[2 + 3 * i], refund and '0' or ARGV[3 + 3 * i])
  if not p or refund and (#refund > 20 or not match(refund, '^%-?%d+$')) then
    return redis.error_reply('RATELIMIT malformed arguments: policy ' .. i)
  end
  p.charged, policies[i] = refund and refund + 0 or now, p
end
if not now then
  return redis.error_reply('RATELIMIT malformed arguments: now')
elseif mode == 'release' and (n ~= 1 or not policies[1].alg.release) then
  return redis.error_reply('RATELIMIT malformed arguments: release')
end

-- Read every state. Refund and undo write before their step reads the state, so in
-- those modes a peek checks every state first.
local values = {}
for i = 1, n do
  local value = redis.pcall('GET', KEYS[i])
  if type(value) == 'table' then -- WRONGTYPE
    return redis.error_reply('RATELIMIT ' .. value.err)
  end
  if mode == 'refund' or mode == 'undo' then
    local ok, err = policies[i].alg.step(value, policies[i], now, false)
    if not ok then
      return redis.error_reply('RATELIMIT ' .. err)
    end
  end
  values[i] = value
end
if mode == 'release' then
  local found, write, ttl = policies[1].alg.release(values[1], policies[1], now)
  if not found then
    return redis.error_reply('RATELIMIT ' .. write)
  elseif write then
    put(KEYS[1], write, ttl, margin)
  end
  return {found}
end

-- The reply is sized for one policy at once: grown slot by slot, it rehashes four
-- times (134.5k -> 131.8k server instructions per GCRA decision, cmd/servercost).
local reply, all, writes, ttls = {now, 1, 0, 0, 0, 0, 0}, 1, {}, {}
for i = 1, n do
  local p, at = policies[i], 2 + 5 * (i - 1)
  if mode == 'refund' or mode == 'undo' then
    local write, ttl = (mode == 'undo' and p.alg.undo or p.alg.refund)(values[i], p, now)
    if write then
      put(KEYS[i], write, ttl, margin)
      values[i] = write ~= '' and write
    end
  end
  local allowed
  allowed, reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5], writes[i], ttls[i] =
    p.alg.step(values[i], p, now, mode == 'charge')
  if not allowed then
    return redis.error_reply('RATELIMIT ' .. reply[at + 2])
  end
  reply[at + 1] = allowed
  if not writes[i] then
    all = 0
  end
end
for i = 1, n do
  local p, at = policies[i], 2 + 5 * (i - 1)
  if all == 1 then
    put(KEYS[i], writes[i], ttls[i], margin)
  elseif writes[i] then -- admitted alone, charged nothing: report it as a peek (transition.RefuseStack)
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5] = p.alg.step(values[i], p, now, false)
  end
end
reply[2] = all
return reply
