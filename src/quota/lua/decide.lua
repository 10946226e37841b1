if redis.call('exists', callKey) == 1 then return {} end
local n = (#ARGV - NAMED_ARGS) / 2
local w = redis.call('hmget', windowKey, 's', 'c')
local start = tonumber(w[1])
local base = tonumber(w[2]) or 0
if not start or nowMs >= start + windowMs or nowMs <= start - windowMs then
  start = nowMs
  base = 0
else
  if backSlots > 0 and backWindowStartMs == start then base = math.max(base - backSlots, 0) end
  if redoSlots > 0 and redoWindowStartMs == start then base = math.max(base - redoSlots, 0) end
end
settle(backReservationsKey, backCreditsKey, backTwinCreditsKey, topupKey, backId, backAllowance, backTopup, creditKeyTtlMs,
  backTwinKeyTtlMs, backUsageKey, backUsage, backUsageTtlMs, backUsageHourKey, backUsageHour, backUsageHourTtlMs)
local reservedAllowance = 0
local reservedTopup = 0
local held = redis.call('hgetall', reservationsKey)
for i = 1, #held, 2 do
  local a, t, deadline = string.match(held[i + 1], '^(%d+):(%d+):(%d+)$')
  if not deadline or tonumber(deadline) <= nowMs then
    redis.call('hdel', reservationsKey, held[i])
  else
    reservedAllowance = reservedAllowance + tonumber(a)
    reservedTopup = reservedTopup + tonumber(t)
  end
end
local reset = math.min(math.max(start + windowMs - nowMs, 1), windowMs)
local spentBefore = tonumber(redis.call('get', creditsKey) or '0')
local topup = math.max(tonumber(redis.call('get', topupKey) or '0') - reservedTopup, 0)
local allowance = math.max(planCredits - spentBefore - reservedAllowance, 0)
local fromAllowanceAll = 0
local fromTopupAll = 0
local maxCost = 0
local out = {}
local usage = {}
local usageFields = {}
for i = 1, n do
  local cost = tonumber(ARGV[NAMED_ARGS + 2 * i - 1])
  local field = ARGV[NAMED_ARGS + 2 * i]
  if cost > maxCost then maxCost = cost end
  local outcome = 0
  local fromTopup = 0
  if base + i > rps then
    outcome = 1
  elseif cost > 0 then
    if allowance + topup < cost then
      outcome = 2
    else
      local fromAllowance = math.min(cost, allowance)
      fromTopup = cost - fromAllowance
      allowance = allowance - fromAllowance
      topup = topup - fromTopup
      fromAllowanceAll = fromAllowanceAll + fromAllowance
      fromTopupAll = fromTopupAll + fromTopup
      if field ~= '' then
        if not usage[field] then usageFields[#usageFields + 1] = field end
        usage[field] = (usage[field] or 0) + cost
      end
    end
  end
  --#reply row
end
local slots = math.min(wantSlots, math.floor((rps - base - n) / LEASE_SHARE))
local leaseAllowance = 0
local leaseTopup = 0
if slots < LEASE_MIN_REQUESTS then
  slots = 0
elseif maxCost > 0 then
  local credits = math.min(slots * maxCost, math.floor((allowance + topup) / LEASE_SHARE))
  -- Whole requests only: a reservation of 24,995 would leave other processes a balance no run of
  -- requests of one cost can leave (x-credits-remaining of 5 on a key whose every cost is 20).
  credits = credits - credits % maxCost
  if credits < LEASE_MIN_REQUESTS * maxCost then
    slots = 0
  else
    leaseAllowance = math.min(credits, allowance)
    leaseTopup = credits - leaseAllowance
    allowance = allowance - leaseAllowance
    topup = topup - leaseTopup
    redis.call('hset', reservationsKey, leaseId, string.format('%d:%d:%d', leaseAllowance, leaseTopup, leaseDeadlineMs))
    if redis.call('pttl', reservationsKey) < 0 then redis.call('pexpire', reservationsKey, creditKeyTtlMs) end
  end
end
redis.call('hset', windowKey, 's', start, 'c', base + n + slots)
redis.call('pexpire', windowKey, rateKeyTtlMs)
if fromAllowanceAll > 0 then
  spend(creditsKey, fromAllowanceAll, creditKeyTtlMs)
  spend(twinCreditsKey, fromAllowanceAll, twinKeyTtlMs)
end
if fromTopupAll > 0 then redis.call('decrby', topupKey, fromTopupAll) end
if fromAllowanceAll > 0 or fromTopupAll > 0 then
  -- The record lists the usage rows billed, one a line, for void.lua to take them off again.
  local record = string.format('%d:%d', fromAllowanceAll, fromTopupAll)
  for _, field in ipairs(usageFields) do
    redis.call('hincrby', usageKey, field, usage[field])
    redis.call('hincrby', usageHourKey, usageHour .. '|' .. field, usage[field])
    record = record .. string.format('\n%d ', usage[field]) .. field
  end
  if #usageFields > 0 and redis.call('pttl', usageKey) < 0 then redis.call('pexpire', usageKey, usageTtlMs) end
  if #usageFields > 0 and redis.call('pttl', usageHourKey) < 0 then redis.call('pexpire', usageHourKey, usageHourTtlMs) end
  redis.call('set', callKey, record, 'PX', callRecordMs)
end
--#reply grant
--#reply tail
return out
