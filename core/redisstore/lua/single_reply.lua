-- single_reply.lua: the reply of a lean single-charge script that admitted, after
-- single_write.lua. An admission that does not wait, whose remaining count is below
-- 2^26 and whose reset is below 2^27 ms (37 hours), is one integer:
-- left × 2^27 + resets, which parseLeanReply unpacks. Turning a table into a reply
-- costs the server as much as a GET, and these admissions are most decisions. Any
-- other admission is an array, as single.lua describes.

if waits == 0 and left >= 0 and left < 67108864 and resets >= 0 and resets < 134217728 then
  return left * 134217728 + resets
elseif waits == 0 then
  return {1, left, resets}
end
return {1, left, resets, 0, waits}
