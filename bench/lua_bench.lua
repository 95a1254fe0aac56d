-- The Lua half of `make bench`: the module's solves called from Lua against FABRIK and CCD
-- in plain Lua (bench/plain.lua), on the same targets in the same process; chains of 1, 2,
-- 3 and 10 bones and batches of 64 tracking a moving target; rigs (bench/rigs.lua); the
-- binding's share, the frame budget, bytes per chain and garbage per solve; at the end,
-- the figures against the speed goals (ratios to the hand-written Lua FABRIK).
--   lua5.4 bench/lua_bench.lua                                  (from the repository root)
--   IK_CPATH="build/luajit/?.so" luajit bench/lua_bench.lua
--   IK_BACKEND=lua lua5.4 bench/lua_bench.lua                   ik.pure, the pure-Lua backend,
--                                             in the module's place (any VM; no C module needed)
--   lua5.4 bench/lua_bench.lua --calls N      N calls of a solve with nothing to do, for
--                                             bench/instr.sh (callgrind)
-- IK_BENCH_C names the C bench (default build/bench/bench), run with --binding for the
-- same solve timed from C. A benchmark, not a test: it prints figures, never fails on a
-- time. Every figure is the median of 5 runs of at least 25 ms (os.clock); spread is
-- (max - min) / median. The module and its plain peer take turns, run for run, each run
-- whole rounds of the same targets, so a change of load hits both alike. Compare figures of
-- one run with each other: the machine is noisy.
package.path = "lua/?.lua;lua/?/init.lua;bench/?.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
-- IK_BACKEND as spec/backend.lua reads it: lua times ik.pure (its rigs too: bench/rigs.lua
-- reads it); the binding's share, which it has not, is left out.
local backend = os.getenv("IK_BACKEND")
if backend ~= nil and backend ~= "" and backend ~= "c" and backend ~= "lua" then
  error(("IK_BACKEND is %q: it must be lua or c"):format(backend), 0)
end
local pure = backend == "lua"
local ik = pure and require("ik.pure") or require("ik")
-- The module's figures are the C module's: where it did not load (another VM's build on
-- the path), require("ik") gave ik.pure, whose figures would go under the module's name.
if not pure and ik.backend ~= "c" then
  error("bench/lua_bench.lua times the C module, which did not load: set IK_CPATH to this "
    .. "VM's build (IK_CPATH='build/luajit/?.so' under LuaJIT), or IK_BACKEND=lua to time "
    .. "ik.pure.\n" .. tostring(ik.fallback_reason), 0)
end
local plain = require("plain")

