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
-- Every argument is validated and every state read before the first write.

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
elseif mode == 'release' then
  if n ~= 1 or not policies[1].alg.release then
    return redis.error_reply('RATELIMIT malformed arguments: release')
  end
  return policies[1].alg.release(KEYS[1], policies[1])
end
for i = 1, n do
  local p, err = policies[i], nil
  p.state, err = p.alg.load(KEYS[i], p)
  if not p.state then
    return redis.error_reply('RATELIMIT ' .. err)
  end
end

-- The reply is sized for one policy at once: grown slot by slot, it rehashes four
-- times (134.5k -> 131.8k server instructions per GCRA decision, cmd/servercost).
local reply, all = {now, 1, 0, 0, 0, 0, 0}, 1
for i = 1, n do
  local p = policies[i]
  local state = p.state
  if mode == 'undo' and p.alg.undo then
    state = p.alg.undo(KEYS[i], state, p, now, margin)
  elseif mode == 'refund' or mode == 'undo' then
    state = p.alg.refund(KEYS[i], state, p, now, margin)
  end
  local at = 2 + 5 * (i - 1)
  reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5], p.change =
    p.alg.step(state, p, now, mode == 'charge')
  if not p.change then
    all = 0
  end
end
for i = 1, n do
  local p = policies[i]
  if all == 1 then
    p.alg.commit(KEYS[i], p.state, p.change, p, now, margin)
  elseif p.change then -- admitted alone, charged nothing: report it as a peek (transition.RefuseStack)
    local at = 2 + 5 * (i - 1)
    reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5] = p.alg.step(p.state, p, now, false)
  end
end
reply[2] = all
return reply
