-- batch_reply.lua: the reply of a lean script's admission in its batch form, where
-- single_reply.lua stands alone: always an array (single.lua), which the batch driver
-- compares with the reply before it (see batchDriver).

if waits == 0 then
  return {1, left, resets}
end
return {1, left, resets, 0, waits}
