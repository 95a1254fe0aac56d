-- A randomized test of the whole Lua API: random sequences of every public function and
-- method (module functions, chain methods, rig methods), with arguments drawn from valid
-- values, edge values (0, -0, 1e-300, 5e-324, 1e-160, 1e300, DBL_MAX, a target exactly on a
-- joint or a bone's line; two-bone lengths nearly equal with targets on the edges of the
-- reachable ring) and invalid ones (NaN, infinities, wrong types, numeric strings, missing
-- and extra arguments, a third coordinate for a 2D chain, non-integer and out-of-range
-- indices, tables with an __index metamethod, a table, nil, io.stdout, a rig or a chain of
-- the other dimension as self).
--
-- The run keeps a pool of chains and of rigs, and a model of what the API promises about
-- them: each chain's lengths, goals (position and orientation), joint limits and parent
-- (attach/detach build random trees, cycles are attempted), each rig's chains and the tree
-- they formed when it was made. Every call is judged by an oracle that knows the API's rules
-- (API.md, the header of src/ik_lua.c, the range of src/ik.h): from the actual arguments
-- and the model it works out which argument the binding must reject, the first bad one in
-- the order the binding checks them. Then:
--   - no bad argument: the call must succeed;
--   - a bad argument: the call must fail with a Lua error string in the luaL_argerror
--     form ("bad argument #k to 'name' (...)" or "calling 'name' on bad self (...)"),
--     naming that argument and that function, and no chain changed (compared through
--     everything observable, -0 and +0 told apart);
--   - after a successful call, what the call must not touch is untouched (on the chains it
--     was given, the chains hanging below them, and the rest of the pool), every chain it
--     touched is sound (every position and rotation finite, bone lengths what was set
--     (exactly) and kept by the joints (1e-9 relative times the stretch factor, where the
--     length is not lost in the rounding of the coordinates), rotations unit (1e-9), angles
--     in [-pi, pi]) and agrees with the model (goals, limits, parent), and what it returned
--     is right: getters agree with each other; solves return a consistent reached/distance/
--     iterations, leave every bone within its limits and within max_turn of where it was,
--     and where nothing holds them meet an orientation goal, reach a stretch's target or a
--     two-bone target within the ring, and keep the pose with mix 0; round trips (angles,
--     rotations, positions through set_points) give back what they read; solve_many gives,
--     bit for bit, what each chain's own solve gives; a rig solve leaves every chain of the
--     rig sound, its root's base where it was and every chain without a goal below it in
--     its pose, and its result is what its chains show;
--   - after any call, every attached chain of the pool shows its place on its parent as the
--     parent is now ("never stale"): its joint 1 is its parent's joint j, to the bit, and
--     its base frame is the parent's frame there turned by the offset it was attached with.
--
-- Every M.GC_EVERY calls, a round of detach, collect, re-attach outside the pool (see
-- M.gc_round): after each full collection exactly what the chains and rigs still held need
-- is alive, and every attached chain is on its parent. tools/random_calls.lua can run it all
-- with LuaJIT's compiler off (JIT=off), so the FFI fast paths run interpreted.
--
-- Some calls are "blind" (nothing read before them, nor after them below the chains they
-- are given), sometimes in streaks, so calls meet chains whose caches a parent's change left
-- stale, as a program's calls do.
--
-- Bugs of src/ the run has found are listed in M.KNOWN_BUGS, each with a reproduction and a
-- probe: while a probe finds its bug still there, the run steers clear of the calls that
-- would run into it (or, where a call is still worth making, of the one check it would
-- fail), so one bug does not stop the run from testing the rest; the spec has a test of its
-- own that fails while any of them is there. A fixed bug is found fixed by its probe, and
-- the run then makes those calls and checks them like any other.
--
-- The random numbers come from spec/helpers.lua's Park-Miller generator (exact in doubles),
-- and no decision depends on the order of pairs() or on the garbage collector, so a seed
-- gives the same sequence of calls in Lua 5.4 and in LuaJIT. A failure names the seed and
-- the call number; the same seed replays it.
--
-- Adding a function or method is one entry in OPS below, plus a kind in KINDS if its
-- arguments follow a rule no kind has yet (or a special of its own in run()). M.uncovered()
-- lists the functions of the module, the methods and metamethods of chains and of rigs that
-- no entry covers.
--
--   local fuzz = require("spec.random_calls")
--   local stats = fuzz.run({ ik = require("ik"), seed = 1, calls = 10000 })
--   -- stats.failures == 0, stats.first: the first failure's report

local M = {}

local floor, abs, sqrt, max, min, huge, pi = math.floor, math.abs, math.sqrt, math.max, math.min, math.huge, math.pi
local cos, sin, fmod = math.cos, math.sin, math.fmod
local atan2 = math.atan2 or math.atan -- Lua 5.4: math.atan(y, x)
local fmt, select, rawtype, tostring, pcall, rawequal, rawget = string.format, select, type, tostring, pcall,
    rawequal, rawget
local getmt = debug.getmetatable

