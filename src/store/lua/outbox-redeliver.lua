local m = redis.call('hget', KEYS[1], 'm')
if not m then return 0 end
redis.call('hset', KEYS[1], 'status', 'pending', 'nextAttemptAt', ARGV[2])
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
redis.call('zrem', KEYS[4], m)
redis.call('zrem', KEYS[5], m)
redis.call('zadd', KEYS[3], 0, m)
return 1
