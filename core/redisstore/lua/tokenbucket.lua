-- tokenbucket.lua: the token bucket of core/internal/transition/tokenbucket.go.
-- State "tokens updated": the level in token units and the instant (ms) it was last
-- refilled. A missing key is a full bucket.

local function load(key, p)
  local v = redis.pcall('GET', key)
  if not v then
    return {}
  elseif type(v) == 'table' then -- WRONGTYPE
    return nil, v.err
  end
  local tokens, updated = match(v, '^(%d+) (%d+)$')
  if not tokens or tokens + 0 > p.capacity * p.unit or updated + 0 > MAX_NOW then
    return nil, 'malformed state'
  end
  return {tokens = tokens + 0, updated = updated + 0}
end

-- level is refillTokenBucket: the level at now, and when it was refilled. A clock
-- that went back earns nothing.
local function level(st, p, now)
  local full = p.capacity * p.unit
  if not st.tokens then
    return full, now
  end
  local tokens, updated = st.tokens, st.updated
  if now > updated then
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
-- bucket refills from there (behind ms later), as in core.
local function step(st, p, now, charge)
  local full, need = p.capacity * p.unit, p.cost * p.unit
  local tokens, updated = level(st, p, now)
  local behind = updated - now
  if tokens < need or not charge then
    local retry, reset = 0, 0
    if tokens < need then
      retry = behind + ceildiv(need - tokens, p.refill)
    end
    if tokens < full then
      reset = behind + ceildiv(full - tokens, p.refill)
    end
    return 0, floordiv(tokens, p.unit), retry, reset, 0
  end
  tokens = tokens - need
  return 1, floordiv(tokens, p.unit), 0, behind + ceildiv(full - tokens, p.refill), 0, {tokens = tokens, updated = updated}
end

-- commit writes a level, the change (a whole state); the key expires when the bucket
-- is full again, plus the margin.
local function commit(key, _, st, p, now, margin)
  local ttl = st.updated + ceildiv(p.capacity * p.unit - st.tokens, p.refill) - now + margin
  redis.call('SET', key, format('%d %d', st.tokens, st.updated), 'PX', format('%d', ttl > 1 and ttl or 1))
end

-- refund is transition.Refund: the cost goes back into the bucket refilled to now, capped
-- at a full bucket.
local function refund(key, st, p, now, margin)
  if not st.tokens then
    return st
  end
  local tokens, updated = level(st, p, now)
  local back = {tokens = math.min(p.capacity * p.unit, tokens + p.cost * p.unit), updated = updated}
  commit(key, st, back, p, now, margin)
  return back
end

algorithms.tb = {load = load, step = step, commit = commit, refund = refund, after = true}
