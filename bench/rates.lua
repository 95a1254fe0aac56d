-- Success rate and mean iterations of each solver on random reachable targets.
--   lua5.4 bench/rates.lua [trials]     (from the repository root)
-- Each trial: a random pose gives the target (so it is reachable, within the limits when
-- the chain has them), then the chain starts from another random pose (also within the
-- limits) and solves with the chain's settings: the defaults unless a row says otherwise.
-- A Park-Miller generator makes the trials identical in every VM.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "./?.so") .. ";" .. package.cpath
local ik = require("ik")

local trials = tonumber(arg[1]) or 1000
local pi = math.pi

local seed
local function random() -- uniform in [0, 1); 16807 * seed < 2^46 is exact in a double
  seed = (16807 * seed) % 2147483647
  return seed / 2147483647
end
local function uniform(a, b) return a + (b - a) * random() end

local function axis_angle(x, y, z, angle)
  local s = math.sin(angle / 2)
  return math.cos(angle / 2), x * s, y * s, z * s
end

local function multiply(aw, ax, ay, az, bw, bx, by, bz)
  return aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw
end

-- A uniformly distributed unit quaternion (Shoemake's method).
local function random_quaternion()
  local u1, u2, u3 = random(), random() * 2 * pi, random() * 2 * pi
  local a, b = math.sqrt(1 - u1), math.sqrt(u1)
  return a * math.sin(u2), a * math.cos(u2), b * math.sin(u3), b * math.cos(u3)
end

-- Random limits: 2D ranges 0.3..2 rad wide; 3D half hinges (random axis, a range about 0)
-- and half cones (0.3..1.5 rad) with twist ranges.
local function random_limits(chain)
  local limits = {}
  for i = 1, #chain do
    if chain:dim() == 2 then
      local min = uniform(-2.5, 1.0)
      local max = math.min(min + uniform(0.3, 2.0), 3.1)
      chain:set_limit(i, min, max)
      limits[i] = {min = min, max = max}
    elseif random() < 0.5 then
      local x, y, z = uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)
      local m = math.sqrt(x * x + y * y + z * z)
      local l = {hinge = true, x = x / m, y = y / m, z = z / m, min = uniform(-2, 0), max = uniform(0, 2)}
      chain:set_hinge(i, l.x, l.y, l.z, l.min, l.max)
      limits[i] = l
    else
      local l = {cone = uniform(0.3, 1.5), min = uniform(-1.5, 0), max = uniform(0, 1.5)}
      chain:set_cone(i, l.cone)
      chain:set_twist(i, l.min, l.max)
      limits[i] = l
    end
  end
  return limits
end

local function random_pose(chain, limits)
  for i = 1, #chain do
    local l = limits and limits[i]
    if chain:dim() == 2 then
      chain:set_angle(i, l and uniform(l.min, l.max) or uniform(-pi, pi))
    elseif not l then
      chain:set_rotation(i, random_quaternion())
    elseif l.hinge then
      chain:set_rotation(i, axis_angle(l.x, l.y, l.z, uniform(l.min, l.max)))
    else -- a swing within the cone (about an axis across the bone), then a twist
      local a = uniform(0, 2 * pi)
      local sw, sx, sy, sz = axis_angle(0, math.cos(a), math.sin(a), uniform(0, l.cone))
      local tw, tx, ty, tz = axis_angle(1, 0, 0, uniform(l.min, l.max))
      chain:set_rotation(i, multiply(sw, sx, sy, sz, tw, tx, ty, tz))
    end
  end
end

local function measure(row)
  seed = 12345
  local lengths = {}
  for i = 1, row.bones do lengths[i] = 0.5 + random() end
  local reached, iterations = 0, 0
  local settings
  for _ = 1, trials do
    local chain = row.dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
    local s = {solver = row.solver}
    for k, v in pairs(row.settings or {}) do s[k] = v end
    chain:configure(s)
    local limits = row.limits and random_limits(chain)
    random_pose(chain, limits)
    local x, y, z = chain:effector()
    random_pose(chain, limits)
    local ok, _, its
    if row.dim == 2 then ok, _, its = chain:solve(x, y) else ok, _, its = chain:solve(x, y, z) end
    if ok then reached = reached + 1 end
    iterations = iterations + its
    settings = chain:settings()
  end
  return 100 * reached / trials, iterations / trials, settings
end

local rows = {}
for _, dim in ipairs({2, 3}) do
  local bones = dim == 2 and 6 or 7
  for _, limits in ipairs({false, true}) do
    for _, escape in ipairs({true, false}) do
      for _, solver in ipairs({"fabrik", "ccd", "relax"}) do
        rows[#rows + 1] = {dim = dim, bones = bones, solver = solver, limits = limits,
          settings = {escape = escape}}
      end
    end
  end
  for _, solver in ipairs({"fabrik", "ccd", "relax"}) do
    rows[#rows + 1] = {dim = dim, bones = bones, solver = solver, settings = {iterations = 1000}}
    rows[#rows + 1] = {dim = dim, bones = bones, solver = solver, limits = true,
      settings = {iterations = 1000}}
  end
  rows[#rows + 1] = {dim = dim, bones = bones, solver = "ccd", settings = {greed = 1, greed_ramp = false}}
end

print(string.format("%s: %d random reachable targets from random poses, bone lengths in [0.5, 1.5)",
  ik._VERSION, trials))
print(string.format("%-6s %-8s %-6s %-6s %10s %9s %-10s %8s %s", "chain", "solver", "limits",
  "escape", "iterations", "tolerance", "greed", "reached", "mean iterations"))
for _, row in ipairs(rows) do
  local rate, mean, s = measure(row)
  print(string.format("%dD %-3d %-8s %-6s %-6s %10d %9g %-10s %7.1f%% %8.1f", row.dim, row.bones,
    row.solver, row.limits and "yes" or "no", s.escape and "on" or "off", s.iterations,
    s.tolerance, row.solver == "ccd" and (string.format("%g", s.greed) .. (s.greed_ramp and ", ramp" or "")) or "-",
    rate, mean))
end
