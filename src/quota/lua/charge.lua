if not redis.call('set', markerKey, '1', 'NX', 'PX', markerMs) then return {0, 0, 0, 0} end
local amount = 0
for a in string.gmatch(usage, '(%d+) [^\n]+') do amount = amount + tonumber(a) end
local spent = tonumber(redis.call('get', creditsKey) or '0')
local fromAllowance = math.min(amount, math.max(planCredits - spent, 0))
local fromTopup = math.min(amount - fromAllowance, math.max(tonumber(redis.call('get', topupKey) or '0'), 0))
local toAllowance = amount - fromTopup
if toAllowance > 0 then
  spend(creditsKey, toAllowance, creditKeyTtlMs)
  spend(twinCreditsKey, toAllowance, twinKeyTtlMs)
end
if fromTopup > 0 then redis.call('decrby', topupKey, fromTopup) end
addUsage(usageKey, usage, '', usageTtlMs, usageHourKey, usageHour, usageHourTtlMs)
local out = {}
--#reply reply
return out
