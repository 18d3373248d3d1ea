-- tokenbucket.lua: the token bucket of core/internal/transition/tokenbucket.go.
-- State "tokens updated": the level in token units and the instant (ms) it was last
-- refilled. A missing key is a full bucket.

-- level is refillTokenBucket: the level at now, and when it was refilled, from a
-- stored value. A clock that went back earns nothing. It returns nil and an error
-- for a malformed value.
local function level(value, p, now)
  local full = p.capacity * p.unit
  if not value then
    return full, now
  end
  local tokens, updated = match(value, '^(%d+) (%d+)$')
  if not tokens then
    return nil, 'malformed state'
  end
  tokens, updated = tokens + 0, updated + 0
  if tokens > full or updated > MAX_NOW then
    return nil, 'malformed state'
  elseif now > updated then
    if now - updated >= ceildiv(full - tokens, p.refill) then
      tokens = full
    else
      tokens = tokens + (now - updated) * p.refill
    end
    updated = now
  end
  return tokens, updated
end

-- The waits count from updated, which lies after now when the clock went back: the
-- bucket refills from there (behind ms later), as in core. The key expires when the
-- bucket is full again.
local function step(value, p, now, charge)
  local full, need, refill = p.capacity * p.unit, p.cost * p.unit, p.refill
  local tokens, updated = level(value, p, now)
  if not tokens then
    return nil, updated
  end
  local behind = updated - now
  if tokens < need or not charge then
    local retry, reset = 0, 0
    if tokens < need then
      retry = behind + ceildiv(need - tokens, refill)
    end
    if tokens < full then
      reset = behind + ceildiv(full - tokens, refill)
    end
    return 0, floordiv(tokens, p.unit), retry, reset, 0
  end
  tokens = tokens - need
  local reset = behind + ceildiv(full - tokens, refill)
  return 1, floordiv(tokens, p.unit), 0, reset, 0, format('%d %d', tokens, updated), reset
end

-- refund is transition.Refund: what of the cost the bucket has not refilled since
-- the charge (p.charged; bucketRefund) goes back into the bucket refilled to now,
-- capped at a full bucket. An unknown instant (-1) or a clock behind the charge
-- gives the whole cost back.
local function refund(value, p, now)
  if not value then
    return
  end
  local full = p.capacity * p.unit
  local tokens, updated = level(value, p, now)
  if not tokens then
    return
  end
  local give = p.cost * p.unit
  if p.charged >= 0 and now > p.charged then -- a double: the product cannot overflow
    give = math.max(0, give - (now - p.charged) * p.refill)
  end
  tokens = math.min(full, tokens + give)
  return format('%d %d', tokens, updated), updated - now + ceildiv(full - tokens, p.refill)
end

algorithms.tb = {step = step, refund = refund}
