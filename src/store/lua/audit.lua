-- Sent before each key and object script of src/store/redis.ts (its head says why the audit
-- entry is appended before the key is written).
--
-- Appends an audit entry (`json`, made at `at` ms) to the stream. Its id is the entry's instant
-- (`<ms>-*`), or the stream's last id's time when `at` is older, which XADD would refuse (two
-- processes' clocks); the largest such shift is kept at `lag`, for listAudit to read that much
-- further.
local function audit(stream, lag, at, json)
  local ms = at
  local top = redis.call('xrevrange', stream, '+', '-', 'COUNT', 1)[1]
  if top then
    local topMs = string.match(top[1], '^(%d+)-')
    local shift = tonumber(topMs) - tonumber(ms)
    if shift > 0 then
      if shift > tonumber(redis.call('get', lag) or '0') then redis.call('set', lag, string.format('%d', shift)) end
      ms = topMs
    end
  end
  redis.call('xadd', stream, ms .. '-*', 'e', json)
end
