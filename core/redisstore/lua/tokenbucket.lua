-- tokenbucket.lua: core/tokenbucket.go. State "tokens updated": the level in token
-- units and when it was last refilled (ms). A missing key is a full bucket.

local token_bucket = {}

function token_bucket.load(key, p)
  local v, err = get(key)
  if err then
    return nil, err
  elseif not v then
    return {seen = false}
  end
  local tokens, updated = string.match(v, '^(%d+) (%d+)$')
  if not tokens then
    return nil, 'malformed state'
  end
  tokens, updated = tokens + 0, updated + 0 -- digits (see common.lua)
  if tokens > p.capacity * p.unit or updated > 1125899906842624 then -- an instant beyond 2^50 ms
    return nil, 'malformed state'
  end
  return {seen = true, tokens = tokens, updated = updated}
end

-- refill is refillTokenBucket: the level at now; a clock behind updated earns nothing.
local function refill(st, p, now)
  local full = p.capacity * p.unit
  if not st.seen then
    return full, now
  end
  local level, updated = st.tokens, st.updated
  if now > updated then
    if now - updated >= ceildiv(full - level, p.refill) then
      level = full
    else
      level = level + (now - updated) * p.refill
    end
    updated = now
  end
  return level, updated
end

function token_bucket.step(st, p, now, charge, reply, at)
  local full = p.capacity * p.unit
  local level, updated = refill(st, p, now)
  local need = p.cost * p.unit
  if not charge or level < need then
    local retry = 0
    if level < need then
      retry = ceildiv(need - level, p.refill)
    end
    put(reply, at, 0, quot(level, p.unit), retry, ceildiv(full - level, p.refill), 0)
    return nil
  end
  level = level - need
  put(reply, at, 1, quot(level, p.unit), 0, ceildiv(full - level, p.refill), 0)
  return {seen = true, tokens = level, updated = updated}
end

local function save_bucket(key, st, p, now, margin)
  local ttl = st.updated + ceildiv(p.capacity * p.unit - st.tokens, p.refill) - now + margin
  redis.call('SET', key, format('%d %d', st.tokens, st.updated), 'PX', format('%d', ttl > 1 and ttl or 1))
end

function token_bucket.commit(key, old, st, p, now, margin)
  save_bucket(key, st, p, now, margin)
end

-- refund is core.Refund: the cost goes back into the bucket refilled to now, capped
-- at a full bucket.
function token_bucket.refund(key, st, p, now, margin)
  if not st.seen then
    return st
  end
  local level, updated = refill(st, p, now)
  local back = {seen = true, tokens = math.min(p.capacity * p.unit, level + p.cost * p.unit), updated = updated}
  save_bucket(key, back, p, now, margin)
  return back
end

algorithms.tb = token_bucket
