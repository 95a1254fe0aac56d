-- Closed loops as workloads (for bench/loops.lua and spec/loops_spec.lua): a four-bar
-- linkage driven by its crank, and two hands on one staff, with success rates, iterations
-- and ns per rig solve.
-- The linkage (crank 1, coupler 3.5, rocker 3, ground 4: Grashof, a crank-rocker) turns
-- its crank through a full turn in 1-degree steps, each step one rig solve (tolerance
-- 1e-9), against the analytic rocker angle on the starting branch; then a linkage that
-- cannot close (crank 3, coupler 1, rocker 1, ground 4) at a crank angle it cannot take.
-- The staff: a torso with two arms, a staff hanging on one hand, the other hand held on
-- the staff; each goal (the staff's tip) is taken from a random pose of the whole closed
-- structure within its limits (the second arm closed on the staff by its own held solve),
-- and solved from the rest pose (tolerance 1e-3, 100 iterations); then a smooth path of
-- such goals tracked at 10 iterations a frame. A Park-Miller generator makes the trials
-- the same in every VM.
local ik = require("ik")
local M = {}
local pi, sqrt, sin, cos, abs, atan2 = math.pi, math.sqrt, math.sin, math.cos, math.abs, math.atan2 or math.atan
local clock = os.clock

local seed = 1
local function random() -- uniform in [0, 1); 48271 * seed < 2^47 is exact in a double
  seed = (48271 * seed) % 2147483647
  return seed / 2147483647
end
local function uniform(a, b) return a + (b - a) * random() end
local function wrap(a) return atan2(sin(a), cos(a)) end

local function axis_angle(x, y, z, a)
  local l = sqrt(x * x + y * y + z * z)
  local s = sin(a / 2) / l
  return cos(a / 2), x * s, y * s, z * s
end

local function multiply(aw, ax, ay, az, bw, bx, by, bz)
  return aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw
end

function M.ns(seconds, count) return count > 0 and 1e9 * seconds / count or 0 end

-- ---- the four-bar linkage ----

-- The coupler-rocker joint for crank angle t: the two intersections of the coupler's
-- circle about the crank pin and the rocker's about its pivot (nil when they miss).
function M.four_bar_joint(a, b, c, d, t, branch)
  local px, py = a * cos(t), a * sin(t)
  local dx, dy = d - px, -py
  local l = sqrt(dx * dx + dy * dy)
  local x = (b * b - c * c + l * l) / (2 * l)
  if b * b - x * x < 0 then return nil end
  local h = branch * sqrt(b * b - x * x)
  return px + (dx * x - dy * h) / l, py + (dy * x + dx * h) / l
end

-- The linkage as two chains from the ground's pivots: crank + coupler held at the rocker's
-- tip. In 3D the same in the plane z = 0, every joint a hinge about z.
function M.four_bar(dim, a, b, c, d, t)
  local crank, rocker
  local jx, jy = M.four_bar_joint(a, b, c, d, t, 1)
  local px, py = a * cos(t), a * sin(t)
  local coupler = atan2(jy - py, jx - px)
  if dim == 2 then
    crank, rocker = ik.chain2d({a, b}), ik.chain2d({c})
    rocker:set_base(d, 0)
    crank:set_angles({t, wrap(coupler - t)})
    rocker:set_angle(1, atan2(jy, jx - d))
    crank:set_limit(1, t, t)
  else
    crank, rocker = ik.chain3d({a, b}), ik.chain3d({c})
    rocker:set_base(d, 0, 0)
    crank:set_rotation(1, axis_angle(0, 0, 1, t))
    crank:set_rotation(2, axis_angle(0, 0, 1, wrap(coupler - t)))
    rocker:set_rotation(1, axis_angle(0, 0, 1, atan2(jy, jx - d)))
    crank:set_hinge(1, 0, 0, 1, t, t)
    crank:set_hinge(2, 0, 0, 1)
    rocker:set_hinge(1, 0, 0, 1)
  end
  crank:attach_tip(rocker, 2)
  return crank, rocker
end

function M.set_crank(crank, t)
  if crank:dim() == 2 then crank:set_limit(1, t, t) else crank:set_hinge(1, 0, 0, 1, t, t) end
end

function M.four_bar_row(dim, solver)
  local a, b, c, d = 1, 3.5, 3, 4
  local t = 0.3
  local crank, rocker = M.four_bar(dim, a, b, c, d, t)
  local rig = ik.rig({crank, rocker})
  rig:configure{solver = solver, tolerance = 1e-9}
  local r = {gap = 0, angle = 0, reached = 0, its = 0, steps = 360, seconds = 0}
  for _ = 1, r.steps do
    t = wrap(t + pi / 180)
    M.set_crank(crank, t)
    local start = clock()
    local ok, gap, its = rig:solve()
    r.seconds = r.seconds + clock() - start
    local jx, jy = M.four_bar_joint(a, b, c, d, t, 1)
    local x, y = rocker:joint(2)
    local e = abs(wrap(atan2(y, x - d) - atan2(jy, jx - d)))
    r.gap = math.max(r.gap, gap)
    r.angle = math.max(r.angle, e)
    r.reached = r.reached + (ok and 1 or 0)
    r.its = r.its + its
  end
  return r
end

-- A linkage that cannot close at the crank angle asked: not reached, every number finite,
-- every bone its length.
function M.impossible_row(dim, solver)
  local short = dim == 2 and ik.chain2d({3, 1}) or ik.chain3d({3, 1})
  local rocker1 = dim == 2 and ik.chain2d({1}) or ik.chain3d({1})
  if dim == 2 then rocker1:set_base(4, 0) else rocker1:set_base(4, 0, 0) end
  short:attach_tip(rocker1, 2)
  M.set_crank(short, pi)
  local rig = ik.rig({short, rocker1})
  rig:configure{solver = solver}
  local ok, gap = rig:solve()
  local finite, lengths = true, 0
  for _, ch in ipairs({short, rocker1}) do
    for j = 1, #ch + 1 do
      for _, v in ipairs({ch:joint(j)}) do finite = finite and v == v and abs(v) < math.huge end
    end
    for i = 1, #ch do
      local p, q = {ch:joint(i)}, {ch:joint(i + 1)}
      local l = 0
      for k = 1, dim do l = l + (q[k] - p[k]) ^ 2 end
      lengths = math.max(lengths, abs(sqrt(l) - ch:length(i)) / ch:length(i))
    end
  end
  return {reached = ok, gap = gap, finite = finite, lengths = lengths}
end

-- ---- two hands on a staff ----

-- Limits as tables, so poses within them can be drawn. 2D {min, max}; 3D
-- {hinge = {x, y, z}, min, max} or {cone = half angle, twist = {min, max}}.
local function apply_limits(chain, limits)
  for i, l in ipairs(limits) do
    if chain:dim() == 2 then chain:set_limit(i, l[1], l[2])
    elseif l.hinge then chain:set_hinge(i, l.hinge[1], l.hinge[2], l.hinge[3], l[1], l[2])
    else
      chain:set_cone(i, l.cone)
      chain:set_twist(i, l.twist[1], l.twist[2])
    end
  end
end

local function random_pose(chain, limits)
  for i, l in ipairs(limits) do
    if chain:dim() == 2 then chain:set_angle(i, uniform(l[1], l[2]))
    elseif l.hinge then chain:set_rotation(i, axis_angle(l.hinge[1], l.hinge[2], l.hinge[3], uniform(l[1], l[2])))
    else
      local a = 2 * pi * random()
      local sw, sx, sy, sz = axis_angle(0, cos(a), sin(a), l.cone * sqrt(random()))
      chain:set_rotation(i, multiply(sw, sx, sy, sz, axis_angle(1, 0, 0, uniform(l.twist[1], l.twist[2]))))
    end
  end
end

function M.read_pose(chain, out)
  out = out or {}
  for i = 1, #chain do
    if chain:dim() == 2 then out[i] = chain:angle(i)
    else out[4 * i - 3], out[4 * i - 2], out[4 * i - 1], out[4 * i] = chain:rotation(i) end
  end
  return out
end

function M.set_pose(chain, pose)
  if chain:dim() == 2 then chain:set_angles(pose) else chain:set_rotations(pose) end
end

-- The figure: torso (2 bones, up), two arms (shoulder and elbow) on its top, the staff
-- (wrist, then the rigid staff) on the first hand, the second hand held on the staff at
-- its joint 2 (0.5 along it). The goal: the staff's tip.
function M.staff_figure(dim)
  local f = {dim = dim}
  if dim == 2 then
    f.torso, f.arm1, f.arm2, f.staff = ik.chain2d({1, 1}), ik.chain2d({0.8, 0.7}), ik.chain2d({0.8, 0.7}), ik.chain2d({0.5, 1})
    f.torso:set_base(0, 0, pi / 2)
    f.arm1:attach(f.torso, 3, -pi / 2)
    f.arm2:attach(f.torso, 3, pi / 2)
    f.limits = {
      torso = {{-0.4, 0.4}, {-0.4, 0.4}},
      arm1 = {{-2.2, 2.2}, {0, 2.5}},
      arm2 = {{-2.2, 2.2}, {-2.5, 0}},
      staff = {{-1.2, 1.2}, {0, 0}},
    }
  else
    local function h(min, max) return {hinge = {0, 0, 1}, min, max} end
    f.torso, f.arm1, f.arm2, f.staff = ik.chain3d({1, 1}), ik.chain3d({0.8, 0.7}), ik.chain3d({0.8, 0.7}), ik.chain3d({0.5, 1})
    f.torso:set_base(0, 0, 0, axis_angle(0, 0, 1, pi / 2))
    f.arm1:attach(f.torso, 3, axis_angle(0, 1, 0, pi / 2))
    f.arm2:attach(f.torso, 3, axis_angle(0, 1, 0, -pi / 2))
    f.limits = {
      torso = {{cone = 0.4, twist = {-0.3, 0.3}}, {cone = 0.4, twist = {-0.3, 0.3}}},
      arm1 = {{cone = 2.0, twist = {-1, 1}}, h(0, 2.5)},
      arm2 = {{cone = 2.0, twist = {-1, 1}}, h(-2.5, 0)},
      staff = {{cone = 1.2, twist = {-1, 1}}, h(0, 0)},
    }
  end
  f.staff:attach(f.arm1, 3)
  f.chains = {f.torso, f.arm1, f.arm2, f.staff}
  f.names = {"torso", "arm1", "arm2", "staff"}
  f.open, f.held = {"torso", "arm1", "staff"}, {"arm2"}
  f.goal, f.goal_joint = f.staff, 3
  for k, ch in ipairs(f.chains) do apply_limits(ch, f.limits[f.names[k]]) end
  f.arm2:attach_tip(f.staff, 2)
  f.arm2:configure{iterations = 200, tolerance = 1e-6}
  return f
end

-- A rifle held with both hands, made apart from the staff (which the loop solve was tuned
-- on): two loops on a chain that hangs on the torso, not on a hand. A torso (2 bones, up),
-- the rifle on its top (the stock's turn at the shoulder, then the grip and the barrel
-- held straight by zero-width limits), two arms on its top, the first hand held on the
-- grip (the rifle's joint 2), the second on the barrel (joint 3). The goal: the muzzle.
function M.rifle_figure(dim)
  local f = {dim = dim}
  local function chain(lengths) return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths) end
  f.torso, f.rifle, f.arm1, f.arm2 = chain({0.9, 0.9}), chain({0.6, 0.4, 0.6}), chain({0.75, 0.7}), chain({0.75, 0.7})
  if dim == 2 then
    f.torso:set_base(0, 0, pi / 2)
    f.rifle:attach(f.torso, 3, -pi / 2)
    f.arm1:attach(f.torso, 3, -pi / 2)
    f.arm2:attach(f.torso, 3, pi / 2)
    f.limits = {
      torso = {{-0.3, 0.3}, {-0.3, 0.3}},
      rifle = {{-1.6, 1.6}, {0, 0}, {0, 0}},
      arm1 = {{-2.4, 2.4}, {0, 2.6}},
      arm2 = {{-2.4, 2.4}, {-2.6, 0}},
    }
  else
    local function h(min, max) return {hinge = {0, 0, 1}, min, max} end
    f.torso:set_base(0, 0, 0, axis_angle(0, 0, 1, pi / 2))
    f.rifle:attach(f.torso, 3, axis_angle(0, 1, 0, pi / 2))
    f.arm1:attach(f.torso, 3, axis_angle(0, 1, 0, pi / 2))
    f.arm2:attach(f.torso, 3, axis_angle(0, 1, 0, -pi / 2))
    f.limits = {
      torso = {{cone = 0.3, twist = {-0.2, 0.2}}, {cone = 0.3, twist = {-0.2, 0.2}}},
      rifle = {{cone = 1.6, twist = {-0.5, 0.5}}, h(0, 0), h(0, 0)},
      arm1 = {{cone = 2.2, twist = {-1, 1}}, h(0, 2.6)},
      arm2 = {{cone = 2.2, twist = {-1, 1}}, h(-2.6, 0)},
    }
  end
  f.chains = {f.torso, f.rifle, f.arm1, f.arm2}
  f.names = {"torso", "rifle", "arm1", "arm2"}
  f.open, f.held = {"torso", "rifle"}, {"arm1", "arm2"}
  f.goal, f.goal_joint = f.rifle, 4
  for k, ch in ipairs(f.chains) do apply_limits(ch, f.limits[f.names[k]]) end
  f.arm1:attach_tip(f.rifle, 2)
  f.arm2:attach_tip(f.rifle, 3)
  for _, name in ipairs(f.held) do f[name]:configure{iterations = 200, tolerance = 1e-6} end
  return f
end

-- A random closed pose: the open tree drawn within its limits, each held arm closed by its
-- own solve (from a few random starts). Returns false when one cannot close.
function M.close_random(f)
  for _, name in ipairs(f.open) do random_pose(f[name], f.limits[name]) end
  for _, name in ipairs(f.held) do
    local closed = false
    for _ = 1, 4 do
      random_pose(f[name], f.limits[name])
      if f[name]:solve() then closed = true break end
    end
    if not closed then return false end
  end
  return true
end

local function read_all(f)
  local t = {}
  for k, ch in ipairs(f.chains) do t[k] = M.read_pose(ch) end
  return t
end

-- Whether the goal is met and every loop closed, within 1e-3.
local function all_met(f, ok)
  if not ok then return false end
  for _, name in ipairs(f.held) do
    if f[name]:goal_error() > 1e-3 then return false end
  end
  return true
end

-- Goals (the goal chain's joint) from random closed poses, solved from the closed rest pose
-- and from the pose of the goal before (a random closed start): rates, mean iterations, ns.
local function rates(f, solver, trials, iterations, seed0)
  seed = seed0
  repeat until M.close_random(f) -- the rest pose: a closed one
  local rest = read_all(f)
  local goals, poses, tries = {}, {}, 0
  while #goals < trials do
    tries = tries + 1
    assert(tries < 1000 * trials, "poses of this figure hardly ever close")
    if M.close_random(f) then
      goals[#goals + 1] = {f.goal:joint(f.goal_joint)}
      poses[#goals] = read_all(f)
    end
  end
  local rig = ik.rig(f.chains)
  rig:configure{solver = solver, iterations = iterations or 100}
  local r = {reached = 0, its = 0, seconds = 0, from_random = 0}
  for k, g in ipairs(goals) do
    for from = 1, 2 do
      local start = from == 1 and rest or poses[k == 1 and #goals or k - 1]
      for c, ch in ipairs(f.chains) do M.set_pose(ch, start[c]) end
      f.goal:set_target(g[1], g[2], g[3])
      local began = clock()
      local ok, _, its = rig:solve()
      if from == 1 then
        r.seconds = r.seconds + clock() - began
        r.its = r.its + its
        if all_met(f, ok) then r.reached = r.reached + 1 end
      elseif all_met(f, ok) then
        r.from_random = r.from_random + 1
      end
    end
  end
  r.rate = 100 * r.reached / #goals
  r.random_rate = 100 * r.from_random / #goals
  r.its = r.its / #goals
  r.ns = M.ns(r.seconds, #goals)
  return r, rig, rest, goals
end

function M.rifle_rates(dim, solver, trials, iterations)
  return (rates(M.rifle_figure(dim), solver, trials, iterations, dim == 2 and 21 or 22))
end

function M.staff_rates(dim, solver, trials, iterations)
  local f = M.staff_figure(dim)
  local r, rig, rest, goals = rates(f, solver, trials, iterations, dim == 2 and 11 or 12)
  -- Tracking: a smooth path through poses of the closed structure, 10 iterations a frame.
  rig:configure{iterations = 10}
  for k, ch in ipairs(f.chains) do M.set_pose(ch, rest[k]) end
  local frames, met, jump = math.min(trials, 400), 0, 0
  local keys = {}
  for k = 1, 5 do keys[k] = goals[k] end
  local before = {}
  for k, ch in ipairs(f.chains) do before[k] = M.read_pose(ch) end
  local per = frames / 4
  for frame = 1, frames do
    local seg = math.min(4, math.floor((frame - 1) / per) + 1)
    local s = ((frame - 1) - (seg - 1) * per) / per
    s = s * s * (3 - 2 * s)
    local p, q = keys[seg], keys[seg + 1]
    local x, y, z = p[1] + (q[1] - p[1]) * s, p[2] + (q[2] - p[2]) * s, (p[3] or 0) + ((q[3] or 0) - (p[3] or 0)) * s
    f.staff:set_target(x, y, dim == 3 and z or nil)
    local ok = rig:solve()
    if ok then met = met + 1 end
    for k, ch in ipairs(f.chains) do
      local now = M.read_pose(ch)
      for i = 1, #ch do
        local d
        if dim == 2 then d = abs(wrap(now[i] - before[k][i]))
        else
          local dot = abs(now[4 * i - 3] * before[k][4 * i - 3] + now[4 * i - 2] * before[k][4 * i - 2] +
            now[4 * i - 1] * before[k][4 * i - 1] + now[4 * i] * before[k][4 * i])
          d = 2 * math.acos(math.min(1, dot))
        end
        if d > jump then jump = d end
      end
      before[k] = now
    end
  end
  r.tracked = 100 * met / frames
  r.jump = jump
  return r
end

return M
