-- A randomized test of the whole Lua API: random sequences of every public function and
-- method, with arguments drawn from valid values, edge values (0, -0, 1e-300, 5e-324,
-- 1e-160, 1e300, DBL_MAX, a target exactly on a joint or a bone's line; two-bone lengths
-- nearly equal with targets on the edges of the reachable ring) and invalid ones (NaN,
-- infinities, wrong types, numeric strings, missing and extra arguments, non-integer and
-- out-of-range indices, a table, nil, io.stdout or a chain of the other dimension as self).
--
-- Every call is judged by an oracle that knows the API's rules (API.md, and the range of
-- src/ik.h): from the actual arguments it works out which one the binding must reject, the
-- first bad one in the order it checks them. Then:
--   - no bad argument: the call must succeed;
--   - a bad argument: the call must fail with a Lua error string in the luaL_argerror
--     form ("bad argument #k to 'name' (...)" or "calling 'name' on bad self (...)"),
--     naming that argument and that function, and every chain it was given is unchanged
--     (compared through everything observable, -0 and +0 told apart);
--   - after a successful call, what the call must not touch is untouched, and every chain
--     it touched is sound: every position and rotation finite, bone lengths what was set
--     (exactly) and kept by the joints (1e-9 relative, where the length is not lost in the
--     rounding of the coordinates), rotations unit (1e-9), angles in [-pi, pi]; solves
--     return a consistent reached/distance/iterations.
--
-- The random numbers come from spec/helpers.lua's Park-Miller generator (exact in doubles),
-- so a seed gives the same sequence of calls in Lua 5.4 and in LuaJIT. A failure names the
-- seed and the call number; the same seed replays it.
--
-- Adding a function or method (joint limits, say) is one entry in OPS below, plus a kind in
-- KINDS if its arguments follow a rule no kind has yet. M.uncovered() lists the methods and
-- functions of the module that no entry covers.
--
--   local fuzz = require("spec.fuzz")
--   local stats = fuzz.run({ ik = require("ik"), seed = 1, calls = 10000 })
--   -- stats.failures == 0, stats.first: the first failure's report

local M = {}

local floor, abs, sqrt, max, huge, pi = math.floor, math.abs, math.sqrt, math.max, math.huge, math.pi
local fmt, select, type, tostring, tonumber, pcall = string.format, select, type, tostring, tonumber, pcall

local NAN = 0.0 / 0.0
local NEG_ZERO = 0.0 * -1.0 -- a literal -0.0 may be folded to +0 by a compiler
local DBL_MAX = 1.7976931348623157e308

-- The largest magnitude the core accepts for a base or target coordinate and for a bone
-- length: IK_MAX_COORD in src/ik.h.
M.COORD_MAX = 1e300

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
    return r
end

-- ---------------------------------------------------------------------------------------
-- Values.

local function is_finite(v)
    return v == v and v > -huge and v < huge
end

-- What luaL_checknumber and lua_isnumber see: a number, or a string that converts.
local function as_number(v)
    if type(v) == "number" then
        return v
    elseif type(v) == "string" then
        return tonumber(v)
    end
    return nil
end

local function finite_number(v)
    local x = as_number(v)
    return x ~= nil and is_finite(x), x
end

local function is_whole(x)
    return x ~= nil and is_finite(x) and x == floor(x)
end

local function within_range(x)
    return abs(x) <= M.COORD_MAX
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
    elseif type(v) == "userdata" and M.describe_chain then
        return M.describe_chain(v)
    elseif type(v) == "table" then
        if getmetatable(v) then return "<fake chain>" end
        local parts = {}
        for i = 1, max(#v, 0) do parts[#parts + 1] = show(v[i]) end
        for k, x in pairs(v) do
            if type(k) ~= "number" or k < 1 or k > #v or k ~= floor(k) then
                parts[#parts + 1] = tostring(k) .. " = " .. show(x)
            end
        end
        return "{" .. table.concat(parts, ", ") .. "}"
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
local NUMERIC_STRINGS = { "1", "2", "-0.5", "1e300", " 3 " }
local SCALES = { 1.0, 1.0, 10.0, 0.01, 1000.0 }

local function random_real(r)
    return (2.0 * r.unit() - 1.0) * r.pick(SCALES)
end

-- A value for a number slot: usually a plain number, sometimes an edge; when bad, an
-- invalid one (not finite, a wrong type, a numeric string that may or may not be valid).
local function number_value(r, bad, typical)
    if bad then
        local k = r.int(1, 10)
        if k <= 5 then return r.pick(NOT_FINITE) end
        if k <= 9 then return r.pick(WRONG_TYPES) end
        return r.pick(NUMERIC_STRINGS)
    end
    if r.chance(0.7) then return typical() end
    return r.pick(EDGES)
end

-- ---------------------------------------------------------------------------------------
-- Kinds of argument. gen(r, ctx, bad) returns the values of one slot (a quaternion or a
-- target is several); check(values, ctx) returns nil when they are valid, else the offset
-- (1-based, within the slot) of the value the binding reports: the first bad one, as it
-- checks in order. ctx: { chain = the pool entry of self (or nil), n, dim }.

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
    gen = KINDS.real.gen,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or not within_range(x) then return 1 end
    end,
}

-- A length or weight: finite and >= 0 (-0 counts as 0).
KINDS.nonneg = {
    gen = function(r, ctx, bad)
        if not bad and r.chance(0.1) then return -r.unit() end -- negative: bad
        return number_value(r, bad, function() return r.unit() * r.pick(SCALES) * 2 end)
    end,
    check = function(v)
        local ok, x = finite_number(v[1])
        if not ok or x < 0 then return 1 end
    end,
}
KINDS.weight = KINDS.nonneg

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

-- The [min, max] rule of a limit whose bounds are args[at] and args[at + 1] (nil: the
-- defaults -pi and pi): min above max is blamed on min. Positions count self as 1.
local function range_check(at)
    return function(ctx, args)
        local min, max = as_number(args[at]) or -pi, as_number(args[at + 1]) or pi
        if min > max then return at + 1 end
    end
end

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
            return r.pick({ 0, 2, -2, 0.5, -1.5, NAN, huge, "x", true, {} })
        end
        return r.pick({ 1, -1, 1.0, -1.0, "1", "-1" })
    end,
    check = function(v)
        local x = as_number(v[1])
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
                    2 ^ 53, NAN, huge, -huge, NEG_ZERO, 1e-300, "x", true, {} })
            end
            if r.chance(0.05) then return tostring(r.int(1, count)) end
            return r.int(1, count)
        end,
        check = function(v, ctx)
            local x = as_number(v[1])
            if not (is_whole(x) and x >= 1 and x <= ctx.n + extra) then return 1 end
        end,
    }
