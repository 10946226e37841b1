-- Prints one machine-readable line after wrk's own report, so the runner need not parse wrk's
-- text. Only done() is defined: a request() or response() function would make wrk call Lua on
-- every request and slow it down. Latencies are in microseconds. errors.status counts HTTP
-- statuses above 399 (the runner also checks each variant answers 200 before measuring it).
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"non2xx":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect, e.read, e.write, e.timeout))
end
