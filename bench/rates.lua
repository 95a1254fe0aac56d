-- Success rate and mean iterations of each solver on random reachable targets.
--   lua5.4 bench/rates.lua [trials]     (from the repository root)
-- Each trial: a random pose gives a target (so it is reachable), then the chain starts
-- from another random pose and solves with the chain's settings (the defaults unless
-- overridden below). A Park-Miller generator makes the trials identical in every VM.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "./?.so") .. ";" .. package.cpath
local ik = require("ik")

local trials = tonumber(arg[1]) or 2000

local seed
local function random() -- uniform in [0, 1); 16807 * seed < 2^46 is exact in a double
  seed = (16807 * seed) % 2147483647
  return seed / 2147483647
end

-- A uniformly distributed unit quaternion (Shoemake's method).
local function random_quaternion()
  local u1, u2, u3 = random(), random() * 2 * math.pi, random() * 2 * math.pi
  local a, b = math.sqrt(1 - u1), math.sqrt(u1)
  return a * math.sin(u2), a * math.cos(u2), b * math.sin(u3), b * math.cos(u3)
end

local function random_pose(chain)
  for i = 1, #chain do
    if chain:dim() == 2 then
      chain:set_angle(i, (2 * random() - 1) * math.pi)
    else
      chain:set_rotation(i, random_quaternion())
    end
  end
end

local function measure(dim, bones, solver, settings)
  seed = 12345
  local lengths = {}
  for i = 1, bones do lengths[i] = 0.5 + random() end
  local chain = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
  settings.solver = solver
  chain:configure(settings)
  local reached, iterations = 0, 0
  for _ = 1, trials do
    random_pose(chain)
    local x, y, z = chain:effector()
    random_pose(chain)
    local ok, _, its
    if dim == 2 then ok, _, its = chain:solve(x, y) else ok, _, its = chain:solve(x, y, z) end
    if ok then reached = reached + 1 end
    iterations = iterations + its
  end
  return 100 * reached / trials, iterations / trials, chain:settings()
end

print(string.format("%s: %d random reachable targets from random poses, bone lengths in [0.5, 1.5)",
  ik._VERSION, trials))
print(string.format("%-6s %-8s %10s %9s %6s %5s %9s %s", "chain", "solver", "iterations",
  "tolerance", "greed", "ramp", "reached", "mean iterations"))
local rows = {
  {2, 6, "fabrik", {}}, {2, 6, "ccd", {}}, {2, 6, "relax", {}},
  {2, 6, "fabrik", {iterations = 1000}}, {2, 6, "ccd", {iterations = 1000}},
  {2, 6, "relax", {iterations = 1000}}, {2, 6, "ccd", {greed = 1, greed_ramp = false}},
  {3, 7, "fabrik", {}}, {3, 7, "ccd", {}}, {3, 7, "relax", {}},
  {3, 7, "fabrik", {iterations = 1000}}, {3, 7, "ccd", {iterations = 1000}},
  {3, 7, "relax", {iterations = 1000}}, {3, 7, "ccd", {greed = 1, greed_ramp = false}},
}
for _, row in ipairs(rows) do
  local rate, mean, s = measure(row[1], row[2], row[3], row[4])
  print(string.format("%dD %-3d %-8s %10d %9g %6g %5s %8.1f%% %8.1f", row[1], row[2], row[3],
    s.iterations, s.tolerance, s.greed, s.greed_ramp and "yes" or "no", rate, mean))
end
