-- Walkers for ik.gait, shared by spec/gait_spec.lua and bench/motion.lua: a spider (8 legs
-- of 3 bones) and a biped (2 legs of 2 bones), in 2D and 3D, walking over bumpy ground at a
-- constant speed, and a walk that measures what the gait promises.
--   local walkers = require("bench.walkers")   (from the repository root)
local ik = require("ik")

local sin, cos, pi, sqrt, abs = math.sin, math.cos, math.pi, math.sqrt, math.abs

local walkers = {}

-- The ground's height: 2D under x, 3D under (x, z).
function walkers.ground2(x) return 0.15 * sin(1.3 * x) + 0.05 * sin(3.1 * x + 1) end
function walkers.ground3(x, z) return 0.12 * sin(0.9 * x + 0.4 * z) + 0.06 * sin(2.3 * z - 1.1 * x) end

local function qaxis(x, y, z, a)
  local s = sin(a / 2)
  return cos(a / 2), x * s, y * s, z * s
end

-- A body walks along +x at speed (units a second) with its height over the ground and, in
-- 3D, weaving and turning a little; its bones are held (zero-width limits) so the legs'
-- pull does not tilt it.
-- turn(a): the body's base rotation turned by a about y (3D).
local function walker(dim, body, legs, height, speed, groups, turn)
  local chains = { body }
  for k = 1, #legs do chains[k + 1] = legs[k] end
  local w = { dim = dim, body = body, legs = legs, rig = ik.rig(chains), groups = groups, speed = speed }
  w.turn = turn or function(a) return qaxis(0, 1, 0, a) end
  w.ground = dim == 2 and walkers.ground2 or walkers.ground3
  function w.place(t)
    local x = speed * t
    if dim == 2 then
      body:set_base(x, height + walkers.ground2(x), 0)
    else
      local z = 0.3 * sin(0.5 * t)
      body:set_base(x, height + walkers.ground3(x, z), z, w.turn(0.15 * sin(0.5 * t)))
    end
  end
  w.place(0)
  return w
end

-- The spider: a body of 2 bones along +x, 4 legs a side, each up then down (knees high).
function walkers.spider(dim, speed)
  local body = dim == 2 and ik.chain2d({ 1, 1 }) or ik.chain3d({ 1, 1 })
  local legs = {}
  for k = 1, 8 do
    local side, i = k <= 4 and 1 or -1, (k - 1) % 4
    local leg = dim == 2 and ik.chain2d({ 0.8, 1.0, 1.0 }) or ik.chain3d({ 0.8, 1.0, 1.0 })
    if dim == 2 then
      -- in the plane: legs fan out forward and back from the body's two ends
      leg:attach(body, i < 2 and 3 or 1, (i % 2 == 0 and 0.5 or 2.6) + side * 0.15)
      local s = i % 2 == 0 and 1 or -1
      leg:set_angle(1, 0.3 * s)
      leg:set_angle(2, -1.3 * s)
      leg:set_angle(3, -0.7 * s)
    else
      leg:attach(body, i < 2 and 2 or 1, qaxis(0, 1, 0, side * (pi / 2 + (i - 1.5) * 0.45)))
      leg:set_rotation(1, qaxis(0, 0, 1, 0.6))
      leg:set_rotation(2, qaxis(0, 0, 1, -1.2))
      leg:set_rotation(3, qaxis(0, 0, 1, -0.9))
    end
    legs[k] = leg
  end
  for b = 1, 2 do
    if dim == 2 then body:set_limit(b, 0, 0) else body:set_hinge(b, 0, 0, 1, 0, 0) end
  end
  return walker(dim, body, legs, 1.0, speed or 1, { { 1, 3, 6, 8 }, { 2, 4, 5, 7 } })
end