end
KINDS.bone = index_kind(0)
KINDS.joint = index_kind(1)

-- An optional output table: nil (absent) or a table; the table may be longer than needed.
KINDS.out = {
    gen = function(r, ctx, bad)
        if bad then return r.pick({ 5, "x", true }) end
        if r.chance(0.3) then return nil end
        local t = {}
        for i = 1, r.int(0, 40) do t[i] = i end
        return t
    end,
    check = function(v)
        if v[1] ~= nil and type(v[1]) ~= "table" then return 1 end
    end,
}

-- A quaternion w, x, y, z: four finite numbers, not all zero (the core normalises).
KINDS.quat = {
    width = 4,
    gen = function(r, ctx, bad)
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
    end,
    check = function(v)
        local zero = true
        for k = 1, 4 do
            local ok, x = finite_number(v[k])
            if not ok then return k end
            if x ~= 0 then zero = false end
        end
        if zero then return 1 end -- reported at w: the quaternion as a whole
    end,
}

-- A target of ctx.dim coordinates: random, on a joint, on the base, far, tiny, or edges.
KINDS.target = {
    width = function(ctx) return ctx.dim end,
    gen = function(r, ctx, bad)
        local dim, c = ctx.dim, ctx.chain and ctx.chain.c
        if c and c:dim() ~= dim then c = nil end -- solve_many with mixed dimensions
        local t = {}
        local mode = r.int(1, 10)
        if c and mode <= 2 then
            -- exactly on a joint (the base is joint 1, the tip joint n + 1)
            t[1], t[2], t[3] = c:joint(r.int(1, ctx.n + 1))
        elseif c and mode == 3 then
            -- on the middle of a joint's bone or its mirror: collinear targets
            local i = r.int(1, ctx.n)
            local ax, ay, az = c:joint(i)
            local bx, by, bz = c:joint(i + 1)
            local s = r.pick({ 0.5, -1.0, 2.0, 1e-9 })
            t[1], t[2] = ax + (bx - ax) * s, ay + (by - ay) * s
            if dim == 3 then t[3] = az + (bz - az) * s end
        else
            local reach = ctx.chain and ctx.chain.total or 3
            if not is_finite(reach) or reach == 0 then reach = 1 end
            for k = 1, dim do
                if r.chance(0.15) then
                    t[k] = r.pick(EDGES)
                else
                    t[k] = (2 * r.unit() - 1) * reach * 1.5
                    if c then t[k] = t[k] + (select(k, c:base())) end
                end
            end
        end
        if bad then t[r.int(1, dim)] = number_value(r, true) end
        return t[1], t[2], t[3]
    end,
    check = function(v, ctx)
        for k = 1, ctx.dim do
            local ok, x = finite_number(v[k])
            if not ok or not within_range(x) then return k end
        end
    end,
}

-- The lengths table of a constructor: n >= 1 finite numbers >= 0 (numeric strings count).
KINDS.lengths = {
    gen = function(r, ctx, bad)
        if bad and r.chance(0.3) then return r.pick({ 5, "x", true }) end
        local n = r.pick({ 1, 2, 2, 2, 3, 3, 4, 5, 6, 8, 12 })
        if bad and r.chance(0.2) then n = 0 end
        local t = {}
        for i = 1, n do
            if r.chance(0.85) then
                t[i] = 0.1 + r.unit() * 2
            else
                t[i] = r.pick({ 0.0, NEG_ZERO, 1e-300, 5e-324, 1e300, 1e150, 1e-9, 1e9, "2" })
            end
        end
        if bad and n > 0 then t[r.int(1, n)] = r.pick({ -1, -1e-300, NAN, huge, -huge, "x", true, {} }) end
        return t
    end,
    check = function(v)
        local t = v[1]
        if type(t) ~= "table" then return 1 end
        local n = #t
        if n < 1 then return 1 end
        for i = 1, n do
            local ok, x = finite_number(t[i])
            if not ok or x < 0 or not within_range(x) then return 1 end
        end
    end,
}

