-- Success rate and mean iterations of each solver on random reachable targets.
--   lua5.4 bench/rates.lua [trials]     (from the repository root)
-- Each trial: a random pose gives the target (so it is reachable, within the limits when
-- the chain has them), then the chain starts from another random pose (also within the
-- limits) and solves with the chain's settings: the defaults unless a row says otherwise.
-- Then the same for orientation goals (the tip and its bone's orientation from a random
-- pose), for aiming (solve_aim at random points), and for rigs (bench/rigs.lua's humanoid
-- and spider, goals from random poses of the whole tree, solved from a straight start).
-- A Park-Miller generator makes the trials identical in every VM.
package.path = "lua/?.lua;lua/?/init.lua;bench/?.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
-- The module bench/rigs.lua makes its rigs with (IK_BACKEND=lua: ik.pure), so that the
-- rigs below are solved by the module that made them.
local rigs = require("rigs")
local ik = rigs.ik

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

-- ---- orientation goals ----

-- The angle of the turn from unit quaternion a to unit quaternion b, in [0, pi].
local function turn_angle(aw, ax, ay, az, bw, bx, by, bz)
  local w, x, y, z = multiply(aw, -ax, -ay, -az, bw, bx, by, bz)
  return 2 * math.atan(math.sqrt(x * x + y * y + z * z), math.abs(w))
end
local atan2 = math.atan2 or math.atan
local function wrap(a) return a - 2 * pi * math.floor((a + pi) / (2 * pi)) end

-- Each trial: a random pose of a new chain gives the goal, the tip and its bone's world
-- orientation (2D angle, 3D rotation), kept on the chain; then another random pose, and
-- chain:solve(x, y[, z]) with the defaults (tolerance 1e-3, angle_tolerance 1e-3, 64
-- iterations). Reached needs both. "checked" recounts it from the pose the solve left (tip
-- distance, the tip bone's orientation): it must agree with what the solve reported.
local function measure_orientation(row)
  seed = 12345
  local lengths = {}
  for i = 1, row.bones do lengths[i] = 0.5 + random() end
  local reached, iterations, disagree = 0, 0, 0
  local n = row.bones
  for _ = 1, trials do
    local chain = row.dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
    chain:configure({solver = row.solver})
    random_pose(chain)
    local x, y, z = chain:effector()
    local gw, gx, gy, gz
    if row.dim == 2 then
      gw = chain:world_angle(n)
      chain:set_target_angle(gw)
    else
      gw, gx, gy, gz = chain:world_rotation(n)
      chain:set_target_rotation(gw, gx, gy, gz)
    end
    random_pose(chain)
    local ok, _, its
    if row.dim == 2 then ok, _, its = chain:solve(x, y) else ok, _, its = chain:solve(x, y, z) end
    if ok then reached = reached + 1 end
    iterations = iterations + its
    local ex, ey, ez = chain:effector()
    local d = math.sqrt((ex - x) ^ 2 + (ey - y) ^ 2 + (row.dim == 3 and (ez - z) ^ 2 or 0))
    local e
    if row.dim == 2 then
      e = math.abs(wrap(chain:world_angle(n) - gw))
    else
      local qw, qx, qy, qz = chain:world_rotation(n)
      e = turn_angle(gw, gx, gy, gz, qw, qx, qy, qz)
    end
    local s = chain:settings()
    if (d <= s.tolerance and e <= s.angle_tolerance) ~= ok then disagree = disagree + 1 end
  end
  return 100 * reached / trials, iterations / trials, disagree
end

print(string.format([[

Orientation goals: %d trials each; a random pose of the chain gives the tip's position and
its bone's world orientation (2D angle, 3D rotation), kept on the chain (set_target_angle,
set_target_rotation); then another random pose, and chain:solve with the defaults
(tolerance 0.001, angle_tolerance 0.001, at most 64 iterations). Reached needs both.
checked: trials where the pose left (tip distance, tip bone's orientation) disagrees with
the reached the solve returned (must be 0).]], trials))
print(string.format("%-6s %-9s %8s %15s %8s", "chain", "solver", "reached", "mean iterations",
  "checked"))
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"fabrik", "ccd", "relax", "two_bone"}) do
    local row = {dim = dim, bones = solver == "two_bone" and 3 or 4, solver = solver}
    local rate, mean, disagree = measure_orientation(row)
    print(string.format("%dD %-3d %-9s %7.1f%% %15.1f %8d", dim, row.bones, solver, rate, mean, disagree))
  end
end

-- ---- aiming ----

