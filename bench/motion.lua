-- Motion over time: what chain:drag and chain:simulate do (their accuracy on the issue's
-- workloads) and what they cost, beside the hand-written Lua that games use for the same
-- (bench/plain_motion.lua: follow-the-leader and a Verlet rope), in one run.
--   lua5.4 bench/motion.lua            (make bench runs it under Lua 5.4 and LuaJIT)
--   IK_CPATH="build/luajit/?.so" luajit bench/motion.lua
package.path = "bench/?.lua;./?.lua;lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")
local plain = require("plain_motion")
local walkers = require("bench.walkers")

local pi, sqrt, sin, cos, abs = math.pi, math.sqrt, math.sin, math.cos, math.abs
local atan2 = math.atan2 or math.atan
local clock = os.clock
local vm = type(jit) == "table" and jit.version or _VERSION

local function new(dim, lengths)
  return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

local function hang(c, i, a)
  if c:dim() == 2 then c:set_angle(i, a) else c:set_rotation(i, cos(a / 2), 0, 0, sin(a / 2)) end
end

-- Seconds per call of f, over enough calls to fill about 0.2 s.
local function time(f)
  local reps = 1
  while true do
    local t0 = clock()
    for _ = 1, reps do f() end
    local t = clock() - t0
    if t > 0.2 then return t / reps end
    reps = reps * 4
  end
end

print(("ik motion bench (%s)"):format(vm))
print()
print("Accuracy")

-- a pendulum: period and amplitude over 10 periods
for _, dim in ipairs({ 2, 3 }) do
  local L, g, a0 = 1, 9.81, 0.05
  local c = new(dim, { L })
  c:configure({ gravity = dim == 2 and { 0, -g } or { 0, -g, 0 }, damping = 0 })
  hang(c, 1, -pi / 2 + a0)
  local period, hz = 2 * pi * sqrt(L / g), 60
  local prev, first, last, count, amp = nil, nil, nil, 0, 0
  local frames = math.floor(10 * period * hz)
  for f = 1, frames do
    c:simulate(1 / hz)
    local x, y = c:effector()
    local a = atan2(x, -y)
    if prev and prev < 0 and a >= 0 then
      local t = (f - 1 + (-prev) / (a - prev)) / hz
      first = first or t
      last, count = t, count + 1
    end
    prev = a
    if f > frames - period * hz then amp = math.max(amp, abs(a)) end
  end
  print(("  %dD pendulum (L 1, g 9.81, 0.05 rad, 60 Hz, no damping): period %.5f s (2 pi sqrt(L/g) = %.5f, %+.3f%%), amplitude after 10 periods %.3f%% of the start")
    :format(dim, (last - first) / (count - 1), period, ((last - first) / (count - 1) / period - 1) * 100, amp / a0 * 100))
end

-- frame-rate independence: a tail on a body that sets off and runs (stiffness 20, damping 2)
for _, dim in ipairs({ 2, 3 }) do
  local ends = {}
  for _, hz in ipairs({ 30, 60, 144 }) do
    local c = new(dim, { 1, 0.8, 0.6, 0.4 })
    c:configure({ gravity = dim == 2 and { 0, -9.81 } or { 0, -9.81, 0 }, damping = 2, stiffness = 20 })
    hang(c, 1, -1.2); hang(c, 2, 0.3)
    for f = 1, 3 * hz do
      local u = math.max(0, f / hz - 0.5)
      local x, y, a = 3 * u * u / (1 + u), 0.2 * sin(5 * u) ^ 2, 0.3 * sin(2 * u) ^ 2
      if dim == 2 then c:set_base(x, y, a) else c:set_base(x, y, 0, cos(a / 2), 0, sin(a / 2), 0) end
      c:simulate(1 / hz)
    end
    -- the bones' directions (3D twist is not simulated: it depends on the path taken)
    local p = {}
    for i = 1, 4 do
      local ax, ay, az = c:joint(i)
      local bx, by, bz = c:joint(i + 1)
      local dx, dy, dz = bx - ax, by - ay, (bz or 0) - (az or 0)
      local l = sqrt(dx * dx + dy * dy + dz * dz)
      p[i] = { dx / l, dy / l, dz / l }
    end
    ends[hz] = p
  end
  local worst = { [30] = 0, [60] = 0 }
  for _, hz in ipairs({ 30, 60 }) do
    for i = 1, 4 do
      local a, b = ends[hz][i], ends[144][i]
      local cx, cy, cz = a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1]
      local d = atan2(sqrt(cx * cx + cy * cy + cz * cz), a[1] * b[1] + a[2] * b[2] + a[3] * b[3])
      worst[hz] = math.max(worst[hz], d)
    end
  end
  print(("  %dD tail, 3 s at 30 / 60 Hz against 144 Hz: bone directions differ by at most %.2e / %.2e rad")
    :format(dim, worst[30], worst[60]))
end

