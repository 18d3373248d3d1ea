-- ticked.lua: which policies of GCRA and the leaky bucket keep a ticked TAT, one
-- integer of token units since the epoch (millis × refill + frac), and the granule
-- their TTL steps by (ticked_write.lua). Go's ticked and tickedGranule decide alike; a
-- policy's own lean script bakes the granule instead (baked.go).
--
-- ticked_granule is nil for a policy that is not ticked: its refill is above 1024
-- units per ms or its reach (capacity × unit) above 2^40 units, so that every TAT until
-- the year 2109 would not fit below 2^52 (ticked_now.lua). Otherwise it is the
-- smallest power of two in units at least the reach or one second of refill,
-- whichever is less.
local function ticked_granule(unit, refill, capacity)
  local span = capacity * unit
  if refill > 1024 or span > 1099511627776 then
    return nil
  end
  if span > 1000 * refill then
    span = 1000 * refill
  end
  local granule = 1
  while granule < span do
    granule = granule + granule
  end
  return granule
end
