-- tokenbucket.lua: core/tokenbucket.go. State "tokens updated": the level in token
-- units and when it was last refilled (ms). A missing key is a full bucket.

local token_bucket = {}

function token_bucket.load(key, p)
  local v, err = read('GET', key)
  if err then
    return nil, err
  end
  if not v then
    return {seen = false}
  end
  local tokens, updated = string.match(v, '^(%d+) (%d+)$')
  tokens, updated = tonumber(tokens), tonumber(updated)
  if not tokens or tokens > p.capacity * p.unit then
    return nil, 'malformed state'
  end
  return {seen = true, tokens = tokens, updated = updated}
end

-- refill is the level at now; a clock behind updated earns nothing.
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

function token_bucket.step(st, p, now, charge)
  local full = p.capacity * p.unit
  local level, updated = refill(st, p, now)
  local need = p.cost * p.unit
  local r = result()
  if not charge or level < need then
    r.remaining = quot(level, p.unit)
    if level < need then
      r.retry = ceildiv(need - level, p.refill)
    end
    r.reset = ceildiv(full - level, p.refill)
    return r
  end
  level = level - need
  r.allowed = 1
  r.remaining = quot(level, p.unit)
  r.reset = ceildiv(full - level, p.refill)
  return r, {seen = true, tokens = level, updated = updated}
end

local function save_bucket(key, st, p, now, margin)
  local full_at = st.updated + ceildiv(p.capacity * p.unit - st.tokens, p.refill)
  redis.call('SET', key, format('%d %d', st.tokens, st.updated), 'PX', fmt(math.max(full_at - now + margin, 1)))
end

function token_bucket.commit(key, old, st, p, now, margin)
  save_bucket(key, st, p, now, margin)
end

-- refund puts the cost back at the same now, capped at a full bucket: the level any
-- later decision sees is then the level it would have seen without the charge.
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
