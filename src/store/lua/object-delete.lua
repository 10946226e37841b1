if redis.call('exists', KEYS[1]) == 0 then return 0 end
audit(KEYS[3], KEYS[4], ARGV[4], ARGV[5])
redis.call('del', KEYS[1])
redis.call('srem', KEYS[2], ARGV[1])
redis.call('publish', ARGV[2], ARGV[3])
return 1
