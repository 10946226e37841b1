local heldTopup = 0
local seen = {}
for _, key in ipairs({ dayBeforeKey, dayKey, dayAfterKey, monthBeforeKey, monthKey, monthAfterKey }) do
  if not seen[key] then
    seen[key] = true
    local rows = redis.call('hgetall', key)
    for i = 1, #rows, 2 do
      local a, t, deadline = string.match(rows[i + 1], '^(%d+):(%d+):(%d+)$')
      if not deadline or tonumber(deadline) <= nowMs then
        redis.call('hdel', key, rows[i])
      else
        heldTopup = heldTopup + tonumber(t)
      end
    end
  end
end
local topupBefore = tonumber(redis.call('get', topupKey) or '0')
local available = math.max(topupBefore - heldTopup, 0)
local delta = amount
if mode == 'set' then delta = amount - available end
local applied = 0
local topupAfter = topupBefore
if available + delta >= 0 then
  applied = 1
  if delta ~= 0 then topupAfter = redis.call('incrby', topupKey, string.format('%d', delta)) end
end
local out = {}
--#reply reply
return out
