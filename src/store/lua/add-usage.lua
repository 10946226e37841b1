if redis.call('hsetnx', KEYS[2], ARGV[3], '1') == 0 then return 0 end
redis.call('pexpire', KEYS[2], ARGV[2])
local writes = {}
local a = 4
for k = 3, #KEYS do
  local n = tonumber(ARGV[a + 2])
  local fields = {}
  for r = 1, n do fields[r] = ARGV[a + 3 + (r - 1) * 10] end
  local stored = redis.call('hmget', KEYS[k], unpack(fields))
  local out = {}
  for r = 1, n do
    local at = a + 3 + (r - 1) * 10
    local sums = { 0, 0, 0, 0, 0, 0, 0, 0, 0 }
    if stored[r] then
      local i = 0
      local ok = true
      for v in string.gmatch(stored[r], '%S+') do
        i = i + 1
        sums[i] = tonumber(v)
        if not sums[i] then ok = false end
      end
      if not ok or (i ~= 5 and i ~= 9) then
        return redis.error_reply('usage value is not five or nine counts: ' .. KEYS[k] .. ' ' .. fields[r])
      end
    end
    for c = 1, 9 do
      sums[c] = sums[c] + tonumber(ARGV[at + c])
      if math.abs(sums[c]) >= 9007199254740992 then return redis.error_reply('usage count past 2^53: ' .. KEYS[k]) end
    end
    out[2 * r - 1] = fields[r]
    out[2 * r] = string.format('%d %d %d %d %d %d %d %d %d', sums[1], sums[2], sums[3], sums[4], sums[5], sums[6], sums[7], sums[8], sums[9])
  end
  writes[k] = out
  a = a + 3 + n * 10
end
a = 4
for k = 3, #KEYS do
  redis.call('sadd', KEYS[1], ARGV[a])
  redis.call('hset', KEYS[k], unpack(writes[k]))
  redis.call('pexpire', KEYS[k], ARGV[a + 1])
  a = a + 3 + tonumber(ARGV[a + 2]) * 10
end
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
