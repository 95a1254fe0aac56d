-- Success rate and mean iterations of each solver on random reachable targets.
--   lua5.4 bench/rates.lua [bones] [trials]     (from the repository root)
-- Each trial: a random pose gives a target (so it is reachable), then the chain starts
-- from another random pose and solves with the chain's settings (the defaults unless
-- overridden below). A Park-Miller generator makes the trials identical in every VM.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "./?.so") .. ";" .. package.cpath
local ik = require("ik")

local bones = tonumber(arg[1]) or 6
local trials = tonumber(arg[2]) or 2000

local seed = 12345
local function random() -- uniform in [0, 1); 16807 * seed < 2^46 is exact in a double
  seed = (16807 * seed) % 2147483647
  return seed / 2147483647
end

local function random_pose(chain)
  for i = 1, #chain do chain:set_angle(i, (2 * random() - 1) * math.pi) end
end

local function measure(solver, settings)
  seed = 12345
  local lengths = {}
  for i = 1, bones do lengths[i] = 0.5 + random() end
  local chain = ik.chain2d(lengths)
  settings.solver = solver
  chain:configure(settings)
  local reached, iterations = 0, 0
  for _ = 1, trials do
    random_pose(chain)
    local x, y = chain:effector()
    random_pose(chain)
    local ok, _, its = chain:solve(x, y)
    if ok then reached = reached + 1 end
    iterations = iterations + its
  end
  return 100 * reached / trials, iterations / trials, chain:settings()
end

print(string.format("%s, %d-bone 2D chain, %d random reachable targets from random poses",
  ik._VERSION, bones, trials))
print(string.format("%-8s %10s %8s %6s %9s %s", "solver", "iterations", "tolerance",
  "greed", "reached", "mean iterations"))
local rows = {
  {"fabrik", {}}, {"ccd", {}}, {"relax", {}},
  {"fabrik", {iterations = 1000}}, {"ccd", {iterations = 1000}}, {"relax", {iterations = 1000}},
  {"ccd", {greed = 1, greed_ramp = false}},
}
for _, row in ipairs(rows) do
  local rate, mean, s = measure(row[1], row[2])
  print(string.format("%-8s %10d %9g %6g %8.1f%% %8.1f", row[1], s.iterations, s.tolerance,
    s.greed, rate, mean))
end
