-- ticked_write.lua: the write of a ticked lean script's admission, after its
-- *_ticked.lua file left queued (the units the TAT now lies after now) and the reply
-- fields left and waits; single_reply.lua (batch_reply.lua in the batch form) follows.
--
-- The TTL steps by granules (ticked.lua): every write of a ticked state leaves the
-- key to expire at the first whole granule after its TAT, in ms rounded up, plus the
-- margin (fixedtime.lua writes alike). That is never before the state has recovered
-- (the TAT has passed) plus the margin, and at most a granule later. So while a charge
-- keeps the TAT in its granule, the TTL the key has is the one it needs, and the write
-- keeps it: a busy key sets its TTL once a granule, not once a decision.

-- ⌈units/refill⌉ below, for units up to 2^42, is the double quotient rounded down
-- (q - q % 1) without quot's corrections: the quotient of such integers by a refill of
-- at most 1024 lies at least 1/1024 below the next integer or on it, farther than its
-- rounding error (2^-12 at most), so rounding never carries it across one. The
-- leaky bucket's waits are computed alike. quot is a
-- call, and calls cost more than arithmetic.
local resets = queued + refill - 1 -- ⌈queued/refill⌉ ms
if refill ~= 1 then
  resets = resets / refill
  resets = resets - resets % 1
else
  resets = queued
end
if ahead > 0 then
  -- INCRBY stored old + need, the new TAT: only a TAT that entered a new granule
  -- needs a later expiry.
  if tat - tat % granule ~= old - old % granule then
    local ttl = (tat - tat % granule + granule - nowu + refill - 1) / refill -- ⌈(edge - nowu)/refill⌉
    redis.call('PEXPIRE', KEYS[1], ttl - ttl % 1 + margin)
  end
else
  -- The TAT lay at or before now: the new one is now + need, INCRBY's old + need moved
  -- up by nowu - old (never -0, which Redis would not read), which keeps the TTL and
  -- costs the server less than a SET. A key that INCRBY found missing (old is 0) has
  -- no TTL yet.
  tat = nowu + need
  if old ~= 0 and tat - tat % granule == old - old % granule then
    redis.call('INCRBY', KEYS[1], nowu - old)
  else
    local ttl = (tat - tat % granule + granule - nowu + refill - 1) / refill -- ⌈(edge - nowu)/refill⌉
    redis.call('SET', KEYS[1], tat, 'PX', ttl - ttl % 1 + margin)
  end
end
