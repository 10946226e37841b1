-- Like wrk-report.lua, but every request asks for another address, so a cache cannot answer
-- and identical misses cannot be coalesced: the miss path measured request by request.
-- (Defining request() makes wrk call Lua per request; both miss variants pay that alike.)
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, string.format("/1/api/v2/addresses/0x%040x/token-balances", counter))
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
