local current = redis.call('get', KEYS[1])
if not current then return 0 end
if current ~= ARGV[2] then return -2 end
audit(KEYS[4], KEYS[5], ARGV[4], ARGV[5])
redis.call('del', KEYS[1])
redis.call('srem', KEYS[2], ARGV[1])
if redis.call('get', KEYS[3]) == ARGV[1] then redis.call('del', KEYS[3]) end
redis.call('publish', ARGV[3], ARGV[1])
return 1
