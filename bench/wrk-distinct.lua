-- Like wrk-report.lua (whose done() it loads), but every request asks for another address, so a
-- cache cannot answer and identical misses cannot be coalesced: the miss path measured request
-- by request. (Defining request() makes wrk call Lua per request; both miss variants pay that.)
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "wrk-report.lua")

local counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, string.format("/1/api/v2/addresses/0x%040x/token-balances", counter))
end