local SOLVERS = { "fabrik", "ccd", "relax", "two_bone" }

-- configure's table: a few keys, each valid or not; unknown keys are errors.
KINDS.settings = {
    gen = function(r, ctx, bad)
        if bad and r.chance(0.2) then return r.pick({ 5, "x", true }) end
        local t = {}
        local keys = r.int(0, 3)
        local function any_bad()
            return bad and r.chance(0.5)
        end
        for _ = 1, keys do
            local key = r.int(1, 11)
            if key == 1 then
                t.iterations = any_bad() and r.pick({ 0, -1, 1.5, NAN, huge, 2 ^ 31, 2 ^ 40, "x", true })
                    or r.pick({ 1, 2, 3, 8, 64, 100, "5" })
            elseif key == 2 then
                t.tolerance = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x", {} })
                    or r.pick({ 0, NEG_ZERO, 1e-300, 1e-12, 1e-3, 0.1, 1e300, "0.01" })
            elseif key == 3 then
                t.greed = any_bad() and r.pick({ 0, NEG_ZERO, -0.5, 1.5, NAN, huge, "x" })
                    or r.pick({ 1, 0.5, 0.1, 1e-300, 0.999 })
            elseif key == 4 then
                t.greed_ramp = any_bad() and r.pick({ 1, "true", 0 }) or r.chance(0.5)
            elseif key == 5 then
                t.bend = any_bad() and r.pick({ 0, 2, 0.5, NAN, "x" }) or r.pick({ 1, -1 })
            elseif key == 6 then
                t.solver = any_bad() and r.pick({ "FABRIK", "nope", "", "ccd\0x", 1, true })
                    or r.pick(SOLVERS)
            elseif key == 8 then
                t.escape = any_bad() and r.pick({ 1, "yes", 0 }) or r.chance(0.5)
            elseif key == 9 then
                t.stretch = any_bad() and r.pick({ 1, "no" }) or r.chance(0.2)
            elseif key == 10 then
                t.mix = any_bad() and r.pick({ -0.1, 1.5, NAN, huge, "x" })
                    or r.pick({ 0, 1, 0.5, 0.25, NEG_ZERO, 1e-300 })
            elseif key == 11 then
                t.softness = any_bad() and r.pick({ -1, -1e-300, NAN, huge, "x" })
                    or r.pick({ 0, 0.1, 1, 1e300, 1e-300 })
            else
                local dim = ctx.dim or 3
                if any_bad() or dim == 2 and r.chance(0.1) then
                    t.pole = r.pick({ true, { 0, 0, 0 }, { NEG_ZERO, 0, 0 }, { 1, 2 }, { "1", 0, 0 },
                        { NAN, 0, 0 }, { 0, huge, 0 }, 5 })
                elseif dim == 3 then
                    t.pole = r.chance(0.3) and false
                        or { random_real(r), random_real(r), r.pick({ random_real(r), 1e300, 1e-300, 0 }) }
                end
            end
        end
        if bad and r.chance(0.3) then
            if r.chance(0.5) then t.nope = 1 else t[1] = 1 end
        end
        return t
    end,
    check = function(v, ctx)
        local t = v[1]
        if type(t) ~= "table" then return 1 end
        for k, x in pairs(t) do
            if k == "iterations" then
                local n = as_number(x)
                if not (is_whole(n) and n >= 1 and n <= 2147483647) then return 1 end
            elseif k == "tolerance" then
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
            elseif k == "softness" then
                local ok, n = finite_number(x)
                if not ok or n < 0 then return 1 end
            elseif k == "bend" then
                local n = as_number(x)
                if not (is_whole(n) and (n == 1 or n == -1)) then return 1 end
            elseif k == "solver" then
                if type(x) ~= "string" then return 1 end
                local known = false
                for _, s in ipairs(SOLVERS) do known = known or x == s end
                if not known or x == "two_bone" and ctx.n ~= 2 then return 1 end
            elseif k == "pole" then
                if ctx.dim ~= 3 then return 1 end
                if x ~= false then
                    if type(x) ~= "table" then return 1 end
                    local zero = true
                    for i = 1, 3 do
                        if type(x[i]) ~= "number" or not is_finite(x[i]) then return 1 end
                        if x[i] ~= 0 then zero = false end
                    end
                    if zero then return 1 end
                end
            else
                return 1
            end
        end
    end,
}

-- ---------------------------------------------------------------------------------------
-- The API. Each entry: name; self = nil (a module function), "any", 2 or 3 (the chains it
-- is for); args = a list of kinds, "?" marking an optional one (absent or nil), or a
-- function of the dimension returning that list. Optional: check(ctx, args) for a rule
-- that involves self (returns the bad position, 1 for self); keeps = what a successful
-- call leaves as it was (parts of a snapshot: "pos", "base", "len", "w", "pose", "world",
-- "settings"); result = a check of what it returned; creates = it returns a new chain.

