-- Closed loops: a four-bar linkage driven by its crank, and two hands on one staff, with
-- success rates, iterations and ns per rig solve (the workloads: bench/linkages.lua).
--   lua5.4 bench/loops.lua [trials]     (from the repository root; default 1000)
-- IK_ROWS=four-bar, impossible, staff or rifle: only those rows.
package.path = "lua/?.lua;lua/?/init.lua;./?.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local L = require("bench.linkages")
local ns = L.ns

local trials = tonumber(arg[1]) or 1000
local row = os.getenv("IK_ROWS")
print(string.format("Closed loops (%s, %d staff goals)", _VERSION .. (jit and " / " .. jit.version or ""), trials))
print("four-bar linkage, crank turned 360 x 1 degree, tolerance 1e-9:")
print("  dim solver   reached  worst gap   worst rocker error  mean it   ns/solve")
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"fabrik", "relax"}) do
    if not row or ("four-bar"):find(row) then
      local r = L.four_bar_row(dim, solver)
      print(string.format("  %dD  %-7s %4d/%d  %9.2e  %18.2e  %7.2f  %9.0f", dim, solver, r.reached, r.steps,
        r.gap, r.angle, r.its / r.steps, ns(r.seconds, r.steps)))
    end
  end
end
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"fabrik", "relax"}) do
    if not row or ("impossible"):find(row) then
      local r = L.impossible_row(dim, solver)
      print(string.format("  impossible %dD %-7s reached %-5s gap %.3f finite %s lengths within %.1e",
        dim, solver, tostring(r.reached), r.gap, tostring(r.finite), r.lengths))
    end
  end
end
print("two hands on a staff (torso, two arms, staff; limits), 100 it: from the closed rest pose, from a random")
print("closed pose; tracking at 10 it a frame:")
print("  dim solver   from rest  from random  mean it   ns/solve  tracked  largest jump")
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"fabrik", "relax"}) do
    if not row or ("staff"):find(row) then
      local r = L.staff_rates(dim, solver, trials)
      print(string.format("  %dD  %-7s %8.1f%%  %10.1f%%  %7.2f  %9.0f  %6.1f%%  %.3f rad", dim, solver, r.rate,
        r.random_rate, r.its, r.ns, r.tracked, r.jump))
    end
  end
end
print("a rifle held with both hands (two loops on a chain on the torso; limits; a workload the loop solve")
print("was not tuned on), 100 it:")
print("  dim solver   from rest  from random  mean it   ns/solve")
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"fabrik", "relax"}) do
    if not row or ("rifle"):find(row) then
      local r = L.rifle_rates(dim, solver, trials)
      print(string.format("  %dD  %-7s %8.1f%%  %10.1f%%  %7.2f  %9.0f", dim, solver, r.rate, r.random_rate, r.its, r.ns))
    end
  end
end
