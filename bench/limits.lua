-- Joint limits: success rates, mean iterations and ns per solve of chains and rigs with
-- limits, against the same bodies without them.
--   lua5.4 bench/limits.lua [trials]     (from the repository root; default 1000)
-- A workload of its own, made apart from bench/rates.lua and bench/rigs.lua (its own
-- bodies, limits, random numbers and animation), so the figures do not share their
-- blind spots. Every goal is taken from a random pose within the limits, so every goal is
-- reachable; tolerance 1e-3 on bodies about 10 units across. Each chain row is solved from
-- the straight pose and from a random pose within the limits, and tracks a smooth goal
-- path at 10 iterations a frame (frames with every goal met; the largest change of a
-- joint's local rotation between two frames, next to the largest the animation itself
-- makes; rigs: over 20 animations, with how many stay within 3 times the animation's
-- own, the share of frames where a joint turned more than 0.2 rad, and the share where one
-- turned more than 3 times the most its animation turns one in a frame); then the same
-- rigs tracking a walk, the issue's workload, at 60 and 30 frames a stride cycle (rows
-- "walk ..."). A Park-Miller generator makes the trials the same in every VM.
package.path = "lua/?.lua;lua/?/init.lua;bench/?.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")

local trials = tonumber(arg[1]) or 1000
-- IK_ROWS=pattern: only the chain and rig rows whose name matches (a Lua pattern), and
-- none of the other sections: for working on one row. IK_LOG_JUMPS=1: a line for each
-- frame of tracking whose largest joint change is over 0.2 rad. IK_CHAIN_IT and
-- IK_TRACK_IT: the iterations of the single chains' solves (64) and of the rigs' tracking
-- (10), to see what more would give. IK_ANIM_SEED: where the rigs' animations start the
-- generator (555; docs/performance.md also gives 12345 and 999, sets independent of it).
local only = os.getenv("IK_ROWS")
local function wanted_row(name) return not only or name:find(only) ~= nil end
local frames = trials
-- Rigs track ANIMATIONS animations of ANIMATION_FRAMES frames each.
local ANIMATIONS, ANIMATION_FRAMES = 20, math.max(1, math.floor(trials * 0.6))
local pi, sqrt, sin, cos, abs = math.pi, math.sqrt, math.sin, math.cos, math.abs
local clock = os.clock

local seed
local function random() -- uniform in [0, 1); 48271 * seed < 2^47 is exact in a double
  seed = (48271 * seed) % 2147483647
  return seed / 2147483647
end
local function uniform(a, b) return a + (b - a) * random() end

local function axis_angle(x, y, z, a)
  local l = sqrt(x * x + y * y + z * z)
  local s = sin(a / 2) / l
  return cos(a / 2), x * s, y * s, z * s
end

local function multiply(aw, ax, ay, az, bw, bx, by, bz)
  return aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw
end

-- The angle of the turn between two unit quaternions, in [0, pi].
local function turn_between(aw, ax, ay, az, bw, bx, by, bz)
  local w, x, y, z = multiply(aw, -ax, -ay, -az, bw, bx, by, bz)
  return 2 * math.atan(sqrt(x * x + y * y + z * z), abs(w))
end
local function wrap(a) return a - 2 * pi * math.floor((a + pi) / (2 * pi)) end

-- ---- limits, kept as tables so poses within them can be drawn ----
-- 2D: {min, max}. 3D: {hinge = {x, y, z}, min, max} or {cone = half angle, twist = {min, max}}.

local function apply_limits(chain, limits)
  for i, l in ipairs(limits) do
    if l.free then
      chain:clear_limit(i)
    elseif chain:dim() == 2 then
      chain:set_limit(i, l.min, l.max)
    elseif l.hinge then
      chain:set_hinge(i, l.hinge[1], l.hinge[2], l.hinge[3], l.min, l.max)
    else
      chain:set_cone(i, l.cone)
      chain:set_twist(i, l.twist[1], l.twist[2])
    end
  end
end

-- A pose within the limits at parameters u (each in [0, 1]): 2D the angle; 3D a hinge's
-- angle, or a swing about an axis across the bone and a twist.
local function pose_at(limits, dim, u, out)
  for i, l in ipairs(limits) do
    local p = u[i]
    if dim == 2 then
      out[i] = l.min + (l.max - l.min) * p[1]
    else
      local w, x, y, z
      if l.hinge then
        w, x, y, z = axis_angle(l.hinge[1], l.hinge[2], l.hinge[3], l.min + (l.max - l.min) * p[1])
      else
        local a = 2 * pi * p[1]
        local sw, sx, sy, sz = axis_angle(0, cos(a), sin(a), l.cone * p[2])
        w, x, y, z = multiply(sw, sx, sy, sz,
          axis_angle(1, 0, 0, l.twist[1] + (l.twist[2] - l.twist[1]) * p[3]))
      end
      out[4 * i - 3], out[4 * i - 2], out[4 * i - 1], out[4 * i] = w, x, y, z
    end
  end
  return out
end

local function random_u(n, u)
  for i = 1, n do u[i] = {random(), sqrt(random()), random()} end
  return u
end

local function set_pose(chain, pose)
  if chain:dim() == 2 then chain:set_angles(pose) else chain:set_rotations(pose) end
end

local function straight(chain)
  local t = {}
  for i = 1, #chain do
    if chain:dim() == 2 then t[i] = 0 else t[4 * i - 3], t[4 * i - 2], t[4 * i - 1], t[4 * i] = 1, 0, 0, 0 end
  end
  set_pose(chain, t)
end

-- The largest change of a local rotation of chain between pose a and pose b (flat tables).
local function largest_change(dim, n, a, b)
  local worst = 0
  for i = 1, n do
    local d
    if dim == 2 then
      d = abs(wrap(a[i] - b[i]))
    else
      local k = 4 * i - 3
      d = turn_between(a[k], a[k + 1], a[k + 2], a[k + 3], b[k], b[k + 1], b[k + 2], b[k + 3])
    end
    if d > worst then worst = d end
  end
  return worst