local ALL = { "pos", "base", "len", "w", "pose", "world", "settings" }
local SOLVE_KEEPS = { "base", "len", "w", "settings" }

local function target_args()
    return { "target" }
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
        args[target_at], args[target_at + 1] = d * math.cos(a), d * math.sin(a)
        if dim == 3 then args[target_at + 2] = d * r.pick({ 0, 0.5, -1 }) end
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
    { name = "soft_distance", args = { "nonneg", "nonneg", "nonneg" } },
    -- construction
    { name = "chain2d", args = { "lengths", "?coord", "?coord", "?angle" }, creates = 2, weight = 3 },
    { name = "chain3d", args = { "lengths", "?coord", "?coord", "?coord" }, creates = 3, weight = 3 },
    -- many chains at once: its arguments are made and checked by hand (see solve_many_args)
    { name = "solve_many", special = "solve_many", weight = 4 },

    -- methods for both dimensions
    { name = "count", self = "any", args = {}, keeps = ALL },
    { name = "dim", self = "any", args = {}, keeps = ALL },
    { name = "__len", self = "any", args = {}, keeps = ALL, syntax = "len" },
    { name = "__tostring", self = "any", args = {}, keeps = ALL, syntax = "tostring" },
    { name = "joint", self = "any", args = { "joint" }, keeps = ALL },
    { name = "effector", self = "any", args = {}, keeps = ALL },
    { name = "positions", self = "any", args = { "?out" }, keeps = ALL },
    { name = "length", self = "any", args = { "bone" }, keeps = ALL },
    { name = "set_length", self = "any", args = { "bone", "length" }, keeps = { "base", "w", "pose", "settings" } },
    { name = "weight", self = "any", args = { "joint" }, keeps = ALL },
    { name = "set_weight", self = "any", args = { "joint", "weight" },
        keeps = { "pos", "base", "len", "pose", "world", "settings" } },
    { name = "base", self = "any", args = {}, keeps = ALL },
    { name = "set_base", self = "any", weight = 2,
        args = function(dim)
            if dim == 2 then return { "coord", "coord", "?angle" } end
            return { "coord", "coord", "coord", "?quat" }
        end,
        keeps = { "len", "w", "pose", "settings" } },
    { name = "configure", self = "any", args = { "settings" }, weight = 3,
        keeps = { "pos", "base", "len", "w", "pose", "world" } },
    { name = "settings", self = "any", args = { "?out" }, keeps = ALL },
    { name = "solve", self = "any", args = target_args, keeps = SOLVE_KEEPS, result = "solve", weight = 4 },
    { name = "solve_fabrik", self = "any", args = target_args, keeps = SOLVE_KEEPS, result = "solve", weight = 4 },
    { name = "solve_ccd", self = "any", args = target_args, keeps = SOLVE_KEEPS, result = "solve", weight = 4 },
    { name = "solve_relax", self = "any", args = target_args, keeps = SOLVE_KEEPS, result = "solve", weight = 4 },
    { name = "solve_two_bone", self = "any", args = target_args, keeps = SOLVE_KEEPS, result = "solve", weight = 3,
        check = function(ctx)
            if ctx.n ~= 2 then return 1 end -- the chain itself is the bad argument
        end },
    { name = "clear_limit", self = "any", args = { "bone" }, keeps = ALL },
    { name = "stretch_factor", self = "any", args = {}, keeps = ALL },

    -- 2D only
    { name = "angle", self = 2, args = { "bone" }, keeps = ALL },
    { name = "set_angle", self = 2, args = { "bone", "angle" }, keeps = { "base", "len", "w", "settings" }, weight = 2 },
    { name = "world_angle", self = 2, args = { "bone" }, keeps = ALL },
    { name = "set_limit", self = 2, args = { "bone", "limit_angle", "limit_angle" }, keeps = ALL,
        check = range_check(2) },
    { name = "limit", self = 2, args = { "bone" }, keeps = ALL },

    -- 3D only
    { name = "rotation", self = 3, args = { "bone" }, keeps = ALL },
    { name = "set_rotation", self = 3, args = { "bone", "quat" }, keeps = { "base", "len", "w", "settings" }, weight = 2 },
    { name = "world_rotation", self = 3, args = { "bone" }, keeps = ALL },
    { name = "set_hinge", self = 3, args = { "bone", "real", "real", "real", "?limit_angle", "?limit_angle" },
        keeps = ALL,
        check = function(ctx, args)
            if as_number(args[2]) == 0 and as_number(args[3]) == 0 and as_number(args[4]) == 0 then
                return 3 -- a zero axis, blamed on its first component
            end
            return range_check(5)(ctx, args)
        end },
    { name = "set_cone", self = 3, args = { "bone", "cone" }, keeps = ALL },
    { name = "set_twist", self = 3, args = { "bone", "limit_angle", "limit_angle" }, keeps = ALL,
        check = range_check(2) },
}