-- Each trial: a new 3-bone chain in a random pose, then chain:solve_aim(point) with the
-- defaults, the point uniform in the square (cube) of side 4 * reach about the base.
-- checked: trials where the angle between the tip bone and joint n -> point, measured here,
-- disagrees with the reached the solve returned.
local function measure_aim(dim)
  seed = 12345
  local lengths, reach = {}, 0
  for i = 1, 3 do
    lengths[i] = 0.5 + random()
    reach = reach + lengths[i]
  end
  local reached, iterations, disagree = 0, 0, 0
  for _ = 1, trials do
    local chain = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
    random_pose(chain)
    local px, py = uniform(-2 * reach, 2 * reach), uniform(-2 * reach, 2 * reach)
    local pz = dim == 3 and uniform(-2 * reach, 2 * reach) or nil
    local ok, _, its = chain:solve_aim(px, py, pz)
    if ok then reached = reached + 1 end
    iterations = iterations + its
    local p = chain:positions()
    local a, b = dim * 2, dim * 3 -- joint 3 (the tip bone's base), joint 4 (the tip), 0-based
    local ux, uy, uz = p[b + 1] - p[a + 1], p[b + 2] - p[a + 2], dim == 3 and p[b + 3] - p[a + 3] or 0
    local vx, vy, vz = px - p[a + 1], py - p[a + 2], dim == 3 and pz - p[a + 3] or 0
    local cx, cy, cz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    local e = atan2(math.sqrt(cx * cx + cy * cy + cz * cz), ux * vx + uy * vy + uz * vz)
    if (e <= chain:settings().angle_tolerance) ~= ok then disagree = disagree + 1 end
  end
  return 100 * reached / trials, iterations / trials, disagree
end

print(string.format([[

Aiming: %d trials each; a 3-bone chain in a random pose turns its tip bone at a random point
(uniform in the square, or cube, of side 4 * reach about the base) with chain:solve_aim and
the defaults (angle_tolerance 0.001, at most 64 iterations). checked: as above, from the
angle measured between the tip bone and joint 3 -> the point (must be 0).]], trials))
print(string.format("%-6s %8s %15s %8s", "chain", "reached", "mean iterations", "checked"))
for _, dim in ipairs({2, 3}) do
  local rate, mean, disagree = measure_aim(dim)
  print(string.format("%dD 3   %7.1f%% %15.1f %8d", dim, rate, mean, disagree))
end

-- ---- rigs ----

-- Each trial: a random pose of the whole tree (rigs.random_pose) gives every limb's goal (its
-- tip); then every chain straight, and rig:solve() with tolerance 0.001 and at most 100
-- iterations. "limbs alone fail": the trials where some goal lies outside its limb's reach
-- ring in the straight pose, so only moving the root chain too can reach it.
local function measure_rig(make, dim, solver)
  seed = 12345
  local chains = make(dim)
  local rig = ik.rig(chains):configure({solver = solver, iterations = 100, tolerance = 1e-3})
  local all = {reached = 0, iterations = 0, trials = 0}
  local hard = {reached = 0, iterations = 0, trials = 0}
  local goals = {}
  for _ = 1, trials do
    rigs.random_pose(uniform, chains, dim)
    for k = #goals, 1, -1 do goals[k] = nil end
    rigs.goals(chains, dim, goals)
    rigs.set_goals(chains, dim, goals)
    rigs.straighten(chains, dim)
    local fails = rigs.limbs_alone_fail(chains, dim, goals)
    local ok, _, its = rig:solve()
    for _, t in ipairs(fails and {all, hard} or {all}) do
      t.trials = t.trials + 1
      t.iterations = t.iterations + its
      if ok then t.reached = t.reached + 1 end
    end
  end
  return all, hard
end

print(string.format([[

Rigs: %d trials each (bench/rigs.lua: the humanoid, a 3-bone spine with two 2-bone arms and
a 2-bone neck on its top and two 2-bone legs on its base, about 10 units tall; the spider, a
2-bone body with eight 3-bone legs on its two joints, about 11 across). A random pose of the
whole tree gives the limbs' goals; every chain then starts straight; rig:solve() with
tolerance 0.001, at most 100 iterations. "limbs alone fail": only the trials where some goal
lies outside its limb's reach ring in the straight pose (|goal - base| > the limb's length,
or < 2 * its longest bone - its length), which the whole tree must move for.]], trials))
print(string.format("%-22s %-19s   %s", "", "all trials", "limbs alone fail"))
print(string.format("%-9s %-4s %-7s %8s %10s   %6s %8s %10s", "rig", "dim", "solver", "reached",
  "mean its", "trials", "reached", "mean its"))
for _, make in ipairs({{"humanoid", rigs.humanoid}, {"spider", rigs.spider}}) do
  for _, dim in ipairs({2, 3}) do
    for _, solver in ipairs({"fabrik", "relax"}) do
      local all, hard = measure_rig(make[2], dim, solver)
      print(string.format("%-9s %-4s %-7s %7.1f%% %10.1f   %6d %7.1f%% %10.1f", make[1], dim .. "D",
        solver, 100 * all.reached / all.trials, all.iterations / all.trials, hard.trials,
        hard.trials > 0 and 100 * hard.reached / hard.trials or 0,
        hard.trials > 0 and hard.iterations / hard.trials or 0))
    end
  end
end
