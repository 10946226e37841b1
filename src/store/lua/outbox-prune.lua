for i = 0, (#KEYS - 5) / 4 - 1 do
  local k = 6 + i * 4
  local id, m = ARGV[i * 2 + 1], ARGV[i * 2 + 2]
  if redis.call('hget', KEYS[k], 'm') == m then
    redis.call('del', KEYS[k])
    redis.call('zrem', KEYS[2], id)
  end
  for j = 1, 3 do redis.call('zrem', KEYS[k + j], m) end
  for s = 3, 5 do redis.call('zrem', KEYS[s], m) end
  redis.call('zrem', KEYS[1], m)
end
return 1