end

-- The largest of largest_change over the chains of a rig, between poses a and b (a pose a
-- chain).
local function rig_largest_change(chains, dim, a, b)
  local worst = 0
  for k, c in ipairs(chains) do worst = math.max(worst, largest_change(dim, #c, a[k], b[k])) end
  return worst
end

local function read_pose(chain, out)
  if chain:dim() == 2 then return chain:angles(out) end
  return chain:rotations(out)
end

-- ---- single chains ----

-- Random limits of a row's kind. Every range holds 0, so the straight pose is a rest pose
-- the limits allow, as on a body.
local function limits_2d(n)
  local limits = {}
  for i = 1, n do
    local width = uniform(0.5, 3)
    local min = -width * random()
    limits[i] = {min = min, max = min + width}
  end
  return limits
end

local function limits_3d(n)
  local limits = {}
  for i = 1, n do
    if random() < 0.4 then -- a hinge about an axis across the bone
      local a = uniform(0, 2 * pi)
      local width = uniform(1, 2.6)
      local min = -width * random()
      limits[i] = {hinge = {0, cos(a), sin(a)}, min = min, max = min + width}
    else
      local t = uniform(0.3, 1.5)
      limits[i] = {cone = uniform(pi / 6, pi / 2), twist = {-t * random(), t * random()}}
    end
  end
  return limits
end

local function ns(seconds, count) return count > 0 and 1e9 * seconds / count or 0 end

local function solve_at(chain, dim, x, y, z)
  if dim == 2 then return chain:solve(x, y) end
  return chain:solve(x, y, z)
end

-- One row: trials of a fresh chain (row.make() returns chain, limits, dim) solved from
-- straight and from a random pose; then tracking.
local function chain_row(row)
  local out = {}
  for _, start in ipairs({"straight", "random"}) do
    seed = 20261126
    local reached, iterations, seconds = 0, 0, 0
    for _ = 1, trials do
      local chain, limits, dim = row.make()
      local n = #chain
      local goal = pose_at(limits, dim, random_u(n, {}), {})
      set_pose(chain, goal)
      local x, y, z = chain:effector()
      if row.orientation and dim == 2 then chain:set_target_angle(chain:world_angle(n))
      elseif row.orientation then chain:set_target_rotation(chain:world_rotation(n)) end
      if start == "straight" then straight(chain) else set_pose(chain, pose_at(limits, dim, random_u(n, {}), {})) end
      if row.unlimited then for i = 1, n do chain:clear_limit(i) end end
      local t0 = clock()
      local ok, _, its = solve_at(chain, dim, x, y, z)
      seconds = seconds + clock() - t0
      if ok then reached = reached + 1 end
      iterations = iterations + its
    end
    out[start] = {rate = 100 * reached / trials, its = iterations / trials, ns = ns(seconds, trials)}
  end
  -- Tracking: one chain, its pose parameters moving along smooth closed curves.
  seed = 777
  local chain, limits, dim = row.make()
  local n = #chain
  if row.unlimited then for i = 1, n do chain:clear_limit(i) end end
  chain:configure({iterations = 10})
  local phase, speed = {}, {}
  for i = 1, 3 * n do phase[i], speed[i] = uniform(0, 2 * pi), uniform(0.5, 1.5) end
  local u = {}
  local function animate(f)
    for i = 1, n do
      local p = {}
      for k = 1, 3 do
        local j = 3 * (i - 1) + k
        p[k] = 0.5 + 0.45 * sin(phase[j] + 0.03 * speed[j] * f)
      end
      p[1] = dim == 3 and not limits[i].hinge and (phase[3 * i - 2] + 0.02 * speed[3 * i - 2] * f) / (2 * pi) or p[1]
      u[i] = p
    end
    return pose_at(limits, dim, u, {})
  end
  local wanted = animate(0)
  set_pose(chain, wanted)
  local before, after = read_pose(chain, {}), {}
  local met, worst, worst_wanted, seconds, iterations = 0, 0, 0, 0, 0
  local scratch = ik[dim == 2 and "chain2d" or "chain3d"]((function()
    local l = {} for i = 1, n do l[i] = chain:length(i) end return l end)())
  for f = 1, frames do
    local pose = animate(f)
    worst_wanted = math.max(worst_wanted, largest_change(dim, n, wanted, pose))
    wanted = pose
    set_pose(scratch, pose)
    local x, y, z = scratch:effector()
    if row.orientation and dim == 2 then chain:set_target_angle(scratch:world_angle(n))
    elseif row.orientation then chain:set_target_rotation(scratch:world_rotation(n)) end
    local t0 = clock()
    local ok, _, its = solve_at(chain, dim, x, y, z)
    seconds = seconds + clock() - t0
    iterations = iterations + its
    if ok then met = met + 1 end
    read_pose(chain, after)
    if os.getenv("IK_LOG_JUMPS") and largest_change(dim, n, before, after) > 0.2 then
      local cx, cy, cz = chain:effector()
      print("jump", f, ok, its, largest_change(dim, n, before, after), x - cx, y - cy)
    end
    worst = math.max(worst, largest_change(dim, n, before, after))
    before, after = after, before
  end
  out.tracking = {rate = 100 * met / frames, its = iterations / frames, ns = ns(seconds, frames),
    worst = worst, wanted = worst_wanted}
  return out
end

local function lengths_of(n, reach)
  local l, sum = {}, 0
  for i = 1, n do l[i] = uniform(0.6, 1.4); sum = sum + l[i] end
  for i = 1, n do l[i] = l[i] * reach / sum end
  return l
end

local function single(dim, n, solver, extra)
  return function()
    local chain = dim == 2 and ik.chain2d(lengths_of(n, 10)) or ik.chain3d(lengths_of(n, 10))
    local limits = dim == 2 and limits_2d(n) or limits_3d(n)
    apply_limits(chain, limits)
    local s = {solver = solver, iterations = tonumber(os.getenv("IK_CHAIN_IT")) or 64, tolerance = 1e-3}
    for k, v in pairs(extra or {}) do s[k] = v end
    chain:configure(s)
    return chain, limits, dim
  end
end

local function print_header(title)
  print("")
  print(title)
  print(string.format("%-34s %-22s %-22s %-22s %s", "row", "from straight", "from random",
    "tracking (10 it/frame)", "largest change (anim.)"))
  print(string.format("%-34s %-22s %-22s %-22s", "", "rate  its  ns", "rate  its  ns", "rate  its  ns"))
end

local function cell(r) return string.format("%5.1f%% %5.1f %7.0f", r.rate, r.its, r.ns) end

local function print_chain_row(name, r)
  local t = r.tracking
  print(string.format("%-34s %-22s %-22s %-22s %.3f (%.3f)%s", name, cell(r.straight), cell(r.random),
    cell(t), t.worst, t.wanted,
    t.within and string.format("  %2d/%d %5.2f%% %5.2f%%", t.within, ANIMATIONS, t.jumps, t.over)
      or ""))
end

print(string.format("%s: %d trials a row, tolerance 1e-3, bodies 10 units across", ik._VERSION, trials))
print_header("Single chains: limits drawn per trial (ranges about 0), goals from random poses within them")
for _, dim in ipairs({2, 3}) do
  for _, limited in ipairs({true, false}) do
    for _, solver in ipairs({"fabrik", "ccd", "relax"}) do
      local n = dim == 2 and 6 or 7
      local name = string.format("%dD %d bones %-6s %s", dim, n, solver, limited and "limits" or "free")
      if wanted_row(name) then
        print_chain_row(name, chain_row({make = single(dim, n, solver), unlimited = not limited}))
      end
    end
  end
end
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"ccd", "fabrik", "relax"}) do
    local name = string.format("%dD 3 bones %-6s limits+orient.", dim, solver)
    if wanted_row(name) then print_chain_row(name, chain_row({make = single(dim, 3, solver), orientation = true})) end
  end
