if not redis.call('set', markerKey, '1', 'NX', 'PX', markerMs) then return 0 end
local back = 0
if tonumber(toAllowance) > 0 and redis.call('exists', creditsKey) == 1 then
  redis.call('decrby', creditsKey, toAllowance)
  back = back + tonumber(toAllowance)
end
if tonumber(toAllowance) > 0 and redis.call('exists', twinCreditsKey) == 1 then redis.call('decrby', twinCreditsKey, toAllowance) end
if tonumber(toTopup) > 0 then
  redis.call('incrby', topupKey, toTopup)
  back = back + tonumber(toTopup)
end
if back > 0 and usageField ~= '' then redis.call('hincrby', usageKey, usageField, -back) end
if back > 0 and usageHourField ~= '' then redis.call('hincrby', usageHourKey, usageHourField, -back) end
return 0
