-- Like wrk-report.lua (whose done() it loads), but every request is a POST of the same JSON body,
-- given as the first argument after the URL. Set in init(): wrk then builds the request once and
-- calls no Lua per request, as for the GET variants.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "wrk-report.lua")

init = function(args)
  wrk.method = "POST"
  wrk.body = args[1]
  wrk.headers["Content-Type"] = "application/json"
end
