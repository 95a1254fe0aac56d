-- The module against a real peer: Spine's pure-Lua IK constraint (spine-runtimes, branch
-- 4.0, spine-lua/spine-lua/IkConstraint.lua), its apply1 (one bone pointed at a target) and
-- apply2 (two bones, analytic), on the same moving targets in the same process.
--   SPINE=/path/to/spine-runtimes/spine-lua lua5.4 bench/spine.lua      (from the repository root)
--   SPINE=/path/to/spine-runtimes/spine-lua IK_CPATH="build/luajit/?.so" luajit bench/spine.lua
--   make bench-spine SPINE=/path/to/spine-runtimes/spine-lua            (both VMs)
-- Nothing of Spine is in this repository: its files are loaded at run time from $SPINE (the
-- spine-lua directory of a checkout, the one holding spine-lua/IkConstraint.lua), under
-- the Spine Runtimes License. Without $SPINE this prints how to get it and exits 0. Written
-- for branch 4.0 (the last with spine-lua): its apply1 and apply2 signatures, its BoneData.
--
-- What is timed, per call, one call per target, each from the pose the last call left:
--   Spine: constraint:apply1(bone, x, y, ...) or constraint:apply2(parent, child, x, y, ...)
--     with the arguments constraint:update() passes for the default constraint data (mix 1,
--     bendDirection 1, no compress, stretch, uniform or softness). Each apply ends by
--     updating the world transform (a, b, c, d, worldX, worldY) of the bones it moves, so
--     that is part of its call. "+ read" adds reading those fields, what a renderer does.
--   ik: chain:solve / chain:solve_two_bone on a chain with the same base and lengths, or the
--     stateless ik.two_bone. "+ read" adds reading what a LOVE game draws a bone with: its
--     world position and world angle (chain:joint(i), chain:world_angle(i) for every bone;
--     for ik.two_bone the middle joint, one cos and one sin, and a1 + a2).
-- The targets: a Lissajous curve about the chain's base, mostly within reach, sometimes
-- beyond it, now and then nearer than |l1 - l2| (for two bones). Each figure is the median
-- of 9 runs of at least 25 ms (os.clock); spread is (max - min) / median; Spine's is the
-- lower of two such medians, one before and one after the module's rows. spine/ik > 1: ik
-- is faster. A benchmark, not a test: it prints figures and never fails on a time; it checks
-- that both sides put the tip where they should, and exits 1 if one does not.
-- Only the public Lua API of the module is used.

local spine_dir = os.getenv("SPINE")
if not spine_dir or spine_dir == "" then
  print([[
bench/spine.lua: SPINE is not set, nothing to compare against.
It times Spine's Lua IK constraint (IkConstraint:apply1 and apply2), loaded at run time from
a checkout of the Spine runtimes, branch 4.0:
  git clone --branch 4.0 --depth 1 https://github.com/EsotericSoftware/spine-runtimes.git
then, with the spine-lua directory of that checkout:
  SPINE=$PWD/spine-runtimes/spine-lua make bench-spine
or one VM:
  SPINE=/path/to/spine-runtimes/spine-lua lua5.4 bench/spine.lua
  SPINE=/path/to/spine-runtimes/spine-lua IK_CPATH="build/luajit/?.so" luajit bench/spine.lua
(The Spine runtimes have their own license; nothing of them is in this repository.)]])
  return
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() end
  return f ~= nil
end

-- Spine's files require each other as "spine-lua.Name", so the directory to search is the
-- one above spine-lua/. Accept both the checkout's spine-lua/ and the inner spine-lua/spine-lua/.
local spine_root
if exists(spine_dir .. "/spine-lua/IkConstraint.lua") then
  spine_root = spine_dir
elseif exists(spine_dir .. "/IkConstraint.lua") then
  spine_root = spine_dir .. "/.."
else
  io.stderr:write("bench/spine.lua: no spine-lua/IkConstraint.lua under SPINE=" .. spine_dir ..
    "\n(SPINE is the spine-lua directory of a spine-runtimes checkout, branch 4.0)\n")
  os.exit(1)
end

package.path = "lua/?.lua;lua/?/init.lua;" .. spine_root .. "/?.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")

