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

-- A decision's error comes back from load as a value, not raised under pcall: a pcall
-- per decision cost the server about 2k instructions (cmd/servercost), and only load
-- can fail (WRONGTYPE, a malformed state).
--
-- Consecutive decisions of a run on one key (a hot key) read it once and write it
-- once: when the next decision of the run names the same key, a charge is kept in
-- memory as the state it leaves (the algorithm's after), and the run's last charge
-- writes the key. It ends as after a write per charge, since the last write decides
-- its value and TTL, and a refusal writes nothing. On one hot key this saves a GET
-- and a SET per decision, 50.2k -> 24.1k server instructions (cmd/servercost).
-- Algorithms whose commit appends to a list (slidinglog, concurrency) have no after.
local out, i = {now}, 0
for r = 1, runs do
  local count, p = ARGV[4 * r - 1] + 0, policy(ARGV[4 * r], ARGV[4 * r + 1], ARGV[4 * r + 2])
  local after = p and p.alg.after
  local held, state, err, pending -- the key in memory, its state or error, an unwritten charge
  for j = 1, count do
    i = i + 1
    local key = KEYS[i]
    if key ~= held then
      held, state, err = key, nil, 'malformed arguments'
      if p then state, err = p.alg.load(key, p) end
    end
    local k = #out
    if state then
      local change
      out[k + 1], out[k + 2], out[k + 3], out[k + 4], out[k + 5], change = p.alg.step(state, p, now, true)
      if change and after and j < count and KEYS[i + 1] == key then
        pending, state = change, after == true and change or after(state, change, p, now)
      elseif change then
        p.alg.commit(key, state, change, p, now, margin)
        pending, held = nil, nil
      end
    else
      err = string.sub('RATELIMIT ' .. tostring(err), 1, 200)
      out[k + 1] = -#err
      for b = 1, #err do
        out[k + 1 + b] = string.byte(err, b)
      end
    end
    if pending and (j == count or KEYS[i + 1] ~= key) then -- the run on key ends refused
      p.alg.commit(key, nil, pending, p, now, margin)
      pending, held = nil, nil
    end
  end
end
return out
