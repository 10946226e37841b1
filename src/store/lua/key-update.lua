local current = redis.call('get', KEYS[1])
if not current then return -1 end
if current ~= ARGV[2] then return -2 end
if KEYS[2] ~= KEYS[3] then
  local owner = redis.call('get', KEYS[2])
  if owner and owner ~= ARGV[1] then return 0 end
end
audit(KEYS[4], KEYS[5], ARGV[5], ARGV[6])
if KEYS[2] ~= KEYS[3] then
  redis.call('set', KEYS[2], ARGV[1])
  if redis.call('get', KEYS[3]) == ARGV[1] then redis.call('del', KEYS[3]) end
end
redis.call('set', KEYS[1], ARGV[3])
redis.call('publish', ARGV[4], ARGV[1])
return 1