-- Spine 4.0's Lua keeps math.atan2 in locals when its files load. Lua 5.4 has it only when
-- built with LUA_COMPAT_MATHLIB (Debian's is); elsewhere give it math.atan, which takes (y, x).
local atan2_shim = false
if not math.atan2 then
  math.atan2 = math.atan -- luacheck: ignore
  atan2_shim = true
end
local BoneData = require("spine-lua.BoneData")
local IkConstraintData = require("spine-lua.IkConstraintData")
local SkeletonData = require("spine-lua.SkeletonData")
local Skeleton = require("spine-lua.Skeleton")

local clock = os.clock
local sqrt, cos, sin, pi = math.sqrt, math.cos, math.sin, math.pi
local REPS, MIN_SECONDS = 9, 0.025 -- 9 runs, not 5: the machines are shared
local TARGETS = 1000             -- one period of the curve; the runs go round it
local TOLERANCE = 1e-6           -- the tip checks, world units
local L1, L2 = 60, 50            -- upper arm, forearm, in Spine's usual pixels
local BASE_X, BASE_Y = 20, 90    -- the shoulder, in the root bone's (= the world's) frame
local UPPER_DEG, LOWER_DEG = 30, 40 -- the setup pose's local rotations, degrees
local vm = jit and jit.version or _VERSION
local module_path = (os.getenv("IK_CPATH") or "build/lua5.4/?.so"):gsub("%?", "ik/core")

-- ---- time (as bench/lua_bench.lua) ----

-- ns per unit of run(count), the median of REPS runs of one count, reset() before each;
-- the count doubles from 1 until a run lasts MIN_SECONDS. Returns median, spread.
local function measure(run, reset)
  local count = 1
  while true do
    reset()
    local t = clock()
    run(count)
    t = clock() - t
    if t >= MIN_SECONDS and count >= TARGETS then break end
    count = count * 2
  end
  local v = {}
  for r = 1, REPS do
    reset()
    local t = clock()
    run(count)
    v[r] = (clock() - t) / count * 1e9
  end
  table.sort(v)
  local median = v[math.floor((REPS + 1) / 2)]
  return median, (v[REPS] - v[1]) / median
end

-- Every timed loop adds what it reads into sink, so LuaJIT cannot drop the reads.
local sink = 0

-- ---- the targets ----

-- A Lissajous curve about the base, scaled by the two-bone reach: 86% of it within reach,
-- 12% beyond, 2% nearer than l1 - l2.
local tx, ty = {}, {}
do
  local reach = L1 + L2
  for k = 1, TARGETS do
    local a = 2 * pi * (k - 1) / TARGETS
    tx[k] = BASE_X + reach * (0.1 + 0.8 * cos(3 * a))
    ty[k] = BASE_Y + reach * 0.75 * sin(2 * a)
  end
end

-- ---- Spine: the smallest real skeleton ----

