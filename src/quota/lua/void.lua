if leaseId ~= '' then redis.call('hdel', reservationsKey, leaseId) end
local record = redis.call('get', callKey)
redis.call('set', callKey, 'void', 'PX', callRecordMs)
if not record or record == 'void' then return 0 end
local a, t, rows = string.match(record, '^(%d+):(%d+)(.*)$')
if not a then return 0 end
-- The usage rows it billed are taken off as well (decide.lua lists them in its record), but not
-- when its period's counter is gone: then what it took from the allowance is not given back either.
if tonumber(a) == 0 or redis.call('exists', creditsKey) == 1 then
  addUsage(usageKey, rows, '-', '1', usageHourKey, usageHour, '1')
end
if tonumber(a) > 0 and redis.call('exists', creditsKey) == 1 then redis.call('decrby', creditsKey, a) end
if tonumber(a) > 0 and redis.call('exists', twinCreditsKey) == 1 then redis.call('decrby', twinCreditsKey, a) end
if tonumber(t) > 0 then redis.call('incrby', topupKey, t) end
return 1