-- The metatables of the backend's objects (chains, rigs, gaits), filled by M.run. The C
-- module's objects are userdata; ik.pure's are tables whose metatable is private. The
-- fuzzer takes both as opaque objects, "userdata" (as the binding's messages name them):
-- their fields are the backend's, not the API's (and a pure chain's hold cycles).
local handle_mts = {}
local function type(v)
    local t = rawtype(v)
    if t == "table" and handle_mts[getmt(v)] then return "userdata" end
    return t
end
local unpack = table.unpack or unpack
-- The binding reads lengths raw; LuaJIT's # on a table is raw already (5.1 has no rawlen).
local rawlen = rawlen or function(t) return #t end

local NAN = 0.0 / 0.0
local NEG_ZERO = 0.0 * -1.0 -- a literal -0.0 may be folded to +0 by a compiler
local DBL_MAX = 1.7976931348623157e308
local TWO_PI = 6.28318530717958647692

-- The largest magnitude the core accepts for a base or target coordinate and for a bone
-- length: IK_MAX_COORD in src/ik.h.
M.COORD_MAX = 1e300
local INT_MAX = 2147483647

-- ---------------------------------------------------------------------------------------
-- Random numbers: spec/helpers.lua's Park-Miller generator (exact in doubles: both VMs give
-- the same sequence), with the few draws the fuzzer needs.

local helpers = require("spec.helpers")

function M.rng(seed)
    local r = helpers.rng(seed)
    r.unit = r.next -- (0, 1)
    function r.pick(t)
        return t[r.int(1, #t)]
    end
    function r.chance(p)
        return r.next() < p
    end
    function r.shuffle(t)
        for i = #t, 2, -1 do
            local j = r.int(1, i)
            t[i], t[j] = t[j], t[i]
        end
        return t
    end
    return r
end

-- ---------------------------------------------------------------------------------------
-- Values.

local function is_finite(v)
    return type(v) == "number" and v == v and v > -huge and v < huge
end

-- Numbers are numbers: the binding refuses strings that look like one.
local function finite_number(v)
    return type(v) == "number" and is_finite(v), v
end

local function is_whole(x)
    return type(x) == "number" and is_finite(x) and x == floor(x)
end

local function within_range(x)
    return abs(x) <= M.COORD_MAX
end

-- An input table the binding reads: a table without an __index metamethod.
local function has_index(t)
    local mt = getmt(t)
    return mt ~= nil and rawget(mt, "__index") ~= nil
end
local function plain_table(v)
    return type(v) == "table" and not has_index(v)
end

-- ik_wrap_angle: [-pi, pi] (remainder by 2 pi, exact: fmod is, and so is the step after).
local function wrap(a)
    if a >= -pi and a <= pi then return a end
    if a > pi and a < 3 * pi then return a - TWO_PI end
    if a < -pi and a > -3 * pi then return a + TWO_PI end
    local m = fmod(a, TWO_PI)
    if m > pi then m = m - TWO_PI elseif m < -pi then m = m + TWO_PI end
    return m
end

-- The distance between two angles around the circle.
local function adist(a, b)
    return abs(wrap(a - b))
end

local function show(v)
    if type(v) == "number" then
        if v ~= v then return "nan" end
        if v == huge then return "inf" end
        if v == -huge then return "-inf" end
        if v == 0 and 1 / v < 0 then return "-0" end
        return fmt("%.17g", v)
    elseif type(v) == "string" then
        return fmt("%q", v)
    elseif type(v) == "userdata" and M.describe_value then
        return M.describe_value(v)
    elseif type(v) == "table" then
        if M.fake_self and rawequal(v, M.fake_self) then return "<fake chain>" end
        local parts = {}
        local n = rawlen(v)
        for i = 1, n do parts[#parts + 1] = show(rawget(v, i)) end
        local keys = {}
        for k in next, v do
            if type(k) ~= "number" or k < 1 or k > n or k ~= floor(k) then keys[#keys + 1] = k end
        end
        -- sorted by their text, so a failure reads the same in both VMs
        local shown = {}
        for _, k in ipairs(keys) do shown[#shown + 1] = tostring(k) .. " = " .. show(rawget(v, k)) end
        table.sort(shown)
        for _, s in ipairs(shown) do parts[#parts + 1] = s end
        local mt = getmt(v)
        local tail = mt and (rawget(mt, "__index") ~= nil and " (with __index)" or " (with a metatable)") or ""
        return "{" .. table.concat(parts, ", ") .. "}" .. tail
    end
    return tostring(v)
end
M.show = show

-- Edge values every number slot draws from.
local EDGES = { 0.0, NEG_ZERO, 1e-300, -1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, 1e300, -1e300,
    DBL_MAX, -DBL_MAX, 1.0, -1.0, 0.5, pi, -pi, 2 * pi, 1e-9, 1e9, 2 ^ 53, 1e150, 1e-150, 1e160, -1e-160 }
local NOT_FINITE = { NAN, huge, -huge }
-- Filled in run(): io.stdout (a userdata that is not a chain) and a function.
local WRONG_TYPES = { "x", "", true, false, {} }
-- Numbers in strings: refused everywhere, in either VM.
local NUMERIC_STRINGS = { "1", "2", "-0.5", "1e300", " 3 ", "0" }
local SCALES = { 1.0, 1.0, 10.0, 0.01, 1000.0 }
-- What an extra argument is (nil too: a hole before a value that is not nil).
local EXTRAS = { 1, NAN, "x", {}, true, 0, false }

local function random_real(r)
    return (2.0 * r.unit() - 1.0) * r.pick(SCALES)
end

-- A value for a number slot: usually a plain number, sometimes an edge; when bad, an
-- invalid one (not finite, a wrong type, a numeric string).
local function number_value(r, bad, typical)
    if bad then
        local k = r.int(1, 10)
        if k <= 4 then return r.pick(NOT_FINITE) end
        if k <= 7 then return r.pick(WRONG_TYPES) end
        return r.pick(NUMERIC_STRINGS)
    end
    if r.chance(0.7) then return typical() end
    return r.pick(EDGES)
end

-- A table with an __index metamethod (refused as input), or with a harmless metatable
-- (__len, __newindex: the binding reads raw, so it is taken as it is).
local function proxy(t)
    return setmetatable(t, { __index = function() return 1 end })
end
local function harmless(t)
    return setmetatable(t, { __len = function() return 1 end, __newindex = rawset })
end
-- Dresses an input table: bad: sometimes a proxy (the caller's t is the alternative).
local function dress(r, t, bad)
    if bad and r.chance(0.25) then return proxy(t), true end
    if r.chance(0.05) then return harmless(t), false end
    return t, false
end

local function pack(...)
    return { n = select("#", ...), ... }
end

-- ---------------------------------------------------------------------------------------
-- Small 3D and quaternion helpers (w, x, y, z; a * b rotates by b, then by a).

-- |(dx, dy, dz)| without overflow or underflow (a length just above DBL_MAX is inf).
local function norm(dx, dy, dz)
    local m = max(abs(dx), abs(dy), abs(dz or 0))
    if m == 0 or m ~= m or m == huge then return m end
    dx, dy, dz = dx / m, dy / m, (dz or 0) / m
    return m * sqrt(dx * dx + dy * dy + dz * dz)
end

-- A unit vector along (x, y, z), scaled first; nil for zero.
local function unit3(x, y, z)
    local m = max(abs(x), abs(y), abs(z))
    if m == 0 then return nil end
    x, y, z = x / m, y / m, z / m
    local l = sqrt(x * x + y * y + z * z)
    return x / l, y / l, z / l
end

local function qmul(aw, ax, ay, az, bw, bx, by, bz)
    return aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw
end

-- A unit quaternion from four finite numbers (not all zero), scaled first.
local function qunit(w, x, y, z)
    local m = max(abs(w), abs(x), abs(y), abs(z))
    w, x, y, z = w / m, x / m, y / m, z / m
    local l = sqrt(w * w + x * x + y * y + z * z)
    return w / l, x / l, y / l, z / l
end

-- The x axis of unit q: where it turns +x.
local function qxaxis(w, x, y, z)
    return 1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)
end

-- The angle of the rotation between unit quaternions a and b (0..pi).
local function qangle(aw, ax, ay, az, bw, bx, by, bz)
    local w, x, y, z = qmul(aw, -ax, -ay, -az, bw, bx, by, bz)
    return 2 * atan2(sqrt(x * x + y * y + z * z), abs(w))
end

-- Whether a and b are the same unit quaternion to tol (q and -q are the same rotation).
local function qsame(a, b, tol)
    local plus, minus = 0, 0
    for k = 1, 4 do
        plus = max(plus, abs(a[k] - b[k]))
        minus = max(minus, abs(a[k] + b[k]))
    end
    return min(plus, minus) <= tol
end

-- ---------------------------------------------------------------------------------------
-- Kinds of argument. gen(r, ctx, bad) returns the values of one slot (a quaternion or a
-- target is several); check(values, ctx) returns nil when they are valid, else the offset
-- (1-based, within the slot) of the value the binding reports: the first bad one, as it
-- checks in order. ctx: { entry = the pool entry of self (or nil), n, dim }.

local KINDS = {}

-- Any finite number (angles; coordinates of the stateless solves, which rescale).
KINDS.real = {
    gen = function(r, ctx, bad)
        return number_value(r, bad, function() return random_real(r) end)
    end,
    check = function(v)
        if not finite_number(v[1]) then return 1 end
    end,
}
KINDS.angle = KINDS.real

-- A world coordinate of a chain: finite and within COORD_MAX.
KINDS.coord = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.03) then
            return r.pick({ 1e301, -DBL_MAX, 1.0000000000000001e300 * 1.0000001 })
        end
        return number_value(r, bad, function() return random_real(r) end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or not within_range(x) then return 1 end
    end,
}

-- A length or weight: finite and >= 0 (-0 counts as 0).
KINDS.nonneg = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.1) then return -r.unit() end -- negative: bad
        if not bad and r.chance(0.1) then return 0 end -- a weight that keeps a joint still
        return number_value(r, bad, function() return r.unit() * r.pick(SCALES) * 2 end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or x < 0 then return 1 end
    end,
}
KINDS.weight = KINDS.nonneg

-- simulate's time step: finite and > 0 (a long one is taken as 1 s).
KINDS.dt = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.1) then return r.pick({ 0, NEG_ZERO, -1 / 60 }) end -- not > 0: bad
        return number_value(r, bad, function() return r.pick({ 1 / 60, 1 / 30, 1 / 144, 0.2, 1e-9, 5, 1e300 }) end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or not (x > 0) then return 1 end
    end,
}

-- A bound of a joint limit's range: finite and within [-pi, pi].
KINDS.limit_angle = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.1) then return r.pick({ 4, -4, pi * (1 + 1e-15) }) end -- bad
        return number_value(r, bad, function() return (2 * r.unit() - 1) * pi end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or x < -pi or x > pi then return 1 end
    end,
}

-- A cone's half angle: finite and within [0, pi].
KINDS.cone = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.1) then return r.pick({ -0.1, 4, NEG_ZERO - 1e-300 }) end
        return number_value(r, bad, function() return r.unit() * pi end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or x < 0 or x > pi then return 1 end
    end,
}

-- A bone length of a chain: also within COORD_MAX.
KINDS.length = {
    gen = KINDS.nonneg.gen,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or x < 0 or not within_range(x) then return 1 end
    end,
}

KINDS.bend = {
    gen = function(r, ctx, bad)
        if bad or r.chance(0.15) then
            return r.pick({ 0, 2, -2, 0.5, -1.5, NAN, huge, "x", true, {}, "1", "-1" })
        end
        return r.pick({ 1, -1, 1.0, -1.0 })
    end,
    check = function(v)
        local x = v[1]
        if not (is_whole(x) and (x == 1 or x == -1)) then return 1 end
    end,
}

-- An index in 1..count, count = ctx.n (bones) or ctx.n + 1 (joints).
local function index_kind(extra)
    return {
        gen = function(r, ctx, bad)
            local count = (ctx.n or 3) + extra
            if bad or r.chance(0.08) then
                return r.pick({ 0, -1, count + 1, count + 100, 1.5, count - 0.5, 2 ^ 31, -2 ^ 31,
                    2 ^ 53, NAN, huge, -huge, NEG_ZERO, 1e-300, "x", true, {}, tostring(count), "1" })
            end
            return r.int(1, count)
        end,
        check = function(v, ctx)
            local x = v[1]
            if not (is_whole(x) and x >= 1 and x <= ctx.n + extra) then return 1 end
        end,
    }
end
KINDS.bone = index_kind(0)
KINDS.joint = index_kind(1)

-- An optional output table: nil (absent) or a table; the table may be longer than needed
-- (or have a metatable: an output is written raw).
KINDS.out = {
    gen = function(r, ctx, bad)
        if bad then return r.pick({ 5, "x", true }) end
        if r.chance(0.3) then return nil end
        local t = {}
        for i = 1, r.int(0, 40) do t[i] = i end
        if r.chance(0.05) then proxy(t) end
        return t
    end,
    check = function(v)
        if v[1] ~= nil and type(v[1]) ~= "table" then return 1 end
    end,
}

-- A quaternion w, x, y, z: four finite numbers, not all zero (the core normalises).
local function quat_gen(r, ctx, bad)
    local q = {}
    local mode = r.int(1, 10)
    for k = 1, 4 do
        if mode == 1 then
            q[k] = r.pick({ 0.0, NEG_ZERO })     -- the zero quaternion: bad
        elseif mode == 2 then
            q[k] = r.pick({ 0.0, 1e-300, -1e-300, 1e300, -1e300, 5e-324, DBL_MAX })
        else
            q[k] = random_real(r)
        end
    end
    if bad then q[r.int(1, 4)] = number_value(r, true) end
    return q[1], q[2], q[3], q[4]
end
local function quat_finite(v)
    for k = 1, 4 do
        if not finite_number(v[k]) then return k end
    end
end
local function quat_zero(v)
    return v[1] == 0 and v[2] == 0 and v[3] == 0 and v[4] == 0
end
KINDS.quat = {
    width = 4,
    gen = quat_gen,
    check = function(v)
        local k = quat_finite(v)
        if k then return k end
        if quat_zero(v) then return 1 end -- reported at w: the quaternion as a whole
    end,
}
-- The same, where the binding checks for a zero quaternion later (the op says when).
KINDS.quat_finite = { width = 4, gen = quat_gen, check = quat_finite }

-- A target of ctx.dim coordinates: random, on a joint, on the base, far, tiny, or edges.
local function gen_target(r, ctx, bad)
    local dim = ctx.dim
    local c = ctx.entry and ctx.entry.dim == dim and ctx.entry.c or nil
    local t = {}
    local mode = r.int(1, 10)
    if c and mode <= 2 then
        -- exactly on a joint (the base is joint 1, the tip joint n + 1)
        t[1], t[2], t[3] = c:joint(r.int(1, ctx.entry.n + 1))
    elseif c and mode == 3 then
        -- on the middle of a joint's bone or its mirror: collinear targets
        local i = r.int(1, ctx.entry.n)
        local ax, ay, az = c:joint(i)
        local bx, by, bz = c:joint(i + 1)
        local s = r.pick({ 0.5, -1.0, 2.0, 1e-9 })
        t[1], t[2] = ax + (bx - ax) * s, ay + (by - ay) * s
        if dim == 3 then t[3] = az + (bz - az) * s end
    else
        local reach = ctx.entry and ctx.entry.total or 3
        if not is_finite(reach) or reach == 0 then reach = 1 end
        local bx, by, bz = 0, 0, 0
        if c then bx, by, bz = c:joint(1) end
        local b = { bx, by, bz }
        for k = 1, dim do
            if r.chance(0.15) then
                t[k] = r.pick(EDGES)
            else
                t[k] = (2 * r.unit() - 1) * reach * 1.5 + b[k]
            end
        end
    end
    if bad then t[r.int(1, dim)] = number_value(r, true) end
    return t[1], t[2], t[3]
end
KINDS.target = {
    width = function(ctx) return ctx.dim end,
    gen = gen_target,
    check = function(v, ctx)
        for k = 1, ctx.dim do
            local ok, x = finite_number(v[k])
            if not ok or not within_range(x) then return k end
        end
    end,
}

-- The lengths table of a constructor: n >= 1 finite numbers >= 0 and <= COORD_MAX.
local function lengths_count(r)
    if r.chance(0.01) then return r.int(65, 70) end -- past the binding's stack buffer
    return r.pick({ 1, 2, 2, 2, 3, 3, 4, 5, 6, 8, 12 })
end
KINDS.lengths = {
    gen = function(r, ctx, bad)
        if bad and r.chance(0.2) then return r.pick({ 5, "x", true }) end
        local n = lengths_count(r)
        if bad and r.chance(0.2) then n = 0 end
        local t = {}
        for i = 1, n do
            if r.chance(0.85) then
                t[i] = 0.1 + r.unit() * 2
            else
                t[i] = r.pick({ 0.0, NEG_ZERO, 1e-300, 5e-324, 1e300, 1e150, 1e-9, 1e9 })
            end
        end
        if bad and n > 0 then
            t[r.int(1, n)] = r.pick({ -1, -1e-300, NAN, huge, -huge, 1e301, DBL_MAX, "x", "2", true, {} })
        end
        return (dress(r, t, bad))
    end,
    check = function(v)
        local t = v[1]
        if not plain_table(t) then return 1 end
        local n = rawlen(t)
        if n < 1 then return 1 end
        for i = 1, n do
            local ok, x = finite_number(rawget(t, i))
            if not ok or x < 0 or not within_range(x) then return 1 end
        end
    end,
}

local SOLVERS = { "fabrik", "ccd", "relax", "two_bone", "aim" }
local function known_solver(x)
    for _, s in ipairs(SOLVERS) do
        if x == s then return true end
    end
    return false
end

-- The keys of configure's table, in a fixed order (the table is read with lua_next: any
-- bad entry is argument 2 whatever the order).
local SETTING_KEYS = { "iterations", "tolerance", "angle_tolerance", "greed", "greed_ramp", "bend", "solver",
    "escape", "stretch", "mix", "softness", "max_turn", "effector_weight", "stiffness", "damping", "gravity", "pole" }

-- configure's table: a few keys, each valid or not; unknown keys are errors.
KINDS.settings = {
    gen = function(r, ctx, bad)
        if bad and r.chance(0.15) then return r.pick({ 5, "x", true }) end
        local t = {}
        local function any_bad()
            return bad and r.chance(0.5)
        end
        for _ = 1, r.int(0, 3) do
            local key = r.int(1, 18)
            if key == 1 then
                t.iterations = any_bad() and r.pick({ 0, -1, 1.5, NAN, huge, 2 ^ 31, 2 ^ 40, -2 ^ 40, "x", "5", true })
                    or r.pick({ 1, 2, 3, 8, 64, 100 })
            elseif key == 2 then
                t.tolerance = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", "0.01", {} })
                    or r.pick({ 0, NEG_ZERO, 1e-300, 1e-12, 1e-3, 0.1, 1e300 })
            elseif key == 3 then
                t.greed = any_bad() and r.pick({ 0, NEG_ZERO, -0.5, 1.5, NAN, huge, "x", "0.5" })
                    or r.pick({ 1, 0.5, 0.1, 1e-300, 0.999 })
            elseif key == 4 then
                t.greed_ramp = any_bad() and r.pick({ 1, "true", 0 }) or r.chance(0.5)
            elseif key == 5 then
                t.bend = any_bad() and r.pick({ 0, 2, 0.5, NAN, "x", "1", 2 ^ 40 }) or r.pick({ 1, -1 })
            elseif key == 6 then
                t.solver = any_bad() and r.pick({ "FABRIK", "nope", "", "ccd\0x", 1, true })
                    or r.pick(SOLVERS)
            elseif key == 7 then
                t.escape = any_bad() and r.pick({ 1, "yes", 0 }) or r.chance(0.5)
            elseif key == 8 then
                t.stretch = any_bad() and r.pick({ 1, "no" }) or r.chance(0.4)
            elseif key == 9 then
                t.mix = any_bad() and r.pick({ -0.1, 1.5, NAN, huge, "x", "1" })
                    or r.pick({ 0, 1, 0.5, 0.25, NEG_ZERO, 1e-300 })
            elseif key == 10 then
                t.softness = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", "0" })
                    or r.pick({ 0, 0.1, 1, 1e300, 1e-300 })
            elseif key == 11 then
                t.angle_tolerance = any_bad() and r.pick({ -1, -1e-300, NAN, huge, -huge, "x", "0.1", true })
                    or r.pick({ 0, NEG_ZERO, 1e-300, 1e-9, 1e-3, 0.1, 3.5, 1e300 })
            elseif key == 12 then
                t.max_turn = any_bad() and r.pick({ 0, NEG_ZERO, -1, -huge, NAN, "x", "0.1", false })
                    or r.pick({ huge, huge, 0.05, 0.3, 1, 4, 1e-300, 1e300, DBL_MAX })
            elseif key == 13 then
                t.effector_weight = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", "1", {} })
                    or r.pick({ 0, NEG_ZERO, 1, 2, 0.5, 1e-300, 1e300 })
            elseif key == 14 then
                t.stiffness = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", "1", {} })
                    or r.pick({ 0, NEG_ZERO, 1, 50, 1e4, 1e-300, 1e300 })
            elseif key == 15 then
                t.damping = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", "1", {} })
                    or r.pick({ 0, NEG_ZERO, 0.5, 3, 1e-300, 1e300 })
            elseif key == 16 then
                local dim = ctx.dim or 3
                if any_bad() then
                    t.gravity = r.pick({ 9.81, "x", {}, { 0 }, { 0, 0, 0, 0 }, { NAN, 0, 0 }, { 0, huge, 0 },
                        { 1e301, 0, 0 }, { "1", 0, 0 }, setmetatable({ 0, -1, 0 }, { __index = function() return 0 end }) })
                else
                    t.gravity = { r.pick({ 0, -9.81, 3, 1e300, -1e-300 }), r.pick({ -9.81, 0, 1e300 }), r.pick({ 0, 2, -1e300 }) }
                    if dim == 2 then t.gravity[3] = nil end
                end
            else
                local dim = ctx.dim or 3
                if any_bad() or dim == 2 and r.chance(0.1) then
                    t.pole = r.pick({ true, { 0, 0, 0 }, { NEG_ZERO, 0, 0 }, { 1, 2 }, { "1", 0, 0 },
                        { NAN, 0, 0 }, { 0, huge, 0 }, 5, false,
                        setmetatable({ 1, 0, 0 }, { __index = function() return 0 end }) })
                elseif dim == 3 then
                    t.pole = r.chance(0.3) and false
                        or { random_real(r), random_real(r), r.pick({ random_real(r), 1e300, 1e-300, 0 }) }
                    if t.pole and r.chance(0.1) then harmless(t.pole) end
                end
            end
        end
        if bad and r.chance(0.25) then
            if r.chance(0.5) then t.nope = 1 else t[1] = 1 end
        end
        return (dress(r, t, bad))
    end,
    check = function(v, ctx)
        local t = v[1]
        if not plain_table(t) then return 1 end
        for k, x in next, t do
            if type(k) ~= "string" then return 1 end
            if k == "iterations" then
                if not (is_whole(x) and x >= 1 and x <= INT_MAX) then return 1 end
            elseif k == "tolerance" or k == "angle_tolerance" or k == "softness" or k == "effector_weight"
                or k == "stiffness" or k == "damping" then
                local ok, n = finite_number(x)
                if not ok or n < 0 then return 1 end
            elseif k == "greed" then
                local ok, n = finite_number(x)
                if not ok or not (n > 0 and n <= 1) then return 1 end
            elseif k == "greed_ramp" or k == "escape" or k == "stretch" then
                if type(x) ~= "boolean" then return 1 end
            elseif k == "mix" then
                local ok, n = finite_number(x)
                if not ok or n < 0 or n > 1 then return 1 end
            elseif k == "max_turn" then
                if not (type(x) == "number" and x > 0) then return 1 end -- inf is "off"
            elseif k == "bend" then
                if not (is_whole(x) and (x == 1 or x == -1)) then return 1 end
            elseif k == "solver" then
                if type(x) ~= "string" or not known_solver(x) then return 1 end
                -- two_bone takes 2 bones, or 3 for an orientation goal (checked when solving)
                if x == "two_bone" and ctx.n ~= 2 and ctx.n ~= 3 then return 1 end
            elseif k == "gravity" then
                if not plain_table(x) or rawlen(x) ~= ctx.dim then return 1 end
                for i = 1, ctx.dim do
                    local ok, c = finite_number(rawget(x, i))
                    if not ok or not within_range(c) then return 1 end
                end
            elseif k == "pole" then
                if ctx.dim ~= 3 then return 1 end
                if x ~= false then
                    -- a pole table is read like any input table: an __index is refused
                    if not plain_table(x) then return 1 end
                    local zero = true
                    for i = 1, 3 do
                        local c = rawget(x, i)
                        if type(c) ~= "number" or not is_finite(c) then return 1 end
                        if c ~= 0 then zero = false end
                    end
                    if zero then return 1 end
                end
            else
                return 1
            end
        end
    end,
}

-- A rig's configure table: solver (fabrik or relax), iterations, tolerance, angle_tolerance.
local RIG_KEYS = { "solver", "iterations", "tolerance", "angle_tolerance" }
KINDS.rig_settings = {
    gen = function(r, ctx, bad)
        if bad and r.chance(0.15) then return r.pick({ 5, "x", true }) end
        local t = {}
        local function any_bad()
            return bad and r.chance(0.5)
        end
        for _ = 1, r.int(0, 3) do
            local key = r.int(1, 4)
            if key == 1 then
                t.solver = any_bad() and r.pick({ "ccd", "two_bone", "aim", "nope", "", "relax\0", 1, true })
                    or r.pick({ "fabrik", "relax" })
            elseif key == 2 then
                t.iterations = any_bad() and r.pick({ 0, -1, 1.5, NAN, 2 ^ 31, -2 ^ 40, "8", true })
                    or r.pick({ 1, 2, 8, 32, 64, 100 })
            elseif key == 3 then
                t.tolerance = any_bad() and r.pick({ -1, NAN, huge, "x", "0.01" })
                    or r.pick({ 0, NEG_ZERO, 1e-300, 1e-9, 1e-3, 0.1, 1e300 })
            else
                t.angle_tolerance = any_bad() and r.pick({ -1, NAN, -huge, "x", "0" })
                    or r.pick({ 0, NEG_ZERO, 1e-9, 1e-3, 0.5, 1e300 })
            end
        end
        if bad and r.chance(0.3) then
            -- a chain's setting is not a rig's
            local k = r.pick({ "greed", "nope", "max_turn", "pole", 1 })
            t[k] = 1
        end
        return (dress(r, t, bad))
    end,
    check = function(v)
        local t = v[1]
        if not plain_table(t) then return 1 end
        for k, x in next, t do
            if k == "iterations" then
                if not (is_whole(x) and x >= 1 and x <= INT_MAX) then return 1 end
            elseif k == "tolerance" or k == "angle_tolerance" then
                local ok, n = finite_number(x)
                if not ok or n < 0 then return 1 end
            elseif k == "solver" then
                if not (x == "fabrik" or x == "relax") then return 1 end
            else
                return 1 -- unknown keys (and keys that are not strings)
            end
        end
    end,
}

-- ---------------------------------------------------------------------------------------
-- Snapshots: everything observable about a chain, in parts. parent() is compared through
-- M.id_of (the pool's numbering; -1 for a chain the run does not know).

M.id_of = function() return -1 end

local function push_all(t, ...)
    for i = 1, select("#", ...) do t[#t + 1] = (select(i, ...)) end
end

local PARTS = { "pos", "base", "len", "w", "pose", "world", "settings", "goal", "limits", "parent", "stretch" }

local function snapshot(c)
    local n, dim = c:count(), c:dim()
    local s = { pos = c:positions({}), base = { c:base() }, len = {}, w = {}, pose = {}, world = {},
        settings = {}, goal = {}, limits = {}, limit_of = {}, parent = {}, stretch = { c:stretch_factor() }, n = n,
        dim = dim }
    for i = 1, n do
        s.len[i] = c:length(i)
        if dim == 2 then
            s.pose[i] = c:angle(i)
            s.world[i] = c:world_angle(i)
        else
            push_all(s.pose, c:rotation(i))
            push_all(s.world, c:world_rotation(i))
        end
        local v = pack(c:limit(i))
        s.limit_of[i] = v
        push_all(s.limits, "bone", v.n)
        for k = 1, v.n do s.limits[#s.limits + 1] = v[k] end
    end
    for i = 1, n + 1 do s.w[i] = c:weight(i) end
    local st = c:settings()
    s.settings = { st.solver, st.iterations, st.tolerance, st.angle_tolerance, st.greed, st.greed_ramp, st.bend,
        st.escape, st.mix, st.softness, st.stretch, st.max_turn, st.effector_weight, st.stiffness, st.damping }
    for d = 1, dim do push_all(s.settings, st.gravity[d]) end
    if dim == 3 then
        if st.pole then push_all(s.settings, st.pole[1], st.pole[2], st.pole[3]) else push_all(s.settings, false) end
    end
    s.st = st
    local held, hj = c:tip_parent()
    local t = { c:target() }
    if held then
        -- a held tip's goal is its hold (the point moves with the chain holding it)
        push_all(s.goal, true, "held", M.id_of(held), hj)
        s.held_at = t
    elseif t[1] == nil then
        push_all(s.goal, false, 0, 0, 0)
    else
        push_all(s.goal, true, t[1], t[2], t[3] or 0)
    end
    local o = dim == 2 and { c:target_angle() } or { c:target_rotation() }
    if o[1] == nil then
        push_all(s.goal, false, 0, 0, 0, 0)
    else
        push_all(s.goal, true, o[1], o[2] or 0, o[3] or 0, o[4] or 0)
    end
    local p, j = c:parent()
    s.parent = { p and M.id_of(p) or 0, j or 0 }
    s.parent_chain = p
    return s
end

-- The same value: == for everything, and the sign of a zero too.
local function same(a, b)
    if a ~= b then return a ~= a and b ~= b end
    if type(a) == "number" and a == 0 then return 1 / a == 1 / b end
    return true
end

-- nil when the parts are equal, else a description of the first difference.
local function diff(before, after, parts)
    if before.n ~= after.n or before.dim ~= after.dim then return "count or dim changed" end
    for _, part in ipairs(parts) do
        local a, b = before[part], after[part]
        if #a ~= #b then return fmt("%s: %d values, then %d", part, #a, #b) end
        for k = 1, #a do
            if not same(a[k], b[k]) then
                return fmt("%s[%d]: %s, then %s", part, k, show(a[k]), show(b[k]))
            end
        end
    end
    return nil
end

local function without(parts, ...)
    local drop, out = {}, {}
    for i = 1, select("#", ...) do drop[(select(i, ...))] = true end
    for _, p in ipairs(parts) do
        if not drop[p] then out[#out + 1] = p end
    end
    return out
end

local ALL = PARTS
-- What a chain below a changed chain keeps: everything but where it is.
local LOCAL = without(PARTS, "pos", "base", "world")

-- ---------------------------------------------------------------------------------------
-- Soundness of a chain and of results.

-- |a - b| <= tol * b + slack, with a and b halved first: a length near DBL_MAX compares
-- without overflowing (halving is exact above the subnormals, where slack covers it).
local function near_length(ax, ay, az, len, tol, slack)
    local d = norm(ax * 0.5, ay * 0.5, (az or 0) * 0.5)
    return abs(d - len * 0.5) <= tol * len * 0.5 + slack
end

-- nil when the chain (a pool entry, or { lengths = ... }) is sound, else what is wrong.
local function check_chain(e, s)
    local dim, n = s.dim, s.n
    local pos = s.pos
    if #pos ~= (n + 1) * dim then return fmt("positions has %d values for %d joints", #pos, n + 1) end
    for k = 1, #pos do
        if not is_finite(pos[k]) then return fmt("position value %d is %s", k, show(pos[k])) end
    end
    for k = 1, #s.base do
        if not is_finite(s.base[k]) then return fmt("base value %d is %s", k, show(s.base[k])) end
    end
    for k = 1, dim do
        if not same(s.base[k], pos[k]) then
            return fmt("base coordinate %d is %s, joint 1 is at %s", k, show(s.base[k]), show(pos[k]))
        end
    end
    if dim == 2 then
        if not (abs(s.base[3]) <= pi) then return "base angle is " .. show(s.base[3]) end
    else
        local w, x, y, z = s.base[4], s.base[5], s.base[6], s.base[7]
        if abs(w * w + x * x + y * y + z * z - 1) > 2e-9 then return "base rotation is not unit" end
    end
    local stretch = s.stretch[1]
    if not (is_finite(stretch) and stretch >= 1) then return "stretch_factor is " .. show(stretch) end
    for i = 1, n do
        if e.lengths and not same(s.len[i], e.lengths[i]) then
            return fmt("length(%d) is %s, was set to %s", i, show(s.len[i]), show(e.lengths[i]))
        end
        -- The joints show the length up to the rounding of their coordinates (1e-15 of the
        -- largest) and of subnormal products; beyond that, 1e-9 relative.
        local a, b = (i - 1) * dim, i * dim
        local scale = 0
        for k = 1, dim do scale = max(scale, abs(pos[a + k]), abs(pos[b + k])) end
        -- halved before subtracting: the difference of two finite coordinates may overflow
        local dx, dy = pos[b + 1] * 0.5 - pos[a + 1] * 0.5, pos[b + 2] * 0.5 - pos[a + 2] * 0.5
        local dz = dim == 3 and pos[b + 3] * 0.5 - pos[a + 3] * 0.5 or 0
        -- A stretched chain (configure{stretch = true}) scales every bone by one factor.
        local want = s.len[i] * stretch
        if not near_length(dx * 2, dy * 2, dz * 2, want, 1e-9, 1e-15 * scale + 1e-320) then
            return fmt("bone %d: its joints are %s apart, its length is %s (stretched: %s)", i,
                show(norm(dx, dy, dz) * 2), show(s.len[i]), show(want))
        end
    end
    if dim == 2 then
        for i = 1, n do
            if not (is_finite(s.pose[i]) and abs(s.pose[i]) <= pi) then
                return fmt("angle(%d) is %s", i, show(s.pose[i]))
            end
            if not (is_finite(s.world[i]) and abs(s.world[i]) <= pi) then
                return fmt("world_angle(%d) is %s", i, show(s.world[i]))
            end
            -- the local angles compose to the world ones
            local parent = i == 1 and s.base[3] or s.world[i - 1]
            if adist(s.world[i], parent + s.pose[i]) > 1e-9 then
                return fmt("world_angle(%d) is %s, but %s + angle(%d) is %s", i, show(s.world[i]),
                    i == 1 and "the base angle" or "world_angle(" .. (i - 1) .. ")", i, show(parent + s.pose[i]))
            end
        end
    else
        for _, part in ipairs({ "pose", "world" }) do
            local q = s[part]
            for i = 1, n do
                local w, x, y, z = q[4 * i - 3], q[4 * i - 2], q[4 * i - 1], q[4 * i]
                if not (is_finite(w) and is_finite(x) and is_finite(y) and is_finite(z)) then
                    return fmt("%s rotation %d is not finite", part, i)
                end
                if abs(w * w + x * x + y * y + z * z - 1) > 2e-9 then
                    return fmt("%s rotation %d is not unit: %s %s %s %s", part, i, show(w), show(x), show(y), show(z))
                end
            end
        end
        -- the local rotations compose to the world ones
        local p, l, wr = s.base, s.pose, s.world
        local pw, px, py, pz = p[4], p[5], p[6], p[7]
        for i = 1, n do
            local want = { qmul(pw, px, py, pz, l[4 * i - 3], l[4 * i - 2], l[4 * i - 1], l[4 * i]) }
            local got = { wr[4 * i - 3], wr[4 * i - 2], wr[4 * i - 1], wr[4 * i] }
            if not qsame(got, want, 1e-9) then
                return fmt("world_rotation(%d) is not the rotation of its parent times rotation(%d)", i, i)
            end
            pw, px, py, pz = got[1], got[2], got[3], got[4]
        end
    end
    for k = 1, #s.w do
        if not (is_finite(s.w[k]) and s.w[k] >= 0) then return fmt("weight(%d) is %s", k, show(s.w[k])) end
    end
    return nil
end

-- The world direction of bone i in a snapshot (a unit vector).
local function bone_dir(s, i)
    if s.dim == 2 then
        local a = s.world[i]
        return cos(a), sin(a), 0
    end
    local q = s.world
    return qxaxis(q[4 * i - 3], q[4 * i - 2], q[4 * i - 1], q[4 * i])
end

-- The tip bone's angle from the orientation goal of the model (nil without one).
local function orientation_error(e, s)
    if not e.has_orient then return nil end
    local n = s.n
    if s.dim == 2 then return adist(s.world[n], e.orient) end
    local q = s.world
    local g = e.orient_unit
    return qangle(g[1], g[2], g[3], g[4], q[4 * n - 3], q[4 * n - 2], q[4 * n - 1], q[4 * n])
end

-- The known bugs of src/ still there (M.KNOWN_BUGS), set by M.run.
local KNOWN = {}

-- The angle between the tip bone and the line from its base (joint n) to point t.
local function aim_error(s, t)
    local n, dim, pos = s.n, s.dim, s.pos
    local a = (n - 1) * dim
    local tx, ty, tz = t[1] - pos[a + 1], t[2] - pos[a + 2], dim == 3 and t[3] - pos[a + 3] or 0
    local m = max(abs(tx), abs(ty), abs(tz))
    if m == 0 then return 0, true end -- the point is on joint n: nothing to turn
    tx, ty, tz = tx / m, ty / m, tz / m
    local dx, dy, dz = bone_dir(s, n)
    local cx, cy, cz = dy * tz - dz * ty, dz * tx - dx * tz, dx * ty - dy * tx
    return atan2(sqrt(cx * cx + cy * cy + cz * cz), dx * tx + dy * ty + dz * tz)
end

-- The units a held goal (e.tip) is known in, else 0: the largest of the joint held and the
-- offset, whose turn into the world rounds in its own units whatever it cancels (the model
-- turns it by the angle's cosine and sine, the core by the bone's direction; as check_model
-- holds the point itself).
local function hold_scale(e)
    if not e.tip then return 0 end
    local scale, at = 0, { e.tip.c:joint(e.tip_joint) }
    for k = 1, e.dim do scale = max(scale, abs(at[k]), e.tip_offset and abs(e.tip_offset[k]) or 0) end
    return scale
end

local function tip_distance(s, t)
    local pos, dim = s.pos, s.dim
    local tip = s.n * dim
    local real = norm(t[1] - pos[tip + 1], t[2] - pos[tip + 2], dim == 3 and t[3] - pos[tip + 3] or 0)
    local scale = max(abs(t[1]), abs(t[2]), abs(t[3] or 0), abs(pos[tip + 1]), abs(pos[tip + 2]),
        dim == 3 and abs(pos[tip + 3]) or 0)
    return real, scale
end

-- Whether angle a is within [lo, hi] (wrapped bounds) up to eps, around the circle.
local function within_circular(a, lo, hi, eps)
    if a >= lo - eps and a <= hi + eps then return true end
    return adist(a, lo) <= eps or adist(a, hi) <= eps
end

-- nil when every bone of the chain is within its limits (the model's), else which is not.
-- clear: within them by a margin, where every clamp keeps a rotation as it is (not a twist
-- near a half turn's swing, where the twist is undefined and the clamp stops the swing short).
local function check_limits(e, s, clear)
    local eps = clear and -1e-9 or 1e-9
    for i = 1, s.n do
        local l = e.limits[i]
        if l and s.dim == 2 then
            if not within_circular(s.pose[i], l.min, l.max, clear and eps or 1e-12) then
                return fmt("angle(%d) is %s, its limit [%s, %s]", i, show(s.pose[i]), show(l.min), show(l.max))
            end
        elseif l then
            local q = s.pose
            local w, x, y, z = q[4 * i - 3], q[4 * i - 2], q[4 * i - 1], q[4 * i]
            if l.hinge then
                local ax, ay, az = l.axis[1], l.axis[2], l.axis[3]
                local along = x * ax + y * ay + z * az
                local ox, oy, oz = y * az - z * ay, z * ax - x * az, x * ay - y * ax
                if norm(ox, oy, oz) > (clear and 1e-15 or 1e-9) then return fmt("bone %d turns off its hinge axis", i) end
                local angle = (along == 0 and w == 0) and 0 or wrap(2 * atan2(along, w))
                if not within_circular(angle, l.min, l.max, eps) then
                    return fmt("bone %d: hinge angle %s, its limit [%s, %s]", i, show(angle), show(l.min), show(l.max))
                end
            else
                -- swing * twist, twist about local +x
                local twist = (x == 0 and w == 0) and 0 or wrap(2 * atan2(x, w))
                local tw, tx = cos(twist / 2), sin(twist / 2)
                local sw, _, sy, sz = qmul(w, x, y, z, tw, -tx, 0, 0)
                local swing = 2 * atan2(sqrt(sy * sy + sz * sz), abs(sw))
                if l.cone and swing > l.cone + eps then
                    return fmt("bone %d swings %s, its cone %s", i, show(swing), show(l.cone))
                end
                if l.twist and clear and swing >= pi - 1e-3 then
                    return fmt("bone %d swings %s with a twist limit: its twist is undefined", i, show(swing))
                end
                if l.twist and swing < pi - 1e-3 and not within_circular(twist, l.twist[1], l.twist[2], clear and eps or 1e-8) then
                    return fmt("bone %d twists %s, its limit [%s, %s]",
                        i, show(twist), show(l.twist[1]), show(l.twist[2]))
                end
            end
        end
    end
    return nil
end

-- nil when no bone turned by more than max_turn from `before` to `after`.
local function check_max_turn(s0, s1, max_turn)
    if not (max_turn < huge) then return nil end
    for i = 1, s1.n do
        local turn
        if s1.dim == 2 then
            turn = adist(s1.pose[i], s0.pose[i])
        else
            local a, b = s0.pose, s1.pose
            turn = qangle(a[4 * i - 3], a[4 * i - 2], a[4 * i - 1], a[4 * i],
                b[4 * i - 3], b[4 * i - 2], b[4 * i - 1], b[4 * i])
        end
        if turn > max_turn + 1e-9 then
            return fmt("bone %d turned %s, max_turn is %s", i, show(turn), show(max_turn))
        end
    end
    return nil
end

-- A solve's results against the chain after it (s), its kept goal (model e) and its
-- settings: reached, distance (or aim's angle error) and iterations consistent; the tip's
-- orientation goal met where nothing holds it.
local function check_solve_result(ret, s, e, solver, offset, skip_orient)
    offset = offset or 0
    local reached, d, it = ret[offset + 1], ret[offset + 2], ret[offset + 3]
    local st = s.st
    if type(reached) ~= "boolean" then return "reached is not a boolean" end
    if not (is_finite(d) and d >= 0) then return "distance is " .. show(d) end
    if not (is_whole(it) and it >= 0 and it <= max(st.iterations, 1)) then
        return "iterations is " .. show(it)
    end
    if solver == "two_bone" and it ~= 1 then
        return "a two-bone solve reports " .. show(it) .. " iterations"
    end
    local t = e.target
    if solver == "aim" then
        if d > pi + 1e-12 then return "angle error " .. show(d) end
        if reached ~= (d <= st.angle_tolerance) then
            return fmt("reached is %s for angle error %s", tostring(reached), show(d))
        end
        local mine, on_joint = aim_error(s, t)
        if on_joint and KNOWN.aim_at_joint then return nil end -- a known bug (M.KNOWN_BUGS)
        -- the tip bone's base is known to the rounding of its coordinates: seen from a point
        -- near it, far out (a held point on a bone of 1e9), that is an angle of its own
        local a, pos = (s.n - 1) * s.dim, s.pos
        local far = max(abs(pos[a + 1]), abs(pos[a + 2]), s.dim == 3 and abs(pos[a + 3]) or 0)
        local near = norm(t[1] - pos[a + 1], t[2] - pos[a + 2], s.dim == 3 and t[3] - pos[a + 3] or 0)
        if abs(mine - d) > 1e-9 + 1e-14 * far / near then
            return fmt("angle error %s, but the tip bone is %s off", show(d), show(mine))
        end
        return nil
    end
    local real, scale = tip_distance(s, t)
    scale = max(scale, hold_scale(e))
    if abs(real - d) > 1e-12 * real + 1e-15 * scale + 1e-320 then
        return fmt("distance %s, but the tip is %s from the target", show(d), show(real))
    end
    local oe = orientation_error(e, s)
    if oe ~= nil and skip_orient then
        -- a known bug: the orientation goal of a zero-length 2D tip bone (M.KNOWN_BUGS)
        if reached and d > st.tolerance then return fmt("reached, with distance %s", show(d)) end
        return nil
    end
    if oe == nil then
        if reached ~= (d <= st.tolerance) then
            return fmt("reached is %s for distance %s", tostring(reached), show(d))
        end
    else
        if reached and not (d <= st.tolerance and oe <= st.angle_tolerance + 1e-9) then
            return fmt("reached, with distance %s and the tip bone %s off its goal", show(d), show(oe))
        end
        if not reached and d <= st.tolerance and oe < st.angle_tolerance - 1e-9 then
            return fmt("not reached, with distance %s and the tip bone %s off its goal", show(d), show(oe))
        end
        -- nothing holds the tip bone: it takes its orientation goal
        if not e.limited_any and st.mix == 1 and st.max_turn == huge and oe > st.angle_tolerance + 1e-9 then
            return fmt("the tip bone is %s off its orientation goal (angle_tolerance %s)",
                show(oe), show(st.angle_tolerance))
        end
    end
    return nil
end

-- What the stateless solves return.
local function check_stateless(kind, ret, args)
    for k = 1, ret.n do
        local v = ret[k]
        if type(v) == "number" and not is_finite(v) then return fmt("result %d is %s", k, show(v)) end
    end
    if kind ~= "soft" and type(ret[ret.n]) ~= "boolean" then return "reached is not a boolean" end
    if kind == "angles" then
        if ret.n ~= 3 then return "returned " .. ret.n .. " values" end
        if abs(ret[1]) > pi or abs(ret[2]) > pi then return "an angle outside [-pi, pi]" end
        if ret[3] then -- reached: the tip is on the target (forward kinematics, relative)
            local l1, l2, x, y = args[1], args[2], args[3], args[4]
            local m = max(l1, l2, abs(x), abs(y))
            if m > 0 and m < 1e300 and m > 1e-300 then
                l1, l2, x, y = l1 / m, l2 / m, x / m, y / m
                local a1, a2 = ret[1], ret[1] + ret[2]
                local tx, ty = l1 * cos(a1) + l2 * cos(a2), l1 * sin(a1) + l2 * sin(a2)
                if norm(tx - x, ty - y) > 1e-6 then
                    return fmt("reached, but the tip misses by %s (relative)", show(norm(tx - x, ty - y)))
                end
            end
        end
    elseif kind == "soft" then
        -- d itself up to the start of the ease, then never beyond reach
        local d, reach, softness = args[1], args[2], args[3]
        if ret.n ~= 1 or type(ret[1]) ~= "number" then return "returned " .. ret.n .. " values" end
        if d <= reach - softness and not same(ret[1], d + 0.0) and not same(ret[1], d) then
            return fmt("%s, below the ease, %s expected", show(ret[1]), show(d))
        end
        local span = reach - softness < 0 and reach or softness
        if span > 0 and d > reach and ret[1] > reach then
            return fmt("%s, beyond reach %s", show(ret[1]), show(reach))
        end
        if ret[1] < 0 then return "negative: " .. show(ret[1]) end
    else
        local dim = (kind == "joint3" or kind == "middle3") and 3 or 2
        if kind == "middle2" or kind == "middle3" then
            -- the lengths first (two_bone_middle): checked in the old order
            local old = { n = dim + 2 }
            for k = 1, dim do old[k] = args[k + 2] end
            old[dim + 1], old[dim + 2] = args[1], args[2]
            args = old
        end
        if ret.n ~= dim + 1 then return "returned " .. ret.n .. " values" end
        local r1, r2 = args[dim + 1], args[dim + 2]
        -- the solve divides by the largest input: r1 may be lost in its rounding
        local m = 0
        for k = 1, dim + 2 do m = max(m, abs(args[k])) end
        if ret[dim + 1] and m < 1e300 and m > 1e-300 then
            -- reached: the second bone reaches the target, up to the ring's slack (1e-6 of m)
            local t = { args[1] / m, args[2] / m, dim == 3 and args[3] / m or 0 }
            local e = norm(ret[1] / m - t[1], ret[2] / m - t[2], dim == 3 and ret[3] / m - t[3] or 0)
            if abs(e - r2 / m) > 1e-6 then
                return fmt("reached, but |joint - target| is %s of the largest input, r2 %s", show(e), show(r2 / m))
            end
        end
        if not near_length(ret[1], ret[2], dim == 3 and ret[3] or 0, r1, 1e-9, 1e-15 * m + 1e-320) then
            return fmt("|joint| is %s, r1 is %s",
                show(2 * norm(ret[1] * 0.5, ret[2] * 0.5, dim == 3 and ret[3] * 0.5 or 0)), show(r1))
        end
    end
    return nil
end

-- For other specs: nil when chain c is sound (see check_chain) and its bone lengths are
-- exactly `lengths`, else what is wrong; a snapshot of a chain, and the difference of two
-- (nil when equal, -0 and +0 told apart).
function M.sound(c, lengths)
    return check_chain({ lengths = lengths }, snapshot(c))
end
M.snapshot = snapshot
function M.diff(before, after)
    return diff(before, after, ALL)
end

-- ---------------------------------------------------------------------------------------
-- The API. Each entry: name; self = nil (a module function), "any", 2 or 3 (the chains it
-- is for) or "rig"; args = a list of kinds, "?" marking an optional one (absent or nil), or
-- a function of the dimension returning that list; no_more = the position (self is 0) from
-- which every argument must be nil (after the last one the call takes: one rule in 2D and
-- 3D), or a function of the dimension; check(ctx, args, n) = a rule checked after the arguments (returns the bad
-- position, 0 for self); keeps = what a successful call leaves as it was on self (parts of
-- a snapshot); post(call, ret) = what a successful call returned and did (nil or why);
-- make(ctx, mode) and predict(ctx, args, n) replace the generic arguments and oracle.
-- Functions needing the run's state are filled in by run() (see SPECIAL).

local SOLVE_KEEPS = { "base", "len", "w", "settings", "limits", "parent" }
local POSE_KEEPS = { "base", "len", "w", "settings", "goal", "limits", "parent", "stretch" }

local function target_args()
    return { "target" }
end
local function no_more_dim(at2, at3)
    return function(dim) return dim == 2 and at2 or at3 end
end

-- Reshapes the valid arguments of a stateless two-bone solve (positions of the lengths and
-- of the target in args) into the hard cases: nearly equal lengths and a target near the
-- root or on an edge of the ring |r1 - r2| <= |p| <= r1 + r2, where rounding and the
-- ring test's slack decide.
local function two_bone_shape(l1_at, target_at, dim)
    return function(r, args)
        local r1 = args[l1_at]
        if type(r1) ~= "number" or not (r1 >= 0 and r1 <= 1e300) or r.chance(0.5) then return end
        local r2 = r1 * (1 + r.pick({ 0, 1e-7, -1e-7, 1e-9, -1e-9, 1e-12, 0.5, 2 }))
        local inner, outer = abs(r1 - r2), r1 + r2
        local d = r.pick({ 0, 1e-10 * r1, 1e-160, inner, inner * (1 + 1e-9), inner * (1 - 1e-9), outer,
            outer * (1 + 1e-12), outer * (1 - 1e-12), (inner + outer) / 2 })
        local a = r.unit() * 2 * pi
        args[l1_at + 1] = r2
        args[target_at], args[target_at + 1] = d * cos(a), d * sin(a)
        if dim == 3 then args[target_at + 2] = d * r.pick({ 0, 0.5, -1 }) end
    end
end

-- The [min, max] rule of a limit whose bounds are args[at] and args[at + 1] (nil: the
-- defaults -pi and pi): min above max is blamed on min.
local function range_check(at)
    return function(ctx, args)
        local lo, hi = args[at], args[at + 1]
        if lo == nil then lo = -pi end
        if hi == nil then hi = pi end
        if lo > hi then return at end
    end
end

-- Compares what a getter returned with the snapshot after the call.
local function returns(get)
    return function(call, ret)
        local want = get(call.after[call.entry], call)
        local count = want.n or #want
        if ret.n ~= count then return fmt("returned %d values, %d expected", ret.n, count) end
        for k = 1, count do
            if not same(ret[k], want[k]) then
                return fmt("result %d is %s, %s expected", k, show(ret[k]), show(want[k]))
            end
        end
    end
end
local function pos_of(s, j)
    local t = {}
    for d = 1, s.dim do t[d] = s.pos[(j - 1) * s.dim + d] end
    return t
end
local function per_bone(part)
    return function(s, call)
        local i, t = call.args[1], {}
        if s.dim == 2 or part == "len" then
            t[1] = s[part][i]
        else
            for k = 1, 4 do t[k] = s[part][4 * i - 4 + k] end
        end
        return t
    end
end

-- A bulk getter's table: out (when given), the values of part, and nothing after them.
local function bulk(part)
    return function(call, ret)
        local s, t = call.after[call.entry], ret[1]
        if ret.n ~= 1 or type(t) ~= "table" then return "did not return a table" end
        if call.args[1] ~= nil and not rawequal(t, call.args[1]) then
            return "did not return the table it was given"
        end
        local want = s[part]
        for k = 1, #want do
            if not same(rawget(t, k), want[k]) then
                return fmt("value %d is %s, %s expected", k, show(rawget(t, k)), show(want[k]))
            end
        end
        if rawget(t, #want + 1) ~= nil then return fmt("value %d is left over", #want + 1) end
    end
end

M.OPS = {
    -- stateless solves
    { name = "two_bone", args = { "nonneg", "nonneg", "real", "real", "?bend" }, result = "angles",
        shape = two_bone_shape(1, 3, 2) },
    { name = "two_bone_joint", args = { "real", "real", "nonneg", "nonneg", "?bend" }, result = "joint2",
        shape = two_bone_shape(3, 1, 2) },
    { name = "two_bone_joint3", args = { "real", "real", "real", "nonneg", "nonneg", "real", "real", "real" },
        result = "joint3", shape = two_bone_shape(4, 1, 3) },
    { name = "two_bone_middle", args = { "nonneg", "nonneg", "real", "real", "?bend" }, result = "middle2",
        shape = two_bone_shape(1, 3, 2) },
    { name = "two_bone_middle3", args = { "nonneg", "nonneg", "real", "real", "real", "real", "real", "real" },
        result = "middle3", shape = two_bone_shape(1, 3, 3) },
    { name = "soft_distance", args = { "nonneg", "nonneg", "nonneg" }, result = "soft" },
    -- construction
    { name = "chain2d", args = { "lengths", "?coord", "?coord", "?angle" }, no_more = 5, no_more_first = true,
        creates = 2, weight = 3 },
    { name = "chain3d", args = { "lengths", "?coord", "?coord", "?coord", "?quat" }, no_more = 9, no_more_first = true,
        creates = 3, weight = 3 },
    { name = "chain2d_points", special = "points", creates = 2, weight = 2 },
    { name = "chain3d_points", special = "points", creates = 3, weight = 2 },
    -- many chains at once, and rigs: made and judged by hand (see run())
    { name = "solve_many", special = "solve_many", weight = 5 },
    { name = "rig", special = "rig", weight = 4 },
    { name = "gait", special = "gait", weight = 2 },

    -- methods for both dimensions
    { name = "count", self = "any", args = {}, keeps = ALL, post = returns(function(s) return { s.n } end) },
    { name = "dim", self = "any", args = {}, keeps = ALL, post = returns(function(s) return { s.dim } end) },
    { name = "__len", self = "any", args = {}, keeps = ALL, syntax = "len",
        post = returns(function(s) return { s.n } end) },
    { name = "__tostring", self = "any", args = {}, keeps = ALL, syntax = "tostring",
        post = returns(function(s) return { fmt("ik.chain%dd(%d bone%s)", s.dim, s.n, s.n == 1 and "" or "s") } end) },
    { name = "reach", self = "any", args = {}, keeps = ALL,
        post = returns(function(s)
            local t = 0
            for i = 1, s.n do t = t + s.len[i] end
            return { t }
        end) },
    { name = "joint", self = "any", args = { "joint" }, keeps = ALL,
        post = returns(function(s, call) return pos_of(s, call.args[1]) end) },
    { name = "effector", self = "any", args = {}, keeps = ALL,
        post = returns(function(s) return pos_of(s, s.n + 1) end) },
    { name = "positions", self = "any", args = { "?out" }, keeps = ALL, post = bulk("pos") },
    { name = "length", self = "any", args = { "bone" }, keeps = ALL, post = returns(per_bone("len")) },
    { name = "set_length", self = "any", args = { "bone", "length" },
        keeps = { "base", "w", "pose", "settings", "goal", "limits", "parent" }, post = "set_length" },
    { name = "weight", self = "any", args = { "joint" }, keeps = ALL,
        post = returns(function(s, call) return { s.w[call.args[1]] } end) },
    { name = "set_weight", self = "any", args = { "joint", "weight" }, keeps = without(ALL, "w"),
        post = function(call)
            local got = call.after[call.entry].w[call.args[1]]
            if not same(got, call.args[2] + 0.0) then return "weight reads " .. show(got) end
        end },
    { name = "base", self = "any", args = {}, keeps = ALL, post = returns(function(s) return s.base end) },
    { name = "set_base", self = "any", weight = 2,
        args = function(dim)
            if dim == 2 then return { "coord", "coord", "?angle" } end
            return { "coord", "coord", "coord", "?quat_finite" }
        end,
        no_more = no_more_dim(4, 8),
        check = function(ctx, args)
            if ctx.entry.parent then return 0 end -- the parent places its base
            if ctx.dim == 3 and args[4] ~= nil and quat_zero({ args[4], args[5], args[6], args[7] }) then
                return 4
            end
        end,
        keeps = LOCAL,
        post = function(call)
            local s, a = call.after[call.entry], call.args
            for d = 1, s.dim do
                if not same(s.base[d], a[d] + 0.0) then
                    return fmt("base coordinate %d reads %s", d, show(s.base[d]))
                end
            end
            local b = call.before[call.entry]
            if s.dim == 2 then
                local want = a[3] ~= nil and wrap(a[3] + 0.0) or (b and b.base[3])
                if want and adist(s.base[3], want) > 1e-12 then
                    return "base angle reads " .. show(s.base[3])
                end
            else
                local want = a[4] ~= nil and { qunit(a[4], a[5], a[6], a[7]) }
                    or (b and { b.base[4], b.base[5], b.base[6], b.base[7] })
                if want and not qsame({ s.base[4], s.base[5], s.base[6], s.base[7] }, want, 1e-12) then
                    return "base rotation reads other than it was set"
                end
            end
        end },
    { name = "configure", self = "any", args = { "settings" }, weight = 4, keeps = without(ALL, "settings"),
        post = "configure" },
    { name = "settings", self = "any", args = { "?out" }, keeps = ALL,
        post = function(call, ret)
            local t = ret[1]
            if type(t) ~= "table" or (call.args[1] ~= nil and not rawequal(t, call.args[1])) then
                return "did not return its table"
            end
            local st = call.after[call.entry].st
            for _, k in ipairs(SETTING_KEYS) do
                if k ~= "pole" and k ~= "gravity" and not same(rawget(t, k), st[k]) then
                    return fmt("settings().%s is %s", k, show(rawget(t, k)))
                end
            end
            if (rawget(t, "pole") ~= nil) ~= (call.entry.dim == 3) then
                return "pole is there on a 2D chain, or missing on a 3D one"
            end
        end },
    { name = "set_target", self = "any", args = target_args, no_more = no_more_dim(3, 4), keeps = without(ALL, "goal"),
        check = function(ctx) if ctx.entry.tip then return 0 end end,
        post = "set_target" },
    { name = "target", self = "any", args = {}, keeps = ALL,
        post = returns(function(s)
            local g = s.goal
            if not g[1] then return pack(nil) end
            if g[2] == "held" then return s.held_at end -- checked against the model's point (check_model)
            if s.dim == 2 then return { g[2], g[3] } end
            return { g[2], g[3], g[4] }
        end) },
    -- how far the chain is from its kept goals, as the chain stands (read: brought up to date)
    { name = "goal_error", self = "any", args = {}, keeps = ALL,
        post = function(call, ret)
            local e, s = call.entry, call.after[call.entry]
            local g = s.goal
            if not g[1] then
                if ret.n ~= 1 or ret[1] ~= nil then return "no position goal, and not a single nil" end
                return nil
            end
            if ret.n ~= 2 then return fmt("returned %d values, 2 expected", ret.n) end
            local d, a = ret[1], ret[2]
            local real, scale = tip_distance(s, g[2] == "held" and s.held_at or { g[2], g[3], g[4] })
            if not (is_finite(d) and abs(real - d) <= 1e-12 * real + 1e-15 * scale + 1e-320) then
                return fmt("distance %s, but the tip is %s from the goal", show(d), show(real))
            end
            local oe = orientation_error(e, s) or 0
            if not (is_finite(a) and abs(a - oe) <= 1e-9) then
                return fmt("angle error %s, but the tip bone is %s off its orientation goal", show(a), show(oe))
            end
        end },
    { name = "clear_target", self = "any", args = {}, keeps = without(ALL, "goal"), post = "clear_target" },
    { name = "solve", self = "any", special = "solve", weight = 5 },
    { name = "solve_fabrik", self = "any", special = "solve", solver = "fabrik", weight = 3 },
    { name = "solve_ccd", self = "any", special = "solve", solver = "ccd", weight = 3 },
    { name = "solve_relax", self = "any", special = "solve", solver = "relax", weight = 3 },
    { name = "solve_two_bone", self = "any", special = "solve", solver = "two_bone", weight = 3 },
    { name = "solve_aim", self = "any", special = "solve", solver = "aim", weight = 3 },
    { name = "limit", self = "any", args = { "bone" }, keeps = ALL,
        post = returns(function(s, call)
            local v = s.limit_of[call.args[1]]
            return v
        end) },
    { name = "clear_limit", self = "any", args = { "bone" }, keeps = without(ALL, "limits"), post = "clear_limit" },
    { name = "stretch_factor", self = "any", args = {}, keeps = ALL, post = returns(function(s) return s.stretch end) },
    { name = "set_points", self = "any", special = "set_points", weight = 3 },
    { name = "attach", self = "any", special = "attach", weight = 5 },
    { name = "detach", self = "any", args = {}, keeps = without(ALL, "parent"), weight = 2, post = "detach" },
    { name = "parent", self = "any", args = {}, keeps = ALL, post = "parent" },
    { name = "clone", self = "any", args = {}, keeps = ALL, weight = 2, post = "clone" },
    -- closed loops
    { name = "attach_tip", self = "any", special = "attach_tip", weight = 4 },
    { name = "detach_tip", self = "any", args = {}, keeps = without(ALL, "goal"), weight = 2, post = "detach_tip" },
    { name = "tip_parent", self = "any", args = {}, keeps = ALL, post = "tip_parent" },
    -- motion over time
    { name = "drag", self = "any", args = target_args, no_more = no_more_dim(3, 4), weight = 2,
        check = function(ctx)
            if ctx.entry.parent then return 0 end -- an attached chain's base is held
        end,
        keeps = without(ALL, "pos", "base", "world", "pose"),
        post = function(call)
            local s, a = call.after[call.entry], call.args
            -- a cone or twist limit stops a swing 1e-6 rad short of a half turn where it holds
            -- a twist (src/limits.c, HALF_TURN_MARGIN): each such bone may miss by that much
            local short = 0
            if s.dim == 3 then
                for i = 1, s.n do
                    local kind = s.limit_of[i][1]
                    if kind == "hinge" then return nil end -- a hinge may hold the tip back
                    if kind == "cone" then short = short + 1e-6 * s.len[i] * s.stretch[1] end
                end
            end
            local n, dim = s.n, s.dim
            local scale = max(1, abs(a[1]), abs(a[2]), abs(a[3] or 0))
            for i = 1, n do scale = max(scale, s.len[i] * s.stretch[1]) end
            local far = 0
            for d = 1, dim do far = max(far, abs(s.pos[n * dim + d] - a[d])) end
            if far > 1e-9 * scale * n + 1.01 * short then return fmt("the tip is %s from the point", show(far)) end
        end },
    { name = "simulate", self = "any", args = { "dt" }, no_more = 2, weight = 2,
        keeps = without(ALL, "pos", "world", "pose") },
    { name = "set_rest", self = "any", args = {}, keeps = ALL },

    -- 2D only
    { name = "angle", self = 2, args = { "bone" }, keeps = ALL, post = returns(per_bone("pose")) },
    { name = "set_angle", self = 2, args = { "bone", "angle" }, keeps = POSE_KEEPS, weight = 2,
        post = function(call)
            local got = call.after[call.entry].pose[call.args[1]]
            if adist(got, wrap(call.args[2] + 0.0)) > 1e-12 then return "angle reads " .. show(got) end
        end },
    { name = "world_angle", self = 2, args = { "bone" }, keeps = ALL, post = returns(per_bone("world")) },
    { name = "angles", self = 2, args = { "?out" }, keeps = ALL, post = bulk("pose") },
    { name = "set_angles", self = 2, special = "set_angles", weight = 2 },
    { name = "set_limit", self = 2, args = { "bone", "limit_angle", "limit_angle" }, keeps = without(ALL, "limits"),
        check = range_check(2), post = "set_limit" },
    { name = "set_target_angle", self = 2, args = { "angle" }, keeps = without(ALL, "goal"), post = "set_orient" },
    { name = "target_angle", self = 2, args = {}, keeps = ALL,
        post = returns(function(s) return pack(s.goal[5] and s.goal[6] or nil) end) },

    -- 3D only
    { name = "rotation", self = 3, args = { "bone" }, keeps = ALL, post = returns(per_bone("pose")) },
    { name = "set_rotation", self = 3, args = { "bone", "quat" }, keeps = POSE_KEEPS, weight = 2,
        post = function(call)
            local s, a, i = call.after[call.entry], call.args, call.args[1]
            local got = { s.pose[4 * i - 3], s.pose[4 * i - 2], s.pose[4 * i - 1], s.pose[4 * i] }
            if not qsame(got, { qunit(a[2], a[3], a[4], a[5]) }, 1e-12) then
                return "rotation reads other than it was set"
            end
        end },
    { name = "world_rotation", self = 3, args = { "bone" }, keeps = ALL, post = returns(per_bone("world")) },
    { name = "rotations", self = 3, args = { "?out" }, keeps = ALL, post = bulk("pose") },
    { name = "set_rotations", self = 3, special = "set_angles", weight = 2 },
    { name = "set_hinge", self = 3, args = { "bone", "real", "real", "real", "?limit_angle", "?limit_angle" },
        keeps = without(ALL, "limits"),
        check = function(ctx, args)
            if args[2] == 0 and args[3] == 0 and args[4] == 0 then
                return 2 -- a zero axis, blamed on its first component
            end
            return range_check(5)(ctx, args)
        end, post = "set_limit" },
    { name = "set_cone", self = 3, args = { "bone", "cone" }, keeps = without(ALL, "limits"), post = "set_limit" },
    { name = "set_twist", self = 3, args = { "bone", "limit_angle", "limit_angle" }, keeps = without(ALL, "limits"),
        check = range_check(2), post = "set_limit" },
    { name = "set_target_rotation", self = 3, args = { "quat" }, keeps = without(ALL, "goal"), post = "set_orient" },
    { name = "target_rotation", self = 3, args = {}, keeps = ALL,
        post = returns(function(s)
            local g = s.goal
            if not g[5] then return pack(nil) end
            return { g[6], g[7], g[8], g[9] }
        end) },

    -- rigs
    { name = "count", key = "rig:count", self = "rig", args = {}, post = "rig_count" },
    { name = "chain_count", key = "rig:chain_count", self = "rig", args = {}, post = "rig_count" },
    { name = "__len", key = "rig:__len", self = "rig", args = {}, syntax = "len", post = "rig_count" },
    { name = "__tostring", key = "rig:__tostring", self = "rig", args = {}, syntax = "tostring",
        post = "rig_tostring" },
    { name = "chain", key = "rig:chain", self = "rig", args = { "bone" }, post = "rig_chain" },
    { name = "configure", key = "rig:configure", self = "rig", args = { "rig_settings" }, weight = 2,
        post = "rig_configure" },
    { name = "settings", key = "rig:settings", self = "rig", args = { "?out" }, post = "rig_settings" },
    { name = "solve", key = "rig:solve", self = "rig", args = {}, no_more = 1, weight = 6, special = "rig_solve" },
}

-- The name under which an op is counted and covered.
local function op_key(op)
    return op.key or op.name
end

-- The metamethods of a metatable that are functions (__len, __tostring, ...).
local function metamethods(mt)
    local t = {}
    for k, v in next, mt do
        if type(k) == "string" and k:sub(1, 2) == "__" and type(v) == "function" then t[#t + 1] = k end
    end
    return t
end

-- Names in the module (functions), in the chain's and the rig's method tables and among
-- their metamethods that OPS does not cover.
function M.uncovered(ik)
    local known = {}
    for _, op in ipairs(M.OPS) do
        known[op.self == "rig" and op_key(op) or (op.self and "chain:" .. op.name or "ik." .. op.name)] = true
    end
    local missing = {}
    for k, v in pairs(ik) do
        -- (names starting with _ are the module's own: ik._ffi hands LuaJIT's FFI side the core)
        if type(v) == "function" and k:sub(1, 1) ~= "_" and not known["ik." .. k] then missing[#missing + 1] = "ik." .. k end
    end
    local chain_mt = getmt(ik.chain2d({ 1 }))
    local rig_mt = getmt(ik.rig({ ik.chain2d({ 1 }) }))
    for prefix, mt in pairs({ chain = chain_mt, rig = rig_mt }) do
        for k in pairs(mt.__index) do
            if not known[prefix .. ":" .. k] then missing[#missing + 1] = prefix .. ":" .. k end
        end
        for _, k in ipairs(metamethods(mt)) do
            if not known[prefix .. ":" .. k] then missing[#missing + 1] = prefix .. ":" .. k end
        end
    end
    table.sort(missing)
    return missing
end

-- ---------------------------------------------------------------------------------------
-- Calling. Each function is called through a small Lua function compiled for its name, so
-- the VM can name it in the error (a call through a table index c[name](...) cannot), and
-- never as a tail call (which loses the name too).

local function compile(src, name)
    local chunk = (loadstring or load)(src:gsub("NAME", name), "=fuzz_" .. name)
    return chunk(pack)
end

local callers = {}
local function caller(op, syntax)
    local key = op.name .. "/" .. syntax
    if callers[key] then return callers[key] end
    local src
    if syntax == "module" then
        src = "local pack = ...; return function(ik, ...) local t = pack(ik.NAME(...)); return t end"
    elseif syntax == "method" then
        src = "local pack = ...; return function(o, ...) local t = pack(o:NAME(...)); return t end"
    elseif syntax == "field" then
        src = "local pack = ...; return function(m, o, ...) local t = pack(m.NAME(o, ...)); return t end"
    elseif syntax == "len" then
        src = "local pack = ...; return function(o) local t = pack(#o); return t end"
    else
        src = "local pack = ...; return function(o) local t = pack(tostring(o)); return t end"
    end
    callers[key] = compile(src, op.name)
    return callers[key]
end

-- The argument number and function name of an argument error, or nil for anything else.
-- Self in method-call syntax is argument 0 ("calling 'name' on bad self").
local function parse_error(e)
    if type(e) ~= "string" then return nil end
    local body = e
    if not (body:find("^bad argument #") or body:find("^calling '")) then
        body = body:match("^[^\n]-:%d+: (.*)$") or body -- LuaJIT may prefix chunk:line:
    end
    local k, name = body:match("^bad argument #(%d+) to '([^']*)' %(.*%)$")
    if k then return tonumber(k), name end
    name = body:match("^calling '([^']*)' on bad self %(.*%)$")
    if name then return 0, name end
    return nil
end
M.parse_error = parse_error

-- ---------------------------------------------------------------------------------------
-- Known bugs of src/: each with a probe (true while the bug is there) and what the run
-- avoids meanwhile, so the rest of the API is still tested in depth. The spec has a test of
-- its own that fails while any of them is there (M.known_bugs), so none is hidden.

M.KNOWN_BUGS = {
    {
        name = "pole_index",
        what = "configure{pole = t} with t a table with an __index metamethod blames the stack slot of t "
            .. "(bad argument #3 in method syntax), not the settings table (argument #1 in method syntax)",
        repro = "ik.chain3d({1, 1}):configure({pole = setmetatable({1, 0, 0}, {__index = function() return 0 end})})"
            .. " -- bad argument #3 to 'configure' (the pole table's stack slot), expected #1: the settings table",
        probe = function(ik)
            local c = ik.chain3d({ 1, 1 })
            local pole = setmetatable({ 1, 0, 0 }, { __index = function() return 0 end })
            local ok, e = pcall(function() c:configure({ pole = pole }) end)
            local k = parse_error(e)
            return ok or k ~= 1
        end,
    },
    {
        name = "orient_zero_tip_2d",
        what = "2D FABRIK and relaxation leave a tip bone of length 0 (or too short for the rounding of the "
            .. "joints to show its direction, e.g. 5e-324) off its orientation goal (world_angle unchanged, reached "
            .. "false); the same solve again then reports the goal met with 0 iterations and turns the bone",
        repro = "local c = ik.chain2d({1, 1, 0}); c:set_target_angle(1); print(c:solve_fabrik(1, 1)); "
            .. "print(c:world_angle(3)) -- false 0 1, then 0: expected true, and 1",
        probe = function(ik)
            local c = ik.chain2d({ 1, 1, 0 })
            c:set_target_angle(1)
            c:solve_fabrik(1, 1)
            return abs(c:world_angle(3) - 1) > 1e-9
        end,
    },
    {
        name = "relax_one_bone_oriented",
        what = "relaxation of a chain of one bone with an orientation goal moves the chain off its base: joint 1 "
            .. "goes to the origin (base() still says where the base is), and the tip with it",
        repro = "local c = ik.chain2d({1}, 3, 4); c:set_target_angle(0); print(c:solve_relax(10, 4)); "
            .. "print(c:joint(1)) -- 0 0, expected 3 4 (the base)",
        probe = function(ik)
            local c = ik.chain2d({ 1 }, 3, 4)
            c:set_target_angle(0)
            c:solve_relax(10, 4)
            return c:joint(1) ~= 3
        end,
    },
    {
        name = "huge_angle",
        what = "a 2D angle of large magnitude (set_angle, set_angles, set_base, chain2d, attach's offset, "
            .. "set_target_angle) is kept as remainder(a, 2 pi) (angle() reads it) but posed by cos(a), sin(a): "
            .. "the two disagree (by 4e-8 rad at 1e9, by anything at 1.8e308), so angle() no longer describes the "
            .. "pose world_angle() and positions() show",
        repro = "local c = ik.chain2d({1}); c:set_angle(1, 1.7976931348623157e308); "
            .. "print(c:angle(1), c:world_angle(1)) "
            .. "-- 0.58065315212011 3.136630678439 (two different angles for one bone)",
        probe = function(ik)
            local c = ik.chain2d({ 1 })
            c:set_angle(1, 1e9)
            return adist(c:angle(1), c:world_angle(1)) > 1e-9
        end,
    },
    {
        name = "rig_stale_joint",
        what = "rig:solve() says 'the rig's chains were attached or detached since it was made' for a rig whose "
            .. "tree is the same: its root was attached to a chain outside and detached again (detach leaves the "
            .. "old joint in the chain, and the rig compares it); attached at joint 1 and detached, it solves",
        repro = "local a, p = ik.chain2d({1, 1}), ik.chain2d({1, 1}); local rig = ik.rig({a}); a:attach(p, 2); "
            .. "a:detach(); print(pcall(rig.solve, rig)) -- false ... (the tree is the one it was made from)",
        probe = function(ik)
            local a, p = ik.chain2d({ 1, 1 }), ik.chain2d({ 1, 1 })
            local rig = ik.rig({ a })
            a:attach(p, 2)
            a:detach()
            return not pcall(rig.solve, rig)
        end,
    },
    {
        name = "aim_at_joint",
        what = "solve_aim at a point exactly on joint n (the tip bone's base) in 3D reports an angle error of pi "
            .. "and not reached after every iteration, or 0 and reached, by the sign of a zero: the direction to "
            .. "the point is (0, 0, 0), and atan2(0, -0) is pi when the tip bone's direction has no positive "
            .. "component",
        repro = "local c = ik.chain3d({1, 1}, 0, 0, 0, math.cos(-1.25), 0.3, 0.3, math.sin(-1.25)); "
            .. "print(c:solve_aim(c:joint(2))) -- false 3.14159 8; with math.cos(0.25), ..., math.sin(0.25): true 0 0",
        probe = function(ik)
            local c = ik.chain3d({ 1, 1 }, 0, 0, 0, cos(-1.25), 0.3, 0.3, sin(-1.25))
            local _, e = c:solve_aim(c:joint(2))
            return e ~= 0
        end,
    },
    {
        name = "stretch_far",
        what = "stretch misses a target more than about 1e154 times the chain's reach away, and does not stretch "
            .. "at all beyond about 1e162 times (stretch_factor in solve.c squares reach / distance, which "
            .. "underflows), though the stretched bones would be well within range",
        repro = "local c = ik.chain2d({1, 1}); c:configure{stretch = true}; print(c:solve(1e200, 0)); "
            .. "print(c:stretch_factor()) -- false 1e+200 0, then 1: expected true, and 5e199 "
            .. "(1e160: misses by 5.6e154)",
        probe = function(ik)
            local c = ik.chain2d({ 1, 1 })
            c:configure({ stretch = true })
            local _, d = c:solve(1e160, 0)
            return d > 1e151
        end,
    },
    {
        name = "rig_weight_overflow",
        what = "a rig solve with an effector_weight whose product with the coordinates overflows (1e300 with "
            .. "a goal at 3e9) and a limit on the parent chain puts NaN in every joint of both chains and "
            .. "reports reached = true, max_distance 0",
        repro = "local r = ik.chain2d({1, 2}); r:set_limit(2, -0.5, 2.5); r:set_angles({0, 2.5}); r:set_target(0, 0); "
            .. "local c = ik.chain2d({2, 1e10}); c:configure({effector_weight = 1e300}); c:attach(r, 2); "
            .. "c:set_target(3e9, 3e9); print(ik.rig({r, c}):solve()); print(c:effector()) -- true 0 1, then nan nan",
        probe = function(ik)
            local r = ik.chain2d({ 1, 2 })
            r:set_limit(2, -0.5, 2.5)
            r:set_angles({ 0, 2.5 })
            r:set_target(0, 0)
            local c = ik.chain2d({ 2, 1e10 })
            c:configure({ effector_weight = 1e300 })
            c:attach(r, 2)
            c:set_target(3e9, 3e9)
            ik.rig({ r, c }):solve()
            local x = c:effector()
            return x ~= x
        end,
    },
    {
        name = "rig_no_goal_unstretches",
        what = "rig:solve() with no goal in the rig moves a chain that a stretch left stretched (its bones go "
            .. "back to their lengths), where API.md says 'No goal at all: nothing moves'",
        repro = "local c = ik.chain2d({1, 1}); c:configure{stretch = true}; c:solve(10, 0); c:clear_target(); "
            .. "ik.rig({c}):solve(); print(c:effector()) -- 2 0, was 10 0",
        probe = function(ik)
            local c = ik.chain2d({ 1, 1 })
            c:configure({ stretch = true })
            c:solve(10, 0)
            c:clear_target()
            local x0 = c:effector()
            ik.rig({ c }):solve()
            return c:effector() ~= x0
        end,
    },
}

-- The known bugs still there: { name = true } and the list of their reports.
function M.known_bugs(ik)
    local present, list = {}, {}
    for _, b in ipairs(M.KNOWN_BUGS) do
        local ok, there = pcall(b.probe, ik)
        if not ok or there then
            present[b.name] = true
            list[#list + 1] = b.name .. ": " .. b.what .. "\n    " .. b.repro
        end
    end
    return present, list
end

-- ---------------------------------------------------------------------------------------
-- A chain as Lua source that builds a free chain in its state (as far as setters can: a
-- pose left by a solve is read back and set, which may differ in the last bits), for the
-- reproduction of a failure. `name` is the variable it assigns.

local function lit(v)
    if type(v) ~= "number" then return fmt("%q", tostring(v)) end
    if v ~= v then return "0/0" end
    if v == huge then return "math.huge" end
    if v == -huge then return "-math.huge" end
    if v == 0 and 1 / v < 0 then return "-0.0" end
    return fmt("%.17g", v)
end

function M.recipe(c, name)
    name = name or "c"
    local s = snapshot(c)
    local dim, n = s.dim, s.n
    local lines, list = {}, {}
    for i = 1, n do list[i] = lit(s.len[i]) end
    local base = {}
    for k = 1, #s.base do base[k] = lit(s.base[k]) end
    lines[#lines + 1] = fmt("local %s = ik.chain%dd({%s}, %s)",
        name, dim, table.concat(list, ", "), table.concat(base, ", "))
    local st = s.st
    local set = {}
    for _, k in ipairs(SETTING_KEYS) do
        local v = st[k]
        if type(v) == "table" then -- pole, gravity
            local parts = {}
            for d = 1, #v do parts[d] = lit(v[d]) end
            set[#set + 1] = fmt("%s = {%s}", k, table.concat(parts, ", "))
        elseif v ~= nil then
            set[#set + 1] = k .. " = " .. (type(v) == "string" and fmt("%q",
                v) or type(v) == "boolean" and tostring(v) or lit(v))
        end
    end
    lines[#lines + 1] = fmt("%s:configure({%s})", name, table.concat(set, ", "))
    for j = 1, n + 1 do
        if s.w[j] ~= 1 then lines[#lines + 1] = fmt("%s:set_weight(%d, %s)", name, j, lit(s.w[j])) end
    end
    for i = 1, n do
        local v = s.limit_of[i]
        if v.n > 0 then
            if dim == 2 then
                lines[#lines + 1] = fmt("%s:set_limit(%d, %s, %s)", name, i, lit(v[1]), lit(v[2]))
            elseif v[1] == "hinge" then
                lines[#lines + 1] = fmt("%s:set_hinge(%d, %s, %s, %s, %s, %s)",
                    name, i, lit(v[2]), lit(v[3]), lit(v[4]), lit(v[5]), lit(v[6]))
            else
                lines[#lines + 1] = fmt("%s:set_cone(%d, %s); %s:set_twist(%d, %s, %s)",
                    name, i, lit(v[2]), name, i, lit(v[3]), lit(v[4]))
            end
        end
    end
    local pose = {}
    for k = 1, #s.pose do pose[k] = lit(s.pose[k]) end
    lines[#lines + 1] = fmt("%s:set_%s({%s})", name, dim == 2 and "angles" or "rotations", table.concat(pose, ", "))
    local g = s.goal
    if g[1] and g[2] == "held" then
        lines[#lines + 1] = fmt("-- (its tip held at joint %d of chain #%s: not reproduced)", g[4], tostring(g[3]))
    elseif g[1] then
        lines[#lines + 1] = fmt("%s:set_target(%s, %s%s)",
            name, lit(g[2]), lit(g[3]), dim == 3 and ", " .. lit(g[4]) or "")
    end
    if g[5] then
        if dim == 2 then
            lines[#lines + 1] = fmt("%s:set_target_angle(%s)", name, lit(g[6]))
        else
            lines[#lines + 1] = fmt("%s:set_target_rotation(%s, %s, %s, %s)",
                name, lit(g[6]), lit(g[7]), lit(g[8]), lit(g[9]))
        end
    end
    if s.stretch[1] ~= 1 then
        lines[#lines + 1] = fmt("-- (stretched by %s: not reproduced)", lit(s.stretch[1]))
    end
    if s.parent[1] ~= 0 then
        lines[#lines + 1] = fmt("-- (attached at joint %d of another chain: made free here)", s.parent[2])
    end
    return table.concat(lines, "\n")
end

-- ---------------------------------------------------------------------------------------
-- The run.

-- The segment lengths ik.chain*_points computes (scaled first, exactly as the binding
-- does), or nil and the 1-based segment whose length is out of range.
local function point_lengths(points, dim)
    local lengths = {}
    local n = rawlen(points) / dim - 1
    for k = 0, n - 1 do
        local scale, sum = 0, 0
        for d = 1, dim do scale = max(scale, abs(points[dim * (k + 1) + d] - points[dim * k + d])) end
        if scale > 0 then
            for d = 1, dim do
                local t = (points[dim * (k + 1) + d] - points[dim * k + d]) / scale
                sum = sum + t * t
            end
        end
        lengths[k + 1] = scale * sqrt(sum)
        if not (lengths[k + 1] <= M.COORD_MAX) then return nil, k + 1 end
    end
    return lengths
end

-- M.run's helpers, in one table: LuaJIT allows a function 60 upvalues.
local H = {
    getmt = getmt,
    WRONG_TYPES = WRONG_TYPES,
    rawget = rawget,
    fmt = fmt,
    tostring = tostring,
    show = show,
    EXTRAS = EXTRAS,
    KINDS = KINDS,
    type = type,
    pack = pack,
    min = min,
    same = same,
    abs = abs,
    pi = pi,
    adist = adist,
    qsame = qsame,
    rawequal = rawequal,
    select = select,
    qmul = qmul,
    EDGES = EDGES,
    random_real = random_real,
    NAN = NAN,
    huge = huge,
    DBL_MAX = DBL_MAX,
    proxy = proxy,
    harmless = harmless,
    plain_table = plain_table,
    rawlen = rawlen,
    finite_number = finite_number,
    within_range = within_range,
    quat_gen = quat_gen,
    quat_zero = quat_zero,
    NEG_ZERO = NEG_ZERO,
    quat_finite = quat_finite,
    lengths_count = lengths_count,
    point_lengths = point_lengths,
    gen_target = gen_target,
    dress = dress,
    max = max,
    wrap = wrap,
    qunit = qunit,
    unit3 = unit3,
    snapshot = snapshot,
    diff = diff,
    ALL = ALL,
    check_chain = check_chain,
    bone_dir = bone_dir,
    norm = norm,
    check_solve_result = check_solve_result,
    check_limits = check_limits,
    check_max_turn = check_max_turn,
    is_whole = is_whole,
    is_finite = is_finite,
    unpack = unpack,
    without = without,
    RIG_KEYS = RIG_KEYS,
    tip_distance = tip_distance,
    orientation_error = orientation_error,
    SOLVE_KEEPS = SOLVE_KEEPS,
    LOCAL = LOCAL,
    POSE_KEEPS = POSE_KEEPS,
    op_key = op_key,
    has_index = has_index,
    pcall = pcall,
    caller = caller,
    parse_error = parse_error,
    atan2 = atan2,
    sin = sin,
    cos = cos,
    check_stateless = check_stateless,
}

-- ---------------------------------------------------------------------------------------
-- Detach, collect, re-attach: a round outside the pool and its model, made every
-- M.GC_EVERY calls with a generator of its own (so the calls' sequence is the same with or
-- without it). A random forest of chains (attached to random joints of earlier ones, some
-- clones, a rig over a subtree) of which a random few are held; then, each followed by one
-- full collection: as made, after some detaches, after re-attaching the held free chains to
-- new or surviving chains. After each collection exactly what the held ones need is alive
-- (a chain its parents up to its root, a rig its chains): nothing more after ONE
-- collection in any VM, nothing less (an attached chain reads its place on its parent, to
-- the bit). Chains and rigs are touched only in the helpers below, whose frames are gone
-- when the round collects: a stack slot would keep them alive.

M.GC_EVERY = 1000

-- The forest: nodes[k] = { dim, n, parent = index or nil, joint, kind = "chain" | "clone" |
-- "rig", chains = list of indices (a rig) }; objects in weak (weak values), the held ones in
-- held (strong).
local function gc_build(ik, g, nodes, weak, held)
    local objects = {} -- held while building: a collection could come between two calls
    local dim = g.int(2, 3)
    local make = dim == 2 and ik.chain2d or ik.chain3d
    local count = g.pick({ 1, 2, 5, 20, 60 })
    for _ = 1, count do
        local n = g.int(1, 3)
        local lengths = {}
        for i = 1, n do lengths[i] = g.pick({ 1, 0.5, 2 }) end
        local c = make(lengths)
        local node = { dim = dim, n = n, kind = "chain" }
        local last = #nodes
        if last > 0 and g.chance(0.85) then
            -- mostly the chain made just before: deep hierarchies
            local p = g.chance(0.7) and last or g.int(1, last)
            if nodes[p].kind ~= "rig" then
                node.parent, node.joint = p, g.int(1, nodes[p].n + 1)
                c:attach(objects[p], node.joint)
            end
        end
        nodes[last + 1], objects[last + 1] = node, c
        if g.chance(0.1) then -- a clone hangs on the same parent
            nodes[#nodes + 1] = { dim = dim, n = n, kind = "clone", parent = node.parent, joint = node.joint }
            objects[#nodes] = c:clone()
        end
    end
    if g.chance(0.5) then -- a rig over a chain and everything below it
        local root = g.int(1, #nodes)
        while nodes[root].kind == "rig" do root = root - 1 end
        local list, in_rig = { objects[root] }, { [root] = true }
        local members = { root }
        for k = root + 1, #nodes do
            local p = nodes[k].parent
            if p and in_rig[p] and nodes[k].kind == "chain" then
                in_rig[k] = true
                list[#list + 1] = objects[k]
                members[#members + 1] = k
            end
        end
        nodes[#nodes + 1] = { kind = "rig", chains = members }
        objects[#nodes] = ik.rig(list)
    end
    for k = 1, #nodes do
        weak[k] = objects[k]
        if g.chance(0.15) then held[k] = objects[k] end
    end
end

-- What must be alive: the held nodes and what they need.
local function gc_needed(nodes, held)
    local need = {}
    local function mark(k)
        while k and not need[k] do
            need[k] = true
            local node = nodes[k]
            if node.kind == "rig" then
                for _, m in ipairs(node.chains) do mark(m) end
                return
            end
            k = node.parent
        end
    end
    for k in pairs(held) do mark(k) end
    return need
end

-- nil when exactly what is needed is alive, and each alive chain is on its parent; else why.
local function gc_check(nodes, weak, held, what)
    local need = gc_needed(nodes, held)
    for k, node in ipairs(nodes) do
        local o = weak[k]
        if need[k] and o == nil then
            return fmt("%s: %s %d was collected, but a held one needs it", what, node.kind, k)
        elseif not need[k] and o ~= nil then
            return fmt("%s: %s %d is alive after a full collection, but nothing held needs it", what, node.kind, k)
        end
        if o ~= nil and node.kind ~= "rig" then
            local p, j = o:parent()
            if node.parent == nil then
                if p ~= nil then return fmt("%s: chain %d has a parent, none expected", what, k) end
            elseif p ~= weak[node.parent] or j ~= node.joint then
                return fmt("%s: chain %d's parent() is not chain %d at joint %d", what, k, node.parent, node.joint)
            else
                local a = { o:joint(1) }
                local b = { p:joint(j) }
                for d = 1, node.dim do
                    if not same(a[d], b[d]) then
                        return fmt("%s: chain %d's joint 1 is not chain %d's joint %d", what, k, node.parent, j)
                    end
                end
            end
        end
    end
end

-- Detaches some alive chains; returns how many.
local function gc_detach(g, nodes, weak)
    local count = 0
    for k, node in ipairs(nodes) do
        local o = weak[k]
        if o ~= nil and node.parent and node.kind ~= "rig" and g.chance(0.3) then
            o:detach()
            node.parent, node.joint = nil, nil
            count = count + 1
        end
    end
    return count
end

-- Whether node a is node b or hangs below it.
local function gc_below(nodes, a, b)
    while a do
        if a == b then return true end
        a = nodes[a].parent
    end
    return false
end

-- Attaches each held free chain to a new chain (perhaps where a collected one was) or to an
-- alive chain not below it; the new chains are not held: their children keep them.
local function gc_reattach(ik, g, nodes, weak, held)
    for k in pairs(held) do
        local node = nodes[k]
        if node.kind ~= "rig" and node.parent == nil and g.chance(0.7) then
            local target, parent
            if g.chance(0.5) then
                local n = g.int(1, 3)
                local lengths = {}
                for i = 1, n do lengths[i] = 1 end
                nodes[#nodes + 1] = { dim = node.dim, n = n, kind = "chain" }
                target = #nodes
                parent = node.dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
                weak[target] = parent
            else
                for m, other in ipairs(nodes) do
                    local o = weak[m]
                    if o ~= nil and other.kind ~= "rig" and other.dim == node.dim and not gc_below(nodes, m, k) then
                        target, parent = m, o
                    end
                end
            end
            if target then
                node.parent, node.joint = target, g.int(1, nodes[target].n + 1)
                held[k]:attach(parent, node.joint)
            end
        end
    end
end

local function gc_collect()
    collectgarbage("collect")
end

-- One round; nil, or why it failed.
function M.gc_round(ik, g)
    local nodes, weak, held = {}, setmetatable({}, { __mode = "v" }), {}
    gc_build(ik, g, nodes, weak, held)
    gc_collect()
    local why = gc_check(nodes, weak, held, "as made")
    if why then return why end
    gc_detach(g, nodes, weak)
    gc_collect()
    why = gc_check(nodes, weak, held, "after detaches")
    if why then return why end
    gc_reattach(ik, g, nodes, weak, held)
    gc_collect()
    why = gc_check(nodes, weak, held, "after re-attaching")
    if why then return why end
    for k in pairs(held) do held[k] = nil end
    gc_collect()
    return gc_check(nodes, weak, held, "once nothing is held")
end

function M.run(opts)
    local getmt, WRONG_TYPES, rawget, fmt, tostring, show, EXTRAS, KINDS, type, pack, min, same, abs,
        pi, adist, qsame, rawequal, select, qmul, EDGES, random_real, NAN, huge, DBL_MAX, proxy,
        harmless, plain_table, rawlen, finite_number, within_range, quat_gen, quat_zero, NEG_ZERO,
        quat_finite, lengths_count, point_lengths, gen_target, dress, max, wrap, qunit, unit3,
        snapshot, diff, ALL, check_chain, bone_dir, norm, check_solve_result, check_limits,
        check_max_turn, is_whole, is_finite, unpack, without, RIG_KEYS, tip_distance,
        orientation_error, SOLVE_KEEPS, LOCAL, POSE_KEEPS, op_key, has_index, pcall, caller,
        parse_error, atan2, sin, cos, check_stateless
        = H.getmt, H.WRONG_TYPES, H.rawget, H.fmt, H.tostring, H.show, H.EXTRAS, H.KINDS, H.type,
        H.pack, H.min, H.same, H.abs, H.pi, H.adist, H.qsame, H.rawequal, H.select, H.qmul, H.EDGES,
        H.random_real, H.NAN, H.huge, H.DBL_MAX, H.proxy, H.harmless, H.plain_table, H.rawlen,
        H.finite_number, H.within_range, H.quat_gen, H.quat_zero, H.NEG_ZERO, H.quat_finite,
        H.lengths_count, H.point_lengths, H.gen_target, H.dress, H.max, H.wrap, H.qunit, H.unit3,
        H.snapshot, H.diff, H.ALL, H.check_chain, H.bone_dir, H.norm, H.check_solve_result,
        H.check_limits, H.check_max_turn, H.is_whole, H.is_finite, H.unpack, H.without, H.RIG_KEYS,
        H.tip_distance, H.orientation_error, H.SOLVE_KEEPS, H.LOCAL, H.POSE_KEEPS, H.op_key,
        H.has_index, H.pcall, H.caller, H.parse_error, H.atan2, H.sin, H.cos, H.check_stateless
    local ik = assert(opts.ik, "opts.ik: the module")
    handle_mts[getmt(ik.chain2d({ 1 }))] = true
    handle_mts[getmt(ik.rig({ ik.chain2d({ 1 }) }))] = true
    handle_mts[getmt(ik.gait({ ik.chain2d({ 1, 1 }) }, { stride = 1 }))] = true
    local seed = opts.seed or 1
    local calls = opts.calls or 10000
    local r = M.rng(seed)
    local gc_rng = M.rng(seed + 7919) -- M.gc_round's own
    local chain_mt = getmt(ik.chain2d({ 1 }))
    local methods = chain_mt.__index
    local rig_mt = getmt(ik.rig({ ik.chain2d({ 1 }) }))
    local rig_methods = rig_mt.__index
    local fake_self = setmetatable({}, { __index = methods })
    M.fake_self = fake_self
    local wrong = { "x", "", true, false, {}, io.stdout, print }
    for k = #WRONG_TYPES, 1, -1 do WRONG_TYPES[k] = nil end
    for k = 1, #wrong do WRONG_TYPES[k] = wrong[k] end
    local bugs = M.known_bugs(ik)
    KNOWN = bugs

    -- events: how often the run reached the situations it is made for (tools/random_calls.lua
    -- prints them)
    local events = {}
    local function event(name)
        events[name] = (events[name] or 0) + 1
    end
    local stats = { calls = 0, ok = 0, rejected = 0, failures = 0, by_op = {}, seed = seed, skipped = {},
        events = events,
        known_bugs = bugs }

    -- The pool of live chains, and every entry the run made (by chain), each entry:
    -- { c, dim, n, id, lengths (as set), total (their sum), parent (entry), joint, offset,
    --   has_target, target, has_orient, orient, orient_unit, limits[i], limited_any }
    local pool, POOL_MAX = {}, 8
    local entry_of = setmetatable({}, { __mode = "k" })
    local rigs, RIG_MAX = {}, 4
    local rig_of = setmetatable({}, { __mode = "k" })
    M.id_of = function(c)
        local e = entry_of[c]
        return e and e.id or -1
    end

    local function refresh(e)
        local t = 0
        for i = 1, e.n do t = t + e.lengths[i] end
        e.total = t
        e.limited_any = false
        for i = 1, e.n do e.limited_any = e.limited_any or e.limits[i] ~= nil end
    end
    local serial = 0
    local function new_entry(c, lengths)
        serial = serial + 1
        local e = { c = c, dim = c:dim(), n = c:count(), lengths = {}, id = serial, limits = {},
            has_target = false, has_orient = false, last_joint = 1 }
        for i = 1, e.n do e.lengths[i] = rawget(lengths, i) + 0.0 end -- -0 is kept as +0
        refresh(e)
        entry_of[c] = e
        return e
    end
    -- A new chain replaces a random one, but never the last of its dimension.
    local function add_chain(e)
        if #pool < POOL_MAX then
            pool[#pool + 1] = e
            return
        end
        local victim = r.int(1, POOL_MAX)
        if pool[victim].dim ~= e.dim then
            local same_dim = 0
            for _, other in ipairs(pool) do
                if other.dim == pool[victim].dim then same_dim = same_dim + 1 end
            end
            if same_dim == 1 then return end
        end
        pool[victim] = e
    end
    add_chain(new_entry(ik.chain2d({ 1, 1 }), { 1, 1 }))
    add_chain(new_entry(ik.chain2d({ 1, 2, 0.5 }, 0.5, -1, 0.3), { 1, 2, 0.5 }))
    add_chain(new_entry(ik.chain3d({ 1, 1 }), { 1, 1 }))
    add_chain(new_entry(ik.chain3d({ 0.5, 1, 1.5, 1 }, 1, 2, 3), { 0.5, 1, 1.5, 1 }))
    add_chain(new_entry(ik.chain2d({ 1, 1, 1 }), { 1, 1, 1 }))
    add_chain(new_entry(ik.chain3d({ 1, 0.5, 1 }), { 1, 0.5, 1 }))

    -- A chain of dimension dim (any when nil), or nil when the pool has none.
    local held_point -- (tip holds, below)
    local function pick_chain(dim, filter)
        local candidates = {}
        for _, e in ipairs(pool) do
            if (dim == nil or e.dim == dim) and (filter == nil or filter(e)) then candidates[#candidates + 1] = e end
        end
        return #candidates > 0 and r.pick(candidates) or nil
    end

    -- Whether a is b or hangs (at any depth) below b.
    local function below(a, b)
        while a do
            if a == b then return true end
            a = a.parent
        end
        return false
    end

    local function describe_entry(e)
        return fmt("<chain%dd #%d, %d bones>", e.dim, e.id, e.n)
    end
    local function describe_rig(g)
        return fmt("<rig #%d, %d chains>", g.id, #g.entries)
    end
    M.describe_value = function(v)
        local e = entry_of[v]
        if e then return describe_entry(e) end
        local g = rig_of[v]
        if g then return describe_rig(g) end
        return tostring(v)
    end

    local history, HISTORY = {}, 8 -- the last calls, formatted only for a failure report

    local function describe(call)
        local shown = {}
        for k = 1, call.n do shown[k] = show(call.args[k]) end
        local list = table.concat(shown, ", ")
        if call.syntax == "module" then return fmt("ik.%s(%s)", call.op.name, list) end
        local who = show(call.self)
        if call.syntax == "len" then return "#" .. who end
        if call.syntax == "tostring" then return "tostring(" .. who .. ")" end
        if call.syntax == "field" then
            return fmt("%s.%s(%s%s)", call.op.self == "rig" and "rig_methods" or "chain_methods", call.op.name, who,
                call.n > 0 and ", " .. list or "")
        end
        return fmt("%s:%s(%s)", who, call.op.name, list)
    end

    local function fail(step, why)
        stats.failures = stats.failures + 1
        if opts.on_failure then opts.on_failure(step, why, describe(history[#history])) end
        if stats.first then return end
        local lines = { fmt("seed %s, call %d: %s", tostring(seed), step, describe(history[#history])), "  " .. why }
        if #history > 1 then lines[#lines + 1] = "  after:" end
        for k = #history - 1, 1, -1 do lines[#lines + 1] = "    " .. describe(history[k]) end
        stats.first = table.concat(lines, "\n")
    end

    -- Extra arguments after position n: values and nils (a hole before a value).
    local function add_extras(args, n)
        for _ = 1, r.int(1, 3) do
            n = n + 1
            if r.chance(0.2) then args[n] = nil else args[n] = r.pick(EXTRAS) end
        end
        return n
    end

    -- The first position from `from` to n holding something other than nil.
    local function first_not_nil(args, from, n)
        for k = from, n do
            if args[k] ~= nil then return k end
        end
        return nil
    end

    -- The arguments for a list of slots: args (position 1 is the first after self), n (how
    -- many are passed) and the position the binding rejects first (nil: none).
    local function make_args(slots, ctx, mode, no_more, no_more_first)
        local args, layout, n = {}, {}, 0
        local bad_slot = (mode == "bad" or mode == "bads") and #slots > 0 and r.int(1, #slots) or nil
        for i, spec in ipairs(slots) do
            local optional = spec:sub(1, 1) == "?"
            local kind = assert(KINDS[optional and spec:sub(2) or spec], spec)
            local width = kind.width or 1
            if type(width) == "function" then width = width(ctx) end
            local bad = i == bad_slot or (mode == "bads" and r.chance(0.3))
            if not optional or bad or r.chance(0.6) then
                local values = pack(kind.gen(r, ctx, bad))
                for k = 1, width do args[n + k] = values[k] end
            end
            layout[i] = { kind = kind, pos = n + 1, width = width, optional = optional }
            n = n + width
        end
        if mode == "missing" and n > 0 then
            local keep = r.int(0, n - 1)
            for k = keep + 1, n do args[k] = nil end
            n = keep
        elseif mode == "extra" or (mode == "bad" and #slots == 0) then
            n = add_extras(args, n)
        end
        -- the oracle: absent optional slots (every value nil) are fine, present ones are
        -- checked whole (a quaternion given in part too)
        local bad
        -- (checked first, it is chain2d's and chain3d's: every argument after their last)
        if no_more and no_more_first then bad = first_not_nil(args, no_more, n) end
        for _, slot in ipairs(layout) do
            if bad then break end
            if not (slot.optional and first_not_nil(args, slot.pos, slot.pos + slot.width - 1) == nil) then
                local values = {}
                for k = 1, slot.width do values[k] = args[slot.pos + k - 1] end
                local offset = slot.kind.check(values, ctx)
                if offset then bad = slot.pos + offset - 1 end
            end
        end
        if not bad and no_more and not no_more_first then bad = first_not_nil(args, no_more, n) end
        return args, n, bad
    end

    -- ---- tip holds (closed loops) ----

    -- The point e's tip is held at, as the model computes it from the chain holding it: its
    -- joint, and the offset turned by the frame of the bone that ends there (the base's at
    -- joint 1).
    held_point = function(e)
        local o, j, off = e.tip.c, e.tip_joint, e.tip_offset
        local p = { o:joint(j) }
        if not off then return p end
        if e.dim == 2 then
            local a = j == 1 and select(3, o:base()) or o:world_angle(j - 1)
            local c, sn = cos(a), sin(a)
            return { p[1] + c * off[1] - sn * off[2], p[2] + sn * off[1] + c * off[2] }
        end
        local w, x, y, z
        if j == 1 then
            local b = { o:base() }
            w, x, y, z = b[4], b[5], b[6], b[7]
        else
            w, x, y, z = o:world_rotation(j - 1)
        end
        local _, vx, vy, vz = qmul(w, x, y, z, 0, off[1], off[2], off[3])
        _, vx, vy, vz = qmul(_, vx, vy, vz, w, -x, -y, -z)
        return { p[1] + vx, p[2] + vy, p[3] + vz }
    end

    -- Whether some chain of the list holds its tip on a chain that a solve of one of them
    -- moves (the point it reads then is not the one the model reads after).
    local function holds_move(entries)
        for _, e in ipairs(entries) do
            if e.tip then
                for _, x in ipairs(entries) do
                    if below(e.tip, x) then return true end
                end
            end
        end
        return false
    end

    -- ---- the model's checks of a chain after a call ----

    -- nil when the snapshot agrees with the model: goals, limits, parent.
    local function check_model(e, s)
        local g = s.goal
        if g[1] ~= e.has_target then
            return "target() says " .. (g[1] and "a goal" or "none") .. ", the model the other"
        end
        if e.tip then
            if not (g[2] == "held" and g[3] == M.id_of(e.tip.c) and g[4] == e.tip_joint) then
                return fmt("tip_parent() names %s, %s, the model %s at joint %d", show(g[3]), show(g[4]),
                    describe_entry(e.tip), e.tip_joint)
            end
            local want, got = held_point(e), { e.c:target() }
            -- in the units of the largest of the point, the joint held and the offset: the
            -- offset's turn into the world rounds in its own units, whatever it cancels
            local scale, at = 1, { e.tip.c:joint(e.tip_joint) }
            for d = 1, e.dim do
                scale = max(scale, abs(want[d]), abs(at[d]), e.tip_offset and abs(e.tip_offset[d]) or 0)
            end
            for d = 1, e.dim do
                if not (abs(got[d] - want[d]) <= 1e-12 * scale) then
                    return fmt("target() reads %s in coordinate %d, the held point is at %s", show(got[d]), d, show(want[d]))
                end
            end
        elseif e.has_target then
            if g[2] == "held" then return "target() is a hold the model does not know" end
            for d = 1, e.dim do
                if not same(g[1 + d], e.target[d]) then
                    return fmt("target coordinate %d reads %s, was set to %s", d, show(g[1 + d]), show(e.target[d]))
                end
            end
        end
        if g[5] ~= e.has_orient then
            return "the orientation goal is " .. (g[5] and "there" or "gone") .. ", the model says otherwise"
        end
        if e.has_orient then
            if e.dim == 2 then
                if not (abs(g[6]) <= pi and adist(g[6], e.orient) <= 1e-12) then
                    return "target_angle reads " .. show(g[6])
                end
            elseif not qsame({ g[6], g[7], g[8], g[9] }, e.orient_unit, 1e-12) then
                return "target_rotation reads other than it was set"
            end
        end
        for i = 1, e.n do
            local v, m = s.limit_of[i], e.limits[i]
            local count = v.n
            if m == nil then
                if count ~= 0 then return fmt("bone %d has a limit (%s), the model none", i, show(v[1])) end
            elseif e.dim == 2 then
                if not (count == 2 and same(v[1], m.min) and same(v[2], m.max)) then
                    return fmt("limit(%d) reads other than it was set", i)
                end
            elseif m.hinge then
                if not (count == 6 and v[1] == "hinge" and same(v[5], m.min) and same(v[6], m.max)
                        and abs(v[2] - m.axis[1]) <= 1e-12 and abs(v[3] - m.axis[2]) <= 1e-12
                        and abs(v[4] - m.axis[3]) <= 1e-12) then
                    return fmt("limit(%d) reads other than the hinge set", i)
                end
            else
                local tw = m.twist or { -pi, pi }
                if not (count == 4 and v[1] == "cone" and same(v[2], m.cone or pi) and same(v[3], tw[1])
                        and same(v[4], tw[2])) then
                    return fmt("limit(%d) reads other than the cone and twist set", i)
                end
            end
        end
        local p = s.parent
        if p[1] ~= (e.parent and e.parent.id or 0) or p[2] ~= (e.parent and e.joint or 0) then
            return fmt("parent() is #%s at %s, the model %s", show(p[1]), show(p[2]),
                e.parent and fmt("#%d at %d", e.parent.id, e.joint) or "none")
        end
        if e.parent and not rawequal(s.parent_chain, e.parent.c) then return "parent() is another chain" end
        return nil
    end

    -- nil when child e shows its place on its parent as the parent is now.
    local function check_attached(e, child_first)
        local p, j = e.parent, e.joint
        local cj, pj, cb
        if child_first then
            cj, cb = { e.c:joint(1) }, { e.c:base() }
            pj = { p.c:joint(j) }
        else
            pj = { p.c:joint(j) }
            cb, cj = { e.c:base() }, { e.c:joint(1) }
        end
        for d = 1, e.dim do
            if not same(cj[d], pj[d]) then
                return fmt("stale: %s's joint 1 is at %s, its parent %s's joint %d at %s (coordinate %d)",
                    describe_entry(e),
                    show(cj[d]), describe_entry(p), j, show(pj[d]), d)
            end
            if not same(cb[d], pj[d]) then
                return fmt("stale: %s's base is not on its parent's joint %d", describe_entry(e), j)
            end
        end
        if e.dim == 2 then
            local frame = j == 1 and select(3, p.c:base()) or p.c:world_angle(j - 1)
            if adist(cb[3], frame + e.offset) > 1e-9 then
                return fmt("stale: %s's base angle is %s, its parent's frame %s turned by %s",
                    describe_entry(e), show(cb[3]),
                    show(frame), show(e.offset))
            end
        else
            local f
            if j == 1 then f = { select(4, p.c:base()) } else f = { p.c:world_rotation(j - 1) } end
            local o = e.offset
            local want = { qmul(f[1], f[2], f[3], f[4], o[1], o[2], o[3], o[4]) }
            if not qsame({ cb[4], cb[5], cb[6], cb[7] }, want, 1e-9) then
                return fmt("stale: %s's base rotation is not its parent's frame at joint %d turned by its offset",
                    describe_entry(e), j)
            end
        end
        return nil
    end

    -- ---- special ops: arguments and oracle ----

    local SPECIAL = {}
    local POST = {}
    local avoid

    local function set_goal(e, t)
        e.has_target = true
        e.target = { t[1] + 0.0, t[2] + 0.0, e.dim == 3 and t[3] + 0.0 or nil }
    end

    -- A chain made for one call (solve_many's or a rig's many chains), outside the pool:
    -- a few bones, perhaps a goal.
    local function fixture_chain(dim)
        local lengths = {}
        for i = 1, r.int(1, 4) do lengths[i] = 0.2 + r.unit() end
        local c = dim == 2 and ik.chain2d(lengths, random_real(r), random_real(r))
            or ik.chain3d(lengths, random_real(r), random_real(r), random_real(r))
        local e = new_entry(c, lengths)
        if r.chance(0.7) then
            local t = { random_real(r) * 3, random_real(r) * 3, random_real(r) * 3 }
            c:set_target(t[1], t[2], dim == 3 and t[3] or nil)
            set_goal(e, t)
        end
        return e
    end

    local function not_a_chain(r_)
        local t = { 5, "x", true, {}, io.stdout, fake_self }
        if #rigs > 0 then t[#t + 1] = r_.pick(rigs).g end
        return r_.pick(t)
    end

    -- solve*(x, y[, z]) and solve*(): the kept goal.
    SPECIAL.solve = function(op, ctx, mode)
        local e = ctx.entry
        local args, n, bad
        if mode == "missing" or (mode == "clean" and r.chance(0.15)) then
            args, n = {}, r.int(0, 2) -- no coordinates, perhaps nils: the kept goal
        else
            args, n, bad = make_args({ "target" }, ctx, mode, ctx.dim + 1)
        end
        if first_not_nil(args, 1, n) == nil then
            if not e.has_target then return args, n, 1 end
            bad = nil
        end
        if bad then return args, n, bad end
        if e.tip and first_not_nil(args, 1, n) then return args, n, 0 end -- the goal is the hold
        local solver = op.solver or e.c:settings().solver
        if solver == "two_bone" and not (e.has_orient and e.n == 3 or not e.has_orient and e.n == 2) then
            return args, n, 0
        end
        return args, n, nil
    end

    -- set_points(points): (n + 1) * dim finite numbers within range.
    SPECIAL.set_points = function(op, ctx, mode)
        local e, dim = ctx.entry, ctx.dim
        local bad = mode ~= "clean"
        local m = (e.n + 1) * dim
        local t
        local roll = r.int(1, 10)
        if roll <= 3 then
            t = e.c:positions() -- a round trip
        else
            t = {}
            local base = { e.c:joint(1) }
            local prev = base
            for j = 1, e.n + 1 do
                local p = {}
                for d = 1, dim do
                    if j > 1 and r.chance(0.1) then
                        p[d] = prev[d] -- a segment with no direction
                    elseif r.chance(0.05) then
                        p[d] = r.pick(EDGES)
                    else
                        p[d] = prev[d] + random_real(r) * 2
                    end
                    t[#t + 1] = p[d]
                end
                prev = p
            end
        end
        if bad then
            local k = r.int(1, 5)
            if k == 1 then
                t[#t + 1] = 1 -- one number too many (or drop one)
                if r.chance(0.5) then t[#t] = nil; t[#t] = nil end
            elseif k == 2 then
                t[r.int(1, m)] = r.pick({ NAN, huge, -huge, "1", "x", true, {} })
            elseif k == 3 then
                t[r.int(1, m)] = r.pick({ 1e301, -DBL_MAX, DBL_MAX })
            elseif k == 4 then
                t = r.pick({ 5, "x", true })
            else
                proxy(t)
            end
        elseif r.chance(0.05) then
            harmless(t)
        end
        local args, n = { t }, 1
        if mode == "missing" then args, n = {}, 0 end
        if mode == "extra" then n = add_extras(args, n) end -- not checked: fine
        local p = args[1]
        if not plain_table(p) or rawlen(p) ~= m then return args, n, 1 end
        for k = 1, m do
            local ok, x = finite_number(rawget(p, k))
            if not ok then return args, n, 1 end
        end
        for k = 1, m do
            if not within_range(rawget(p, k)) then return args, n, 1 end
        end
        return args, n, nil
    end

    -- set_angles(t) / set_rotations(t): n angles, or n quaternions of 4 numbers (not zero).
    SPECIAL.set_angles = function(op, ctx, mode)
        local e, dim = ctx.entry, ctx.dim
        local per = dim == 2 and 1 or 4
        local want = e.n * per
        local bad = mode ~= "clean"
        local t
        if r.chance(0.3) then
            t = dim == 2 and e.c:angles() or e.c:rotations() -- a round trip
        else
            t = {}
            for i = 1, e.n do
                if dim == 2 then
                    t[i] = r.chance(0.8) and (2 * r.unit() - 1) * pi or r.pick(EDGES)
                else
                    local q = pack(quat_gen(r, ctx, false))
                    if quat_zero(q) and not bad then q = { 1, 0, 0, 0 } end
                    for k = 1, 4 do t[4 * i - 4 + k] = q[k] end
                end
            end
        end
        if bad then
            local k = r.int(1, 5)
            if k == 1 then
                if r.chance(0.5) then t[want + 1] = 0 else t[want] = nil end
            elseif k == 2 then
                t[r.int(1, want)] = r.pick({ NAN, huge, -huge, "1", "x", true, {} })
            elseif k == 3 and dim == 3 then
                local i = r.int(1, e.n)
                for x = 1, 4 do t[4 * i - 4 + x] = r.pick({ 0.0, NEG_ZERO }) end
            elseif k == 4 then
                t = r.pick({ 5, "x", true })
            else
                proxy(t)
            end
        elseif r.chance(0.05) then
            harmless(t)
        end
        local args, n = { t }, 1
        if mode == "missing" then args, n = {}, 0 end
        if mode == "extra" then n = add_extras(args, n) end
        local p = args[1]
        if not plain_table(p) or rawlen(p) ~= want then return args, n, 1 end
        for k = 1, want do
            if not finite_number(rawget(p, k)) then return args, n, 1 end
        end
        for i = 1, e.n * (per - 1) / 3 do
            if quat_zero({ rawget(p, 4 * i - 3), rawget(p, 4 * i - 2), rawget(p, 4 * i - 1), rawget(p, 4 * i) }) then
                return args, n, 1
            end
        end
        return args, n, nil
    end

    -- child:attach(parent, j [, angle]) / child:attach(parent, j [, w, x, y, z]).
    SPECIAL.attach = function(op, ctx, mode)
        local e, dim = ctx.entry, ctx.dim
        local dirty = mode ~= "clean"
        local parent
        local roll = r.int(1, 100)
        if roll <= 12 then
            -- a cycle: itself, or a chain below it
            parent = pick_chain(dim, function(x) return below(x, e) end) or e
        elseif roll <= 20 then
            parent = pick_chain(5 - dim) or e
        else
            parent = pick_chain(dim, function(x) return not below(x, e) end) or e
        end
        local args = { parent.c }
        if dirty and r.chance(0.15) then args[1] = not_a_chain(r) end
        local pctx = { n = parent.n, dim = dim, entry = parent }
        local j = pack(KINDS.joint.gen(r, pctx, dirty and r.chance(0.25)))
        args[2] = j[1]
        local n = 2
        if dim == 2 then
            if dirty and r.chance(0.2) or r.chance(0.6) then
                args[3] = KINDS.angle.gen(r, ctx, dirty and r.chance(0.3))
            end
            n = 3
        else
            if dirty and r.chance(0.2) or r.chance(0.6) then
                local q = pack(quat_gen(r, ctx, dirty and r.chance(0.3)))
                for k = 1, 4 do args[2 + k] = q[k] end
            end
            n = 6
        end
        if mode == "missing" then
            n = r.int(0, n - 1)
            for k = n + 1, 6 do args[k] = nil end
        elseif mode == "extra" then
            n = add_extras(args, n)
        end
        -- the oracle, in the binding's order
        local p = args[1]
        local pe = type(p) == "userdata" and entry_of[p] or nil
        if pe == nil then return args, n, 1 end
        if pe.dim ~= dim then return args, n, 1 end
        if KINDS.joint.check({ args[2] }, { n = pe.n }) then return args, n, 2 end
        if dim == 2 then
            if args[3] ~= nil and not finite_number(args[3]) then return args, n, 3 end
            local extra = first_not_nil(args, 4, n)
            if extra then return args, n, extra end
        else
            local q = { args[3], args[4], args[5], args[6] }
            if first_not_nil(q, 1, 4) then -- given, if only in part
                local k = quat_finite(q)
                if k then return args, n, 2 + k end
                if quat_zero(q) then return args, n, 3 end
            end
            local extra = first_not_nil(args, 7, n)
            if extra then return args, n, extra end
        end
        if e.parent then return args, n, 0 end -- detach it first
        if below(pe, e) then event("attach: a cycle refused"); return args, n, 1 end -- a cycle
        return args, n, nil
    end

    -- chain:attach_tip(other, j [, dx, dy]) / chain:attach_tip(other, j [, dx, dy, dz]).
    SPECIAL.attach_tip = function(op, ctx, mode)
        local e, dim = ctx.entry, ctx.dim
        local dirty = mode ~= "clean"
        local roll = r.int(1, 100)
        local other
        if roll <= 5 then
            other = e -- itself
        elseif roll <= 10 then
            other = pick_chain(5 - dim) or e
        else
            other = pick_chain(dim, function(x) return x ~= e end) or e
        end
        local args = { other.c }
        if dirty and r.chance(0.15) then args[1] = not_a_chain(r) end
        local j = pack(KINDS.joint.gen(r, { n = other.n, dim = other.dim, entry = other }, dirty and r.chance(0.25)))
        args[2] = j[1]
        local n = 2
        if r.chance(0.4) or dirty and r.chance(0.2) then
            for d = 1, dim do
                args[2 + d] = KINDS.coord.gen(r, ctx, dirty and r.chance(0.1))
                if args[2 + d] ~= nil and finite_number(args[2 + d]) and abs(args[2 + d]) < 1e6 then
                    args[2 + d] = args[2 + d] * 0.1 -- an offset about a bone's size
                end
            end
        end
        n = 2 + dim
        if mode == "missing" then
            n = r.int(0, n - 1)
            for k = n + 1, 2 + dim do args[k] = nil end
        elseif mode == "extra" then
            n = add_extras(args, n)
        end
        -- the oracle, in the binding's order
        local p = args[1]
        local pe = type(p) == "userdata" and entry_of[p] or nil
        if pe == nil or pe.dim ~= dim or pe == e then return args, n, 1 end
        if KINDS.joint.check({ args[2] }, { n = pe.n }) then return args, n, 2 end
        if first_not_nil(args, 3, 2 + dim) then -- an offset: all of it
            for d = 1, dim do
                if KINDS.coord.check({ args[2 + d] }) then return args, n, 2 + d end
            end
        end
        local extra = first_not_nil(args, 3 + dim, n)
        if extra then return args, n, extra end
        if e.tip then return args, n, 0 end -- held already: detach_tip first
        return args, n, nil
    end

    -- ---- module functions with arguments of their own ----

    -- ik.chain2d_points(points) / ik.chain3d_points(points).
    local function make_points(dim, mode)
        local dirty = mode ~= "clean"
        local n = lengths_count(r)
        local t = {}
        local prev = {}
        for d = 1, dim do prev[d] = random_real(r) end
        for j = 1, n + 1 do
            local far = r.chance(0.03)
            for d = 1, dim do
                local v
                if j > 1 and r.chance(0.1) then
                    v = prev[d]
                elseif far then
                    v = r.pick({ 1e300, -1e300, 5e299, -5e299, 0 })
                elseif r.chance(0.04) then
                    v = r.pick(EDGES)
                else
                    v = prev[d] + random_real(r) * 2
                end
                if not within_range(v) and not dirty then v = 0 end
                prev[d] = v
                t[#t + 1] = v
            end
        end
        if dirty then
            local k = r.int(1, 6)
            if k == 1 then
                t[#t + 1] = 1 -- not a whole number of points
            elseif k == 2 then
                local keep = r.int(0, 2 * dim - 1)
                for x = #t, keep + 1, -1 do t[x] = nil end -- fewer than two points
            elseif k == 3 then
                t[r.int(1, #t)] = r.pick({ NAN, huge, "1", "x", true, {}, 1e301, DBL_MAX })
            elseif k == 4 then
                t[1], t[dim + 1] = 1e300, -1e300 -- a segment longer than the range
            elseif k == 5 then
                t = r.pick({ 5, "x", true })
            else
                proxy(t)
            end
        elseif r.chance(0.05) then
            harmless(t)
        end
        local args, n_args = { t }, 1
        if mode == "missing" then args, n_args = {}, 0 end
        if mode == "extra" then n_args = add_extras(args, n_args) end -- lua_settop(L, 1)
        local p = args[1]
        if not plain_table(p) then return args, n_args, 1 end
        local count = rawlen(p)
        if count % dim ~= 0 or count < 2 * dim then return args, n_args, 1 end
        for k = 1, count do
            local ok, x = finite_number(rawget(p, k))
            if not ok or not within_range(x) then return args, n_args, 1 end
        end
        if not point_lengths(p, dim) then return args, n_args, 1 end
        return args, n_args, nil
    end

    -- ik.solve_many(chains, targets [, reached [, distances [, iterations]]]).
    local function make_solve_many(mode)
        local dirty = mode ~= "clean"
        local dim = r.chance(0.5) and 2 or 3
        local chains, entries = {}, {}
        local count = r.pick({ 0, 1, 1, 2, 2, 3, 3, 4, 5 })
        local many = r.chance(0.04) -- past the binding's blocks and the core's batch of 64
        if many then count = r.int(65, 140) end
        for k = 1, count do
            if dirty and r.chance(0.05) then
                chains[k] = not_a_chain(r)
            else
                local e = (dirty and r.chance(0.1)) and pick_chain(5 - dim) or pick_chain(dim)
                if k > 1 and r.chance(0.08) then e = entries[r.int(1, k - 1)] or e end -- twice
                if many and r.chance(0.9) then e = fixture_chain(dim) end
                chains[k] = e.c
                entries[k] = e
            end
        end
        local targets
        if r.chance(0.3) then
            targets = nil -- every chain's kept goal
        else
            targets = {}
            local first = entries[1]
            local tdim = first and first.dim or dim
            for k = 1, #chains do
                local e = entries[k]
                local t = pack(gen_target(r, { entry = e, dim = tdim, n = e and e.n or 2 }, dirty and r.chance(0.1)))
                for d = 1, tdim do targets[#targets + 1] = t[d] end
            end
            if dirty and #targets > 0 and r.chance(0.1) then targets[#targets] = nil end
            if dirty then targets = dress(r, targets, true) end
        end
        if dirty and r.chance(0.05) then chains = r.pick({ 5, "x", proxy({}) }) end
        if dirty and r.chance(0.04) then targets = r.pick({ 5, "x", true }) end
        local args, n = { chains, targets }, 2
        for k = 3, 5 do
            if r.chance(0.4) then
                args[k] = (dirty and r.chance(0.1)) and r.pick({ 5, "x", true }) or {}
                if args[k] and type(args[k]) == "table" and r.chance(0.3) then
                    for i = 1, r.int(1, 8) do args[k][i] = i end -- longer than needed
                end
                n = k
            end
        end
        if mode == "missing" then n = r.int(0, 1); for k = n + 1, 5 do args[k] = nil end end
        if mode == "extra" then n = add_extras(args, max(n, 5)) end
        -- the oracle, in the binding's order
        local c, t = args[1], args[2]
        if not plain_table(c) then return args, n, 1, entries end
        if t ~= nil and not plain_table(t) then return args, n, 2, entries end
        for k = 3, 5 do
            if args[k] ~= nil and type(args[k]) ~= "table" then return args, n, k, entries end
        end
        local count = rawlen(c)
        local cdim
        for k = 1, count do
            local e = type(rawget(c, k)) == "userdata" and entry_of[rawget(c, k)] or nil
            if not e then return args, n, 1, entries end
            cdim = cdim or e.dim
            if e.dim ~= cdim then return args, n, 1, entries end
        end
        if t ~= nil then
            for k = 1, count * (cdim or 2) do
                local ok, x = finite_number(rawget(t, k))
                if not ok or not within_range(x) then return args, n, 2, entries end
            end
        end
        for k = 1, count do
            local e = entry_of[rawget(c, k)]
            if e.c:settings().solver == "two_bone" and e.n ~= (e.has_orient and 3 or 2) then
                return args, n, 1, entries
            end
            if t ~= nil and e.tip then return args, n, 2, entries end -- a held tip takes no target
            if t == nil and not e.has_target then return args, n, 2, entries end
        end
        return args, n, nil, entries
    end

    -- ik.gait(legs, options): legs of its own (a body with 1 to 4 legs, or free legs, so
    -- the gait's goals touch no chain of the pool), options valid or not, or legs that are
    -- not. The oracle follows the binding's order: the two tables, the leg count, the
    -- options, then each leg, then a leg twice.
    local function make_gait(mode)
        local dirty = mode ~= "clean"
        local dim = r.chance(0.5) and 2 or 3
        local function chain(lengths) return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths) end
        local body = chain({ 1 })
        local legs = {}
        for k = 1, r.int(1, 4) do
            local leg = chain({ 0.5 + r.unit(), 0.5 + r.unit() })
            if r.chance(0.7) then leg:attach(body, r.int(1, 2)) end
            legs[k] = leg
        end
        local o = { stride = r.pick({ 0.3, 1, 1e-9, 1e300 }) }
        if r.chance(0.3) then o.step_time = r.pick({ 0.1, 0.25, 1e-6, 5 }) end
        if r.chance(0.3) then o.lift = r.pick({ 0, 0.1, 2 }) end
        if r.chance(0.3) then o.lead = r.pick({ 0, 0.5, 2 }) end
        if r.chance(0.3) then o.max_groups = r.int(1, 3) end
        if r.chance(0.2) then o.up = r.pick({ 1, -1 }) end
        if r.chance(0.5) then o.ground = function(x, z) return 0.1 * math.sin(x) + 0.05 * (z or 0) end end
        if r.chance(0.3) and #legs >= 2 then o.groups = { { 1 }, {} }
            for k = 2, #legs do table.insert(o.groups[2], k) end
        end
        local bad_options = false
        if dirty then
            local k = r.int(1, 12)
            if k == 1 then legs = {}
            elseif k == 2 then legs[#legs + 1] = not_a_chain(r)
            elseif k == 3 then legs[#legs + 1] = dim == 2 and ik.chain3d({ 1 }) or ik.chain2d({ 1 })
            elseif k == 4 then legs[#legs + 1] = legs[1]
            elseif k == 5 then legs = r.pick({ 5, "x", true, body })
            elseif k == 6 then proxy(legs)
            elseif k == 7 then o.stride = r.pick({ 0, NEG_ZERO, -1, NAN, huge, 1e301, "1", nil })
            elseif k == 8 then o[r.pick({ "step_time", "lift", "lead" })] = r.pick({ -1, NAN, huge, "x", {} })
            elseif k == 9 then
                if r.chance(0.5) then o.max_groups = r.pick({ 0, -1, 1.5, NAN, "2" }) else o.up = r.pick({ 0, 2, 0.5, "1" }) end
            elseif k == 10 then o[r.pick({ "ground", "groups", "nope" })] = r.pick({ 5, "x", { { 9 } } })
            elseif k == 11 then o.groups = r.pick({ {}, { {} }, { { 1, 1 } }, { { 0 } }, { { 1.5 } } })
            else o = r.pick({ 5, "x", nil }) end
        end
        local args, n = { legs, o }, 2
        if mode == "missing" then args, n = { legs }, 1 end
        -- the oracle
        local a, t = args[1], args[2]
        if not plain_table(a) then return args, n, 1 end
        if not plain_table(t) then return args, n, 2 end
        local count = rawlen(a)
        if count < 1 then return args, n, 1 end
        local stride = rawget(t, "stride")
        for key, v in next, t do
            if key == "stride" or key == "step_time" or key == "lift" or key == "lead" then
                if type(v) ~= "number" then return args, n, 2 end
            elseif key == "max_groups" or key == "up" then
                if not is_whole(v) then return args, n, 2 end
            elseif key == "ground" then
                if type(v) ~= "function" then return args, n, 2 end
            elseif key == "groups" then
                if not plain_table(v) then return args, n, 2 end
                local seen = {}
                for j = 1, rawlen(v) do
                    local grp = rawget(v, j)
                    if not plain_table(grp) or rawlen(grp) == 0 then return args, n, 2 end
                    for i = 1, rawlen(grp) do
                        local x = rawget(grp, i)
                        if not is_whole(x) or x < 1 or x > count or seen[x] then return args, n, 2 end
                        seen[x] = true
                    end
                end
                for k = 1, count do if not seen[k] then return args, n, 2 end end
            else
                return args, n, 2
            end
        end
        if type(stride) ~= "number" or not (stride > 0) or not within_range(stride) then return args, n, 2 end
        local step_time, lead = rawget(t, "step_time"), rawget(t, "lead")
        local lift, most, up = rawget(t, "lift"), rawget(t, "max_groups") or 1, rawget(t, "up") or 1
        if step_time == nil then step_time = 0.25 end
        if lead == nil then lead = 0.5 end
        if lift == nil then lift = 0.25 * stride end
        if not (within_range(step_time) and step_time > 0) or not (within_range(lift) and lift >= 0)
            or not (is_finite(lead) and lead >= 0 and lead * stride <= M.COORD_MAX) or most < 1
            or (up ~= 1 and up ~= -1) then
            return args, n, 2
        end
        local d, seen = nil, {}
        for k = 1, count do
            local c = rawget(a, k)
            if type(c) ~= "userdata" or getmt(c) ~= chain_mt then return args, n, 1 end
            d = d or c:dim()
            if c:dim() ~= d then return args, n, 1 end
        end
        for k = 1, count do
            if seen[rawget(a, k)] then return args, n, 1 end
            seen[rawget(a, k)] = true
        end
        return args, n, nil
    end

    -- ik.rig(chains): a random tree of the pool's chains, or one that is not.
    local function make_rig(mode)
        local dirty = mode ~= "clean"
        if r.chance(0.02) then
            -- a tree of 65 to 70 chains, past the binding's stack buffer (made for the call)
            local dim, list = r.chance(0.5) and 2 or 3, {}
            for k = 1, r.int(65, 70) do
                local e = fixture_chain(dim)
                if k > 1 then
                    local p = list[r.int(1, k - 1)]
                    local j = r.int(1, p.n + 1)
                    e.c:attach(p.c, j)
                    e.parent, e.joint, e.last_joint = p, j, j
                    e.links = (e.links or 0) + 1
                    e.offset = dim == 2 and 0 or { 1, 0, 0, 0 }
                end
                list[k] = e
            end
            r.shuffle(list)
            local t = {}
            for k, e in ipairs(list) do t[k] = e.c end
            return { t }, 1, nil, list
        end
        -- mostly a chain with children in the pool: a tree of several chains
        local root = r.chance(0.75) and pick_chain(nil, function(x)
            for _, y in ipairs(pool) do
                if y.parent == x then return true end
            end
            return false
        end) or pick_chain(nil)
        local dim = root.dim
        local list, inside = { root }, { [root] = true }
        local decided = {}
        local grew = true
        while grew do
            grew = false
            for _, e in ipairs(pool) do
                if not decided[e] and e.dim == dim and e.parent and inside[e.parent] then
                    decided[e] = true
                    if r.chance(0.8) then
                        list[#list + 1] = e
                        inside[e] = true
                        grew = true
                    end
                end
            end
        end
        local function hold(e, o) -- e's tip held on o, made for the call
            local j = r.int(1, o.n + 1)
            e.c:attach_tip(o.c, j)
            e.tip, e.tip_joint, e.tip_offset, e.holds, e.has_target = o, j, nil, (e.holds or 0) + 1, true
        end
        if r.chance(0.3) then -- a loop inside
            local e, o = list[r.int(1, #list)], list[r.int(1, #list)]
            if e ~= o and not e.tip then hold(e, o) end
        end
        if r.chance(0.15) then -- a second root, joined to the tree by its hold
            local x = pick_chain(dim, function(x) return not inside[x] and x.parent == nil and not x.tip end)
            if x then
                hold(x, list[r.int(1, #list)])
                list[#list + 1], inside[x] = x, true
            end
        end
        r.shuffle(list)
        local t = {}
        for k, e in ipairs(list) do t[k] = e.c end
        if dirty then
            local k = r.int(1, 8)
            if k == 1 then
                table.insert(t, r.int(1, #t + 1), list[r.int(1, #list)].c) -- a chain twice
            elseif k == 2 then
                local other = pick_chain(dim, function(x) return not inside[x] end) -- a second root?
                if other then table.insert(t, r.int(1, #t + 1), other.c) end
            elseif k == 3 then
                local other = pick_chain(5 - dim)
                if other then table.insert(t, r.int(1, #t + 1), other.c) end
            elseif k == 4 then
                table.insert(t, r.int(1, #t + 1), not_a_chain(r))
            elseif k == 5 then
                t = {}
            elseif k == 6 then
                t = r.pick({ 5, "x", true, root.c })
            elseif k == 7 then
                proxy(t)
            else
                -- the root's parent left out, the parent's parent in: two roots
                local p = root.parent
                if p and p.parent and p.parent.dim == dim then table.insert(t, p.parent.c) end
            end
        elseif r.chance(0.05) then
            harmless(t)
        end
        local args, n = { t }, 1
        if mode == "missing" then args, n = {}, 0 end
        if mode == "extra" then n = add_extras(args, n) end -- lua_settop(L, 1)
        -- the oracle: every element a chain, one dimension, no chain twice, one root
        local a = args[1]
        if not plain_table(a) or rawlen(a) < 1 then return args, n, 1 end
        local entries, seen = {}, {}
        for k = 1, rawlen(a) do
            local e = type(rawget(a, k)) == "userdata" and entry_of[rawget(a, k)] or nil
            if not e then return args, n, 1 end
            entries[k] = e
        end
        local roots = 0
        for k, e in ipairs(entries) do
            if e.dim ~= entries[1].dim or seen[e] then return args, n, 1 end
            seen[e] = true
        end
        for _, e in ipairs(entries) do
            if not (e.parent and seen[e.parent]) then roots = roots + 1 end
        end
        if roots > 1 then
            -- several roots: the holds inside must join everything into one piece
            local set = {}
            local function find(e)
                while set[e] and set[e] ~= e do e = set[e] end
                return e
            end
            for _, e in ipairs(entries) do set[e] = e end
            for _, e in ipairs(entries) do
                if e.parent and seen[e.parent] then set[find(e)] = find(e.parent) end
                if e.tip and seen[e.tip] then set[find(e)] = find(e.tip) end
            end
            for _, e in ipairs(entries) do
                if find(e) ~= find(entries[1]) then return args, n, 1 end
            end
            -- and no root hangs, through chains outside, below a chain of the rig
            for _, e in ipairs(entries) do
                if not (e.parent and seen[e.parent]) then
                    local x = e.parent
                    while x do
                        if seen[x] then return args, n, 1 end
                        x = x.parent
                    end
                end
            end
            event("rig with several roots joined by holds")
        end
        if roots < 1 then return args, n, 1 end
        return args, n, nil, entries
    end

    -- ---- what successful calls did ----


    POST.set_target = function(call)
        set_goal(call.entry, call.args)
    end
    POST.clear_target = function(call)
        local e = call.entry
        e.has_target, e.has_orient = false, false
        if e.tip then e.tip, e.tip_joint, e.tip_offset, e.holds = nil, nil, nil, (e.holds or 0) + 1 end
    end
    POST.detach_tip = function(call, ret)
        local e = call.entry
        if e.tip then
            e.tip, e.tip_joint, e.tip_offset, e.holds = nil, nil, nil, (e.holds or 0) + 1
            e.has_target = false
        end
        if ret.n ~= 0 then return "detach_tip returned something" end
    end
    POST.tip_parent = function(call, ret)
        local e = call.entry
        if e.tip == nil then
            if ret.n ~= 0 then return "tip_parent() returned something for a free tip" end
        elseif not (ret.n == 2 and rawequal(ret[1], e.tip.c) and ret[2] == e.tip_joint) then
            return fmt("tip_parent() returned %s, %s", show(ret[1]), show(ret[2]))
        end
    end
    POST.set_orient = function(call)
        local e, a = call.entry, call.args
        e.has_orient = true
        if e.dim == 2 then
            e.orient = wrap(a[1] + 0.0)
        else
            e.orient_unit = { qunit(a[1], a[2], a[3], a[4]) }
        end
    end
    POST.set_limit = function(call)
        local e, a, name = call.entry, call.args, call.op.name
        local i = a[1]
        local l = e.limits[i]
        if name == "set_limit" then
            e.limits[i] = { min = a[2] + 0.0, max = a[3] + 0.0 }
        elseif name == "set_hinge" then
            e.limits[i] = { hinge = true, axis = { unit3(a[2], a[3], a[4]) }, min = a[5] ~= nil and a[5] + 0.0 or -pi,
                max = a[6] ~= nil and a[6] + 0.0 or pi }
        elseif name == "set_cone" then
            e.limits[i] = { cone = a[2] + 0.0, twist = l and not l.hinge and l.twist or nil }
        else
            e.limits[i] = { twist = { a[2] + 0.0, a[3] + 0.0 }, cone = l and not l.hinge and l.cone or nil }
        end
        refresh(e)
    end
    POST.clear_limit = function(call)
        call.entry.limits[call.args[1]] = nil
        refresh(call.entry)
    end
    POST.configure = function(call, ret)
        local e, t = call.entry, call.args[1]
        if ret.n ~= 1 or not rawequal(ret[1], e.c) then return "configure did not return its chain" end
        local st = call.after[e].st
        for k, v in next, t do
            local got = st[k]
            if k == "pole" then
                if v == false then
                    if got ~= false then return "pole reads " .. show(got) end
                else
                    local x, y, z = unit3(rawget(v, 1), rawget(v, 2), rawget(v, 3))
                    if type(got) ~= "table" or abs(got[1] - x) > 1e-12 or abs(got[2] - y) > 1e-12
                        or abs(got[3] - z) > 1e-12 then
                        return "pole reads " .. show(got)
                    end
                end
            elseif k == "gravity" then
                for d = 1, e.c:dim() do
                    if type(got) ~= "table" or not same(got[d], rawget(v, d) + 0.0) then
                        return "gravity reads " .. show(got)
                    end
                end
            elseif not same(got, type(v) == "number" and v + 0.0 or v) then
                return fmt("setting %s reads %s, was set to %s", k, show(got), show(v))
            end
        end
    end
    -- detach keeps the chain where its parent put it: on the parent's joint as it is now.
    POST.detach = function(call)
        local e = call.entry
        local why = e.parent and check_attached(e, true)
        if e.parent then e.links = (e.links or 0) + 1 end
        e.parent, e.joint, e.offset = nil, nil, nil
        if why then return "after detach: " .. why end
    end
    POST.parent = function(call, ret)
        local e = call.entry
        if e.parent == nil then
            if ret.n ~= 0 then return "parent() returned something for a chain without one" end
        elseif not (ret.n == 2 and rawequal(ret[1], e.parent.c) and ret[2] == e.joint) then
            return fmt("parent() returned %s, %s", show(ret[1]), show(ret[2]))
        end
    end
    POST.clone = function(call, ret)
        local e, c = call.entry, ret[1]
        if ret.n ~= 1 or type(c) ~= "userdata" or getmt(c) ~= chain_mt or rawequal(c, e.c) then
            return "did not return a new chain"
        end
        local copy = new_entry(c, e.lengths)
        copy.parent, copy.joint, copy.offset, copy.last_joint = e.parent, e.joint, e.offset, e.last_joint
        copy.has_target, copy.target, copy.has_orient, copy.orient, copy.orient_unit =
            e.has_target, e.target, e.has_orient, e.orient, e.orient_unit
        copy.tip, copy.tip_joint, copy.tip_offset = e.tip, e.tip_joint, e.tip_offset
        for i = 1, e.n do copy.limits[i] = e.limits[i] end
        refresh(copy)
        local s = snapshot(c)
        local why = diff(call.after[e], s, ALL)
        if why then return "the clone differs: " .. why end
        why = check_chain(copy, s) or check_model(copy, s)
        if why then return "the clone: " .. why end
        add_chain(copy)
    end
    POST.set_points = function(call)
        local e, s, b = call.entry, call.after[call.entry], call.before[call.entry]
        local p, dim = call.args[1], e.dim
        if not e.parent then
            for d = 1, dim do
                if not same(s.base[d], rawget(p, d) + 0.0) then
                    return fmt("base coordinate %d reads %s", d, show(s.base[d]))
                end
            end
        end
        if b then
            for k = dim + 1, #b.base do
                if not same(s.base[k], b.base[k]) then return "the base rotation changed" end
            end
            if e.parent then
                for d = 1, dim do
                    if not same(s.base[d], b.base[d]) then return "an attached chain's base moved" end
                end
            end
        end
        -- each bone along its segment (where it has a direction and no limit)
        for i = 1, e.n do
            local a, c = (i - 1) * dim, i * dim
            local dx, dy = rawget(p, c + 1) - rawget(p, a + 1), rawget(p, c + 2) - rawget(p, a + 2)
            local dz = dim == 3 and rawget(p, c + 3) - rawget(p, a + 3) or 0
            if e.lengths[i] > 0 and not e.limits[i] and (dx ~= 0 or dy ~= 0 or dz ~= 0) then
                local ux, uy, uz = unit3(dx, dy, dz)
                local bx, by, bz = bone_dir(s, i)
                if norm(bx - ux, by - uy, bz - uz) > 1e-9 then
                    return fmt("bone %d does not point along its segment", i)
                end
            end
        end
        -- a round trip: the chain where it was
        if b and not e.limited_any then
            local roundtrip, scale = true, e.total * s.stretch[1]
            for k = 1, #b.pos do
                roundtrip = roundtrip and same(rawget(p, k), b.pos[k])
                scale = max(scale, abs(b.pos[k]))
            end
            if roundtrip then
                event("set_points(positions())")
                for k = 1, #b.pos do
                    if abs(s.pos[k] - b.pos[k]) > 1e-9 * scale then
                        return fmt("set_points(positions()) moved position value %d from %s to %s",
                            k, show(b.pos[k]), show(s.pos[k]))
                    end
                end
            end
        end
    end
    POST.set_angles = function(call)
        local e, s, b = call.entry, call.after[call.entry], call.before[call.entry]
        local t = call.args[1]
        local roundtrip = b ~= nil
        if e.dim == 2 then
            for i = 1, e.n do
                local v = rawget(t, i) + 0.0
                if adist(s.pose[i], wrap(v)) > 1e-12 or (abs(v) <= pi and not same(s.pose[i], v)) then
                    return fmt("angle(%d) reads %s, was set to %s", i, show(s.pose[i]), show(v))
                end
                roundtrip = roundtrip and same(v, b.pose[i])
            end
        else
            for i = 1, e.n do
                local q = { rawget(t, 4 * i - 3), rawget(t, 4 * i - 2), rawget(t, 4 * i - 1), rawget(t, 4 * i) }
                local got = { s.pose[4 * i - 3], s.pose[4 * i - 2], s.pose[4 * i - 1], s.pose[4 * i] }
                if not qsame(got, { qunit(q[1], q[2], q[3], q[4]) }, 1e-12) then
                    return fmt("rotation(%d) reads other than it was set", i)
                end
                for k = 1, 4 do roundtrip = roundtrip and same(q[k], b.pose[4 * i - 4 + k]) end
            end
        end
        if roundtrip then
            event("set_angles/set_rotations of what angles/rotations read")
            local scale = e.total * s.stretch[1]
            for k = 1, #b.pos do scale = max(scale, abs(b.pos[k])) end
            for k = 1, #b.pos do
                if abs(s.pos[k] - b.pos[k]) > 1e-9 * scale then
                    return fmt("setting the pose it read moved position value %d from %s to %s",
                        k, show(b.pos[k]), show(s.pos[k]))
                end
            end
        end
    end

    -- While the known bug is there: a 2D chain whose tip bone has length 0, solved by a
    -- solver that leaves the joints as the truth.
    local function zero_tip_bug(e, solver)
        if not (bugs.orient_zero_tip_2d and e.dim == 2 and (solver == "fabrik" or solver == "relax")) then
            return false
        end
        -- length 0, or too short for the rounding of the joints to show its direction
        local scale = 0
        for d = 1, 2 do scale = max(scale, abs(e.target and e.target[d] or 0)) end
        local x, y = e.c:joint(e.n)
        scale = max(scale, abs(x), abs(y))
        return e.lengths[e.n] <= 1e-6 * scale
    end

    -- After a solve of chain e (the result at ret[offset + 1..3]): goals, result, limits,
    -- max_turn.
    local function judge_solve(call, e, ret, solver, offset)
        local s, b = call.after[e], call.before[e]
        local st = s.st
        offset = offset or 0
        local why = check_solve_result(ret, s, e, solver, offset, zero_tip_bug(e, solver))
            or check_limits(e, s)
        if why or e.limited_any then return why end
        if b then why = check_max_turn(b, s, st.max_turn) end
        -- mix 0: the pose before, to the bit
        if not why and b and st.mix == 0 then
            why = diff(b, s, { "pose" })
            if why then return "mix is 0, but the pose changed: " .. why end
        end
        if why or st.mix ~= 1 or st.max_turn ~= huge then return why end
        if solver == "aim" then
            -- a joint of weight 0 keeps its bone still: bone i's local pose as it was
            for i = 1, e.n do
                if b and s.w[i] == 0 then
                    event("aim with a joint of weight 0")
                    local per = e.dim == 2 and 1 or 4
                    for k = per * (i - 1) + 1, per * i do
                        if not same(b.pose[k], s.pose[k]) then
                            return fmt("aim turned bone %d, whose joint has weight 0", i)
                        end
                    end
                end
            end
            return nil
        end
        if e.has_orient then return nil end
        -- what nothing holds must happen: a stretch reaches its target; the two-bone solve
        -- reaches a target within its ring
        local dim, pos, t = e.dim, s.pos, e.target
        local d = norm(t[1] - pos[1], t[2] - pos[2], dim == 3 and t[3] - pos[3] or 0)
        local scale = max(abs(pos[1]), abs(pos[2]), dim == 3 and abs(pos[3]) or 0, abs(t[1]), abs(t[2]),
            dim == 3 and abs(t[3]) or 0, e.total)
        local distance = ret[offset + 2]
        local longest = 0
        for i = 1, e.n do longest = max(longest, e.lengths[i]) end
        if st.stretch and e.total > 0 and d > e.total * (1 + 1e-9) and d / e.total * longest <= 1e299
            and not (bugs.stretch_far and d / e.total > 1e150) then
            event("stretched to reach")
            -- (or met within the tolerance already: then nothing moves)
            if not (distance <= 1e-9 * scale or distance <= st.tolerance) then
                return fmt("stretched, but the tip is %s from the target", show(distance))
            end
        elseif solver == "two_bone" and st.softness == 0 and (not st.stretch or d <= e.total) then
            local l1, l2 = e.lengths[1], e.lengths[2]
            if d > abs(l1 - l2) + 1e-6 * scale and d < l1 + l2 - 1e-6 * scale then
                event("two-bone solve within its ring")
                if not (distance <= 1e-9 * scale) then
                    return fmt("a two-bone solve of a target within its ring, but the tip is %s from it",
                        show(distance))
                end
            end
        end
        return nil
    end

    POST.set_length = function(call)
        local e = call.entry
        e.lengths[call.args[1]] = call.args[2] + 0.0
        refresh(e)
    end

    -- ik.chain*_points: the lengths of the segments, the base on the first point (angle 0 or
    -- the identity), every joint on its point.
    POST.points = function(call, ret)
        local dim, p, c = call.op.creates, call.args[1], ret[1]
        if ret.n ~= 1 or type(c) ~= "userdata" or getmt(c) ~= chain_mt or c:dim() ~= dim then
            return "did not return a chain of dimension " .. dim
        end
        local e = new_entry(c, point_lengths(p, dim))
        local s = snapshot(c)
        local why = check_chain(e, s) or check_model(e, s)
        if why then return why end
        if s.n ~= rawlen(p) / dim - 1 then return fmt("%d bones for %d points", s.n, rawlen(p) / dim) end
        local rest = dim == 2 and { 0 } or { 1, 0, 0, 0 }
        for k = 1, #rest do
            if not same(s.base[dim + k], rest[k] + 0.0) then return "the base frame is not the rest frame" end
        end
        local scale = e.total
        for k = 1, rawlen(p) do scale = max(scale, abs(rawget(p, k))) end
        for k = 1, rawlen(p) do
            local want = rawget(p, k) + 0.0
            if (k <= dim and not same(s.pos[k], want)) or abs(s.pos[k] - want) > 1e-9 * scale then
                return fmt("position value %d is %s, the point's %s", k, show(s.pos[k]), show(want))
            end
        end
        add_chain(e)
    end

    -- Whether no chain of the list hangs (at any depth) below another, nor is there twice.
    local function independent(entries, count)
        for k = 1, count do
            for j = 1, count do
                if j ~= k and below(entries[k], entries[j]) then return false end
            end
        end
        return true
    end

    POST.solve_many = function(call, ret)
        local args, entries = call.args, call.entries
        local chains, targets = args[1], args[2]
        local count = rawlen(chains)
        local dim = count > 0 and entries[1].dim or 2
        if ret.n ~= 1 or not (is_whole(ret[1]) and ret[1] >= 0 and ret[1] <= count) then
            return "reached_count is " .. show(ret[1])
        end
        for k = 1, count do
            if targets ~= nil then
                local t = {}
                for d = 1, dim do t[d] = rawget(targets, (k - 1) * dim + d) end
                set_goal(entries[k], t)
            end
        end
        local out_r, out_d, out_i = args[3], args[4], args[5]
        local trues = 0
        for k = 1, count do
            local e = entries[k]
            local st = call.after[e].st
            if out_r ~= nil then
                local v = rawget(out_r, k)
                if type(v) ~= "boolean" then return fmt("reached[%d] is %s", k, show(v)) end
                if v then trues = trues + 1 end
            end
            if out_d ~= nil and not (is_finite(rawget(out_d, k)) and rawget(out_d, k) >= 0) then
                return fmt("distances[%d] is %s", k, show(rawget(out_d, k)))
            end
            local it = out_i and rawget(out_i, k)
            if out_i ~= nil and not (is_whole(it) and it >= 0 and it <= st.iterations) then
                return fmt("iterations[%d] is %s", k, show(rawget(out_i, k)))
            end
        end
        if out_r ~= nil and trues ~= ret[1] then
            return fmt("reached_count %d, but %d reached", ret[1], trues)
        end
        local alone = independent(entries, count) and not holds_move(entries)
        for k = 1, count do
            if entries[k].tip then entries[k].target = call.held_targets[entries[k]] end
        end
        for k = 1, count do
            local e = entries[k]
            local s = call.after[e]
            local why = check_limits(e, s)
            if why then return fmt("chain %d: %s", k, why) end
            if alone then
                if out_r ~= nil and out_d ~= nil and out_i ~= nil then
                    local got = { rawget(out_r, k), rawget(out_d, k), rawget(out_i, k) }
                    why = check_solve_result(got, s, e, s.st.solver, 0,
                        zero_tip_bug(e, s.st.solver))
                end
                if not why and call.before[e] and not e.limited_any then
                    why = check_max_turn(call.before[e], s, s.st.max_turn)
                end
                if why then return fmt("chain %d: %s", k, why) end
            end
        end
        -- each chain as its own solve leaves it, bit for bit (a clone made before the call)
        if targets == nil then event("solve_many towards the kept goals") end
        if count > 64 then event("solve_many of more than 64 chains") end
        if call.clones then
            event("solve_many compared with each chain's own solve")
            for k = 1, count do
                local clone, e = call.clones[k], entries[k]
                local t = {}
                if targets ~= nil then
                    for d = 1, dim do t[d] = rawget(targets, (k - 1) * dim + d) end
                end
                local got = pack(clone:solve(unpack(t, 1, targets ~= nil and dim or 0)))
                for x, out in ipairs({ out_r, out_d, out_i }) do
                    if out ~= nil and not same(rawget(out, k), got[x]) then
                        return fmt("chain %d: result %d is %s, its own solve gives %s",
                            k, x, show(rawget(out, k)), show(got[x]))
                    end
                end
                local why = diff(call.after[e], snapshot(clone), without(ALL, "parent"))
                if why then return fmt("chain %d differs from its own solve: %s", k, why) end
            end
        end
    end

    POST.rig = function(call, ret)
        local g = ret[1]
        if ret.n ~= 1 or type(g) ~= "userdata" or getmt(g) ~= rig_mt then return "did not return a rig" end
        serial = serial + 1
        local rec = { g = g, id = serial, entries = call.entries, dim = call.entries[1].dim, tree = {},
            settings = { solver = "fabrik", iterations = 64, tolerance = 1e-3, angle_tolerance = 1e-3 } }
        for k, e in ipairs(rec.entries) do
            rec.tree[k] = { parent = e.parent, joint = e.joint, last_joint = e.last_joint, links = e.links or 0,
                tip = e.tip, tip_joint = e.tip_joint, holds = e.holds or 0 }
        end
        rig_of[g] = rec
        event(#rec.entries > 1 and "rig of several chains made" or "rig of one chain made")
        if opts.trace then opts.trace(0, "      made " .. describe_rig(rec)) end
        if #rigs < RIG_MAX then rigs[#rigs + 1] = rec else rigs[r.int(1, RIG_MAX)] = rec end
    end
    -- A gait made: it walks its body a few frames; planted feet stay, feet are finite, and
    -- every leg's goal is its foot.
    POST.gait = function(call, ret)
        local g, legs = ret[1], call.args[1]
        if ret.n ~= 1 or type(g) ~= "userdata" or tostring(g) ~= fmt("ik.gait(%d leg%s)", rawlen(legs), rawlen(legs) == 1 and "" or "s") then
            return "did not return a gait"
        end
        if #g ~= rawlen(legs) then return "#gait is " .. show(#g) end
        local dim = rawget(legs, 1):dim()
        local before = {}
        for f = 1, 5 do
            local body = rawget(legs, 1):parent()
            if body then
                if dim == 2 then body:set_base(f * 0.2, 0) else body:set_base(f * 0.2, 0, 0) end
            end
            local ok, err = pcall(g.update, g, 1 / 30)
            if not ok then return "update failed: " .. tostring(err) end
            for k = 1, #g do
                local v = pack(g:foot(k))
                if v.n ~= dim + 2 then return fmt("foot(%d) returned %d values", k, v.n) end
                for d = 1, dim do
                    if not is_finite(v[d]) then return fmt("foot %d is not finite", k) end
                end
                local t = pack(rawget(legs, k):target())
                for d = 1, dim do
                    if t[d] ~= v[d] then return fmt("leg %d's goal is not its foot", k) end
                end
                local b = before[k]
                -- (a step shorter than a frame starts and lands within one update)
                local step_time = rawget(call.args[2], "step_time") or 0.25
                if b and not b[dim + 1] and not v[dim + 1] and step_time > 1 / 30 then
                    for d = 1, dim do
                        if b[d] ~= v[d] then return fmt("planted foot %d moved", k) end
                    end
                end
                before[k] = v
            end
        end
        event("gait made and walked")
    end
    POST.rig_count = function(call, ret)
        if not (ret.n == 1 and ret[1] == #call.rig.entries) then return "returned " .. show(ret[1]) end
    end
    POST.rig_tostring = function(call, ret)
        local k = #call.rig.entries
        if ret[1] ~= fmt("ik.rig(%d chain%s)", k, k == 1 and "" or "s") then
            return "returned " .. show(ret[1])
        end
    end
    POST.rig_chain = function(call, ret)
        if not (ret.n == 1 and rawequal(ret[1], call.rig.entries[call.args[1]].c)) then
            return "returned " .. show(ret[1]) .. ", not chain " .. call.args[1] .. " of the rig"
        end
    end
    local function rig_settings_are(t, model)
        for _, k in ipairs(RIG_KEYS) do
            if not same(rawget(t, k), model[k]) then
                return fmt("settings().%s is %s, %s expected", k, show(rawget(t, k)), show(model[k]))
            end
        end
    end
    POST.rig_configure = function(call, ret)
        local g, t = call.rig, call.args[1]
        if not (ret.n == 1 and rawequal(ret[1], g.g)) then return "configure did not return its rig" end
        for k, v in next, t do g.settings[k] = type(v) == "number" and v + 0.0 or v end
        return rig_settings_are(g.g:settings(), g.settings)
    end
    POST.rig_settings = function(call, ret)
        local t = ret[1]
        if ret.n ~= 1 or type(t) ~= "table" or (call.args[1] ~= nil and not rawequal(t, call.args[1])) then
            return "did not return its table"
        end
        return rig_settings_are(t, call.rig.settings)
    end

    -- rig:solve(): every chain sound (the watch checks it), the result the chains show, the
    -- root's base still, chains without a goal below them carried in their pose, limits and
    -- max_turn honoured.
    POST.rig_solve = function(call, ret)
        local g = call.rig
        local st = g.settings
        local reached, d, it = ret[1], ret[2], ret[3]
        if ret.n ~= 3 or type(reached) ~= "boolean" then
            return "returned " .. ret.n .. " values, or reached not a boolean"
        end
        if not (is_finite(d) and d >= 0) then return "max_distance is " .. show(d) end
        if not (is_whole(it) and it >= 0 and it <= st.iterations) then return "iterations is " .. show(it) end
        local inside, goal_below = {}, {}
        for _, e in ipairs(g.entries) do inside[e] = true end
        local goals = 0
        for _, e in ipairs(g.entries) do
            if e.has_target then
                goals = goals + 1
                -- a loop bends the chains on both of its sides
                for _, start in ipairs({ e, e.tip and inside[e.tip] and e.tip or false }) do
                    local x = start or nil
                    while x and inside[x] and not goal_below[x] do
                        goal_below[x] = true
                        x = x.parent
                    end
                end
                if e.tip then
                    -- a loop inside: the point where the solve left it; outside: where it was
                    e.target = inside[e.tip] and held_point(e) or call.held_targets[e]
                    event(inside[e.tip] and "rig solve of a loop" or "rig solve of a hold outside")
                end
            end
        end
        event(goals == 0 and "rig solve without a goal" or "rig solve with goals")
        if #g.entries > 1 then event("rig solve of several chains") end
        if #g.entries > 64 then event("rig solve of more than 64 chains") end
        if goals == 0 then
            if not (reached == true and d == 0 and it == 0) then
                return "no goal, but it returned " .. fmt("%s, %s, %s", tostring(reached), show(d), show(it))
            end
            for _, e in ipairs(g.entries) do
                local b = call.before[e]
                local why = b and diff(b, call.after[e], ALL)
                if why then return "no goal, but " .. describe_entry(e) .. " changed: " .. why end
            end
            return nil
        end
        local worst, worst_scale, oriented_worst = 0, 0, 0
        for _, e in ipairs(g.entries) do
            local s, b = call.after[e], call.before[e]
            if s.stretch[1] ~= 1 then return describe_entry(e) .. " is stretched after a rig solve" end
            if e.has_target then
                local real, scale = tip_distance(s, e.target)
                if real > worst then worst = real end
                worst_scale = max(worst_scale, scale, hold_scale(e))
                local oe = orientation_error(e, s)
                if oe and oe > oriented_worst then oriented_worst = oe end
                local why = check_limits(e, s)
                if why then return describe_entry(e) .. ": " .. why end
                -- nothing holds its tip bone: it takes its orientation goal
                if oe and not e.limited_any and s.st.max_turn == huge and oe > 1e-9 then
                    return fmt("%s: the tip bone is %s off its orientation goal after the rig solve",
                        describe_entry(e), show(oe))
                end
            end
            if b then
                if not (e.parent and inside[e.parent]) then
                    -- the root: its base stays
                    local why = diff(b, s, { "base" })
                    if why then return "the root " .. describe_entry(e) .. " moved: " .. why end
                end
                -- (a pose outside the chain's limits, set since its last solve, or on a bound, is
                -- brought within them: check_limits above judges the pose it gets)
                if not goal_below[e] and not (s.st.max_turn < huge and e.limited_any) and not check_limits(e, b, true) then
                    -- to the bit; with max_turn, the hold (a slerp towards the same pose) may
                    -- round it in the last bits
                    local why
                    if s.st.max_turn < huge then
                        for k = 1, #b.pose do
                            if abs(b.pose[k] - s.pose[k]) > 1e-12 then why = fmt("pose[%d]: %s, then %s",
                                k, show(b.pose[k]), show(s.pose[k])) end
                        end
                    else
                        why = diff(b, s, { "pose" })
                    end
                    if why then
                        return describe_entry(e) .. " has no goal below it, but its pose changed: " .. why
                    end
                end
                if not e.limited_any then
                    local why = check_max_turn(b, s, s.st.max_turn)
                    if why then return describe_entry(e) .. ": " .. why end
                end
            end
        end
        if abs(worst - d) > 1e-12 * worst + 1e-15 * worst_scale + 1e-320 then
            return fmt("max_distance %s, but the farthest tip is %s from its goal", show(d), show(worst))
        end
        if reached and not (d <= st.tolerance and oriented_worst <= st.angle_tolerance + 1e-9) then
            return fmt("reached, with max_distance %s and a tip bone %s off its goal", show(d), show(oriented_worst))
        end
        if not reached and d <= st.tolerance and oriented_worst < st.angle_tolerance - 1e-9 then
            return fmt("not reached, with max_distance %s and the tip bones within %s of their goals",
                show(d), show(oriented_worst))
        end
    end

    -- ---- preparing a call ----

    local BAD_SELVES = { "nil", "fake", "number", "string", "stdout", "other", "other", "rig" }

    -- A call of a method of a chain: self, arguments and the oracle's verdict.
    local function prepare_method(op, mode)
        local want = op.self ~= "any" and op.self or nil
        local entry = pick_chain(want)
        if not entry then return nil end
        if op.special == "solve" and r.chance(0.3) then
            -- chains that keep a goal, or have an orientation goal: the kept goal and two_bone
            entry = pick_chain(want, function(e) return e.has_target or e.has_orient end) or entry
        end
        if op.solver == "two_bone" and r.chance(0.5) then
            entry = pick_chain(want, function(e) return e.n == (e.has_orient and 3 or 2) end) or entry
        end
        if op.name == "attach" and r.chance(0.6) then
            entry = pick_chain(want, function(e) return e.parent == nil end) or entry
        end
        local syntax = op.syntax or "method"
        local self_value, self_bad = entry.c, false
        if not op.syntax and r.chance(0.04) then
            local b = r.pick(BAD_SELVES)
            self_bad = true
            if b == "other" then
                local other = want and pick_chain(5 - want)
                if other then entry = other; self_value = other.c else self_value = nil; syntax = "field" end
            elseif b == "fake" then
                self_value = fake_self -- a table whose methods are the chain's
            else
                syntax = "field"
                self_value = (b == "number" and 42) or (b == "string" and "chain") or (b == "stdout" and io.stdout)
                    or (b == "rig" and #rigs > 0 and r.pick(rigs).g) or nil
            end
        end
        local ctx = { entry = entry, n = entry.n, dim = entry.dim }
        local args, n, bad
        if op.special then
            args, n, bad = SPECIAL[op.special](op, ctx, mode)
        else
            local slots = op.args
            if type(slots) == "function" then slots = slots(ctx.dim) end
            local no_more = op.no_more
            if type(no_more) == "function" then no_more = no_more(ctx.dim) end
            args, n, bad = make_args(slots, ctx, mode, no_more)
            if not bad and op.check then bad = op.check(ctx, args, n) end
        end
        if self_bad then bad = 0 end -- self is checked before anything else
        local call = { op = op, syntax = syntax, self = self_value, entry = (not self_bad) and entry or nil,
            args = args, n = n, bad = bad, touched = { { e = entry, keeps = op.keeps or SOLVE_KEEPS } } }
        if op.special == "solve" and entry.tip then
            call.held_target = held_point(entry) -- the point the solve goes to
        end
        if op.name == "attach_tip" and not self_bad then
            local pe = type(args[1]) == "userdata" and entry_of[args[1]]
            if pe and pe ~= entry then call.touched[2] = { e = pe, keeps = ALL } end
            call.touched[1].keeps = without(ALL, "goal")
        end
        if op.name == "attach" and not self_bad then
            local pe = type(args[1]) == "userdata" and entry_of[args[1]]
            if pe and pe ~= entry then call.touched[2] = { e = pe, keeps = ALL } end
            call.touched[1].keeps = without(LOCAL, "parent")
        elseif op.special == "set_points" then
            call.touched[1].keeps = without(POSE_KEEPS, "base")
        elseif op.special == "set_angles" then
            call.touched[1].keeps = POSE_KEEPS
        end
        return call
    end

    -- A call of a rig's method.
    local function prepare_rig_method(op, mode)
        if #rigs == 0 then return nil end
        local g = r.pick(rigs)
        local syntax = op.syntax or "method"
        local self_value, self_bad = g.g, false
        if not op.syntax and r.chance(0.04) then
            self_bad = true
            local b = r.int(1, 5)
            if b == 1 then
                self_value = pick_chain(nil).c -- a chain is not a rig (its own methods would take it)
                syntax = "field"
            elseif b == 2 then
                self_value = setmetatable({}, { __index = rig_methods })
            else
                syntax = "field"
                self_value = r.pick({ 42, "rig", io.stdout, false })
            end
        end
        local ctx = { n = #g.entries, dim = g.dim }
        local args, n, bad = make_args(op.args, ctx, mode, op.no_more)
        if self_bad then bad = 0 end
        local call = { op = op, syntax = syntax, self = self_value, rig = (not self_bad) and g or nil,
            args = args, n = n, bad = bad, touched = {} }
        local keeps = op.special == "rig_solve" and without(LOCAL, "pose", "stretch") or ALL
        for _, e in ipairs(g.entries) do call.touched[#call.touched + 1] = { e = e, keeps = keeps } end
        if op.special == "rig_solve" and not self_bad then
            if not bad then
                local inside = {}
                for _, e in ipairs(g.entries) do inside[e] = true end
                for k, e in ipairs(g.entries) do
                    if e.parent ~= g.tree[k].parent or e.joint ~= g.tree[k].joint then call.bad = 0 end
                    -- a hold changed; one on a chain outside after any attach_tip or detach_tip
                    if e.tip ~= g.tree[k].tip or e.tip_joint ~= g.tree[k].tip_joint then call.bad = 0 end
                    if e.tip and not inside[e.tip] and (e.holds or 0) ~= g.tree[k].holds then call.bad = 0 end
                    if e.tip then call.held_targets = call.held_targets or {}; call.held_targets[e] = held_point(e) end
                    -- the root hangs on a chain outside again, after an attach or detach: a
                    -- change (the core cannot tell a new chain at a freed one's address)
                    if not inside[g.tree[k].parent] and e.parent and (e.links or 0) ~= g.tree[k].links then
                        call.bad = 0
                    end
                end
                -- several roots: one now below a chain of the rig, through chains outside
                local roots = 0
                for _, e in ipairs(g.entries) do
                    if not (e.parent and inside[e.parent]) then roots = roots + 1 end
                end
                for _, e in ipairs(g.entries) do
                    if roots > 1 and not (e.parent and inside[e.parent]) then
                        local x = e.parent
                        while x do
                            if inside[x] then call.bad = 0 end
                            x = x.parent
                        end
                    end
                end
            end
            bad = call.bad
            -- while the known bug is there: no solve of a rig whose free chain was attached and
            -- detached at another joint
            if not bad and bugs.rig_stale_joint then
                for k, e in ipairs(g.entries) do
                    if e.parent == nil and e.last_joint ~= g.tree[k].last_joint then return nil end
                end
            end
            -- while the known bug is there: no solve of a rig whose effector weights times its
            -- coordinates come near the overflow
            if not bad and bugs.rig_weight_overflow then
                local w, extent = 0, 0
                for _, e in ipairs(g.entries) do
                    if e.has_target then
                        w = max(w, e.c:settings().effector_weight)
                        for d = 1, e.dim do extent = max(extent, abs(e.target[d])) end
                    end
                    for _, v in ipairs(e.c:positions()) do extent = max(extent, abs(v)) end
                    extent = max(extent, e.total)
                end
                if w > 1 and w * extent > 1e290 then return nil end
            end
            -- while the known bug is there: no goal-less solve of a stretched rig
            if not bad and bugs.rig_no_goal_unstretches then
                local goals = false
                for _, e in ipairs(g.entries) do goals = goals or e.has_target end
                if not goals then
                    for _, e in ipairs(g.entries) do
                        if e.c:stretch_factor() ~= 1 then return nil end
                    end
                end
            end
        end
        return call
    end

    -- A call of a module function.
    local function prepare_module(op, mode)
        local call = { op = op, syntax = "module", touched = {} }
        if op.special == "points" then
            call.args, call.n, call.bad = make_points(op.creates, mode)
        elseif op.special == "solve_many" then
            local entries
            call.args, call.n, call.bad, entries = make_solve_many(mode)
            call.held_targets = {}
            for _, e in pairs(entries) do
                if e.tip then call.held_targets[e] = held_point(e) end
            end
            local seen = {}
            for _, e in pairs(entries) do
                if not seen[e] then
                    seen[e] = true
                    call.touched[#call.touched + 1] = { e = e, keeps = SOLVE_KEEPS }
                end
            end
            call.entries = entries
            if call.bad then
                -- the output tables must come out of a rejected call as they went in
                call.outs = {}
                for k = 3, 5 do
                    local t = call.args[k]
                    if type(t) == "table" then
                        local copy = {}
                        for i = 1, rawlen(t) do copy[i] = rawget(t, i) end
                        call.outs[k] = copy
                    end
                end
            elseif r.chance(0.3) and independent(entries, rawlen(call.args[1])) and not holds_move(entries) then
                call.clones = {}
                for k = 1, rawlen(call.args[1]) do call.clones[k] = entries[k].c:clone() end
            end
        elseif op.special == "rig" then
            call.args, call.n, call.bad, call.entries = make_rig(mode)
        elseif op.special == "gait" then
            call.args, call.n, call.bad = make_gait(mode)
        else
            local ctx = { n = 2, dim = op.creates or 2 }
            call.args, call.n, call.bad = make_args(op.args, ctx, mode, op.no_more, op.no_more_first)
            if op.shape and not call.bad then op.shape(r, call.args) end
        end
        return call
    end

    -- The ops this module has, each repeated by its weight.
    local ops = {}
    for _, op in ipairs(M.OPS) do
        local exists
        if op.self == "rig" then
            exists = op.syntax and rig_mt[op.name] ~= nil or rig_methods[op.name] ~= nil
        elseif op.syntax then
            exists = chain_mt[op.name] ~= nil
        elseif op.self then
            exists = methods[op.name] ~= nil
        else
            exists = ik[op.name] ~= nil
        end
        if exists then
            for _ = 1, op.weight or 1 do ops[#ops + 1] = op end
        else
            stats.skipped[#stats.skipped + 1] = op_key(op)
        end
    end

    -- Whether a call would run into a known bug still there (M.KNOWN_BUGS): the run makes
    -- another instead, so the bug does not stop it (the spec's own test fails meanwhile).
    local function relaxes_one_bone_oriented(e, solver)
        return e.n == 1 and e.has_orient and solver == "relax"
    end
    function avoid(call)
        local op, args = call.op, call.args
        if bugs.pole_index and op.name == "configure" and op.self ~= "rig" and type(args[1]) == "table"
            and type(rawget(args[1], "pole")) == "table" and has_index(rawget(args[1], "pole")) then
            return true
        end
        if bugs.huge_angle and call.bad == nil then
            local function huge_angle(v) return type(v) == "number" and abs(v) > 1e6 end
            local name, dim = op.name, call.entry and call.entry.dim
            if name == "chain2d" and huge_angle(args[4]) or name == "set_angle" and huge_angle(args[2])
                or name == "set_target_angle" and huge_angle(args[1])
                or dim == 2 and (name == "set_base" or name == "attach") and huge_angle(args[3]) then
                return true
            end
            if name == "set_angles" and dim == 2 then
                for k = 1, rawlen(args[1]) do
                    if huge_angle(rawget(args[1], k)) then return true end
                end
            end
        end
        if bugs.relax_one_bone_oriented and call.bad == nil then
            local e = call.entry
            if op.special == "solve" and relaxes_one_bone_oriented(e, op.solver or e.c:settings().solver) then
                return true
            end
            if op.special == "solve_many" then
                for k = 1, rawlen(args[1]) do
                    local e = call.entries[k]
                    if relaxes_one_bone_oriented(e, e.c:settings().solver) then return true end
                end
            end
        end
        return false
    end

    -- ---- judging ----

    -- The chains to watch: the touched ones, and every pool chain hanging below one (which
    -- keeps its own state, and all of it when its ancestor did not move).
    local function watch_list(call)
        local list, seen = {}, {}
        local moves = false
        for _, t in ipairs(call.touched) do
            if not seen[t.e] then
                seen[t.e] = true
                list[#list + 1] = t
                local kept = {}
                for _, p in ipairs(t.keeps) do kept[p] = true end
                if not (kept.pos and kept.world and kept.base) then moves = true end
            end
        end
        -- a touched chain hanging below another that moves is carried: its base moves too
        if moves then
            for _, t in ipairs(list) do
                for _, u in ipairs(list) do
                    if u ~= t and t.e.parent and below(t.e.parent, u.e) then
                        t.keeps = without(t.keeps, "pos", "base", "world")
                        break
                    end
                end
            end
        end
        for _, e in ipairs(pool) do
            if not seen[e] then
                for _, t in ipairs(call.touched) do
                    if e.parent and below(e.parent, t.e) then
                        seen[e] = true
                        list[#list + 1] = { e = e, keeps = moves and LOCAL or ALL, below = true }
                        break
                    end
                end
            end
        end
        return list
    end

    local t0 = os.clock()
    local streak = 0 -- blind calls to come
    for step = 1, calls do
        local call
        repeat
            local op = r.pick(ops)
            local roll = r.int(1, 100)
            local mode = roll <= 62 and "clean" or roll <= 80 and "bad" or roll <= 86 and "bads"
                or roll <= 93 and "missing" or "extra"
            if op.self == "rig" then
                call = prepare_rig_method(op, mode)
            elseif op.self then
                call = prepare_method(op, mode)
            else
                call = prepare_module(op, mode)
            end
            if call and avoid(call) then call = nil end
        until call
        local op = call.op

        if #history == HISTORY then table.remove(history, 1) end
        history[#history + 1] = call

        if opts.trace then opts.trace(step, describe(call)) end
        if opts.inspect then opts.inspect(step, call) end -- a debugging hook: the call, before it is made
        if opts.dump_at == step then
            -- the chains the call is given, as Lua source (see M.recipe)
            for k, t in ipairs(call.touched) do opts.dump(describe_entry(t.e), M.recipe(t.e.c, "c" .. k)) end
        end
        -- blind: no reads before the call, nor of the chains hanging below the ones it is
        -- given: the chains as the last calls left them, caches stale (the never-stale check
        -- below reads them later)
        -- (sometimes a streak of such calls, so a change of a parent meets later calls on its
        -- children with nothing read in between)
        if streak == 0 and r.chance(0.02) then streak = r.int(5, 25) end
        local blind = streak > 0 or r.chance(0.08)
        if streak > 0 then streak = streak - 1 end
        local watch = watch_list(call)
        if blind then
            local given = {}
            for _, w in ipairs(watch) do
                if not w.below then given[#given + 1] = w end
            end
            watch = given
        end
        call.before, call.after = {}, {}
        local others = {}
        if not blind then
            for _, w in ipairs(watch) do call.before[w.e] = snapshot(w.e.c) end
            for _, e in ipairs(pool) do
                if not call.before[e] then others[#others + 1] = { e = e, pos = e.c:positions() } end
            end
        end

        local ok, ret
        local args, n = call.args, call.n
        if call.syntax == "method" or call.syntax == "len" or call.syntax == "tostring" then
            ok, ret = pcall(caller(op, call.syntax), call.self, unpack(args, 1, n))
        elseif call.syntax == "field" then
            local m = op.self == "rig" and rig_methods or methods
            ok, ret = pcall(caller(op, "field"), m, call.self, unpack(args, 1, n))
        else
            ok, ret = pcall(caller(op, "module"), ik, unpack(args, 1, n))
        end
        stats.calls = stats.calls + 1
        local key = op_key(op)
        local counts = stats.by_op[key] or { ok = 0, rejected = 0 }
        stats.by_op[key] = counts

        if ok then
            stats.ok = stats.ok + 1
            counts.ok = counts.ok + 1
            if call.bad then
                fail(step, "succeeded, but argument " .. call.bad .. " is bad (0 is self)")
            end
        else
            stats.rejected = stats.rejected + 1
            counts.rejected = counts.rejected + 1
            local k, name = parse_error(ret)
            if k == nil then
                fail(step, "raised something other than an argument error: " .. show(ret))
            elseif not call.bad then
                fail(step, "the arguments are valid, but it raised: " .. tostring(ret))
            else
                -- method-call syntax counts from self = 0, field syntax from self = 1
                local position = (op.self and call.syntax ~= "method") and k - 1 or k
                if not (name == op.name or name:sub(-#op.name - 1) == "." .. op.name) then
                    fail(step, "the error names another function: " .. tostring(ret))
                elseif position ~= call.bad then
                    fail(step, fmt("the error names argument %d, the bad one is %d (0 is self): %s", position,
                        call.bad, tostring(ret)))
                end
            end
        end

        -- what the call did, and the model
        if ok and not call.bad then
            for _, w in ipairs(watch) do call.after[w.e] = snapshot(w.e.c) end
            local why
            local post = op.post
            if op.special == "solve" then
                local e = call.entry
                if first_not_nil(args, 1, n) then set_goal(e, args) else event("solve towards the kept goal") end
                if e.tip then
                    event("solve of a held tip")
                    e.target = call.held_target
                end
                if e.has_orient then event("solve with an orientation goal") end
                if (op.solver or call.after[e].st.solver) == "aim" then event("aim") end
                if call.after[e].st.max_turn < huge then event("solve with max_turn") end
                why = judge_solve(call, e, ret, op.solver or call.before[e] and call.before[e].st.solver
                    or call.after[e].st.solver, 0)
                if not why and ret.n ~= 3 then why = fmt("returned %d values", ret.n) end
            elseif op.special == "set_points" then
                why = POST.set_points(call, ret)
            elseif op.special == "set_angles" then
                why = POST.set_angles(call, ret)
            elseif op.special == "attach" then
                local e, pe = call.entry, entry_of[args[1]]
                event("attach")
                e.parent, e.joint = pe, args[2]
                e.links = (e.links or 0) + 1
                e.last_joint = args[2] -- what detach leaves in the core (see M.KNOWN_BUGS)
                if e.dim == 2 then
                    -- the turn the core keeps is (cos, sin) of the angle as given
                    e.offset = args[3] ~= nil and wrap(args[3]) or 0
                else
                    e.offset = args[3] ~= nil and { qunit(args[3], args[4], args[5], args[6]) } or { 1, 0, 0, 0 }
                end
                if ret.n ~= 0 then why = "attach returned something" end
            elseif op.special == "attach_tip" then
                local e, pe = call.entry, entry_of[args[1]]
                event("attach_tip")
                e.tip, e.tip_joint, e.holds = pe, args[2], (e.holds or 0) + 1
                e.tip_offset = nil
                if first_not_nil(args, 3, 2 + e.dim) then
                    e.tip_offset = {}
                    for d = 1, e.dim do e.tip_offset[d] = args[2 + d] + 0.0 end
                end
                e.has_target = true
                if ret.n ~= 0 then why = "attach_tip returned something" end
            elseif op.special == "solve_many" then
                why = POST.solve_many(call, ret)
            elseif op.special == "rig" then
                why = POST.rig(call, ret)
            elseif op.special == "gait" then
                why = POST.gait(call, ret)
            elseif op.special == "rig_solve" then
                why = POST.rig_solve(call, ret)
            elseif op.special == "points" then
                why = POST.points(call, ret)
            elseif op.creates then
                local c = ret[1]
                if type(c) ~= "userdata" or getmt(c) ~= chain_mt or c:dim() ~= op.creates then
                    why = "did not return a chain of dimension " .. op.creates
                else
                    local e = new_entry(c, args[1])
                    local s = snapshot(c)
                    why = check_chain(e, s) or check_model(e, s)
                    local want = {}
                    for d = 1, op.creates do want[d] = args[1 + d] ~= nil and args[1 + d] + 0.0 or 0.0 end
                    for d = 1, op.creates do
                        if not why and not same(s.base[d], want[d]) then
                            why = fmt("base coordinate %d is %s", d, show(s.base[d]))
                        end
                    end
                    local angle = args[4] ~= nil and wrap(args[4] + 0.0) or 0
                    if not why and op.creates == 2 and adist(s.base[3], angle) > 1e-12 then
                        why = "base angle is " .. show(s.base[3])
                    end
                    if not why and op.creates == 3 then
                        local q = args[5] ~= nil and { qunit(args[5], args[6], args[7], args[8]) } or { 1, 0, 0, 0 }
                        if not qsame({ s.base[4], s.base[5], s.base[6], s.base[7] }, q, 1e-12) then
                            why = "base rotation is not the one given"
                        end
                    end
                    if not why then add_chain(e) end
                end
            elseif op.result then
                why = check_stateless(op.result, ret, args)
            elseif type(post) == "string" then
                why = POST[post](call, ret)
            elseif post then
                why = post(call, ret)
            end
            if why then fail(step, why) end
            if call.entry then refresh(call.entry) end
            -- every watched chain: sound, as the model says, and what it must keep kept
            for _, w in ipairs(watch) do
                local e, s = w.e, call.after[w.e]
                local reason = check_chain(e, s) or check_model(e, s)
                if not reason and call.before[e] then
                    reason = diff(call.before[e], s, w.keeps)
                    if reason then reason = "changed what it must keep: " .. reason end
                end
                if reason then
                    fail(step, (e == call.entry and "" or describe_entry(e) .. ": ") .. reason)
                    break
                end
            end
            for _, o in ipairs(others) do
                local now = o.e.c:positions()
                local why2 = #now ~= #o.pos and "count" or nil
                for k = 1, #now do
                    if not why2 and not same(now[k], o.pos[k]) then why2 = fmt("position value %d", k) end
                end
                if why2 then
                    fail(step, describe_entry(o.e) .. ", not given to the call, changed: " .. why2)
                    break
                end
            end
        elseif call.outs then
            -- rejected: solve_many's output tables as they were
            for k, copy in pairs(call.outs) do
                local t = args[k]
                for i = 1, max(#copy, rawlen(t)) do
                    if not same(rawget(t, i), copy[i]) then
                        fail(step, fmt("a rejected call wrote into output table %d", k))
                        break
                    end
                end
            end
        end
        if not ok and not blind then
            -- rejected: nothing changed anywhere
            for _, w in ipairs(watch) do
                local why = diff(call.before[w.e], snapshot(w.e.c), ALL)
                if why then
                    fail(step, "a rejected call changed " .. describe_entry(w.e) .. ": " .. why)
                    break
                end
            end
            for _, o in ipairs(others) do
                local now = o.e.c:positions()
                for k = 1, max(#now, #o.pos) do
                    if not same(now[k], o.pos[k]) then
                        fail(step, "a rejected call changed " .. describe_entry(o.e))
                        break
                    end
                end
            end
        end

        -- detach, collect, re-attach, outside the pool (see M.gc_round)
        if step % M.GC_EVERY == 0 then
            event("detach, collect, re-attach round")
            local why = M.gc_round(ik, gc_rng)
            if why then fail(step, "detach, collect, re-attach: " .. why) end
        end

        -- never stale: every attached chain of the pool on its parent as it is now
        if streak == 0 and r.chance(0.4) then
            local child_first = r.chance(0.5)
            for _, e in ipairs(pool) do
                if e.parent then
                    event("attached chain checked on its parent")
                    local why = check_attached(e, child_first)
                    if why then
                        fail(step, why)
                        break
                    end
                end
            end
        end

        if stats.failures > 0 and not opts.keep_going then break end
        if opts.progress and step % opts.progress == 0 then
            opts.progress_log(fmt("%d calls, %d ok, %d rejected, %.1f s", step, stats.ok, stats.rejected,
                os.clock() - t0))
        end
    end
    stats.seconds = os.clock() - t0
    return stats
end

return M