-- A root bone at the origin; the chain's first bone its child at the shoulder, the second
-- (if any) at the end of the first; the target bone a child of the root. Built through
-- SkeletonData and Skeleton.new as Spine's JSON loader builds them, one IK constraint with
-- the default data (mix 1, bendDirection 1, no compress, stretch, uniform or softness),
-- then posed once with skeleton:updateWorldTransform(), as a game does every frame.
local function spine_rig(lengths)
  local data = SkeletonData.new()
  local function bone(name, parent, x, y, rotation, length)
    local b = BoneData.new(#data.bones + 1, name, parent) -- Spine's Lua indices start at 1
    b.x, b.y, b.rotation, b.length = x, y, rotation, length or 0
    data.bones[#data.bones + 1] = b
    return b
  end
  local root = bone("root", nil, 0, 0, 0)
  local constrained = {bone("upper", root, BASE_X, BASE_Y, UPPER_DEG, lengths[1])}
  if lengths[2] then
    constrained[2] = bone("lower", constrained[1], lengths[1], 0, LOWER_DEG, lengths[2])
  end
  local target = bone("target", root, tx[1], ty[1], 0)
  local constraint = IkConstraintData.new("reach")
  constraint.bones, constraint.target = constrained, target
  data.ikConstraints[1] = constraint
  local skeleton = Skeleton.new(data)
  skeleton:updateWorldTransform()
  return skeleton, skeleton.ikConstraints[1], skeleton:findBone("upper"),
    skeleton:findBone("lower"), skeleton:findBone("target")
end

-- The tip of a Spine bone: its local (length, 0) through its world transform.
local function spine_tip(bone)
  local l = bone.data.length
  return bone.worldX + bone.a * l, bone.worldY + bone.c * l
end

-- ---- the runners: run(count) and reset() for measure ----

-- One call per target, round the curve; reset() puts the pose back to the start and the
-- curve back to its first target. solve(k) does the call for target k.
local function runner(solve, reset_pose)
  local k = 1
  local function reset()
    reset_pose()
    k = 1
  end
  local function run(count)
    for _ = 1, count do
      solve(k)
      k = k + 1
      if k > TARGETS then k = 1 end
    end
  end
  return run, reset
end

local function spine_setup(skeleton)
  return function()
    skeleton:setToSetupPose()
    skeleton:updateWorldTransform()
  end
end

local function chain_setup(chain)
  local start = {math.rad(UPPER_DEG), math.rad(LOWER_DEG)}
  return function()
    for i = 1, #chain do chain:set_angle(i, start[i]) end
  end
end

local function nothing() end

-- ---- the checks ----

-- Round the curve once from the start pose, as the timed runs go: after each call, the tip
-- is compared with where it should be (1 bone: at its length from the base towards the
-- target; 2 bones: on the target when it is within reach) and with the other side's tip,
-- the Spine one. Returns the worst of each, whether every one was within TOLERANCE (a NaN
-- is not), and the mean iterations per solve.
local check_failed = false
local function distance(x, y, ex, ey)
  return sqrt((x - ex) ^ 2 + (y - ey) ^ 2)
end
local function check(name, setup, call, tip, expected, spine_tips)
  setup()
  local worst, worst_vs_spine, bad, iterations, solves = 0, 0, 0, 0, 0
  for k = 1, TARGETS do
    local its = call(k)
    if its then iterations, solves = iterations + its, solves + 1 end
    local x, y = tip()
    local ex, ey = expected(k)
    if ex then
      local d = distance(x, y, ex, ey)
      if not (d <= TOLERANCE) then bad = bad + 1 end
      if d > worst or d ~= d then worst = d end
    end
    if spine_tips then
      local d = distance(x, y, spine_tips[2 * k - 1], spine_tips[2 * k])
      if not (d <= TOLERANCE) then bad = bad + 1 end
      if d > worst_vs_spine or d ~= d then worst_vs_spine = d end
    end
  end
  if bad > 0 then check_failed = true end
  return {name = name, worst = worst, vs_spine = spine_tips and worst_vs_spine,
    its = solves > 0 and iterations / solves or nil, ok = bad == 0}
end

-- ---- printing ----

local function print_load()
  local f = io.open("/proc/loadavg")
  print("load average (/proc/loadavg): " .. (f and f:read("*l") or "?"))
  if f then f:close() end
end

local ROW = "%-42s %8s %7s %9s %7s %9s %8s %6s"
local function print_header()
  print(string.format(ROW, "", "call ns", "spread", "+read ns", "spread", "spine/ik", "(+read)",
    "its"))
end
local function print_row(name, m, ms, r, rs, spine, spine_read, its)
  print(string.format(ROW, name, string.format("%.0f", m), string.format("%.1f%%", 100 * ms),
    string.format("%.0f", r), string.format("%.1f%%", 100 * rs),
    spine and string.format("%.2f", spine / m) or "",
    spine_read and string.format("%.2f", spine_read / r) or "",
    its and string.format("%.2f", its) or ""))
end

-- Spine's figures, call and call + read, are measured before and after the module's rows,
-- and the lower of the two medians is kept, so a noisy moment cannot flatter the module.
local function measure_spine(call, read, setup)
  local m, ms = measure(runner(call, setup))
  local r, rs = measure(runner(read, setup))
  return {m, ms, r, rs}
end
local function lower(before, after)
  local out = {}
  for i = 1, 3, 2 do
    local best = after[i] < before[i] and after or before
    out[i], out[i + 1] = best[i], best[i + 1]
  end
  return out
end
local function print_table(title, spine_name, before, after, rows)
  local sp = lower(before, after)
  print(title)
  print_header()
  print_row(spine_name, sp[1], sp[2], sp[3], sp[4])
  for _, row in ipairs(rows) do
    print_row(row[1], row[2], row[3], row[4], row[5], sp[1], sp[3], row[6])
  end
end

local function print_checks(checks)
  for _, c in ipairs(checks) do
    print(string.format("  %-42s tip off by <= %.1e%s  %s", c.name, c.worst,
      c.vs_spine and string.format(", from Spine's by <= %.1e", c.vs_spine) or "",
      c.ok and "ok" or "FAILED"))
  end
end

-- The git commit of the Spine checkout, when it is one.
local function spine_commit()
  local pipe = io.popen('git -C "' .. spine_dir .. '" rev-parse HEAD 2>/dev/null')
  if not pipe then return nil end
  local out = pipe:read("*l")
  pipe:close()
  return out and out:match("^%x+$")
end
local commit = spine_commit()

local far, near = 0, 0
for k = 1, TARGETS do
  local d = sqrt((tx[k] - BASE_X) ^ 2 + (ty[k] - BASE_Y) ^ 2)
  if d > L1 + L2 then far = far + 1 elseif d < L1 - L2 then near = near + 1 end
end

print(string.format("ik against Spine's Lua IK constraint: %s, %s (%s), os.clock;", vm, ik._VERSION,
  module_path))
print(string.format("medians of %d runs of >= %g ms; spread = (max - min) / median; Spine's: the\n" ..
  "lower of two medians, before and after the module's rows.", REPS, MIN_SECONDS * 1000))
print(string.format("Spine: %s%s%s", spine_dir, commit and (" at " .. commit) or "",
  atan2_shim and " (math.atan2 = math.atan for it)" or ""))
print_load()
print(string.format([[
Targets: %d points of a Lissajous curve about the base (%g, %g), one per call, round and
round; bones %g and %g long; %.1f%% beyond the two-bone reach, %.1f%% nearer than l1 - l2.
spine/ik > 1: ik is faster. its: mean iterations of the module's solve.]], TARGETS, BASE_X,
  BASE_Y, L1, L2, 100 * far / TARGETS, 100 * near / TARGETS))

-- ==== one bone: apply1 ====

do
  local skeleton, constraint, upper, _, target = spine_rig({L1})
  local spine_setup1 = spine_setup(skeleton)
  local apply1 = constraint.apply1

  -- Spine's call and its read: the bone's world transform, fields of the bone.
  local function spine_call(k)
    apply1(constraint, upper, tx[k], ty[k], false, false, false, 1)
  end
  local function spine_read(k)
    apply1(constraint, upper, tx[k], ty[k], false, false, false, 1)
    sink = sink + upper.worldX + upper.worldY + upper.a + upper.c
  end

  -- Where the tip should be: at the bone's length from the base, towards the target.
  local function pointed(k)
    local dx, dy = tx[k] - BASE_X, ty[k] - BASE_Y
    local d = sqrt(dx * dx + dy * dy)
    return BASE_X + L1 * dx / d, BASE_Y + L1 * dy / d
  end

  local spine_tips = {}
  local checks = {check("Spine apply1", spine_setup1, function(k)
    spine_call(k)
    spine_tips[2 * k - 1], spine_tips[2 * k] = spine_tip(upper)
  end, function() return spine_tip(upper) end, pointed)}

  local before = measure_spine(spine_call, spine_read, spine_setup1)
  local table_rows = {}

  local rows = {
    {"ik chain:solve, fabrik (defaults)", {}},
    {"ik chain:solve, ccd greed 1", {solver = "ccd", greed = 1}},
    {"ik chain:solve, fabrik, iterations 1", {iterations = 1}},
    {"ik chain:solve, ccd greed 1, iterations 1", {solver = "ccd", greed = 1, iterations = 1}},
  }
  for _, row in ipairs(rows) do
    local chain = ik.chain2d({L1}, BASE_X, BASE_Y):configure(row[2])
    local setup = chain_setup(chain)
    local function solve(k) chain:solve(tx[k], ty[k]) end
    local function solve_read(k)
      chain:solve(tx[k], ty[k])
      local x, y = chain:joint(1)
      sink = sink + x + y + chain:world_angle(1)
    end
    checks[#checks + 1] = check(row[1], setup, function(k)
      local _, _, its = chain:solve(tx[k], ty[k])
      return its
    end, function() return chain:effector() end, pointed, spine_tips)
    local m, ms = measure(runner(solve, setup))
    local r, rs = measure(runner(solve_read, setup))
    table_rows[#table_rows + 1] = {row[1], m, ms, r, rs, checks[#checks].its}
  end

  -- The stateless two-bone solve with a second bone of length 0 points the first one: a1
  -- is the bone's world angle, its base is the chain's (so "+ read" adds nothing to read).
  do
    local two_bone = ik.two_bone
    local a1 = 0
    local function solve(k) a1 = two_bone(L1, 0, tx[k] - BASE_X, ty[k] - BASE_Y) end
    local function solve_read(k)
      a1 = two_bone(L1, 0, tx[k] - BASE_X, ty[k] - BASE_Y)
      sink = sink + BASE_X + BASE_Y + a1
    end
    local name = "ik.two_bone(l, 0, x, y)"
    checks[#checks + 1] = check(name, nothing, solve, function()
      return BASE_X + L1 * cos(a1), BASE_Y + L1 * sin(a1)
    end, pointed, spine_tips)
    local m, ms = measure(runner(solve, nothing))
    local r, rs = measure(runner(solve_read, nothing))
    table_rows[#table_rows + 1] = {name, m, ms, r, rs}
  end
  print_table(
    string.format("\n== %s: one bone pointed at the target (Spine IkConstraint:apply1) ==", vm),
    "Spine apply1 (+ its world transform)", before,
    measure_spine(spine_call, spine_read, spine_setup1), table_rows)

  -- What a Spine game pays a frame for this skeleton: the target bone moved, then every
  -- bone's world transform from its pose and the constraint after (skeleton:updateWorldTransform).
  local function frame(k)
    target.x, target.y = tx[k], ty[k]
    skeleton:updateWorldTransform()
  end
  checks[#checks + 1] = check("Spine skeleton:updateWorldTransform()", spine_setup1, frame,
    function() return spine_tip(upper) end, pointed, spine_tips)
  local fm, fms = measure(runner(frame, spine_setup1))
  print(string.format("for scale, a whole Spine frame: target.x, target.y = x, y;\n" ..
    "  skeleton:updateWorldTransform() (3 bones, then apply1): %.0f ns (spread %.1f%%)", fm,
    100 * fms))
  print(string.format("checks, round the curve once (tolerance %g):", TOLERANCE))
  print_checks(checks)
end

-- ==== two bones: apply2 ====

do
  local skeleton, constraint, upper, lower, target = spine_rig({L1, L2})
  local spine_setup2 = spine_setup(skeleton)
  local apply2 = constraint.apply2

  local function spine_call(k)
    apply2(constraint, upper, lower, tx[k], ty[k], 1, false, false, 0, 1)
  end
  local function spine_read(k)
    apply2(constraint, upper, lower, tx[k], ty[k], 1, false, false, 0, 1)
    sink = sink + upper.worldX + upper.worldY + upper.a + upper.c
      + lower.worldX + lower.worldY + lower.a + lower.c
  end

  -- Where the tip should be: on a target within reach; otherwise no claim here (the tips
  -- of the two sides are still compared on every target).
  local function on_target(k)
    local d = sqrt((tx[k] - BASE_X) ^ 2 + (ty[k] - BASE_Y) ^ 2)
    if d <= L1 + L2 and d >= L1 - L2 then return tx[k], ty[k] end
  end

  local spine_tips = {}
  local checks = {check("Spine apply2", spine_setup2, function(k)
    spine_call(k)
    spine_tips[2 * k - 1], spine_tips[2 * k] = spine_tip(lower)
  end, function() return spine_tip(lower) end, on_target)}

  local before = measure_spine(spine_call, spine_read, spine_setup2)
  local table_rows = {}

  do
    local chain = ik.chain2d({L1, L2}, BASE_X, BASE_Y)
    local setup = chain_setup(chain)
    local function solve(k) chain:solve_two_bone(tx[k], ty[k]) end
    local function solve_read(k)
      chain:solve_two_bone(tx[k], ty[k])
      local x1, y1 = chain:joint(1)
      local x2, y2 = chain:joint(2)
      sink = sink + x1 + y1 + chain:world_angle(1) + x2 + y2 + chain:world_angle(2)
    end
    local name = "ik chain:solve_two_bone(x, y)"
    checks[#checks + 1] = check(name, setup, function(k)
      local _, _, its = chain:solve_two_bone(tx[k], ty[k])
      return its
    end, function() return chain:effector() end, on_target, spine_tips)
    local m, ms = measure(runner(solve, setup))
    local r, rs = measure(runner(solve_read, setup))
    table_rows[#table_rows + 1] = {name, m, ms, r, rs, checks[#checks].its}
  end

  -- Stateless: a1 the first bone's world angle, a2 the second's relative one; reading the
  -- pose is the middle joint (one cos, one sin) and the second bone's world angle.
  do
    local two_bone = ik.two_bone
    local a1, a2 = 0, 0
    local function solve(k) a1, a2 = two_bone(L1, L2, tx[k] - BASE_X, ty[k] - BASE_Y) end
    local function solve_read(k)
      a1, a2 = two_bone(L1, L2, tx[k] - BASE_X, ty[k] - BASE_Y)
      sink = sink + BASE_X + BASE_Y + a1 + BASE_X + L1 * cos(a1) + BASE_Y + L1 * sin(a1) + (a1 + a2)
    end
    local name = "ik.two_bone(l1, l2, x, y)"
    checks[#checks + 1] = check(name, nothing, solve, function()
      return BASE_X + L1 * cos(a1) + L2 * cos(a1 + a2), BASE_Y + L1 * sin(a1) + L2 * sin(a1 + a2)
    end, on_target, spine_tips)
    local m, ms = measure(runner(solve, nothing))
    local r, rs = measure(runner(solve_read, nothing))
    table_rows[#table_rows + 1] = {name, m, ms, r, rs}
  end
  print_table(string.format("\n== %s: two bones (Spine IkConstraint:apply2) ==", vm),
    "Spine apply2 (+ both world transforms)", before,
    measure_spine(spine_call, spine_read, spine_setup2), table_rows)

  local function frame(k)
    target.x, target.y = tx[k], ty[k]
    skeleton:updateWorldTransform()
  end
  checks[#checks + 1] = check("Spine skeleton:updateWorldTransform()", spine_setup2, frame,
    function() return spine_tip(lower) end, on_target, spine_tips)
  local fm, fms = measure(runner(frame, spine_setup2))
  print(string.format("for scale, a whole Spine frame: target.x, target.y = x, y;\n" ..
    "  skeleton:updateWorldTransform() (4 bones, then apply2): %.0f ns (spread %.1f%%)", fm,
    100 * fms))
  print(string.format("checks, round the curve once (tolerance %g):", TOLERANCE))
  print_checks(checks)
end

-- The middle joints agree too (bend 1 is Spine's bendDirection 1): printed, not timed.
do
  local _, constraint, upper, lower = spine_rig({L1, L2})
  local chain = ik.chain2d({L1, L2}, BASE_X, BASE_Y)
  chain_setup(chain)()
  local worst, bad = 0, 0
  for k = 1, TARGETS do
    constraint:apply2(upper, lower, tx[k], ty[k], 1, false, false, 0, 1)
    chain:solve_two_bone(tx[k], ty[k])
    local x, y = chain:joint(2)
    local d = distance(x, y, lower.worldX, lower.worldY)
    if not (d <= TOLERANCE) then bad = bad + 1 end
    if d > worst or d ~= d then worst = d end
  end
  if bad > 0 then check_failed = true end
  print(string.format("  %-42s middle joint off Spine's by <= %.1e  %s",
    "ik chain:solve_two_bone(x, y)", worst, bad == 0 and "ok" or "FAILED"))
end

print_load()
if sink ~= sink then print("(sink: NaN)") end
if check_failed then
  io.stderr:write("bench/spine.lua: a check failed (above): the figures compare unequal work\n")
  os.exit(1)
end