end

-- ---- the knee: a 2-bone leg, knee range (0, 2.5), from straight, target at 99.4% of reach ----

local function knee_row(solver)
  seed = 99
  local reached, iterations, seconds = 0, 0, 0
  for _ = 1, trials do
    local leg = ik.chain2d({5, 4.6})
    leg:set_limit(2, 0, 2.5)
    leg:configure({solver = solver, iterations = 64, tolerance = 1e-3})
    local a = uniform(-pi, pi)
    local d = 0.994 * 9.6
    local t0 = clock()
    local ok, _, its = leg:solve(d * cos(a), d * sin(a))
    seconds = seconds + clock() - t0
    if ok then reached = reached + 1 end
    iterations = iterations + its
  end
  return {rate = 100 * reached / trials, its = iterations / trials, ns = ns(seconds, trials)}
end

if not only then
print("")
print("Knee: 2D leg {5, 4.6}, knee range (0, 2.5), straight, target at 99.4% of reach, random direction")
for _, solver in ipairs({"fabrik", "ccd", "relax", "two_bone"}) do
  print(string.format("%-34s %s", "knee " .. solver, cell(knee_row(solver))))
end
end

-- ---- the 3D arm of the issue, from its straight rest pose, target at ~82% of reach ----

local arm_limits = {{cone = 80 * pi / 180, twist = {-1.5, 1.5}},
  {hinge = {0, 0, 1}, min = 0, max = 150 * pi / 180},
  {cone = 0.7, twist = {-0.5, 0.5}}}
local function arm_row(solver, pole)
  seed = 4242
  local reached, iterations, seconds = 0, 0, 0
  local probe = ik.chain3d({3, 2.8, 0.9})
  for _ = 1, trials do
    -- a goal from a random pose within the limits whose tip is 80% to 84% of the reach away
    local x, y, z
    repeat
      set_pose(probe, pose_at(arm_limits, 3, random_u(3, {}), {}))
      x, y, z = probe:effector()
      local d = sqrt(x * x + y * y + z * z) / 6.7
    until d >= 0.80 and d <= 0.84
    local arm = ik.chain3d({3, 2.8, 0.9})
    apply_limits(arm, arm_limits)
    arm:configure({solver = solver, iterations = 64, tolerance = 1e-3, pole = pole})
    local t0 = clock()
    local ok, _, its = arm:solve(x, y, z)
    seconds = seconds + clock() - t0
    if ok then reached = reached + 1 end
    iterations = iterations + its
  end
  return {rate = 100 * reached / trials, its = iterations / trials, ns = ns(seconds, trials)}
end

if not only then
print("")
print("3D arm: shoulder cone 80 deg, elbow hinge z (0, 150 deg), wrist cone and twist; straight rest,")
print("goals from poses within the limits at 80-84% of reach")
for _, pole in ipairs({{0, 0, -1}, {0, 0, 1}, false}) do
  for _, solver in ipairs({"fabrik", "ccd", "relax"}) do
    local name = string.format("arm %-6s pole %s", solver,
      pole and string.format("{%g,%g,%g}", pole[1], pole[2], pole[3]) or "false")
    print(string.format("%-34s %s", name, cell(arm_row(solver, pole))))
  end
end
end

-- ---- rigs ----
-- A body: chains given as {lengths, parent index, joint, offset (2D angle, 3D {axis, angle}),
-- limits 2D, limits 3D}; the first chain is the root. Goals: every chain's tip but the root's.