-- drag along a large circle: how far the joints run inside it (the follower's drift)
for _, dim in ipairs({ 2, 3 }) do
  local n, R = 10, 100
  local c = dim == 2 and ik.chain2d({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, R, -n, pi / 2)
    or ik.chain3d({ 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, R, 0, -n)
  if dim == 3 then c:set_base(R, 0, -n, cos(-pi / 4), 0, sin(-pi / 4), 0) end
  local worst = 0
  for k = 1, 4000 do
    local a = k * 0.005
    if dim == 2 then c:drag(R * cos(a), R * sin(a)) else c:drag(R * cos(a), 0, R * sin(a)) end
    if k * 0.5 >= 2 * n then
      for j = 1, n + 1 do
        local x, y, z = c:joint(j)
        worst = math.max(worst, abs((dim == 2 and sqrt(x * x + y * y) or sqrt(x * x + z * z)) - R))
      end
    end
  end
  print(("  %dD drag of 10 bones of 1 round a circle of radius 100 in steps of 0.5: joints within %.4f of the circle")
    :format(dim, worst))
end

print()
print("Cost (a 10-bone chain; the peer is hand-written Lua doing the same, bench/plain_motion.lua)")
for _, dim in ipairs({ 2, 3 }) do
  local lengths = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }
  -- drag: the tip led round a circle
  local c, k = new(dim, lengths), 0
  local p = plain.chain(dim, lengths)
  local t_ik = time(function()
    k = k + 1
    if dim == 2 then c:drag(10 * cos(k * 0.01), 10 * sin(k * 0.01)) else c:drag(10 * cos(k * 0.01), 10 * sin(k * 0.01), 1) end
  end)
  local kk = 0
  local t_plain = time(function()
    kk = kk + 1
    plain.drag(p, 10 * cos(kk * 0.01), 10 * sin(kk * 0.01), 1)
  end)
  print(("  %dD drag: %7.0f ns a call; plain Lua %7.0f ns (plain / ik %.2f)"):format(dim, t_ik * 1e9, t_plain * 1e9, t_plain / t_ik))
  -- simulate: a rope hanging from a swaying base, 1/60 s a frame (4 sub-steps)
  local r = new(dim, lengths)
  r:configure({ gravity = dim == 2 and { 0, -9.81 } or { 0, -9.81, 0 } })
  local q = plain.chain(dim, lengths)
  local f = 0
  t_ik = time(function()
    f = f + 1
    if dim == 2 then r:set_base(sin(f * 0.05), 0) else r:set_base(sin(f * 0.05), 0, 0) end
    r:simulate(1 / 60)
  end)
  local ff = 0
  t_plain = time(function()
    ff = ff + 1
    plain.simulate(q, sin(ff * 0.05), 1 / 60, 9.81)
  end)
  print(("  %dD simulate, 1/60 s (4 sub-steps): %7.0f ns a call, %5.0f ns a sub-step; plain Lua Verlet rope %7.0f ns (plain / ik %.2f)")
    :format(dim, t_ik * 1e9, t_ik * 1e9 / 4, t_plain * 1e9, t_plain / t_ik))
end

-- The gait: the 3D spider of bench/walkers.lua (8 legs, two groups) walking at 1 unit a
-- second over bumpy ground, stride 0.5, 60 Hz; the peer steps the same 8 feet by hand.
for _, dim in ipairs({ 2, 3 }) do
  local w = walkers.spider(dim, 1)
  local g = ik.gait(w.legs, { stride = 0.5, step_time = 0.2, ground = w.ground, groups = w.groups })
  local f = 0
  -- the body's own move (set_base from Lua) is timed alone and taken out of the gait's
  local t_place = time(function()
    f = f + 1
    w.place(f / 60)
  end)
  local t_update = time(function()
    f = f + 1
    w.place(f / 60)
    g:update(1 / 60)
  end) - t_place
  local t_frame = time(function()
    f = f + 1
    w.place(f / 60)
    g:update(1 / 60)
    w.rig:solve()
  end)
  local offsets = {}
  for k = 1, 8 do
    local x, y, z = w.legs[k]:effector()
    local bx, by, bz = w.body:base()
    offsets[k] = { x - bx, y - by, (z or 0) - (dim == 3 and bz or 0) }
  end
  local ground = w.ground
  local q = plain.gait(offsets, w.groups, 0.5, 0.2, 0.125, 0.5, function(x, z) return dim == 2 and ground(x) or ground(x, z) end)
  local ff = 0
  local t_plain = time(function()
    ff = ff + 1
    plain.gait_update(q, ff / 60, 1, 0, 1 / 60)
  end)
  -- how well it walks: 30 s at 60 Hz, and the same walk at 30 and 144 Hz
  local r = walkers.walk(walkers.spider(dim, 1), { stride = 0.5, step_time = 0.2 }, 30, 60)
  local r30 = walkers.walk(walkers.spider(dim, 1), { stride = 0.5, step_time = 0.2 }, 30, 30)
  local r144 = walkers.walk(walkers.spider(dim, 1), { stride = 0.5, step_time = 0.2 }, 30, 144)
  local d30 = walkers.compare(r30, r144)
  local d60 = walkers.compare(r, r144)
  print(("  %dD spider gait:update (8 legs; the body's set_base, %.0f ns, taken out): %6.0f ns; with rig:solve %7.0f ns a frame; plain Lua stepping %6.0f ns (plain / ik %.2f)")
    :format(dim, t_place * 1e9, t_update * 1e9, t_frame * 1e9, t_plain * 1e9, t_plain / t_update))
  print(("     30 s at 60 Hz: goals met in %.1f%% of frames, planted feet moved %g, at most %d group in the air, landings %.1e off the ground; landings at 30 / 60 Hz within %.2e / %.2e of 144 Hz's (stride 0.5)")
    :format(100 * r.met / r.frames, r.moved, r.crowd, r.landed, d30, d60))
end