-- The biped: a pelvis of one short bone, two legs of 2 bones hanging from its ends; in 3D
-- the pelvis lies across the walk (along z) and the knees bend forward.
function walkers.biped(dim, speed)
  local pelvis = dim == 2 and ik.chain2d({ 0.3 }) or ik.chain3d({ 0.3 })
  local legs = {}
  for k = 1, 2 do
    local leg = dim == 2 and ik.chain2d({ 0.95, 0.95 }) or ik.chain3d({ 0.95, 0.95 })
    if dim == 2 then
      leg:attach(pelvis, k, -pi / 2)
      leg:set_angle(1, 0.5)
      leg:set_angle(2, -1.0)
    else
      -- the leg's +x down the world's -y, its +y forward (+x): from the pelvis frame (+x
      -- along the world's +z, +y up, +z along -x) the turn that takes x to -y, y to -z and
      -- z to x (a third of a turn about (-1, 1, -1))
      leg:attach(pelvis, k, 0.5, -0.5, 0.5, -0.5)
      leg:set_rotation(1, qaxis(0, 0, 1, 0.5))
      leg:set_rotation(2, qaxis(0, 0, 1, -1.0))
    end
    legs[k] = leg
  end
  if dim == 2 then pelvis:set_limit(1, 0, 0) else pelvis:set_hinge(1, 0, 1, 0, 0, 0) end
  -- in 3D the pelvis lies across the walk: its +x along the world's +z, turned with the body
  return walker(dim, pelvis, legs, 1.62, speed or 1, nil,
    function(a) return qaxis(0, 1, 0, a - pi / 2) end)
end

-- Walks w for `seconds` at hz frames a second with the gait options o (the ground and the
-- groups the walker's unless given; groups = false: every leg a group of its own): every frame the body moves, the gait updates and the rig solves.
-- Returns: frames, met (frames with every goal met), moved (the most a planted foot moved
-- between frames), crowd (the most groups in the air at once), landed (the largest
-- distance of a landed foot from the ground's height), landings[k] (each foot's landing
-- points), gait.
function walkers.walk(w, o, seconds, hz)
  o.ground = o.ground or w.ground
  if o.groups == nil then o.groups = w.groups elseif o.groups == false then o.groups = nil end
  local g = ik.gait(w.legs, o)
  local n = #w.legs
  local r = { frames = math.floor(seconds * hz + 0.5), met = 0, moved = 0, crowd = 0, landed = 0, landings = {}, gait = g }
  local prev = {}
  local function foot(k)
    if w.dim == 2 then
      local x, y, s, p = g:foot(k)
      return x, y, 0, s, p
    end
    return g:foot(k)
  end
  for k = 1, n do
    r.landings[k] = {}
    local x, y, z, s = foot(k)
    prev[k] = { x, y, z, s }
  end
  local air = {}
  for f = 1, r.frames do
    w.place(f / hz)
    g:update(1 / hz)
    if w.rig:solve() then r.met = r.met + 1 end
    for k = 1, n do
      local x, y, z, s = foot(k)
      local p = prev[k]
      if not s and not p[4] then
        r.moved = math.max(r.moved, abs(x - p[1]), abs(y - p[2]), abs(z - p[3]))
      elseif not s and p[4] then
        local gy = w.dim == 2 and w.ground(x) or w.ground(x, z)
        r.landed = math.max(r.landed, abs(y - gy))
        local l = r.landings[k]
        l[#l + 1] = { x, y, z }
      end
      air[k] = s
      p[1], p[2], p[3], p[4] = x, y, z, s
    end
    local up = 0
    if o.groups then
      for _, group in ipairs(o.groups) do
        for _, k in ipairs(group) do
          if air[k] then up = up + 1; break end
        end
      end
    else
      for k = 1, n do if air[k] then up = up + 1 end end
    end
    r.crowd = math.max(r.crowd, up)
  end
  return r
end

-- The largest distance between the i-th landings of each foot in two walks (the walks'
-- common landings), and how many landings each foot made in each.
function walkers.compare(a, b)
  local worst, fewest, most = 0, math.huge, 0
  for k = 1, #a.landings do
    local la, lb = a.landings[k], b.landings[k]
    fewest = math.min(fewest, #la, #lb)
    most = math.max(most, math.abs(#la - #lb))
    for i = 1, math.min(#la, #lb) do
      local p, q = la[i], lb[i]
      worst = math.max(worst, sqrt((p[1] - q[1]) ^ 2 + (p[2] - q[2]) ^ 2 + (p[3] - q[3]) ^ 2))
    end
  end
  return worst, fewest, most
end

return walkers