local function make_rig(spec, dim, limited)
  local chains, limits = {}, {}
  for k, c in ipairs(spec.chains) do
    local chain = dim == 2 and ik.chain2d(c.lengths) or ik.chain3d(c.lengths)
    if k == 1 then
      if dim == 2 then chain:set_base(0, 0, c.offset) else chain:set_base(0, 0, 0, axis_angle(0, 0, 1, c.offset)) end
    elseif dim == 2 then
      chain:attach(chains[c.parent], c.joint, c.offset)
    else
      local a = c.axis or {0, 0, 1}
      chain:attach(chains[c.parent], c.joint, axis_angle(a[1], a[2], a[3], c.offset))
    end
    limits[k] = dim == 2 and c.l2 or c.l3
    if limited then apply_limits(chain, limits[k]) end
    chains[k] = chain
  end
  return chains, limits
end

local function r2(min, max) return {min = min, max = max} end
local function cone(c, t) return {cone = c, twist = {-t, t}} end
local function hinge(min, max) return {hinge = {0, 0, 1}, min = min, max = max} end

-- A humanoid about 10 units tall: a 3-bone spine up from the hips (bending a little), a
-- 2-bone neck and two 3-bone arms on its top, two 3-bone legs on its base.
local humanoid = {name = "humanoid", chains = {
  {lengths = {1.1, 1.1, 1.1}, offset = pi / 2,
    l2 = {r2(-0.25, 0.25), r2(-0.25, 0.25), r2(-0.25, 0.25)},
    l3 = {cone(0.25, 0.2), cone(0.25, 0.2), cone(0.25, 0.2)}},
  {lengths = {0.5, 0.5}, parent = 1, joint = 4, offset = 0,
    l2 = {r2(-0.5, 0.5), r2(-0.5, 0.5)}, l3 = {cone(0.5, 0.6), cone(0.5, 0.6)}},
  {lengths = {1.5, 1.4, 0.5}, parent = 1, joint = 4, offset = 2.2, axis = {0.3, 0.2, 1},
    l2 = {r2(-1.4, 1.4), r2(0, 2.5), r2(-0.8, 0.8)},
    l3 = {cone(1.4, 1.2), hinge(0, 2.5), cone(0.8, 0.6)}},
  {lengths = {1.5, 1.4, 0.5}, parent = 1, joint = 4, offset = -2.2, axis = {-0.3, 0.2, 1},
    l2 = {r2(-1.4, 1.4), r2(-2.5, 0), r2(-0.8, 0.8)},
    l3 = {cone(1.4, 1.2), hinge(-2.5, 0), cone(0.8, 0.6)}},
  {lengths = {2.2, 2.1, 0.6}, parent = 1, joint = 1, offset = pi - 0.2, axis = {0.2, 0, 1},
    l2 = {r2(-1.2, 1.2), r2(-2.5, 0), r2(-0.6, 0.6)},
    l3 = {cone(1.2, 0.5), hinge(-2.5, 0), cone(0.6, 0.3)}},
  {lengths = {2.2, 2.1, 0.6}, parent = 1, joint = 1, offset = -pi + 0.2, axis = {-0.2, 0, 1},
    l2 = {r2(-1.2, 1.2), r2(0, 2.5), r2(-0.6, 0.6)},
    l3 = {cone(1.2, 0.5), hinge(0, 2.5), cone(0.6, 0.3)}},
}}

-- A quadruped about 10 units long: a 2-bone back (the root, horizontal), four 3-bone legs
-- (two on each end, knees of the hind legs bending the other way), a 2-bone neck.
local function leg(joint, offset, axis, knee_min, knee_max)
  return {lengths = {1.6, 1.5, 0.6}, parent = 1, joint = joint, offset = offset, axis = axis,
    l2 = {r2(-1, 1), r2(knee_min, knee_max), r2(-0.7, 0.7)},
    l3 = {cone(1.0, 0.4), hinge(knee_min, knee_max), cone(0.7, 0.3)}}
end
local quadruped = {name = "quadruped", chains = {
  {lengths = {2.5, 2.5}, offset = 0,
    l2 = {r2(-0.3, 0.3), r2(-0.3, 0.3)}, l3 = {cone(0.3, 0.2), cone(0.3, 0.2)}},
  leg(1, -pi / 2, {0.3, 0, 1}, 0, 2.4), leg(1, -pi / 2, {-0.3, 0, 1}, 0, 2.4),
  leg(3, -pi / 2, {0.3, 0, 1}, -2.4, 0), leg(3, -pi / 2, {-0.3, 0, 1}, -2.4, 0),
  {lengths = {1.2, 1.0}, parent = 1, joint = 3, offset = 0.8,
    l2 = {r2(-0.8, 0.8), r2(-0.8, 0.8)}, l3 = {cone(0.8, 0.5), cone(0.8, 0.5)}},
}}

local function rig_pose(chains, limits, dim, us)
  for k, c in ipairs(chains) do set_pose(c, pose_at(limits[k], dim, us[k], {})) end
end

local function rig_goals(chains, dim, rig_targets)
  for k = 2, #chains do
    local x, y, z = chains[k]:effector()
    rig_targets[k] = {x, y, z}
  end
  return rig_targets
end

local function set_goals(chains, dim, goals)
  for k = 2, #chains do
    local g = goals[k]
    if dim == 2 then chains[k]:set_target(g[1], g[2]) else chains[k]:set_target(g[1], g[2], g[3]) end
  end
end

