local cur = redis.call('hmget', KEYS[1], 'status', 'attempts', 'm')
if cur[1] ~= 'pending' or cur[2] ~= ARGV[2] then return 0 end
redis.call('hset', KEYS[1], 'status', ARGV[3], 'lastAttemptAt', ARGV[4], 'lastStatus', ARGV[6], 'lastError', ARGV[7])
if ARGV[3] == 'pending' then
  redis.call('hset', KEYS[1], 'nextAttemptAt', ARGV[5])
  redis.call('zadd', KEYS[2], ARGV[5], ARGV[1])
else
  if ARGV[3] == 'delivered' then redis.call('hset', KEYS[1], 'deliveredAt', ARGV[4]) end
  redis.call('zrem', KEYS[2], ARGV[1])
  redis.call('zrem', KEYS[3], cur[3])
  redis.call('zadd', KEYS[4], 0, cur[3])
end
return 1