-- --calls N: only N calls of chain:solve(x, y) with nothing to do (the target on the tip),
-- for bench/instr.sh to count under callgrind.
if arg[1] == "--calls" then
  local chain = ik.chain2d({1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
  chain:set_angle(2, 0.5)
  local x, y = chain:effector()
  for _ = 1, tonumber(arg[2]) do chain:solve(x, y) end
  return
end

local clock = os.clock
local pi = math.pi
local REPS, MIN_SECONDS = 5, 0.025
local BONES, ITERATIONS, SEGMENT = 10, 10, 8
local EQUAL_TARGETS, BATCH, FRAMES = 1000, 64, 2000
local vm = jit and jit.version or _VERSION
local module_path = pure and "ik.pure, lua/ik/pure/"
  or (os.getenv("IK_CPATH") or "build/lua5.4/?.so"):gsub("%?", "ik/core")

-- ---- time ----

-- ns per unit of run(count), the median of REPS runs of one count, reset() before each;
-- the count doubles from 1 until a run lasts MIN_SECONDS. Returns median, spread.
local function measure(run, reset, min_count)
  local count = 1
  while true do
    reset()
    local t = clock()
    run(count)
    t = clock() - t
    if t >= MIN_SECONDS and count >= (min_count or 1) then break end
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

-- Several workloads timed taking turns: sides = {{run, reset}, ...}, each run(count) doing
-- count units of work in order from reset(). A side's count is unit times the least power
-- of 2 that makes a run last MIN_SECONDS, so every run covers whole rounds of the same
-- targets (unit: one round) on every side; then REPS runs of each, one side after the other
-- in turn, so a change of load hits all alike. Returns {median, spread} per side, ns per unit
-- of work.
local function measure_turns(sides, unit)
  local counts, v = {}, {}
  for k, side in ipairs(sides) do
    local count = unit
    while true do
      side[2]()
      local t = clock()
      side[1](count)
      if clock() - t >= MIN_SECONDS then break end
      count = count * 2
    end
    counts[k], v[k] = count, {}
  end
  for r = 1, REPS do
    for k, side in ipairs(sides) do
      side[2]()
      local t = clock()
      side[1](counts[k])
      v[k][r] = (clock() - t) / counts[k] * 1e9
    end
  end
  local out = {}
  for k = 1, #sides do
    table.sort(v[k])
    local median = v[k][math.floor((REPS + 1) / 2)]
    out[k] = {median, (v[k][REPS] - v[k][1]) / median}
  end
  return out
end

-- ---- the same random numbers as bench/bench.c and bench/rates.lua ----

local seed
local function random() -- uniform in [0, 1); 16807 * seed < 2^46 is exact in a double
  seed = (16807 * seed) % 2147483647
  return seed / 2147483647
end
local function uniform(a, b) return a + (b - a) * random() end

local function random_pose(pose)
  for i = 1, BONES do pose[i] = uniform(-pi, pi) end
  return pose
end

local function set_pose(chain, pose)
  for i = 1, #chain do chain:set_angle(i, pose[i]) end
end

-- Plain joints x, y from the module chain's current pose.
local function points_of(chain, x, y)
  for i = 1, #chain + 1 do x[i], y[i] = chain:joint(i) end
end

local function copy(from, to)
  for i = 1, #from do to[i] = from[i] end
  return to
end

local EQUAL = {iterations = ITERATIONS, tolerance = 0, escape = false}
local function with(settings, extra)
  local s = {}
  for k, v in pairs(settings) do s[k] = v end
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

-- ---- the equal-work case: one 10-bone 2D chain ----

-- Drawn as bench.c draws its cases: lengths in [0.5, 1.5), the start pose, then candidate
-- poses whose tips are the targets. At tolerance 0 a solve still stops when its tip lands
-- exactly on the target (FABRIK often does within 10 iterations), so a candidate is kept
-- only if all four solves (module FABRIK and CCD, plain FABRIK and CCD, each on its own
-- chain, in order, every SEGMENT-th from the start pose as in the timed runs) run all
-- ITERATIONS; otherwise every chain goes back to its state before it: the plain joints copied
-- back, the module chains replaced by clones taken before the candidate (setting the angles
-- back would not do: a solve leaves the joints as the truth, and angles read back and set
-- again rebuild them a few ulps apart, so the next solves would differ from the timed ones).
seed = 12345
local lengths = {}
for i = 1, BONES do lengths[i] = 0.5 + random() end
local start = random_pose({})
local scratch = ik.chain2d(lengths)
set_pose(scratch, start)
local start_x, start_y = {}, {}
points_of(scratch, start_x, start_y)

local tx, ty, tried = {}, {}, 0
do
  local fab = ik.chain2d(lengths):configure(EQUAL)
  local ccd = ik.chain2d(lengths):configure(with(EQUAL, {solver = "ccd"}))
  local fx, fy, cx, cy = {}, {}, {}, {}
  local saved = {{}, {}, {}, {}, {}, {}}
  local pose = {}
  while #tx < EQUAL_TARGETS do
    tried = tried + 1
    if #tx % SEGMENT == 0 then
      set_pose(fab, start); set_pose(ccd, start)
      copy(start_x, fx); copy(start_y, fy); copy(start_x, cx); copy(start_y, cy)
    end
    set_pose(scratch, random_pose(pose))
    local x, y = scratch:effector()
    saved[1], saved[2] = fab:clone(), ccd:clone()
    copy(fx, saved[3]); copy(fy, saved[4]); copy(cx, saved[5]); copy(cy, saved[6])
    local _, _, i1 = fab:solve(x, y)
    local _, _, i2 = ccd:solve(x, y)
    local _, i3 = plain.fabrik(fx, fy, lengths, BONES, x, y, ITERATIONS, 0)
    local _, i4 = plain.ccd(cx, cy, BONES, x, y, ITERATIONS, 0)
    if i1 == ITERATIONS and i2 == ITERATIONS and i3 == ITERATIONS and i4 == ITERATIONS then
      tx[#tx + 1], ty[#ty + 1] = x, y
    else
      fab, ccd = saved[1], saved[2]
      copy(saved[3], fx); copy(saved[4], fy); copy(saved[5], cx); copy(saved[6], cy)
    end
  end
end

-- Timed runs over the targets in order: each solve from the last one's pose, every
-- SEGMENT-th from the start pose. Returns the run, the reset, and the stats.
local function module_runner(chain)
  local k, solves, iterations, reached = 1, 0, 0, 0
  local function reset()
    set_pose(chain, start)
    k, solves, iterations, reached = 1, 0, 0, 0
  end
  local function run(count)
    for _ = 1, count do
      if (k - 1) % SEGMENT == 0 then set_pose(chain, start) end
      local ok, _, its = chain:solve(tx[k], ty[k])
      iterations = iterations + its
      if ok then reached = reached + 1 end
      k = k + 1
      if k > #tx then k = 1 end
    end
    solves = solves + count
  end
  return run, reset, function() return iterations / solves, reached / solves end
end

local function plain_runner(solve)
  local x, y = {}, {}
  local k, solves, iterations = 1, 0, 0
  local function reset()
    copy(start_x, x); copy(start_y, y)
    k, solves, iterations = 1, 0, 0
  end
  local function run(count)
    for _ = 1, count do
      if (k - 1) % SEGMENT == 0 then copy(start_x, x); copy(start_y, y) end
      local _, its = solve(x, y, tx[k], ty[k])
      iterations = iterations + its
      k = k + 1
      if k > #tx then k = 1 end
    end
    solves = solves + count
  end
  return run, reset, function() return iterations / solves end
end

local function plain_fabrik_equal(x, y, px, py)
  return plain.fabrik(x, y, lengths, BONES, px, py, ITERATIONS, 0)
end
local function plain_ccd_equal(x, y, px, py)
  return plain.ccd(x, y, BONES, px, py, ITERATIONS, 0)
end

print(string.format("ik from Lua: %s, %s (%s), os.clock; medians of %d runs of >= %g ms;",
  vm, ik._VERSION, module_path, REPS, MIN_SECONDS * 1000))
print("spread = (max - min) / median. plain: bench/plain.lua (flat tables x[i], y[i], len[i]).")
local function print_load()
  local f = io.open("/proc/loadavg")
  print("load average (/proc/loadavg): " .. (f and f:read("*l") or "?"))
  if f then f:close() end
end
print_load()

print(string.format([[

== %s: equal work ==
One 10-bone 2D chain, %d iterations, tolerance 0 (the module: escape off, else its
defaults; CCD greed 0.5 with ramp, the plain CCD greed 1), %d targets: tips of random
poses on which all four solves run all %d iterations (%d drawn). Each solve from the
last one's pose, every %dth from the start pose. plain/module > 1: the module is faster.
]], vm, ITERATIONS, #tx, ITERATIONS, tried, SEGMENT))
print(string.format("%-8s %10s %7s %10s %7s %12s %10s %10s", "solver", "module ns", "spread",
  "plain ns", "spread", "plain/module", "module its", "plain its"))
local goal_rows = {} -- the figures the summary at the end holds against the goals
for _, row in ipairs({{"fabrik", plain_fabrik_equal}, {"ccd", plain_ccd_equal}}) do
  local chain = ik.chain2d(lengths):configure(with(EQUAL, {solver = row[1]}))
  local run, reset, mstats = module_runner(chain)
  local prun, preset, pstats = plain_runner(row[2])
  local t = measure_turns({{run, reset}, {prun, preset}}, #tx)
  local m, ms, p, ps = t[1][1], t[1][2], t[2][1], t[2][2]
  local mits, pits = mstats(), pstats()
  print(string.format("%-8s %10.0f %6.1f%% %10.0f %6.1f%% %12.2f %10.2f %10.2f", row[1], m,
    100 * ms, p, 100 * ps, p / m, mits, pits))
  if row[1] == "fabrik" then goal_rows.a = {m = m, p = p, mits = mits, pits = pits} end
  if row[1] == "ccd" then goal_rows.a_ccd = {m = m, p = p, mits = mits, pits = pits} end
end

-- ---- batches: 64 chains of 10 bones ----

-- Each chain's own start pose and, round by round, a target on which both the module and
-- the plain FABRIK run all ITERATIONS from where the last round left them (a candidate that
-- fails puts both back as above: the plain joints copied, the chain replaced by a clone).
local batch_chains, batch_x, batch_y, batch_start, batch_targets = {}, {}, {}, {}, {}
local ROUNDS = math.floor(EQUAL_TARGETS / BATCH)
do
  local pose, sx, sy = {}, {}, {}
  for c = 1, BATCH do
    batch_chains[c] = ik.chain2d(lengths):configure(EQUAL)
    batch_start[c] = random_pose({})
    set_pose(batch_chains[c], batch_start[c])
    batch_x[c], batch_y[c] = {}, {}
    points_of(batch_chains[c], batch_x[c], batch_y[c])
  end
  for r = 1, ROUNDS do
    local t = {}
    for c = 1, BATCH do
      local chain, x, y = batch_chains[c], batch_x[c], batch_y[c]
      while true do
        set_pose(scratch, random_pose(pose))
        local px, py = scratch:effector()
        local saved = chain:clone()
        copy(x, sx); copy(y, sy)
        local _, _, i1 = chain:solve(px, py)
        local _, i2 = plain.fabrik(x, y, lengths, BONES, px, py, ITERATIONS, 0)
        if i1 == ITERATIONS and i2 == ITERATIONS then
          t[2 * c - 1], t[2 * c] = px, py
          break
        end
        chain = saved
        batch_chains[c] = chain
        copy(sx, x); copy(sy, y)
      end
    end
    batch_targets[r] = t
  end
end

local batch_round = 1
local function batch_reset()
  for c = 1, BATCH do
    set_pose(batch_chains[c], batch_start[c])
    points_of(batch_chains[c], batch_x[c], batch_y[c])
  end
  batch_round = 1
end
local function batch_next()
  batch_round = batch_round + 1
  if batch_round > ROUNDS then batch_reset() end
end
local function run_many(count)
  for _ = 1, count do
    ik.solve_many(batch_chains, batch_targets[batch_round])
    batch_next()
  end
end
local function run_single(count)
  for _ = 1, count do
    local t = batch_targets[batch_round]
    for c = 1, BATCH do batch_chains[c]:solve(t[2 * c - 1], t[2 * c]) end
    batch_next()
  end
end
local function run_plain(count)
  for _ = 1, count do
    local t = batch_targets[batch_round]
    for c = 1, BATCH do
      plain.fabrik(batch_x[c], batch_y[c], lengths, BONES, t[2 * c - 1], t[2 * c], ITERATIONS, 0)
    end
    batch_next()
  end
end

print(string.format([[

== %s: batches ==
%d 10-bone 2D chains, FABRIK, %d iterations, tolerance 0 (targets on which every solve runs
all %d): ns per chain. plain/x > 1: x is faster than plain Lua.
]], vm, BATCH, ITERATIONS, ITERATIONS))
print(string.format("%-34s %10s %7s %10s", "what", "ns/chain", "spread", "plain/x"))
local batch_t = measure_turns({{run_many, batch_reset}, {run_single, batch_reset},
  {run_plain, batch_reset}}, ROUNDS)
local many_ns, many_s = batch_t[1][1], batch_t[1][2]
local single_ns, single_s = batch_t[2][1], batch_t[2][2]
local plain_ns, plain_s = batch_t[3][1], batch_t[3][2]
print(string.format("%-34s %10.0f %6.1f%% %10.2f", "ik.solve_many(chains, targets)", many_ns / BATCH,
  100 * many_s, plain_ns / many_ns))
print(string.format("%-34s %10.0f %6.1f%% %10.2f", string.format("%d chain:solve calls", BATCH),
  single_ns / BATCH, 100 * single_s, plain_ns / single_ns))
print(string.format("%-34s %10.0f %6.1f%% %10s", string.format("%d plain.fabrik calls", BATCH),
  plain_ns / BATCH, 100 * plain_s, "1.00"))

-- ---- tracking: targets moving smoothly, solved every frame to a tolerance ----

local TOLERANCE, MAX_ITERATIONS = 1e-3, 64
local sqrt = math.sqrt

-- The targets for a chain of lengths ls: a Lissajous curve of period FRAMES frames within 0.8
-- of its reach. Where the chain has a hole in its reach (a bone longer than all the others
-- together: inner = 2 * longest - reach > 0), each point's distance d from the base is
-- mapped into the ring, to inner + (reach - inner) * d / reach, so every frame can be
-- reached (one bone: the point put on its circle).
local function curve(ls)
  local reach, longest = 0, 0
  for i = 1, #ls do
    reach = reach + ls[i]
    longest = math.max(longest, ls[i])
  end
  local inner = 2 * longest - reach
  local x, y = {}, {}
  for f = 1, FRAMES do
    local a = 2 * pi * (f - 1) / FRAMES
    local px, py = reach * (0.35 + 0.3 * math.cos(3 * a)), reach * 0.45 * math.sin(2 * a)
    if inner > 0 then
      local d = sqrt(px * px + py * py)
      local r = (inner + (reach - inner) * d / reach) / d
      px, py = px * r, py * r
    end
    x[f], y[f] = px, py
  end
  return x, y
end

local function first(n)
  local t = {}
  for i = 1, n do t[i] = lengths[i] end
  return t
end

-- A tracker: one side's chain going round the curve x, y frame by frame, each frame from the
-- last frame's pose. The unit of work is a period, FRAMES frames, from where a first period
-- (untimed, from the straight chain) left the chain: its pose is put back at the start of
-- every period, within the timed run (module: its angles; plain: its joints). So every
-- period is the same steady tracking on each side, and sides whose runs take different
-- numbers of periods still compare. run(count) solves count periods; stats() gives the
-- last run's share of frames reached and mean iterations, as the solves returned them;
-- check() goes round one period, untimed, and returns the share of frames whose tip ends
-- within TOLERANCE of the target, measured here from the tip, and the mean iterations.
local function module_tracker(ls, x, y, settings, two_bone)
  local chain = ik.chain2d(ls):configure(settings or {})
  for f = 1, FRAMES do
    if two_bone then chain:solve_two_bone(x[f], y[f]) else chain:solve(x[f], y[f]) end
  end
  local start_pose = chain:angles()
  local frames, iterations, reached = 0, 0, 0
  local t = {}
  function t.reset() frames, iterations, reached = 0, 0, 0 end
  if two_bone then
    function t.run(count)
      for _ = 1, count do
        chain:set_angles(start_pose)
        for f = 1, FRAMES do
          local ok, _, its = chain:solve_two_bone(x[f], y[f])
          iterations = iterations + its
          if ok then reached = reached + 1 end
        end
      end
      frames = frames + count * FRAMES
    end
  else
    function t.run(count)
      for _ = 1, count do
        chain:set_angles(start_pose)
        for f = 1, FRAMES do
          local ok, _, its = chain:solve(x[f], y[f])
          iterations = iterations + its
          if ok then reached = reached + 1 end
        end
      end
      frames = frames + count * FRAMES
    end
  end
  function t.stats() return 100 * reached / frames, iterations / frames end
  function t.check()
    chain:set_angles(start_pose)
    local within, its = 0, 0
    for f = 1, FRAMES do
      local _, _, i
      if two_bone then _, _, i = chain:solve_two_bone(x[f], y[f]) else _, _, i = chain:solve(x[f], y[f]) end
      its = its + i
      local ex, ey = chain:effector()
      if sqrt((ex - x[f]) ^ 2 + (ey - y[f]) ^ 2) <= TOLERANCE then within = within + 1 end
    end
    return 100 * within / FRAMES, its / FRAMES
  end
  return t
end

-- solve(px, py, tx, ty): the plain solve of joints px, py towards tx, ty: reached, iterations.
local function plain_tracker(ls, x, y, solve)
  local n = #ls
  local px, py = {}, {}
  local at = 0
  for i = 1, n + 1 do
    px[i], py[i] = at, 0
    at = at + (ls[i] or 0)
  end
  for f = 1, FRAMES do solve(px, py, x[f], y[f]) end
  local sx, sy = copy(px, {}), copy(py, {})
  local frames, iterations, reached = 0, 0, 0
  local t = {}
  function t.reset() frames, iterations, reached = 0, 0, 0 end
  function t.run(count)
    for _ = 1, count do
      copy(sx, px)
      copy(sy, py)
      for f = 1, FRAMES do
        local ok, its = solve(px, py, x[f], y[f])
        iterations = iterations + its
        if ok then reached = reached + 1 end
      end
    end
    frames = frames + count * FRAMES
  end
  function t.stats() return 100 * reached / frames, iterations / frames end
  function t.check()
    copy(sx, px)
    copy(sy, py)
    local within, its = 0, 0
    for f = 1, FRAMES do
      local _, i = solve(px, py, x[f], y[f])
      its = its + i
      if sqrt((px[n + 1] - x[f]) ^ 2 + (py[n + 1] - y[f]) ^ 2) <= TOLERANCE then within = within + 1 end
    end
    return 100 * within / FRAMES, its / FRAMES
  end
  return t
end

local function plain_fabrik_of(ls)
  local n = #ls
  return function(px, py, tx, ty)
    return plain.fabrik(px, py, ls, n, tx, ty, MAX_ITERATIONS, TOLERANCE)
  end
end
local function plain_ccd_of(ls)
  local n = #ls
  return function(px, py, tx, ty)
    return plain.ccd(px, py, n, tx, ty, MAX_ITERATIONS, TOLERANCE)
  end
end

-- Module and plain trackers timed taking turns, ns per frame (frames: of a unit); then both
-- checked.
local function track_pair(m, p, frames)
  local t = measure_turns({{m.run, m.reset}, {p.run, p.reset}}, 1)
  frames = frames or FRAMES
  local r = {m = t[1][1] / frames, ms = t[1][2], p = t[2][1] / frames, ps = t[2][2]}
  r.mr, r.mits = m.stats()
  r.pr, r.pits = p.stats()
  r.mcheck, r.mcheck_its = m.check()
  r.pcheck, r.pcheck_its = p.check()
  return r
end

local fx, fy = curve(lengths)

print(string.format([[

== %s: tracking ==
One 10-bone 2D chain follows a Lissajous target (%d frames a period, within 0.8 of its
reach), each frame from the last frame's pose to tolerance 1e-3, at most 64 iterations (each
timed period from the pose a first, untimed period left); the module with its defaults
unless the row says otherwise. ns per frame; reached: frames within tolerance; its: mean
iterations per frame (as the solves returned them). plain/module > 1: the module is faster.
]], vm, FRAMES))
print(string.format("%-24s %9s %7s %8s %6s %9s %7s %8s %6s %12s", "module", "ns/frame", "spread",
  "reached", "its", "plain ns", "spread", "reached", "its", "plain/module"))
local track_fabrik_ns
local rows = {
  {"fabrik", {}, plain_fabrik_of(lengths)},
  {"ccd (greed 0.5, ramp)", {solver = "ccd"}, plain_ccd_of(lengths)},
  {"ccd, greed 1", {solver = "ccd", greed = 1, greed_ramp = false}, plain_ccd_of(lengths)},
}
for _, row in ipairs(rows) do
  local r = track_pair(module_tracker(lengths, fx, fy, row[2]), plain_tracker(lengths, fx, fy, row[3]))
  print(string.format("%-24s %9.0f %6.1f%% %7.1f%% %6.2f %9.0f %6.1f%% %7.1f%% %6.2f %12.2f", row[1],
    r.m, 100 * r.ms, r.mr, r.mits, r.p, 100 * r.ps, r.pr, r.pits, r.p / r.m))
  if row[1] == "fabrik" then
    track_fabrik_ns = r.m
    goal_rows.b = r
  end
  if row[2].greed then goal_rows.b_ccd = r end
end
print(string.format("\nframe budget (%s): %d 10-bone chains tracked per 16 ms frame (FABRIK, the defaults)",
  vm, math.floor(16e6 / track_fabrik_ns)))

-- ---- tracking: 64 chains in one call, and short chains ----

-- 64 chains of 10 bones, chain c a 64th of a period ahead of chain c - 1 on the same curve:
-- per frame one ik.solve_many(chains, targets), against 64 plain.fabrik calls. The targets
-- of every frame are made beforehand, one flat array a frame, which both sides read. The
-- unit of work is a window of WINDOW frames, 1 .. WINDOW, each from the pose the WINDOW
-- frames before it left (solved once beforehand from the straight chains; module angles,
-- plain joints, put back at every window's start within the timed run): steady tracking,
-- the same frames on both sides, as often as a run needs.
local WINDOW = 250
local batch_targets_of = {}
do
  local offsets = {}
  for c = 1, BATCH do offsets[c] = math.floor((c - 1) * FRAMES / BATCH) end
  for f = 1 - WINDOW, WINDOW do
    local t = {}
    for c = 1, BATCH do
      local g = (f - 1 + offsets[c]) % FRAMES + 1
      t[2 * c - 1], t[2 * c] = fx[g], fy[g]
    end
    batch_targets_of[f] = t
  end
end

-- check() goes through one window (the timed work) and measures each tip itself.
local function batch_module_tracker()
  local chains, start_angles = {}, {}
  for c = 1, BATCH do chains[c] = ik.chain2d(lengths) end
  for f = 1 - WINDOW, 0 do ik.solve_many(chains, batch_targets_of[f]) end
  for c = 1, BATCH do start_angles[c] = chains[c]:angles() end
  local t = {}
  function t.reset() end
  function t.run(count)
    for _ = 1, count do
      for c = 1, BATCH do chains[c]:set_angles(start_angles[c]) end
      for f = 1, WINDOW do ik.solve_many(chains, batch_targets_of[f]) end
    end
  end
  function t.stats() end
  function t.check()
    for c = 1, BATCH do chains[c]:set_angles(start_angles[c]) end
    local within, its, iterations = 0, 0, {}
    for f = 1, WINDOW do
      local targets = batch_targets_of[f]
      ik.solve_many(chains, targets, nil, nil, iterations)
      for c = 1, BATCH do
        its = its + iterations[c]
        local ex, ey = chains[c]:effector()
        if sqrt((ex - targets[2 * c - 1]) ^ 2 + (ey - targets[2 * c]) ^ 2) <= TOLERANCE then
          within = within + 1
        end
      end
    end
    return 100 * within / (WINDOW * BATCH), its / (WINDOW * BATCH)
  end
  return t
end

local function batch_plain_tracker()
  local xs, ys, sx, sy = {}, {}, {}, {}
  local fabrik = plain.fabrik
  for c = 1, BATCH do
    local x, y, at = {}, {}, 0
    for i = 1, BONES + 1 do
      x[i], y[i] = at, 0
      at = at + (lengths[i] or 0)
    end
    for f = 1 - WINDOW, 0 do
      local targets = batch_targets_of[f]
      fabrik(x, y, lengths, BONES, targets[2 * c - 1], targets[2 * c], MAX_ITERATIONS, TOLERANCE)
    end
    xs[c], ys[c], sx[c], sy[c] = x, y, copy(x, {}), copy(y, {})
  end
  local t = {}
  function t.reset() end
  function t.run(count)
    for _ = 1, count do
      for c = 1, BATCH do
        copy(sx[c], xs[c])
        copy(sy[c], ys[c])
      end
      for f = 1, WINDOW do
        local targets = batch_targets_of[f]
        for c = 1, BATCH do
          fabrik(xs[c], ys[c], lengths, BONES, targets[2 * c - 1], targets[2 * c], MAX_ITERATIONS,
            TOLERANCE)
        end
      end
    end
  end
  function t.stats() end
  function t.check()
    for c = 1, BATCH do
      copy(sx[c], xs[c])
      copy(sy[c], ys[c])
    end
    local within, its = 0, 0
    for f = 1, WINDOW do
      local targets = batch_targets_of[f]
      for c = 1, BATCH do
        local x, y = xs[c], ys[c]
        local _, i = fabrik(x, y, lengths, BONES, targets[2 * c - 1], targets[2 * c], MAX_ITERATIONS,
          TOLERANCE)
        its = its + i
        if sqrt((x[BONES + 1] - targets[2 * c - 1]) ^ 2 + (y[BONES + 1] - targets[2 * c]) ^ 2) <= TOLERANCE then
          within = within + 1
        end
      end
    end
    return 100 * within / (WINDOW * BATCH), its / (WINDOW * BATCH)
  end
  return t
end

local short = {}
for _, n in ipairs({1, 2, 3}) do
  short[n] = first(n)
  short[n].x, short[n].y = curve(short[n])
end
local two_reach, two_inner = short[2][1] + short[2][2], math.abs(short[2][1] - short[2][2])

print(string.format([[

== %s: tracking, 64 chains in one call and short chains ==
The tracking above on other chains, the module with its defaults against plain FABRIK
(tolerance 1e-3, at most 64 iterations), taking turns on the same frames; ns per chain per
frame. 64 x 10 bones: 64 chains, chain c a 64th of a period ahead of chain c - 1, all solved
by one ik.solve_many(chains, targets) a frame against 64 plain.fabrik calls a frame, in
windows of %d frames (each from the pose the %d frames before it left). 3 and 1 bones: the
first bones of the 10-bone chain; two_bone: chain:solve_two_bone on its first 2 bones (%.2f
and %.2f, a hole of radius %.2f in the reach, so the curve is pulled into the ring
%.2f..%.2f; for 1 bone onto its circle, radius %.2f). reached, its: checked over the timed
work (a period; a window), the share of chain solves whose tip ends within 1e-3 of its
target, measured from the tip here, and the mean iterations.
]], vm, WINDOW, WINDOW, short[2][1], short[2][2], two_inner, two_inner, two_reach, short[1][1]))
print(string.format("%-20s %9s %7s %8s %6s %9s %7s %8s %6s %12s", "workload", "module ns", "spread",
  "reached", "its", "plain ns", "spread", "reached", "its", "plain/module"))
local short_rows = {
  {"c", "64 x 10 bones", function()
    return track_pair(batch_module_tracker(), batch_plain_tracker(), WINDOW * BATCH)
  end},
  {"d", "3 bones", function()
    local ls = short[3]
    return track_pair(module_tracker(ls, ls.x, ls.y), plain_tracker(ls, ls.x, ls.y, plain_fabrik_of(ls)))
  end},
  {"e", "1 bone", function()
    local ls = short[1]
    return track_pair(module_tracker(ls, ls.x, ls.y), plain_tracker(ls, ls.x, ls.y, plain_fabrik_of(ls)))
  end},
  {"f", "2 bones, two_bone", function()
    local ls = short[2]
    return track_pair(module_tracker(ls, ls.x, ls.y, nil, true),
      plain_tracker(ls, ls.x, ls.y, plain_fabrik_of(ls)))
  end},
}
for _, row in ipairs(short_rows) do
  local r = row[3]()
  print(string.format("%-20s %9.0f %6.1f%% %7.1f%% %6.2f %9.0f %6.1f%% %7.1f%% %6.2f %12.2f", row[2],
    r.m, 100 * r.ms, r.mcheck, r.mcheck_its, r.p, 100 * r.ps, r.pcheck, r.pcheck_its, r.p / r.m))
  goal_rows[row[1]] = r
end

-- ---- rigs ----

-- bench/rigs.lua's humanoid and spider, as bench/bench.c's rig table times them through the C
-- API, with the same numbers drawn in the same order: the reached and iterations columns
-- agree with its. The unit of work is a window: RIG_WINDOW frames of the animation from its
-- first pose (tracking), or RIG_TRIALS goal sets each from the straight pose (straight);
-- every run does whole windows. The set-up (the goals set with set_target; for straight,
-- every chain straightened with one set_angles / set_rotations; for tracking, the first pose
-- at each window's start) is timed alone and taken off.
local rigs = require("rigs")
-- IK_RIG_WINDOW=n: windows of n frames (250: bench/bench.c's; 1000: a whole period).
local RIG_PERIOD, RIG_TRIALS, RIG_STRAIGHT_ITERATIONS = 1000, 50, 100
local RIG_WINDOW = math.floor(tonumber(os.getenv("IK_RIG_WINDOW")) or 250)

local function rig_runner(chains, rig, dim, anim, sets, straight, solve)
  local solves, iterations, reached = 0, 0, 0
  local function reset() solves, iterations, reached = 0, 0, 0 end
  local function run(count)
    for _ = 1, count do
      if not straight then rigs.animate(chains, dim, anim, 0) end
      for k = 1, #sets do
        if straight then rigs.straighten(chains, dim) end
        rigs.set_goals(chains, dim, sets[k])
        if solve then
          local ok, _, its = rig:solve()
          iterations = iterations + its
          if ok then reached = reached + 1 end
        end
      end
    end
    solves = solves + count * #sets
  end
  return run, reset, function() return 100 * reached / solves, iterations / solves end
end

print(string.format([[

== %s: rigs ==
rig:solve() on the humanoid (6 chains, 13 bones: a 3-bone spine, two 2-bone arms and a
2-bone neck on its top, two 2-bone legs on its base; about 10 units tall) and the spider (9
chains, 26 bones: a 2-bone body, eight 3-bone legs on its two joints): bench/rigs.lua, the
rigs of spec/rigs_spec.lua. tracking: every bone swings smoothly (%d frames a period), the
limbs' tips are the goals, each frame from the last frame's pose, %d frames from the first
pose, the rig's defaults (tolerance 1e-3, at most 64 iterations). straight: goals from %d
random poses of the whole tree, each solved from the straight pose, at most %d iterations.
ns/solve: per frame or trial, without the set-up (the goals set; for straight every chain
straightened), which is timed alone and taken off: set-up ns. reached: solves with every
goal met; iterations: the mean. The same solves as the C bench's rig table.
]], vm, RIG_PERIOD, RIG_WINDOW, RIG_TRIALS, RIG_STRAIGHT_ITERATIONS))
print(string.format("%-9s %-4s %-7s %-9s %10s %7s %9s %8s %10s", "rig", "dim", "solver", "start",
  "ns/solve", "spread", "set-up ns", "reached", "iterations"))
for _, shape in ipairs({{"humanoid", rigs.humanoid}, {"spider", rigs.spider}}) do
  for _, dim in ipairs({2, 3}) do
    local chains = shape[2](dim)
    local rig = ik.rig(chains)
    seed = 12345
    local anim = rigs.animation(uniform, chains, dim)
    local goal_sets = {{}, {}}
    for f = 1, RIG_WINDOW do
      rigs.animate(chains, dim, anim, (f - 1) / RIG_PERIOD)
      goal_sets[1][f] = rigs.goals(chains, dim)
    end
    seed = 12345
    for k = 1, RIG_TRIALS do
      rigs.random_pose(uniform, chains, dim)
      goal_sets[2][k] = rigs.goals(chains, dim)
    end
    for start = 1, 2 do
      local straight = start == 2
      local sets = goal_sets[start]
      local setup_run, setup_reset = rig_runner(chains, rig, dim, anim, sets, straight, false)
      local setup = measure(setup_run, setup_reset)
      for _, solver in ipairs({"fabrik", "relax"}) do
        rig:configure({solver = solver, iterations = straight and RIG_STRAIGHT_ITERATIONS or 64})
        local run, reset, stats = rig_runner(chains, rig, dim, anim, sets, straight, true)
        local ns, spread = measure(run, reset)
        local reached, its = stats()
        print(string.format("%-9s %-4s %-7s %-9s %10.0f %6.1f%% %9.0f %7.1f%% %10.2f", shape[1],
          dim .. "D", solver, straight and "straight" or "tracking", (ns - setup) / #sets,
          100 * spread, setup / #sets, reached, its))
      end
    end
  end
end

-- ---- the binding's share ----

-- The C bench (--binding) times the same calls: the equal-work FABRIK solve (its own
-- targets, drawn the same way), and a solve with nothing to do (the defaults, the target
-- on the tip: zero iterations), where the binding's cost stands out. C and Lua take turns,
-- C four times and Lua three; the medians.
local c_bench = os.getenv("IK_BENCH_C") or "build/bench/bench"
local function c_figures()
  local pipe = io.popen(c_bench .. " --binding 2>/dev/null")
  if not pipe then return nil end
  local out = pipe:read("*a")
  pipe:close()
  local solve, _, call = out:match("^%s*(%S+)%s+(%S+)%s+(%S+)")
  return tonumber(solve), tonumber(call)
end
local function median(v)
  table.sort(v)
  return v[math.floor((#v + 1) / 2)]
end

local function lua_figures()
  local chain = ik.chain2d(lengths):configure(EQUAL)
  local run, reset = module_runner(chain)
  local solve = measure(run, reset, 64)
  local idle = ik.chain2d(lengths)
  set_pose(idle, start)
  local x, y = idle:effector()
  local call = measure(function(count)
    for _ = 1, count do idle:solve(x, y) end
  end, function() end, 64)
  return solve, call
end

if not pure then
print(string.format("\n== %s: the binding's share ==", vm))
local c_solve, c_call, l_solve, l_call = {}, {}, {}, {}
for turn = 1, 4 do
  c_solve[turn], c_call[turn] = c_figures()
  if not c_solve[turn] then break end
  if turn < 4 then l_solve[turn], l_call[turn] = lua_figures() end
end
if #c_solve == 4 then
  local cs, cc, ls, lc = median(c_solve), median(c_call), median(l_solve), median(l_call)
  print(string.format("%-46s %10s %10s %10s %9s", "per call", "from C", "from Lua", "Lua - C",
    "share"))
  print(string.format("%-46s %10.0f %10.0f %10.0f %8.1f%%",
    string.format("FABRIK 2D, 10 bones, %d iterations, tol. 0", ITERATIONS), cs, ls, ls - cs,
    100 * (ls - cs) / ls))
  print(string.format("%-46s %10.0f %10.0f %10.0f %8.1f%%", "a solve with nothing to do (0 iterations)",
    cc, lc, lc - cc, 100 * (lc - cc) / lc))
  print(string.format("share: (Lua - C) / Lua. The second row's difference is the binding's cost\n" ..
    "per call (%.0f ns): %.1f%% of the 10-iteration solve from Lua.", lc - cc, 100 * (lc - cc) / ls))
else
  print(string.format("(no C figures: make build/bench/bench, or set IK_BENCH_C)"))
end
end

-- ---- memory ----

local function bytes_per_chain(dim, n, count)
  local ls = {}
  for i = 1, n do ls[i] = 1 end
  local keep = {}
  for i = 1, count do keep[i] = false end
  collectgarbage("collect")
  collectgarbage("collect")
  local before = collectgarbage("count")
  for i = 1, count do keep[i] = dim == 2 and ik.chain2d(ls) or ik.chain3d(ls) end
  collectgarbage("collect")
  collectgarbage("collect")
  local after = collectgarbage("count")
  keep = nil
  return (after - before) * 1024 / count
end
print(string.format([[

== %s: memory ==
Lua memory per chain (collectgarbage("count") growth over 1000 chains kept alive; the C
block, ik_chain2d_size/ik_chain3d_size, is in the C bench's table):]], vm))
print(string.format("%-6s %10s %10s", "bones", "2D", "3D"))
for _, n in ipairs({10, 100}) do
  print(string.format("%-6d %10.0f %10.0f", n, bytes_per_chain(2, n, 1000), bytes_per_chain(3, n, 1000)))
end

-- Garbage: collectgarbage("count") across COUNT calls with the collector stopped, after a
-- warm-up (so LuaJIT has compiled its traces). Must be 0 for every hot-path call.
local COUNT = 100000
local function garbage(fn)
  fn(COUNT / 10)
  collectgarbage("collect")
  collectgarbage("stop")
  local before = collectgarbage("count")
  fn(COUNT)
  local after = collectgarbage("count")
  collectgarbage("restart")
  return (after - before) * 1024 / COUNT
end

local function solver_calls(dim, solver)
  local n = solver == "two_bone" and 2 or BONES
  local ls = {}
  for i = 1, n do ls[i] = lengths[i] end
  local chain = dim == 2 and ik.chain2d(ls) or ik.chain3d(ls)
  chain:configure({solver = solver, iterations = 2, tolerance = 0})
  return function(count)
    for i = 1, count do
      local k = i % #tx + 1
      if dim == 2 then chain:solve(tx[k] * n / BONES, ty[k] * n / BONES)
      else chain:solve(tx[k] * n / BONES, ty[k] * n / BONES, 0.5) end
    end
  end
end

local out = {}
local reads = ik.chain2d(lengths)
local garbage_rows = {
  {"2D fabrik chain:solve", solver_calls(2, "fabrik")},
  {"2D ccd chain:solve", solver_calls(2, "ccd")},
  {"2D relax chain:solve", solver_calls(2, "relax")},
  {"2D two_bone chain:solve", solver_calls(2, "two_bone")},
  {"3D fabrik chain:solve", solver_calls(3, "fabrik")},
  {"3D ccd chain:solve", solver_calls(3, "ccd")},
  {"3D relax chain:solve", solver_calls(3, "relax")},
  {"ik.solve_many, per chain", function(count)
    for _ = 1, math.ceil(count / BATCH) do ik.solve_many(batch_chains, batch_targets[1]) end
  end},
  {"rig:solve (humanoid 2D, a goal moved)", ik.rig and (function()
    local chains = rigs.humanoid(2)
    local rig = ik.rig(chains):configure({iterations = 2, tolerance = 0})
    for k = 2, #chains do chains[k]:set_target(chains[k]:effector()) end
    return function(count)
      for i = 1, count do
        chains[2]:set_target(-1 - 0.5 * (i % 2), 3)
        rig:solve()
      end
    end
  end)()},
  {"joint, effector, angle, positions(t)", function(count)
    for i = 1, count do
      reads:joint(i % BONES + 1); reads:effector(); reads:angle(i % BONES + 1); reads:positions(out)
    end
  end},
}
print(string.format([[

== %s: garbage ==
Bytes of Lua garbage per call: collectgarbage("count") across %d calls with the collector
stopped (2 iterations a solve, tolerance 0). Must be 0.]], vm, COUNT))
print(string.format("%-38s %14s", "call", "bytes/call"))
for _, row in ipairs(garbage_rows) do
  if row[2] then print(string.format("%-38s %14.3f", row[1], garbage(row[2]))) end
end

-- ---- against the goals ----

-- The speed goals: the least plain/module wanted, per VM; (e) and (f)
-- are held against Spine's Lua IK by make bench-spine.
local GOALS = {
  ["LuaJIT"] = {a = 1.0, b = 1.2, c = 3, d = 1.2},
  ["Lua 5.4"] = {a = 4, b = 4, c = 8, d = 4},
}
-- ik.pure's (issue 20): near plain Lua, though it does more (limits, settings, checks), in
-- FABRIK and CCD alike.
local PURE_GOALS = {
  ["LuaJIT"] = {a = 0.9, a_ccd = 0.9, b = 0.9, b_ccd = 0.9},
  ["Lua 5.4"] = {a = 0.8, a_ccd = 0.8, b = 0.8, b_ccd = 0.8},
}
local goals = (pure and PURE_GOALS or GOALS)[jit and "LuaJIT" or _VERSION] or {}
local labels = {
  a = "(a) equal work: one 10-bone 2D chain, FABRIK, 10 iterations, tolerance 0, escape off",
  a_ccd = "(a) the same, CCD (plain: bench/plain.lua's CCD)",
  b = "(b) tracking, 10 bones: one 2D chain, Lissajous target, tolerance 1e-3, FABRIK defaults",
  b_ccd = "(b) the same, CCD greed 1 without ramp (plain: bench/plain.lua's CCD)",
  c = "(c) tracking, 64 chains of 10 bones: one ik.solve_many a frame (ns per chain)",
  d = "(d) tracking, 3 bones: one chain, FABRIK defaults",
  e = "(e) tracking, 1 bone: one chain, FABRIK defaults",
  f = "(f) tracking, 2 bones: chain:solve_two_bone (plain: FABRIK)",
}
print(string.format([[

== %s: against the speed goals ==
Figures from the tables above (module and plain taking turns, the same targets); plain:
bench/plain.lua's FABRIK unless the row says otherwise. plain/module > 1: the module is
faster. Goal: the least plain/module wanted under this VM%s.
]], vm, pure and " for ik.pure" or ""))
print("| workload | module ns | plain ns | plain/module | goal |")
print("|---|---|---|---|---|")
local met, set = 0, 0
local goal_keys = pure and {"a", "a_ccd", "b", "b_ccd", "c", "d", "e", "f"}
  or {"a", "b", "c", "d", "e", "f"}
for _, k in ipairs(goal_keys) do
  local r = goal_rows[k]
  local ratio = r.p / r.m
  local goal
  if goals[k] then
    set = set + 1
    if ratio >= goals[k] then met = met + 1 end
    goal = string.format(">= %.1fx: %s", goals[k], ratio >= goals[k] and "met" or "not met")
  elseif (k == "e" or k == "f") and not pure then
    goal = "see make bench-spine"
  else
    goal = "-"
  end
  print(string.format("| %s | %.0f | %.0f | %.2f | %s |", labels[k], r.m, r.p, ratio, goal))
end
print(string.format("\n%s: %d of %d goals met.", vm, met, set))

-- Fair only if both sides do the same: (a) every solve runs all its iterations on both sides;
-- (b) to (f) both reach the same share of frames (checked from the tips themselves).
print(string.format([[

Is the comparison fair? (a): mean iterations per solve in the timed runs, all %d on both
sides. (b)-(f): the share of chain solves whose tip ends within 1e-3 of its target (measured
from the tips, not taken from the solvers) and the mean iterations, over the work timed (a
period of the curve; (c): a window).
]], ITERATIONS))
print("| workload | module reached | plain reached | module its | plain its | fair |")
print("|---|---|---|---|---|---|")
do
  local a = goal_rows.a
  local same = a.mits == ITERATIONS and a.pits == ITERATIONS
  print(string.format("| (a) | - | - | %.2f | %.2f | %s |", a.mits, a.pits,
    same and "yes: the same work" or "NO: not the same iterations"))
end
local unfair = false
for _, k in ipairs({"b", "c", "d", "e", "f"}) do
  local r = goal_rows[k]
  local apart = math.abs(r.mcheck - r.pcheck)
  print(string.format("| (%s) | %.1f%% | %.1f%% | %.2f | %.2f | %s |", k, r.mcheck, r.pcheck,
    r.mcheck_its, r.pcheck_its, apart < 0.05 and "yes: the same share"
      or string.format("NO: %.1f points apart", apart)))
  unfair = unfair or apart >= 0.05
end
if unfair then
  print("Where the shares differ, the side that misses frames runs all 64 iterations on them\n" ..
    "(plain FABRIK has no stall stop) and its time includes that work.")
end
print_load()
