-- Run by spec/edge_scale_spec.lua in a child process, so that a memory limit can be set
-- (ulimit -v) and a crash shows as an exit status rather than killing busted:
--   VM spec/huge_chain.lua CPATH DIM N
-- Calls ik.chain2d (DIM 2) or ik.chain3d (DIM 3) with N lengths of 1 and prints "built" or
-- "error: <message>"; then frees everything, builds and solves a small chain and prints
-- "then: ok" when that worked.
local cpath, dim, n = arg[1], tonumber(arg[2]), tonumber(arg[3])
package.cpath = cpath .. ";" .. package.cpath
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local ik = require("ik")

local lengths = {}
for i = 1, n do
    lengths[i] = 1
end
local ok, err = pcall(dim == 2 and ik.chain2d or ik.chain3d, lengths)
print(ok and "built" or ("error: " .. tostring(err)))

lengths, ok, err = nil, nil, nil
collectgarbage()
collectgarbage()
local c = ik.chain2d({ 1, 1 })
print(c:solve(1, 1) and "then: ok" or "then: not reached")