-- One frame of a rig tracking: the probe's tips (the probe posed) set as the goals of its
-- chains, one rig:solve() timed, before[k] (chain k's pose a frame ago) moved on. Returns
-- reached, iterations, seconds and the largest turn of a joint in the frame. IK_LOG_JUMPS
-- prints a line for each chain that turned one more than 0.2 rad (where: what comes first).
local function track_frame(rig, chains, probe, dim, before, where, frame)
  set_goals(chains, dim, rig_goals(probe, dim, {}))
  local t0 = clock()
  local ok, _, its = rig:solve()
  local seconds = clock() - t0
  local frame_largest = 0
  for k, c in ipairs(chains) do
    local after = read_pose(c, {})
    local change = largest_change(dim, #c, before[k], after)
    if os.getenv("IK_LOG_JUMPS") and change > 0.2 then print("jump", where, frame, k, ok, its, change) end
    frame_largest = math.max(frame_largest, change)
    before[k] = after
  end
  return ok, its, seconds, frame_largest
end

-- Whether some limb's goal lies outside the ring its bones reach from where the limb hangs
-- now (bench/rigs.lua's test, on goals as rig_goals makes them): the body must move.
local limbs_alone_fail
do
  local rigs = require("rigs")
  function limbs_alone_fail(chains, goals)
    local flat = {}
    for k = 2, #chains do
      for _, v in ipairs(goals[k]) do flat[#flat + 1] = v end
    end
    return rigs.limbs_alone_fail(chains, #goals[2], flat)
  end
end

local function rig_row(spec, dim, solver, limited, max_turn)
  local chains, limits = make_rig(spec, dim, limited)
  local rig = ik.rig(chains)
  local out = {}
  -- max_turn: tracking only, every chain configured with it
  if max_turn then for _, c in ipairs(chains) do c:configure({max_turn = max_turn}) end end
  for _, start in ipairs(max_turn and {} or {"straight", "random"}) do
    seed = 31337
    rig:configure({solver = solver, iterations = 100, tolerance = 1e-3})
    local reached, iterations, seconds, moved, moved_reached = 0, 0, 0, 0, 0
    for _ = 1, trials do
      local us = {}
      for k, c in ipairs(chains) do us[k] = random_u(#c, {}) end
      rig_pose(chains, limits, dim, us)
      local goals = rig_goals(chains, dim, {})
      set_goals(chains, dim, goals)
      if start == "straight" then
        for _, c in ipairs(chains) do straight(c) end
      else
        for k, c in ipairs(chains) do us[k] = random_u(#c, {}) end
        rig_pose(chains, limits, dim, us)
      end
      local body_must_move = limbs_alone_fail(chains, goals)
      local t0 = clock()
      local ok, _, its = rig:solve()
      seconds = seconds + clock() - t0
      if ok then reached = reached + 1 end
      iterations = iterations + its
      if body_must_move then
        moved = moved + 1
        if ok then moved_reached = moved_reached + 1 end
      end
    end
    out[start] = {rate = 100 * reached / trials, its = iterations / trials, ns = ns(seconds, trials),
      moved = moved, moved_rate = moved > 0 and 100 * moved_reached / moved or 0}
  end
  -- tracking: every joint's parameters along smooth closed curves, 10 iterations a frame,
  -- ANIMATIONS animations of ANIMATION_FRAMES frames (one animation's figures depend on
  -- where its few hard moments fall: the first alone put the humanoid 2D at 0.117 rad, the
  -- 20 from 0.11 to 0.86)
  rig:configure({solver = solver, iterations = tonumber(os.getenv("IK_TRACK_IT")) or 10, tolerance = 1e-3})
  local probe = make_rig(spec, dim, false)
  local met, worst, worst_wanted, seconds, iterations, total = 0, 0, 0, 0, 0, 0
  local within, jumps, over = 0, 0, 0
  seed = tonumber(os.getenv("IK_ANIM_SEED")) or 555 -- the animations one after the other from one run of the generator (seeds in an
  -- arithmetic progression would give draws in one: the same phase in every animation)
  for animation = 1, ANIMATIONS do
    local phase = {}
    for k, c in ipairs(chains) do
      phase[k] = {}
      for i = 1, 3 * #c do phase[k][i] = {uniform(0, 2 * pi), uniform(0.5, 1.5)} end
    end
    local function wanted_poses(f)
      local poses = {}
      for k, c in ipairs(probe) do
        local us = {}
        for i = 1, #c do
          local p = {}
          for j = 1, 3 do
            local ph = phase[k][3 * (i - 1) + j]
            p[j] = 0.5 + 0.45 * sin(ph[1] + 0.03 * ph[2] * f)
          end
          us[i] = p
        end
        poses[k] = pose_at(limits[k], dim, us, {})
        set_pose(c, poses[k])
      end
      return poses
    end
    -- The animation's own largest turn between two frames, known before it is tracked (a
    -- frame's change is held against 3 times it: the issue's "about three times what the
    -- motion itself needs")
    local largest_wanted = 0
    do
      local last = wanted_poses(0)
      for f = 1, ANIMATION_FRAMES do
        local poses = wanted_poses(f)
        largest_wanted = math.max(largest_wanted, rig_largest_change(chains, dim, last, poses))
        last = poses
      end
    end
    local wanted = wanted_poses(0)
    for k, c in ipairs(chains) do set_pose(c, wanted[k]) end
    local before = {}
    for k, c in ipairs(chains) do before[k] = read_pose(c, {}) end
    local largest = 0
    for f = 1, ANIMATION_FRAMES do
      wanted_poses(f) -- the probe posed: its tips are the goals
      local ok, its, s, frame_largest = track_frame(rig, chains, probe, dim, before, animation, f)
      seconds, iterations = seconds + s, iterations + its
      if ok then met = met + 1 end
      if frame_largest > 0.2 then jumps = jumps + 1 end
      if frame_largest > 3 * largest_wanted then over = over + 1 end
      largest = math.max(largest, frame_largest)
    end
    total = total + ANIMATION_FRAMES
    if largest <= 3 * largest_wanted then within = within + 1 end
    worst, worst_wanted = math.max(worst, largest), math.max(worst_wanted, largest_wanted)
  end
  out.tracking = {rate = 100 * met / total, its = iterations / total, ns = ns(seconds, total),
    worst = worst, wanted = worst_wanted, within = within, jumps = 100 * jumps / total,
    over = 100 * over / total}
  return out
end

print_header("Rigs: goals at every limb's tip from random poses of the whole body within its limits, 100 it")
print(string.format("(tracking: %d animations of %d frames; after the largest change, the animations whose largest", ANIMATIONS, ANIMATION_FRAMES))
print("change is within 3 times the animation's own, the frames where a joint turned more than 0.2 rad,")
print("and those where one turned more than 3 times the most its animation turns one in a frame)")
local body_moves = {}
for _, spec in ipairs({humanoid, quadruped}) do
  for _, dim in ipairs({2, 3}) do
    for _, limited in ipairs({true, false}) do
      for _, solver in ipairs({"fabrik", "relax"}) do
        local name = string.format("%s %dD %-6s %s", spec.name, dim, solver, limited and "limits" or "free")
        if wanted_row(name) then
          local r = rig_row(spec, dim, solver, limited)
          print_chain_row(name, r)
          body_moves[#body_moves + 1] = {name, r.straight, r.random}
        end
      end
    end
  end
end
if #body_moves > 0 then
  print("")
  print("The same trials where the body must move: some limb's goal outside the ring its bones reach")
  print("from where the limb hangs at the start (trials, rate)")
  print(string.format("%-34s %-22s %s", "row", "from straight", "from random"))
  for _, b in ipairs(body_moves) do
    print(string.format("%-34s %5d %5.1f%%           %5d %5.1f%%", b[1], b[2].moved, b[2].moved_rate, b[3].moved, b[3].moved_rate))
  end
end

-- The same tracking with max_turn on every chain: what a game that wants no pops sets.
print("")
print("Rigs with limits tracking the same animations, max_turn 0.2 on every chain")
print(string.format("%-34s %-22s %s", "row", "tracking (10 it/frame)", "largest change (anim.)"))
for _, spec in ipairs({humanoid, quadruped}) do
  for _, dim in ipairs({2, 3}) do
    for _, solver in ipairs({"fabrik", "relax"}) do
      local name = string.format("%s %dD %-6s max_turn 0.2", spec.name, dim, solver)
      if wanted_row(name) then
        local t = rig_row(spec, dim, solver, true, 0.2).tracking
        print(string.format("%-34s %-22s %.3f (%.3f)  %2d/%d", name, cell(t), t.worst, t.wanted, t.within, ANIMATIONS))
      end
    end
  end
end

-- ---- a walk: the issue's tracking workload ----
-- The humanoid and the quadruped walking in place (the root's base still, as a rig keeps
-- it), every joint along a gait's curve well within its limits: the thighs swinging, the
-- knees nearly straight at one end of the stride and bent in the swing, the ankles and
-- wrists following, the arms against the legs (the quadruped's legs one after the other,
-- a quarter of a cycle apart), the spine or back and the neck swaying a little; in 3D the
-- same bends about z with a little sideways swing and twist. WALKS walks a row, each with
-- every joint's amplitude scaled by 0.7 to 1.3 and its phase moved by up to 0.3 rad (drawn),
-- of WALK_FRAMES frames at CYCLE frames a stride cycle (60: a stride a second at 60 Hz; 30:
-- the same walk at 30 Hz). The limbs' tips of the walking body are the goals of the same
-- body, which starts in the walk's first pose and tracks it at 10 iterations a frame, as the
-- animations above. Made apart from the solvers' tuning (2026-11-29, after it).
local WALKS, WALK_FRAMES = 10, math.max(1, math.floor(trials * 0.3))

-- A joint's curve: {mean, amplitude, phase, harmonic} in the 2D bend (about z), plus in 3D
-- the sideways swing and the twist as {amplitude, phase} (harmonic 1). sign: the side the
-- limb's middle joint bends to (its limit), which the limb's bends follow.
local function bend(mean, amp, phase, harmonic) return {mean, amp, phase, harmonic or 1} end
local function limb(sign, phase, hip, knee_mean, knee_amp, ankle, side, twist)
  return {phase = phase, bones = {
    {b = bend(0, -sign * hip, 0), side = {side, 0}, twist = {twist, 0}},
    {b = bend(sign * knee_mean, -sign * knee_amp, -0.3)},
    {b = bend(0, sign * ankle, -1.0), side = {0.5 * side, 0.5}},
  }}
end
local function sway(n, amp, side, twist)
  local t = {phase = 0, bones = {}}
  for i = 1, n do t.bones[i] = {b = bend(0, amp, 0.5 * i, 2), side = {side, 0.3 * i}, twist = {twist, 0.2 * i}} end
  return t
end
-- The humanoid: spine, neck, right arm, left arm, right leg, left leg (make_rig's order).
local humanoid_walk = {
  sway(3, 0.05, 0.04, 0.1), sway(2, 0.1, 0.05, 0.1),
  limb(1, pi, 0.35, 0.4, 0.25, 0.1, 0.15, 0.2), limb(-1, 0, 0.35, 0.4, 0.25, 0.1, 0.15, 0.2),
  limb(-1, 0, 0.45, 0.75, 0.55, 0.2, 0.08, 0.1), limb(1, pi, 0.45, 0.75, 0.55, 0.2, 0.08, 0.1),
}
-- The quadruped: back, two front legs (knees 0..2.4), two hind legs, neck; the legs in a
-- walk's order (hind, fore on the same side, the other hind, the other fore).
local quadruped_walk = {
  sway(2, 0.04, 0.03, 0.05),
  limb(1, pi / 2, 0.35, 0.6, 0.4, 0.15, 0.06, 0.08), limb(1, 3 * pi / 2, 0.35, 0.6, 0.4, 0.15, 0.06, 0.08),
  limb(-1, 0, 0.35, 0.6, 0.4, 0.15, 0.06, 0.08), limb(-1, pi, 0.35, 0.6, 0.4, 0.15, 0.06, 0.08),
  sway(2, 0.12, 0.08, 0.1),
}

-- The pose of chain k of a walk at angle a of its cycle (jitter: each joint's scale and
-- phase shift), into out (flat: angles, or quaternions: a swing about an axis across the
-- bone, then a twist, as pose_at makes them), and whether it is within limits (a table as
-- make_rig's) by a margin of 1e-9: a check of this bench, so every goal is reachable.
local function walk_pose(walk, k, dim, a, jitter, limits, out)
  local w, inside = walk[k], true
  for i, bone in ipairs(w.bones) do
    local j, b, l = jitter[k][i], bone.b, limits[i]
    local angle = b[1] + j[1] * b[2] * sin(b[4] * (a + w.phase) + b[3] + j[2])
    if dim == 2 then
      out[i] = angle
      inside = inside and angle >= l.min + 1e-9 and angle <= l.max - 1e-9
    else
      local side = bone.side and j[1] * bone.side[1] * sin(a + w.phase + bone.side[2] + j[2]) or 0
      local twist = bone.twist and j[1] * bone.twist[1] * sin(a + w.phase + bone.twist[2] + j[2]) or 0
      local swing = sqrt(angle * angle + side * side)
      local sw, sx, sy, sz = 1, 0, 0, 0
      if swing > 0 then sw, sx, sy, sz = axis_angle(0, side, angle, swing) end
      local qw, qx, qy, qz = multiply(sw, sx, sy, sz, axis_angle(1, 0, 0, twist))
      out[4 * i - 3], out[4 * i - 2], out[4 * i - 1], out[4 * i] = qw, qx, qy, qz
      if l.hinge then -- the hinges (about z) take the bend alone
        inside = inside and side == 0 and twist == 0 and angle >= l.min + 1e-9 and angle <= l.max - 1e-9
      else
        inside = inside and swing <= l.cone - 1e-9 and twist >= l.twist[1] + 1e-9 and twist <= l.twist[2] - 1e-9
      end
    end
  end
  return out, inside
end

local function walk_row(spec, walk, dim, solver, limited, cycle)
  local chains = make_rig(spec, dim, limited)
  local probe, limits = make_rig(spec, dim, false)
  local rig = ik.rig(chains)
  rig:configure({solver = solver, iterations = 10, tolerance = 1e-3})
  local met, total, seconds, iterations, worst, worst_wanted, jumps, outside = 0, 0, 0, 0, 0, 0, 0, 0
  seed = 8128
  for walk_index = 1, WALKS do
    local jitter = {}
    for k, c in ipairs(chains) do
      jitter[k] = {}
      for i = 1, #c do jitter[k][i] = {uniform(0.7, 1.3), uniform(-0.3, 0.3)} end
    end
    local function play(f)
      local poses = {}
      for k, c in ipairs(probe) do
        local inside
        poses[k], inside = walk_pose(walk, k, dim, 2 * pi * f / cycle, jitter, limits[k], {})
        if not inside then outside = outside + 1 end
        set_pose(c, poses[k])
      end
      return poses
    end
    local last = play(0)
    for k, c in ipairs(chains) do set_pose(c, last[k]) end
    local before = {}
    for k, c in ipairs(chains) do before[k] = read_pose(c, {}) end
    for f = 1, WALK_FRAMES do
      local poses = play(f)
      worst_wanted = math.max(worst_wanted, rig_largest_change(probe, dim, last, poses))
      last = poses
      local ok, its, s, frame_largest = track_frame(rig, chains, probe, dim, before, walk_index, f)
      seconds, iterations = seconds + s, iterations + its
      if ok then met = met + 1 end
      if frame_largest > 0.2 then jumps = jumps + 1 end
      worst = math.max(worst, frame_largest)
    end
    total = total + WALK_FRAMES
  end
  assert(outside == 0, "the walk leaves the limits it is tracked with")
  return {rate = 100 * met / total, its = iterations / total, ns = ns(seconds, total), worst = worst,
    wanted = worst_wanted, jumps = 100 * jumps / total}
end

print("")
print(string.format("Rigs walking: %d walks of %d frames a row, 10 it a frame (frames with every goal met,", WALKS, WALK_FRAMES))
print("mean iterations, ns a frame; the largest change of a joint between two frames, the walk's own;")
print("the frames where a joint turned more than 0.2 rad)")
print(string.format("%-34s %-22s %-22s %s", "row", "60 frames a cycle", "30 frames a cycle", "largest change (walk), over 0.2: 60 | 30"))
for _, body in ipairs({{humanoid, humanoid_walk}, {quadruped, quadruped_walk}}) do
  for _, dim in ipairs({2, 3}) do
    for _, limited in ipairs({true, false}) do
      for _, solver in ipairs({"fabrik", "relax"}) do
        local name = string.format("walk %s %dD %-6s %s", body[1].name, dim, solver, limited and "limits" or "free")
        if wanted_row(name) then
          local a = walk_row(body[1], body[2], dim, solver, limited, 60)
          local b = walk_row(body[1], body[2], dim, solver, limited, 30)
          print(string.format("%-34s %-22s %-22s %.3f (%.3f) %.2f%% | %.3f (%.3f) %.2f%%", name, cell(a), cell(b),
            a.worst, a.wanted, a.jumps, b.worst, b.wanted, b.jumps))
        end
      end
    end
  end
end

-- ---- the repro of the issue: an arm on a one-bone body, against the same bones as one chain ----

local function repro_row(as_rig)
  seed = 1818
  local limits = {{free = true}, r2(-0.3, 0.3), r2(-1, 2), r2(0, 2.6)}
  local probe = ik.chain2d({1.0, 0.8, 1.5, 1.4})
  local reached, iterations, seconds = 0, 0, 0
  for _ = 1, trials do
    local u = random_u(4, {})
    local pose = {uniform(-pi, pi)}
    for i = 2, 4 do pose[i] = limits[i].min + (limits[i].max - limits[i].min) * u[i][1] end
    probe:set_angles(pose)
    local x, y = probe:effector()
    local ok, _, its, t0 -- a _ of its own: Lua 5.5's loop variable (the _ above) is read-only
    if as_rig then
      local body, arm = ik.chain2d({1.0}), ik.chain2d({0.8, 1.5, 1.4})
      arm:attach(body, 2, 0)
      arm:set_limit(1, -0.3, 0.3); arm:set_limit(2, -1, 2); arm:set_limit(3, 0, 2.6)
      local rig = ik.rig({body, arm})
      rig:configure({iterations = 100})
      arm:set_target(x, y)
      t0 = clock()
      ok, _, its = rig:solve()
    else
      local one = ik.chain2d({1.0, 0.8, 1.5, 1.4})
      one:set_limit(2, -0.3, 0.3); one:set_limit(3, -1, 2); one:set_limit(4, 0, 2.6)
      one:configure({iterations = 100})
      t0 = clock()
      ok, _, its = one:solve(x, y)
    end
    seconds = seconds + clock() - t0
    if ok then reached = reached + 1 end
    iterations = iterations + its
  end
  return {rate = 100 * reached / trials, its = iterations / trials, ns = ns(seconds, trials)}
end

if not only then
print("")
print("The issue's repro: {1.0, 0.8, 1.5, 1.4}, limits on bones 2-4, straight start, 100 it, FABRIK")
print(string.format("%-34s %s", "as one chain", cell(repro_row(false))))
print(string.format("%-34s %s", "as a rig (body + arm)", cell(repro_row(true))))
end

-- ---- effector_weight = 0 (the weight-0 rule of the rig solve) ----
-- A 2D creature: a body with two 3-bone limbs; limb A (weight 0) reaches for a point out of
-- every reach, limb B (weight 1) for a point of a random pose. The share of trials where B
-- reaches: a weight-0 goal with no pull leaves B free to reach.
local function weight_row(dim, goal_a)
  seed = 2718
  local reached = 0
  for _ = 1, trials do
    local body = dim == 2 and ik.chain2d({1.5, 1.5}) or ik.chain3d({1.5, 1.5})
    local a = dim == 2 and ik.chain2d({1.2, 1.2, 1.2}) or ik.chain3d({1.2, 1.2, 1.2})
    local b = dim == 2 and ik.chain2d({1.2, 1.2, 1.2}) or ik.chain3d({1.2, 1.2, 1.2})
    if dim == 2 then a:attach(body, 3, 1.0); b:attach(body, 3, -1.0)
    else a:attach(body, 3, axis_angle(0, 0, 1, 1.0)); b:attach(body, 3, axis_angle(0, 0, 1, -1.0)) end
    local rig = ik.rig({body, a, b})
    a:configure({effector_weight = 0})
    for _, c in ipairs({body, a, b}) do
      for i = 1, #c do if dim == 2 then c:set_angle(i, uniform(-1, 1)) else c:set_rotation(i, axis_angle(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(0, 1))) end end
    end
    local x, y, z = b:effector()
    for _, c in ipairs({body, a, b}) do straight(c) end
    if dim == 2 then a:set_target(-40, 25); b:set_target(x, y) else a:set_target(-40, 25, 10); b:set_target(x, y, z) end
    if not goal_a then a:clear_target() end
    rig:configure({iterations = 100})
    rig:solve()
    local ex, ey, ez = b:effector()
    local d = sqrt((ex - x) ^ 2 + (ey - y) ^ 2 + (dim == 3 and (ez - z) ^ 2 or 0))
    if d <= 1e-3 then reached = reached + 1 end
  end
  return 100 * reached / trials
end

if not only then
print("")
print("effector_weight = 0: a weight-1 limb's goal met while a weight-0 limb reaches out of reach,")
print("against the same with no goal on the weight-0 limb (what no pull would give)")
for _, dim in ipairs({2, 3}) do
  print(string.format("%dD: %.1f%% (no goal: %.1f%%)", dim, weight_row(dim, true), weight_row(dim, false)))
end
end

-- ---- max_turn with limits, CCD: runs that arrive ----
local function max_turn_row(dim, solver)
  seed = 161803
  local arrived, frames_used = 0, 0
  for _ = 1, math.floor(trials / 4) do
    local n = dim == 2 and 6 or 7
    local chain = dim == 2 and ik.chain2d(lengths_of(n, 10)) or ik.chain3d(lengths_of(n, 10))
    local limits = dim == 2 and limits_2d(n) or limits_3d(n)
    apply_limits(chain, limits)
    chain:configure({solver = solver, max_turn = 0.1, iterations = 10})
    set_pose(chain, pose_at(limits, dim, random_u(n, {}), {}))
    local x, y, z = chain:effector()
    set_pose(chain, pose_at(limits, dim, random_u(n, {}), {}))
    for f = 1, 200 do
      if solve_at(chain, dim, x, y, z) then arrived = arrived + 1; frames_used = frames_used + f; break end
    end
  end
  local runs = math.floor(trials / 4)
  return 100 * arrived / runs, arrived > 0 and frames_used / arrived or 0
end

if not only then
print("")
print("max_turn 0.1 with limits: runs (a goal from a pose within the limits, 10 it a frame) that")
print("arrive within 200 frames, and the mean frames they take")
for _, dim in ipairs({2, 3}) do
  for _, solver in ipairs({"ccd", "fabrik", "relax"}) do
    local rate, f = max_turn_row(dim, solver)
    print(string.format("%dD %-6s %5.1f%% %6.1f frames", dim, solver, rate, f))
  end
end
end
