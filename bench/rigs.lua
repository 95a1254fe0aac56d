-- The rigs of the benches: spec/rigs_spec.lua's humanoid and spider, their random poses, the
-- straight start, goals from a pose, and a smooth animation for tracking. bench/bench.c builds
-- the same rigs and draws the same numbers in the same order (make_humanoid, make_spider,
-- rig_random_pose, rig_animate there), so its figures and these describe the same work.
--   local rigs = require("rigs")   (bench/ on package.path; ik loadable)
-- Every random number comes from the caller's uniform(a, b), so both VMs draw the same.
-- IK_BACKEND=lua: the chains are ik.pure's, as the benches that time ik.pure need them.
local ik = os.getenv("IK_BACKEND") == "lua" and require("ik.pure") or require("ik")

local pi, sqrt, sin, cos = math.pi, math.sqrt, math.sin, math.cos

local rigs = {}
rigs.ik = ik -- the module the rigs are made with, for a bench that must solve them with it

local function new(dim, lengths)
  return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

-- The unit quaternion of a turn by a about the axis (x, y, z), normalised here.
local function axis_angle(x, y, z, a)
  local s = sin(a / 2)
  local l = sqrt(x * x + y * y + z * z)
  return cos(a / 2), s * x / l, s * y / l, s * z / l
end
rigs.axis_angle = axis_angle

-- A humanoid: a 3-bone spine (the root, up from the hips), two 2-bone arms and a 2-bone neck
-- on its top, two 2-bone legs on its base: a body about 10 units tall. Chains: spine, arm,
-- arm, leg, leg, neck.
function rigs.humanoid(dim)
  local spine, arms, legs, neck = {1.2, 1.2, 1.2}, {1.5, 1.4}, {2.2, 2.1}, {0.5, 0.6}
  local chains = {new(dim, spine), new(dim, arms), new(dim, arms), new(dim, legs), new(dim, legs),
    new(dim, neck)}
  local offsets = {1.2, -1.2, 3.0, -3.0, 0}
  local joints = {4, 4, 1, 1, 4}
  if dim == 2 then
    chains[1]:set_base(0, 0, pi / 2)
  else
    chains[1]:set_base(0, 0, 0, axis_angle(0, 0, 1, pi / 2))
  end
  for k = 2, 6 do
    if dim == 2 then
      chains[k]:attach(chains[1], joints[k - 1], offsets[k - 1])
    else
      chains[k]:attach(chains[1], joints[k - 1], axis_angle(0, 0.3 * (k % 2) + 0.1, 1, offsets[k - 1]))
    end
  end
  return chains
end

-- A spider: a 2-bone body (the root) and eight 3-bone legs, four on each body joint: about
-- 11 units across.
function rigs.spider(dim)
  local chains = {new(dim, {1, 1})}
  for k = 1, 8 do
    chains[k + 1] = new(dim, {1.2, 1.5, 1.8})
    local a = (k % 2 == 1 and 1 or -1) * (0.5 + 0.3 * ((k - 1) % 4))
    if dim == 2 then
      chains[k + 1]:attach(chains[1], k <= 4 and 2 or 3, a)
    else
      chains[k + 1]:attach(chains[1], k <= 4 and 2 or 3, axis_angle(0.2, 0.1, 1, a))
    end
  end
  return chains
end

-- A random pose of the whole tree, as the spec draws it: 2D local angles in [-1.2, 1.2];
-- 3D turns by [0, 1.2] rad about random axes (components in [-1, 1)).
function rigs.random_pose(uniform, chains, dim)
  for _, c in ipairs(chains) do
    for i = 1, #c do
      if dim == 2 then
        c:set_angle(i, uniform(-1.2, 1.2))
      else
        local x = uniform(-1, 1)
        local y = uniform(-1, 1)
        local z = uniform(-1, 1)
        local a = uniform(0, 1.2)
        c:set_rotation(i, axis_angle(x, y, z, a))
      end
    end
  end
end

-- The straight start: every local angle 0, every local rotation the identity; one bulk call
-- per chain (tables made once, kept in straight[c]).
local straight = setmetatable({}, {__mode = "k"})
function rigs.straighten(chains, dim)
  for _, c in ipairs(chains) do
    local t = straight[c]
    if not t then
      t = {}
      for i = 1, #c do
        if dim == 2 then t[i] = 0 else t[4 * i - 3], t[4 * i - 2], t[4 * i - 1], t[4 * i] = 1, 0, 0, 0 end
      end
      straight[c] = t
    end
    if dim == 2 then c:set_angles(t) else c:set_rotations(t) end
  end
end

-- The goals of a pose: the tips of every chain but the root (the limbs), flat, dim numbers
-- each, appended to out.
function rigs.goals(chains, dim, out)
  out = out or {}
  for k = 2, #chains do
    local x, y, z = chains[k]:effector()
    out[#out + 1], out[#out + 2] = x, y
    if dim == 3 then out[#out + 1] = z end
  end
  return out
end

-- Sets the limbs' goals from a flat array (as rigs.goals makes), from index at.
function rigs.set_goals(chains, dim, goals, at)
  at = at or 1
  for k = 2, #chains do
    if dim == 2 then
      chains[k]:set_target(goals[at], goals[at + 1])
    else
      chains[k]:set_target(goals[at], goals[at + 1], goals[at + 2])
    end
    at = at + dim
  end
end

-- Whether some goal lies outside its limb's reach ring in the straight pose: |goal - base| >
-- the limb's length, or < 2 * its longest bone - its length (base: the limb's joint 1). Such a
-- goal needs the rest of the tree to move. The chains must be straight.
function rigs.limbs_alone_fail(chains, dim, goals)
  local at = 1
  for k = 2, #chains do
    local c = chains[k]
    local length, longest = 0, 0
    for i = 1, #c do
      local l = c:length(i)
      length = length + l
      if l > longest then longest = l end
    end
    local bx, by, bz = c:joint(1)
    local d2 = (goals[at] - bx) ^ 2 + (goals[at + 1] - by) ^ 2
    if dim == 3 then d2 = d2 + (goals[at + 2] - bz) ^ 2 end
    local d = sqrt(d2)
    if d > length or d < 2 * longest - length then return true end
    at = at + dim
  end
  return false
end

-- A smooth animation for tracking: every bone swings about its straight pose by
-- amp * sin(2 pi * freq * t + phase), t the time in periods; 2D its local angle, 3D a turn
-- about an axis of its own (components in [-1, 1)). amp in [0.2, 0.8), freq 1, 2 or 3,
-- phase in [0, 2 pi). Drawn bone by bone, chain by chain.
function rigs.animation(uniform, chains, dim)
  local anim = {}
  for _, c in ipairs(chains) do
    for _ = 1, #c do
      local b = {}
      if dim == 3 then
        b.x = uniform(-1, 1)
        b.y = uniform(-1, 1)
        b.z = uniform(-1, 1)
      end
      b.amp = uniform(0.2, 0.8)
      b.freq = 1 + math.floor(uniform(0, 3))
      b.phase = uniform(0, 2 * pi)
      anim[#anim + 1] = b
    end
  end
  return anim
end

-- Poses the chains at time t (in periods) of the animation.
function rigs.animate(chains, dim, anim, t)
  local k = 1
  for _, c in ipairs(chains) do
    for i = 1, #c do
      local b = anim[k]
      local a = b.amp * sin(2 * pi * b.freq * t + b.phase)
      if dim == 2 then c:set_angle(i, a) else c:set_rotation(i, axis_angle(b.x, b.y, b.z, a)) end
      k = k + 1
    end
  end
end

return rigs
