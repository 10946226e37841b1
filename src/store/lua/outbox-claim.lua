local now = tonumber(ARGV[1])
local out = {}
for i = 2, #KEYS do
  local id = ARGV[i + 1]
  local score = redis.call('zscore', KEYS[1], id)
  if score and tonumber(score) <= now then
    if redis.call('hget', KEYS[i], 'status') == 'pending' then
      redis.call('hincrby', KEYS[i], 'attempts', 1)
      redis.call('hset', KEYS[i], 'nextAttemptAt', ARGV[2])
      redis.call('zadd', KEYS[1], ARGV[2], id)
      out[#out + 1] = score
      out[#out + 1] = redis.call('hgetall', KEYS[i])
    else
      redis.call('zrem', KEYS[1], id)
    end
  end
end
return out
