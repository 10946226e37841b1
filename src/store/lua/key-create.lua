if redis.call('exists', KEYS[1]) == 1 then return -1 end
if redis.call('exists', KEYS[3]) == 1 then return 0 end
audit(KEYS[4], KEYS[5], ARGV[4], ARGV[5])
redis.call('set', KEYS[1], ARGV[2])
redis.call('sadd', KEYS[2], ARGV[1])
redis.call('set', KEYS[3], ARGV[1])
redis.call('publish', ARGV[3], ARGV[1])
return 1