-- Names in the module (functions) and in the chain's method table that OPS does not cover.
function M.uncovered(ik)
    local known = {}
    for _, op in ipairs(M.OPS) do known[op.name] = true end
    local missing = {}
    for k, v in pairs(ik) do
        if type(v) == "function" and not known[k] then missing[#missing + 1] = "ik." .. k end
    end
    local methods = getmetatable(ik.chain2d({ 1 })).__index
    for k in pairs(methods) do
        if not known[k] then missing[#missing + 1] = "chain:" .. k end
    end
    table.sort(missing)
    return missing
end

-- ---------------------------------------------------------------------------------------
-- Calling. Each function is called through a small Lua function compiled for its name, so
-- the VM can name it in the error (a call through a table index c[name](...) cannot), and
-- never as a tail call (which loses the name too).

local function pack(...)
    return { n = select("#", ...), ... }
end

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
-- Snapshots: everything observable about a chain, in parts.

local function push_all(t, ...)
    for i = 1, select("#", ...) do t[#t + 1] = (select(i, ...)) end
end

local function snapshot(c)
    local n, dim = c:count(), c:dim()
    local s = { pos = c:positions({}), base = { c:base() }, len = {}, w = {}, pose = {}, world = {},
        settings = {}, n = n, dim = dim }
    for i = 1, n do
        s.len[i] = c:length(i)
        if dim == 2 then
            s.pose[i] = c:angle(i)
            s.world[i] = c:world_angle(i)
        else
            push_all(s.pose, c:rotation(i))
            push_all(s.world, c:world_rotation(i))
        end
    end
    for i = 1, n + 1 do s.w[i] = c:weight(i) end
    local st = c:settings()
    s.settings = { st.solver, st.iterations, st.tolerance, st.greed, st.greed_ramp, st.bend }
    if dim == 3 then
        if st.pole then push_all(s.settings, st.pole[1], st.pole[2], st.pole[3]) else push_all(s.settings, false) end
    end
    s.iterations, s.tolerance = st.iterations, st.tolerance
    return s
end

-- The same value: == for everything, and the sign of a zero too.
local function same(a, b)
    if a ~= b then return false end
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

-- ---------------------------------------------------------------------------------------
-- Soundness of a chain and of results.

-- |(dx, dy, dz)| without overflow or underflow (a length just above DBL_MAX is inf).
local function norm(dx, dy, dz)
    local m = max(abs(dx), abs(dy), abs(dz or 0))
    if m == 0 or m ~= m or m == huge then return m end
    dx, dy, dz = dx / m, dy / m, (dz or 0) / m
    return m * sqrt(dx * dx + dy * dy + dz * dz)
end

-- |a - b| <= tol * b + slack, with a and b halved first: a length near DBL_MAX compares
-- without overflowing (halving is exact above the subnormals, where slack covers it).
local function near_length(ax, ay, az, len, tol, slack)
    local d = norm(ax * 0.5, ay * 0.5, (az or 0) * 0.5)
    return abs(d - len * 0.5) <= tol * len * 0.5 + slack
end

-- nil when the chain (a pool entry) is sound, else what is wrong.
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
    if dim == 3 then
        local w, x, y, z = s.base[4], s.base[5], s.base[6], s.base[7]
        if abs(w * w + x * x + y * y + z * z - 1) > 2e-9 then return "base rotation is not unit" end
    end
    for i = 1, n do
        if not same(s.len[i], e.lengths[i]) then
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
        local want = s.len[i] * (e.c and e.c:stretch_factor() or 1)
        if not near_length(dx * 2, dy * 2, dz * 2, want, 1e-9, 1e-15 * scale + 1e-320) then
            return fmt("bone %d: its joints are %s apart, its length is %s (stretched: %s)", i,
                show(norm(dx, dy, dz) * 2), show(s.len[i]), show(want))
        end
    end
    if dim == 2 then
        for i = 1, n do
            if not (is_finite(s.pose[i]) and abs(s.pose[i]) <= pi) then return fmt("angle(%d) is %s", i, show(s.pose[i])) end
            if not (is_finite(s.world[i]) and abs(s.world[i]) <= pi) then
                return fmt("world_angle(%d) is %s", i, show(s.world[i]))
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
    end
    return nil
end

-- A solve's results: reached == (distance <= tolerance), distance the real tip-to-target
-- distance, 0 <= iterations <= the maximum.
local function check_solve_result(ret, s, target)
    local reached, d, it = ret[1], ret[2], ret[3]
    if ret.n ~= 3 then return fmt("returned %d values", ret.n) end
    if type(reached) ~= "boolean" then return "reached is not a boolean" end
    if not (is_finite(d) and d >= 0) then return "distance is " .. show(d) end
    if not (is_whole(it) and it >= 0 and it <= s.iterations) then return "iterations is " .. show(it) end
    if reached ~= (d <= s.tolerance) then return fmt("reached is %s for distance %s", tostring(reached), show(d)) end
    local pos, dim = s.pos, s.dim
    local tip = s.n * dim
    local real = norm(target[1] - pos[tip + 1], target[2] - pos[tip + 2], dim == 3 and target[3] - pos[tip + 3] or 0)
    local scale = max(abs(target[1]), abs(target[2]), abs(target[3] or 0), abs(pos[tip + 1]), abs(pos[tip + 2]))
    if abs(real - d) > 1e-12 * real + 1e-15 * scale + 1e-320 then
        return fmt("distance %s, but the tip is %s from the target", show(d), show(real))
    end
    return nil
end

-- What the stateless solves return.
local function check_stateless(kind, ret, args)
    for k = 1, ret.n do
        local v = ret[k]
        if type(v) == "number" and not is_finite(v) then return fmt("result %d is %s", k, show(v)) end
    end
    if type(ret[ret.n]) ~= "boolean" then return "reached is not a boolean" end
    if kind == "angles" then
        if ret.n ~= 3 then return "returned " .. ret.n .. " values" end
        if abs(ret[1]) > pi or abs(ret[2]) > pi then return "an angle outside [-pi, pi]" end
        if ret[3] then -- reached: the tip is on the target (forward kinematics, relative)
            local l1, l2, x, y = as_number(args[1]), as_number(args[2]), as_number(args[3]), as_number(args[4])
            local m = max(l1, l2, abs(x), abs(y))
            if m > 0 and m < 1e300 and m > 1e-300 then
                l1, l2, x, y = l1 / m, l2 / m, x / m, y / m
                local a1, a2 = ret[1], ret[1] + ret[2]
                local tx, ty = l1 * math.cos(a1) + l2 * math.cos(a2), l1 * math.sin(a1) + l2 * math.sin(a2)
                if norm(tx - x, ty - y) > 1e-6 then return fmt("reached, but the tip misses by %s (relative)", show(norm(tx - x, ty - y))) end
            end
        end
    else
        local dim = kind == "joint3" and 3 or 2
        if ret.n ~= dim + 1 then return "returned " .. ret.n .. " values" end
        local r1, r2 = as_number(args[dim + 1]), as_number(args[dim + 2])
        -- the solve divides by the largest input: r1 may be lost in its rounding
        local m = 0
        for k = 1, dim + 2 do m = max(m, abs(as_number(args[k]))) end
        if ret[dim + 1] and m < 1e300 and m > 1e-300 then
            -- reached: the second bone reaches the target, up to the ring's slack (1e-6 of m)
            local t = { as_number(args[1]) / m, as_number(args[2]) / m, dim == 3 and as_number(args[3]) / m or 0 }
            local e = norm(ret[1] / m - t[1], ret[2] / m - t[2], dim == 3 and ret[3] / m - t[3] or 0)
            if abs(e - r2 / m) > 1e-6 then return fmt("reached, but |joint - target| is %s of the largest input, r2 %s", show(e), show(r2 / m)) end
        end
        if not near_length(ret[1], ret[2], dim == 3 and ret[3] or 0, r1, 1e-9, 1e-15 * m + 1e-320) then
            return fmt("|joint| is %s, r1 is %s", show(2 * norm(ret[1] * 0.5, ret[2] * 0.5, dim == 3 and ret[3] * 0.5 or 0)), show(r1))
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
-- The run.

local unpack = table.unpack or unpack

-- solve_many(chains, targets), judged in the binding's order: chains not a table (#1),
-- targets not a table (#2), an element of chains that is not a chain or differs in
-- dimension from the first (#1), a target value (#2).
local function solve_many_bad(chains, targets, chain_mt)
    if type(chains) ~= "table" then return { [1] = true } end
    if type(targets) ~= "table" then return { [2] = true } end
    local count, dim = #chains, nil
    for k = 1, count do
        local c = chains[k]
        if type(c) ~= "userdata" or getmetatable(c) ~= chain_mt then
            return { [1] = true }
        end
        dim = dim or c:dim()
        if c:dim() ~= dim then return { [1] = true } end
    end
    for k = 1, count * (dim or 2) do
        local ok, x = finite_number(targets[k])
        if not ok or not within_range(x) then return { [2] = true } end
    end
    return nil
end

function M.run(opts)
    local ik = assert(opts.ik, "opts.ik: the module")
    local seed = opts.seed or 1
    local calls = opts.calls or 10000
    local r = M.rng(seed)
    local chain_mt = getmetatable(ik.chain2d({ 1 }))
    local methods = chain_mt.__index
    local fake_self = setmetatable({}, { __index = methods })
    local wrong = { "x", "", true, false, {}, io.stdout, print }
    for k = #WRONG_TYPES, 1, -1 do WRONG_TYPES[k] = nil end
    for k = 1, #wrong do WRONG_TYPES[k] = wrong[k] end

    -- The ops this module has, each repeated by its weight.
    local ops, skipped = {}, {}
    for _, op in ipairs(M.OPS) do
        local exists
        if op.syntax then
            exists = chain_mt[op.name] ~= nil
        elseif op.self then
            exists = methods[op.name] ~= nil
        else
            exists = ik[op.name] ~= nil
        end
        if exists then
            for _ = 1, op.weight or 1 do ops[#ops + 1] = op end
        else
            skipped[#skipped + 1] = op.name
        end
    end

    -- The pool of live chains: { c, dim, n, lengths (as set), total (their sum), id }.
    local pool, POOL_MAX = {}, 8
    local function refresh(e)
        local t = 0
        for i = 1, e.n do t = t + e.lengths[i] end
        e.total = t
    end
    local serial = 0
    local function new_entry(c, lengths)
        serial = serial + 1
        local e = { c = c, dim = c:dim(), n = c:count(), lengths = {}, id = serial }
        for i = 1, e.n do e.lengths[i] = as_number(lengths[i]) + 0.0 end -- -0 is kept as +0
        refresh(e)
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

    -- A chain of dimension dim (any when nil), or nil when the pool has none.
    local function pick_chain(dim)
        local candidates = {}
        for _, e in ipairs(pool) do
            if dim == nil or e.dim == dim then candidates[#candidates + 1] = e end
        end
        return #candidates > 0 and r.pick(candidates) or nil
    end

    local stats = { calls = 0, ok = 0, rejected = 0, failures = 0, by_op = {}, seed = seed, skipped = skipped }
    local history, HISTORY = {}, 8 -- the last calls, formatted only for a failure report

    M.describe_chain = function(c)
        for _, e in ipairs(pool) do
            if rawequal(e.c, c) then return fmt("<chain%dd #%d, %d bones>", e.dim, e.id, e.n) end
        end
        return tostring(c)
    end

    local function describe(h)
        local shown = {}
        for k = 1, h.n do shown[k] = show(h.args[k]) end
        local list = table.concat(shown, ", ")
        if not h.op.self then return fmt("ik.%s(%s)", h.op.name, list) end
        local who = h.entry and fmt("<chain%dd #%d, %d bones>", h.entry.dim, h.entry.id, h.entry.n) or show(h.self)
        if h.syntax == "len" then return "#" .. who end
        if h.syntax == "tostring" then return "tostring(" .. who .. ")" end
        return fmt("%s%s%s(%s)", who, h.syntax == "method" and ":" or ".", h.op.name, list)
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

    -- The arguments for a list of slots: args (position 1 is the first after self), n (how
    -- many are passed) and the positions the binding would reject (a set, or nil).
    local function make_args(slots, ctx, mode)
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
        elseif mode == "extra" then
            for _ = 1, r.int(1, 3) do
                n = n + 1
                args[n] = r.pick({ 1, NAN, "x", {}, true, 0 })
            end
        end
        -- the oracle: absent optional slots are fine, present ones are checked
        local bad
        for _, slot in ipairs(layout) do
            if not (slot.optional and args[slot.pos] == nil) then
                local values = {}
                for k = 1, slot.width do values[k] = args[slot.pos + k - 1] end
                local offset = slot.kind.check(values, ctx)
                if offset and not bad then bad = { [slot.pos + offset - 1] = true } end
            end
        end
        return args, n, bad
    end

    -- solve_many's arguments: up to 4 chains (sometimes of mixed dimensions, sometimes not
    -- chains) and their targets (sometimes bad or too few).
    local function solve_many_args(dirty)
        local dim = r.chance(0.5) and 2 or 3
        local chains, targets, entries = {}, {}, {}
        for k = 1, r.int(0, 4) do
            local e = pick_chain((dirty and r.chance(0.1)) and 5 - dim or dim) or pick_chain(nil)
            if dirty and r.chance(0.05) then
                chains[k] = r.pick({ 5, "x", {}, true, fake_self })
            else
                chains[k] = e.c
                entries[#entries + 1] = e
            end
        end
        local first = entries[1]
        for k = 1, #chains do
            local e = entries[k] or first
            local ctx = { chain = e, n = e and e.n or 2, dim = first and first.dim or dim }
            local t = pack(KINDS.target.gen(r, ctx, dirty and r.chance(0.1)))
            for d = 1, ctx.dim do targets[#targets + 1] = t[d] end
        end
        if dirty and #targets > 0 and r.chance(0.1) then targets[#targets] = nil end
        if dirty and r.chance(0.05) then
            if r.chance(0.5) then chains = r.pick({ 5, "x" }) else targets = r.pick({ 5, "x" }) end
        end
        local args = { chains, targets }
        return args, 2, solve_many_bad(chains, targets, chain_mt), entries
    end

    local BAD_SELVES = { "nil", "fake", "number", "string", "stdout", "other", "other" }

    local t0 = os.clock()
    local stop = false
    for step = 1, calls do
        -- One call per step. Lua 5.1 has no goto: `break` out of this repeat-until-true
        -- skips to the next step, and `stop` ends the loop (the body is not re-indented).
        repeat
        local op = r.pick(ops)
        local roll = r.int(1, 100)
        local mode = roll <= 62 and "clean" or roll <= 80 and "bad" or roll <= 86 and "bads"
            or roll <= 93 and "missing" or "extra"
        local ctx = {}
        local entry, self_value, syntax = nil, nil, "module"
        local args, n, bad, touched

        if op.self then
            local want = op.self ~= "any" and op.self or nil
            entry = pick_chain(want)
            syntax = op.syntax or "method"
            local self_bad = entry == nil
            if not op.syntax and r.chance(0.04) then
                -- self is not a chain of the right kind
                local b = r.pick(BAD_SELVES)
                if b == "other" then
                    local other = want and pick_chain(5 - want)
                    if other then entry, self_bad = other, true end
                else
                    entry, self_bad = nil, true
                    if b == "fake" then
                        self_value = fake_self -- a table whose methods are the chain's
                    else
                        syntax = "field"
                        self_value = (b == "number" and 42) or (b == "string" and "chain")
                            or (b == "stdout" and io.stdout) or nil
                    end
                end
            end
            if entry then self_value = entry.c end
            if self_bad and syntax ~= "method" and syntax ~= "field" then
                break -- to the next step: # and tostring only on chains
            end
            ctx.chain, ctx.n, ctx.dim = entry, entry and entry.n or 3, entry and entry.dim or want or 2
            local slots = op.args
            if type(slots) == "function" then slots = slots(ctx.dim) end
            args, n, bad = make_args(slots, ctx, mode)
            if self_bad then
                bad = { [0] = true } -- self is checked before anything else
            elseif not bad and op.check then
                local position = op.check(ctx, args) -- counting self as 1
                if position then bad = { [position - 1] = true } end
            end
            touched = { entry }
        elseif op.special == "solve_many" then
            args, n, bad, touched = solve_many_args(mode ~= "clean")
        else
            ctx.n, ctx.dim = 2, op.creates or 2
            args, n, bad = make_args(op.args, ctx, mode)
            if op.shape and not bad then op.shape(r, args) end
            touched = {}
        end

        if #history == HISTORY then table.remove(history, 1) end
        history[#history + 1] = { op = op, args = args, n = n, entry = entry, self = self_value, syntax = syntax }

        if opts.trace then opts.trace(step, describe(history[#history]), touched) end
        local before = {}
        for k, e in ipairs(touched) do before[k] = snapshot(e.c) end

        local ok, ret
        if syntax == "method" or syntax == "len" or syntax == "tostring" then
            ok, ret = pcall(caller(op, syntax), self_value, unpack(args, 1, n))
        elseif syntax == "field" then
            ok, ret = pcall(caller(op, "field"), methods, self_value, unpack(args, 1, n))
        else
            ok, ret = pcall(caller(op, "module"), ik, unpack(args, 1, n))
        end
        stats.calls = stats.calls + 1
        local counts = stats.by_op[op.name] or { ok = 0, rejected = 0 }
        stats.by_op[op.name] = counts

        if ok then
            stats.ok = stats.ok + 1
            counts.ok = counts.ok + 1
            if bad then
                local where = {}
                for k in pairs(bad) do where[#where + 1] = k end
                fail(step, "succeeded, but argument " .. where[1] .. " is bad (0 is self)")
            end
            if op.name == "set_length" then
                entry.lengths[as_number(args[1])] = as_number(args[2]) + 0.0
            end
            for k, e in ipairs(touched) do
                refresh(e)
                local after = snapshot(e.c)
                local why = check_chain(e, after) or diff(before[k], after, op.keeps or SOLVE_KEEPS)
                if not why and op.result == "solve" then
                    why = check_solve_result(ret, after, { as_number(args[1]), as_number(args[2]), as_number(args[3]) })
                end
                if why then fail(step, why) end
            end
            if op.special == "solve_many" and not (is_whole(ret[1]) and ret[1] >= 0 and ret[1] <= #touched) then
                fail(step, "reached_count is " .. show(ret[1]))
            elseif op.result == "angles" or op.result == "joint2" or op.result == "joint3" then
                local why = check_stateless(op.result, ret, args)
                if why then fail(step, why) end
            elseif op.self then
                for k = 1, ret.n do
                    if type(ret[k]) == "number" and not is_finite(ret[k]) then
                        fail(step, fmt("result %d is %s", k, show(ret[k])))
                    end
                end
            elseif op.creates then
                local c = ret[1]
                if type(c) ~= "userdata" or getmetatable(c) ~= chain_mt or c:dim() ~= op.creates then
                    fail(step, "did not return a chain of dimension " .. op.creates)
                else
                    local e = new_entry(c, args[1])
                    local why = check_chain(e, snapshot(c))
                    if why then fail(step, why) else add_chain(e) end
                end
            end
        else
            stats.rejected = stats.rejected + 1
            counts.rejected = counts.rejected + 1
            local k, name = parse_error(ret)
            if k == nil then
                fail(step, "raised something other than an argument error: " .. show(ret))
            elseif not bad then
                fail(step, "the arguments are valid, but it raised: " .. tostring(ret))
            else
                -- method-call syntax counts from self = 0, field syntax from self = 1
                local position = (op.self and syntax ~= "method") and k - 1 or k
                local where = {}
                for b in pairs(bad) do where[#where + 1] = b end
                if not (name == op.name or name:sub(-#op.name - 1) == "." .. op.name) then
                    fail(step, "the error names another function: " .. tostring(ret))
                elseif not bad[position] then
                    fail(step, fmt("the error names argument %d, the bad one is %d (0 is self): %s", position,
                        where[1], tostring(ret)))
                end
            end
            for idx, e in ipairs(touched) do
                local why = diff(before[idx], snapshot(e.c), ALL)
                if why then fail(step, "a rejected call changed a chain: " .. why) end
            end
        end
        if stats.failures > 0 and not opts.keep_going then
            stop = true
            break
        end
        if opts.progress and step % opts.progress == 0 then
            opts.progress_log(fmt("%d calls, %d ok, %d rejected, %.1f s", step, stats.ok, stats.rejected,
                os.clock() - t0))
        end
        until true
        if stop then break end
    end
    stats.seconds = os.clock() - t0
    return stats
end

return M
