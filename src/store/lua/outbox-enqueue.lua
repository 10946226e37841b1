local out = {}
for i = 0, (#KEYS - 3) / 4 - 1 do
  local k = 4 + i * 4
  local a = i * 8
  if redis.call('exists', KEYS[k]) == 1 then
    out[i + 1] = 0
  else
    local id, m, at = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]
    redis.call('hset', KEYS[k], 'id', id, 'eventId', ARGV[a + 4], 'type', ARGV[a + 5], 'webhook', ARGV[a + 6], 'keyId', ARGV[a + 7],
      'body', ARGV[a + 8], 'createdAt', at, 'status', 'pending', 'attempts', '0', 'nextAttemptAt', at, 'lastAttemptAt', '0',
      'lastStatus', '0', 'lastError', '', 'deliveredAt', '0', 'm', m)
    redis.call('zadd', KEYS[1], at, id)
    redis.call('zadd', KEYS[2], 0, m)
    redis.call('zadd', KEYS[3], 0, m)
    redis.call('zadd', KEYS[k + 1], 0, m)
    redis.call('zadd', KEYS[k + 2], 0, m)
    redis.call('zadd', KEYS[k + 3], 0, m)
    out[i + 1] = 1
  end
end
return out
