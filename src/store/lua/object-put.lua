local exists = redis.call('exists', KEYS[1]) == 1
if exists ~= (ARGV[3] == 'replace') then return 0 end
audit(KEYS[3], KEYS[4], ARGV[6], ARGV[7])
redis.call('set', KEYS[1], ARGV[2])
redis.call('sadd', KEYS[2], ARGV[1])
redis.call('publish', ARGV[4], ARGV[5])
return 1
