-- Functions shared by the quota scripts: src/quota/redis-scripts.ts sends each script as this
-- file, then the prologue that binds the script's KEYS and ARGV to locals, then the script's own
-- file. They read only their parameters.

-- Adds `amount` to a credit counter, and gives the counter `ttl` if it has none.
local function spend(counter, amount, ttl)
  redis.call('incrby', counter, amount)
  if redis.call('pttl', counter) < 0 then redis.call('pexpire', counter, ttl) end
end

-- Adds to (`sign` '') or takes from (`sign` '-') a day's usage credits what `lines` lists, one
-- usage row a line: `<credits> <field>` (encodeUsage), and the same to the hour's
-- (`<hour>|<field>` in the day's hourly hash), giving each hash its ttl if it has none.
local function addUsage(usageKey, lines, sign, ttl, hourKey, hour, hourTtl)
  for amount, field in string.gmatch(lines, '(%d+) ([^\n]+)') do
    redis.call('hincrby', usageKey, field, sign .. amount)
    redis.call('hincrby', hourKey, hour .. '|' .. field, sign .. amount)
  end
  if lines ~= '' and redis.call('pttl', usageKey) < 0 then redis.call('pexpire', usageKey, ttl) end
  if lines ~= '' and redis.call('pttl', hourKey) < 0 then redis.call('pexpire', hourKey, hourTtl) end
end

-- Settles a lease: if the period's reservations still hold the lease's id, removes it and bills
-- what the lease spent, from the allowance (the credit key gets its ttl if it had none) and from
-- bought credits, and counts it in its day's and its hour's usage credits, by usage row. Once: a
-- second settlement finds no reservation. Used by decide.lua and settle.lua.
local function settle(reservations, credits, twin, topup, id, allowance, bought, ttl, twinTtl, usageKey, usage, usageTtl,
                      hourKey, hour, hourTtl)
  if id ~= '' and redis.call('hdel', reservations, id) == 1 then
    if tonumber(allowance) > 0 then
      spend(credits, allowance, ttl)
      spend(twin, allowance, twinTtl)
    end
    if tonumber(bought) > 0 then redis.call('decrby', topup, bought) end
    addUsage(usageKey, usage, '', usageTtl, hourKey, hour, hourTtl)
  end
end
