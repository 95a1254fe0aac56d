-- ik.pure against the C module: the chains' part of the API (what lua/ik/pure/ ports so
-- far), the same calls made side by side on a C chain and a pure chain, valid and not.
-- Both must accept or refuse alike, with the same message, return the same values (numbers
-- the same bits and the same subtype), and leave the same visible state after every call
-- (limits and goal_error included). Then chains with limits posed by set_points (limits.c's
-- clamps, without a solve), and a few plain specs of the pure backend on its own.
--
-- Under LuaJIT the C module is ik.core itself: require("ik") there puts the FFI fast paths
-- in front of some methods, and their fallback to the C API passes missing arguments as
-- nil ("got nil" where the C API says "got no value") and names the function by its own
-- name (a call through pcall or a local gets "'?'" or the local's name from the C API).

-- ik.core in every VM, too, as require("ik") is ik.pure under IK_BACKEND=lua (spec/backend.lua).
local C = require("ik.core")
local h = require("spec.helpers")
local P = require("ik.pure")

local load = loadstring or load
local unpack = table.unpack or unpack

local pack = require("spec.pure_compare").pack

-- The methods of each side, read through a chain (the metatables are protected).
local C_METHODS, P_METHODS = {}, {}

local SEEDS = { 1, 2, 3, 4, 5 }
local TRACE = os.getenv("IK_PURE_TRACE")
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = require("spec.pure_compare").calls(450, 45)

local METHODS = {
    "count", "dim", "reach", "joint", "effector", "positions", "length", "set_length", "weight",
    "set_weight", "base", "set_base", "angle", "set_angle", "world_angle", "angles", "set_angles",
    "rotation", "set_rotation", "world_rotation", "rotations", "set_rotations", "stretch_factor",
    "configure", "settings", "set_target", "target", "clear_target", "set_target_angle",
    "target_angle", "set_target_rotation", "target_rotation", "attach", "detach", "parent",
    "attach_tip", "detach_tip", "tip_parent", "clone", "set_points", "goal_error", "set_limit", "limit",
    "set_hinge", "set_cone", "set_twist", "clear_limit",
}

-- One call site per method, shared by both backends, so that an error's position and the
-- function's name ("method", "local", a pcall's '?') are the same for both.
local method_call = require("spec.pure_compare").method_calls(METHODS)
local local_call = load("local pack = ... return function(f, ...) return pack(f(...)) end", "=calls")(pack)
local module_call = load([[local pack = ... return function(ik, dim, points, ...)
    if points then
        if dim == 2 then return pack(ik.chain2d_points(...)) end
        return pack(ik.chain3d_points(...))
    end
    if dim == 2 then return pack(ik.chain2d(...)) end
    return pack(ik.chain3d(...))
end]], "=calls")(pack)

-- ---- comparison ----

local cmp = require("spec.pure_compare")
local compare, state, range = cmp.compare, cmp.state, cmp.random_range
local stats

-- ---- random arguments ----

local PI = math.pi
local rand

local function pick(t) return t[rand(#t)] end

local function float(lo, hi) return lo + (hi - lo) * math.random() end

local SPECIAL = { 0 / 0, 1 / 0, -1 / 0, 1e300, -1e300, 2e300, 1e308, 1e-300, 5e-324, -0.0, 0.0 }

local function number_of(kind, n)
    local r = math.random()
    if r < 0.08 then return pick(SPECIAL) end
    if kind == "bone" or kind == "joint" then
        local top = kind == "bone" and n or n + 1
        if r < 0.2 then return pick({ 0, top + 1, -1, 1.5, 2 ^ 31, 1.0, top + 0.0 }) end
        return rand(top)
    elseif kind == "angle" then
        if r < 0.2 then return pick({ PI, -PI, 3 * PI, -3 * PI, 7.5, 1e10, -1e15, 2 * PI, 1e300 }) end
        return float(-4, 4)
    elseif kind == "coord" then
        if r < 0.15 then return pick({ 1e300, -1e300, 1e150, 1e-200, 1e-320, 3, -2 }) end
        return float(-5, 5)
    elseif kind == "length" then
        if r < 0.15 then return pick({ 0, -1, 1e300, 1e301, 1e-310, 2, 1e200 }) end
        return float(0, 2)
    elseif kind == "bound" then
        if r < 0.2 then return pick({ PI, -PI, 3.2, -3.2, 0, -0.0, 1e-300, 7 }) end
        return float(-PI, PI)
    elseif kind == "axis" then
        if r < 0.2 then return pick({ 0, 0, 0, 1e-320, 1e300, -1e308, 1e-160 }) end
        return float(-1, 1)
    elseif kind == "cone" then
        if r < 0.2 then return pick({ 0, -0.0, PI, PI + 1e-15, -0.1, 3.2, 1e-300 }) end
        return float(0, PI)
    elseif kind == "q" then
        if r < 0.15 then return pick({ 0, 1e300, -1e300, 1e-310, 1e-200, 1, -1 }) end
        return float(-1, 1)
    end
    return float(-3, 3)
end

local JUNK = { "nil", "1", "x", "table", true, false, "function", "own" }

-- A symbolic argument: resolved for each side (chains, fresh tables) by resolve().
local function junk()
    local j = pick(JUNK)
    if j == "nil" then return { kind = "nil" } end
    if j == "table" then return { kind = "fresh" } end
    if j == "function" then return print end
    if j == "own" then return { kind = "chain", k = rand(8) } end
    return j
end

local SETTING_KEYS = {
    iterations = function() return pick({ 1, 10, 0, -5, 1.5, 3e9, -3e9, "10", 64.0 }) end,
    tolerance = function() return pick({ 0, 1e-6, -1, 0 / 0, 1 / 0, -0.0, "x" }) end,
    angle_tolerance = function() return pick({ 0, 0.01, -1, 0 / 0 }) end,
    greed = function() return pick({ 0.5, 1, 0, 1.5, 0 / 0, 1e-9 }) end,
    greed_ramp = function() return pick({ true, false, 1, nil }) end,
    escape = function() return pick({ true, false, "yes" }) end,
    stretch = function() return pick({ true, false, 0 }) end,
    mix = function() return pick({ 0, 0.5, 1, 1.5, -0.0, 0 / 0 }) end,
    softness = function() return pick({ 0, 0.2, -1, 1 / 0 }) end,
    max_turn = function() return pick({ 1 / 0, 0.5, 0, -1, 0 / 0 }) end,
    effector_weight = function() return pick({ 1, 0, -2, 1 / 0 }) end,
    stiffness = function() return pick({ 0, 10, -1 }) end,
    damping = function() return pick({ 0.5, 0, -1, 0 / 0 }) end,
    gravity = function() return pick({ { 0, -9.81 }, { 0, -9.81, 0 }, { 1, 2, 3 }, { 1e301, 0 }, { "x", 0 }, {}, 5 }) end,
    bend = function() return pick({ 1, -1, 0, 2, 1.5, "1" }) end,
    solver = function() return pick({ "fabrik", "ccd", "relax", "two_bone", "aim", "nope", "ccd\0x", 3 }) end,
    pole = function() return pick({ false, true, { 0, 1, 0 }, { 0, 0, 0 }, { 1e308, 1e308, 0 }, { 1, 2 }, { 0 / 0, 1, 0 }, 7 }) end,
    nope = function() return 1 end,
}
local SETTING_NAMES = {}
for k in pairs(SETTING_KEYS) do SETTING_NAMES[#SETTING_NAMES + 1] = k end
table.sort(SETTING_NAMES)

local function settings_table()
    local t = {}
    for _ = 1, rand(4) - 1 do
        local key = pick(SETTING_NAMES)
        t[key] = SETTING_KEYS[key]()
    end
    if math.random() < 0.05 then t[1] = 1 end
    if math.random() < 0.03 then setmetatable(t, { __index = {} }) end
    return t
end

local function array_of(count, kind, n)
    local t = {}
    for k = 1, count do t[k] = number_of(kind, n) end
    if math.random() < 0.1 and count > 0 then t[rand(count)] = pick({ "1", true, 0 / 0, 0, -1 }) end
    return t
end

-- The arguments after self for method name on a chain of n bones and dimension dim.
local function args_for(name, n, dim)
    local a
    if name == "joint" or name == "weight" then
        a = { number_of("joint", n) }
    elseif name == "length" or name == "angle" or name == "world_angle" or name == "rotation" or name == "world_rotation" then
        a = { number_of("bone", n) }
    elseif name == "set_length" or name == "set_weight" then
        a = { number_of(name == "set_length" and "bone" or "joint", n), number_of("length") }
    elseif name == "set_angle" then
        a = { number_of("bone", n), number_of("angle") }
    elseif name == "set_rotation" then
        a = { number_of("bone", n), number_of("q"), number_of("q"), number_of("q"), number_of("q") }
    elseif name == "set_base" then
        a = { number_of("coord"), number_of("coord") }
        if dim == 3 then a[3] = number_of("coord") end
        if math.random() < 0.6 then
            if dim == 2 then a[3] = number_of("angle") else for k = 4, 7 do a[k] = number_of("q") end end
        end
    elseif name == "positions" or name == "angles" or name == "rotations" or name == "settings" then
        a = { pick({ { kind = "nil" }, { kind = "fresh" }, { kind = "long" } }) }
    elseif name == "set_angles" then
        a = { array_of(math.random() < 0.9 and n or n + 1, "angle") }
    elseif name == "set_rotations" then
        a = { array_of(math.random() < 0.9 and 4 * n or 4 * n - 1, "q") }
    elseif name == "configure" then
        a = { settings_table() }
    elseif name == "set_target" then
        a = { number_of("coord"), number_of("coord") }
        if dim == 3 then a[3] = number_of("coord") end
    elseif name == "set_target_angle" then
        a = { number_of("angle") }
    elseif name == "set_target_rotation" then
        a = { number_of("q"), number_of("q"), number_of("q"), number_of("q") }
    elseif name == "set_points" then
        local count = (n + 1) * dim
        a = { array_of(math.random() < 0.9 and count or count + pick({ -1, 1, -dim }), "coord") }
    elseif name == "limit" or name == "clear_limit" then
        a = { number_of("bone", n) }
    elseif name == "set_limit" or name == "set_twist" then
        a = { number_of("bone", n), number_of("bound"), number_of("bound") }
        -- mostly min <= max (a swap in one call of ten)
        if type(a[2]) == "number" and type(a[3]) == "number" and (a[2] > a[3]) == (math.random() < 0.9) then
            a[2], a[3] = a[3], a[2]
        end
    elseif name == "set_hinge" then
        a = { number_of("bone", n), number_of("axis"), number_of("axis"), number_of("axis") }
        if math.random() < 0.7 then
            a[5], a[6] = number_of("bound"), number_of("bound")
            if a[5] > a[6] and math.random() < 0.9 then a[5], a[6] = a[6], a[5] end
            if math.random() < 0.2 then a[6] = nil end
        end
    elseif name == "set_cone" then
        a = { number_of("bone", n), number_of("cone") }
    elseif name == "attach" or name == "attach_tip" then
        -- a chain of the other side: refused by both (as a table by one, userdata by the other)
        a = { { kind = math.random() < 0.1 and "foreign" or "chain", k = rand(8) }, rand(4) }
        if math.random() < 0.5 then
            if name == "attach" then
                if dim == 2 then a[3] = number_of("angle") else for k = 3, 6 do a[k] = number_of("q") end end
            else
                for k = 3, 2 + dim do a[k] = number_of("coord") end
            end
        end
    else
        a = {}
    end
    a.n = #a
    -- misuse: a wrong value, fewer or more arguments
    if math.random() < 0.15 and a.n > 0 then a[rand(a.n)] = junk() end
    if math.random() < 0.08 then a.n = rand(a.n + 1) - 1 end
    if math.random() < 0.08 then
        a.n = a.n + 1
        a[a.n] = math.random() < 0.5 and { kind = "nil" } or junk()
    end
    return a
end

local function chain_args(dim)
    local a = { array_of(rand(5) - (math.random() < 0.05 and 1 or 0), "length") }
    if math.random() < 0.05 then a[1] = junk() end
    if math.random() < 0.05 then a[1] = setmetatable({ 1, 1 }, { __index = {} }) end
    local extra = rand(dim == 2 and 4 or 8) - 1
    for k = 2, 1 + extra do
        local kind = (dim == 2 and k == 4) and "angle" or (k <= 1 + dim and "coord" or "q")
        a[k] = math.random() < 0.1 and junk() or number_of(kind)
    end
    a.n = 1 + extra
    if math.random() < 0.05 then
        a.n = a.n + 1
        a[a.n] = junk()
    end
    return a
end

-- ik.chain2d_points / chain3d_points: 2 to 5 points, now and then a count that is no
-- whole number of points, or fewer than two.
local function points_args(dim)
    local count = (rand(4) + 1) * dim
    if math.random() < 0.1 then count = pick({ 0, dim, count + 1, count - 1 }) end
    local a = { array_of(count, "coord") }
    if math.random() < 0.05 then a[1] = junk() end
    a.n = 1
    if math.random() < 0.1 then
        a.n = 2
        a[2] = junk() -- not looked at
    end
    return a
end

-- ---- the run ----

local function run(seed)
    math.randomseed(seed)
    rand = math.random
    local world_c, world_p, index_c, index_p = {}, {}, {}, {}
    local function add(cc, pc)
        if #world_c >= 8 then
            index_c[cc], index_p[pc] = nil, nil
            return
        end
        if index_c[cc] == "new" then index_c[cc], index_p[pc] = nil, nil end
        world_c[#world_c + 1], world_p[#world_p + 1] = cc, pc
        index_c[cc], index_p[pc] = #world_c, #world_p
    end

    -- A symbolic argument for one side: its own chains, the other side's, a new table
    -- for each (a longer one: a reused table's tail), or the value itself.
    local function resolve(v, own, other)
        if type(v) ~= "table" or v.kind == nil then return v end
        if v.kind == "nil" then return nil end
        if v.kind == "fresh" then return {} end
        if v.kind == "long" then return { 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9 } end
        local list = v.kind == "chain" and own or other
        if #list == 0 then return nil end
        return list[(v.k - 1) % #list + 1]
    end
    local function resolve_all(a, own, other)
        local r = { n = a.n }
        for k = 1, a.n do r[k] = resolve(a[k], own, other) end
        return r
    end

    -- A chain of the other side is a table to the C module and userdata to ik.pure: where a
    -- call took one, "got table" on one side is "got userdata" on the other.
    local function chain_neutral(msg) return (msg:gsub("got userdata%)", "got table)")) end

    local calls, foreign = 0, false
    local function check(what, ok_c, r_c, ok_p, r_p, made)
        calls = calls + 1
        if made and ok_c and ok_p then -- a new chain on each side, compared as such
            index_c[r_c[1]], index_p[r_p[1]] = "new", "new"
        end
        cmp.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p, foreign and chain_neutral)
    end

    local function has_foreign(a)
        for k = 1, a.n do
            if type(a[k]) == "table" and a[k].kind == "foreign" then return true end
        end
        return false
    end

    for step = 1, CALLS do
        local what
        if #world_c == 0 or math.random() < 0.04 then
            local dim = rand(2) + 1
            local points = math.random() < 0.3
            local a = points and points_args(dim) or chain_args(dim)
            foreign = has_foreign(a)
            local ok_c, r_c = pcall(module_call, C, dim, points, unpack(resolve_all(a, world_c, world_p), 1, a.n))
            local ok_p, r_p = pcall(module_call, P, dim, points, unpack(resolve_all(a, world_p, world_c), 1, a.n))
            what = ("seed %d step %d: ik.chain%dd%s"):format(seed, step, dim, points and "_points" or "")
            check(what, ok_c, r_c, ok_p, r_p, true)
            if ok_c then add(r_c[1], r_p[1]) end
        else
            local k = rand(#world_c)
            local cc, pc = world_c[k], world_p[k]
            local name = pick(METHODS)
            local a = args_for(name, cc:count(), cc:dim())
            foreign = has_foreign(a)
            local style = math.random()
            local ok_c, r_c, ok_p, r_p
            local ac, ap = resolve_all(a, world_c, world_p), resolve_all(a, world_p, world_c)
            if style < 0.8 then
                ok_c, r_c = pcall(method_call[name], cc, unpack(ac, 1, a.n))
                ok_p, r_p = pcall(method_call[name], pc, unpack(ap, 1, a.n))
            else
                -- through a local or pcall, on a chain of the right side, the other side's
                -- or something else
                local self_c, self_p = cc, pc
                local r = math.random()
                if r < 0.2 then
                    self_c, self_p, foreign = pc, cc, true
                elseif r < 0.3 then
                    self_c = junk()
                    if type(self_c) == "table" and self_c.kind then self_c = nil end
                    self_p = self_c
                end
                if style < 0.9 then
                    ok_c, r_c = pcall(local_call, C_METHODS[name], self_c, unpack(ac, 1, a.n))
                    ok_p, r_p = pcall(local_call, P_METHODS[name], self_p, unpack(ap, 1, a.n))
                else
                    r_c = pack(pcall(C_METHODS[name], self_c, unpack(ac, 1, a.n)))
                    r_p = pack(pcall(P_METHODS[name], self_p, unpack(ap, 1, a.n)))
                    ok_c, ok_p = r_c[1], r_p[1]
                    r_c = ok_c and pack(unpack(r_c, 2, r_c.n)) or r_c[2]
                    r_p = ok_p and pack(unpack(r_p, 2, r_p.n)) or r_p[2]
                end
            end
            what = ("seed %d step %d: chain %d:%s"):format(seed, step, k, name)
            if TRACE then
                local t = {}
                for j = 1, a.n do t[j] = type(a[j]) == "number" and ("%.17g"):format(a[j]) or tostring(a[j]) end
                print(what, table.concat(t, ", "), ok_c)
            end
            check(what, ok_c, r_c, ok_p, r_p, name == "clone")
            if ok_c and name == "clone" then add(r_c[1], r_p[1]) end
        end
        foreign = false
        cmp.check_world(world_c, world_p, index_c, index_p, what)
    end
    return calls
end

-- Posing within limits: set_points poses each bone along its segment and then within its
-- limits (ik_pose_bone), the way to limits.c's clamps that needs no solve. Chains with
-- random valid limits on most bones, set to random poses and then to random points, the
-- state compared after each call.
local LIMIT_CHAINS = math.floor(CALLS / 10)

local function run_limits(seed)
    math.randomseed(seed)
    rand = math.random
    local none, calls = {}, 0
    local function both(cc, pc, name, ...)
        local ok_c, why_c = pcall(cc[name], cc, ...)
        local ok_p, why_p = pcall(pc[name], pc, ...)
        assert(ok_c and ok_p, tostring(why_c) .. " / " .. tostring(why_p))
        calls = calls + 1
        local why = compare(state(cc), state(pc), none, none, ("limits seed %d, %s"):format(seed, name))
        if why then cmp.differs(why) end
    end
    for _ = 1, LIMIT_CHAINS do
        local dim, n = rand(2) + 1, rand(4)
        local lengths = {}
        for k = 1, n do lengths[k] = math.random() < 0.1 and 0 or float(0.2, 2) end
        local cc = dim == 2 and C.chain2d(lengths) or C.chain3d(lengths)
        local pc = dim == 2 and P.chain2d(lengths) or P.chain3d(lengths)
        for i = 1, n do
            local r = math.random()
            if dim == 2 then
                if r < 0.8 then both(cc, pc, "set_limit", i, range()) end
            elseif r < 0.35 then
                local lo, hi = range()
                both(cc, pc, "set_hinge", i, float(-1, 1), float(-1, 1), float(-1, 1), lo, hi)
            elseif r < 0.9 then
                if math.random() < 0.7 then both(cc, pc, "set_cone", i, float(0, math.random() < 0.2 and PI or 1.5)) end
                if math.random() < 0.6 then both(cc, pc, "set_twist", i, range()) end
            end
        end
        for _ = 1, 6 do
            if math.random() < 0.5 then
                local t = {}
                for k = 1, dim == 2 and n or 4 * n do t[k] = dim == 2 and float(-4, 4) or float(-1, 1) end
                both(cc, pc, dim == 2 and "set_angles" or "set_rotations", t)
            end
            local points = {}
            for k = 1, (n + 1) * dim do points[k] = float(-3, 3) end
            if math.random() < 0.2 then -- a segment with no direction
                local j = rand(n)
                for d = 1, dim do points[j * dim + d] = points[(j - 1) * dim + d] end
            end
            both(cc, pc, "set_points", points)
        end
    end
    return calls
end

describe("ik.pure against the C module (chains)", function()
    it("accepts, refuses, returns and leaves the same, bit for bit, in random calls", function()
        local cc, pc = C.chain2d({ 1 }), P.chain2d({ 1 })
        for _, name in ipairs(METHODS) do C_METHODS[name], P_METHODS[name] = cc[name], pc[name] end
        local calls
        stats, calls = cmp.run_seeds("", SEEDS, run)
        cmp.assert_same_bits(stats)
        assert.is_true(stats.errors > calls / 20)
    end)

    it("poses bones within their limits alike, bit for bit (set_points)", function()
        stats = cmp.run_seeds(", limits", SEEDS, run_limits)
        cmp.assert_same_bits(stats)
    end)

    it("names itself as the C module does", function()
        assert.are.equal(C._VERSION, P._VERSION)
        assert.are.equal("lua", P.backend)
        assert.are.equal(getmetatable(C.chain2d({ 1 })), getmetatable(P.chain2d({ 1 })))
    end)
end)

describe("ik.pure on its own", function()
    local function near(a, b) assert.is_true(math.abs(a - b) < 1e-12, ("%.17g vs %.17g"):format(a, b)) end

    it("poses a 3-bone 2D chain by forward kinematics", function()
        local c = P.chain2d({ 1, 2, 3 }, 1, 1)
        local x, y = c:effector()
        assert.are.equal(7, x)
        assert.are.equal(1, y)
        c:set_angle(2, PI / 2)
        x, y = c:joint(3)
        near(x, 2)
        near(y, 3)
        x, y = c:effector()
        near(x, 2)
        near(y, 6)
        near(c:world_angle(3), PI / 2)
        assert.are.equal(6, c:reach())
        assert.are.equal(3, #c)
    end)

    it("poses a 3-bone 3D chain by forward kinematics", function()
        local c = P.chain3d({ 1, 1, 1 })
        local h = math.sqrt(0.5)
        c:set_rotation(1, h, 0, 0, h) -- a quarter turn about +z: the chain along +y
        local x, y, z = c:effector()
        near(x, 0)
        near(y, 3)
        near(z, 0)
        c:set_rotation(3, h, 0, h, 0) -- the last bone turned about its +y
        x, y, z = c:effector()
        near(x, 0)
        near(y, 2)
        near(z, -1)
    end)

    it("carries an attached chain with its parent, and keeps it where it is when detached", function()
        local arm = P.chain2d({ 2, 2 })
        local hand = P.chain2d({ 1 })
        hand:attach(arm, 3)
        local x, y = hand:effector()
        near(x, 5)
        near(y, 0)
        arm:set_base(0, 0, PI / 2)
        x, y = hand:effector()
        near(x, 0)
        near(y, 5)
        local parent, joint = hand:parent()
        assert.are.equal(arm, parent)
        assert.are.equal(3, joint)
        local ok, message = pcall(function() arm:attach(hand, 1) end)
        assert.is_false(ok)
        assert.are.equal("spec/pure_chain_spec.lua:" .. (debug.getinfo(1, "l").currentline - 2)
            .. ": bad argument #1 to 'attach' (attaching would make the chain its own ancestor)", message)
        hand:detach()
        arm:set_base(0, 0, 0)
        x, y = hand:effector()
        near(x, 0)
        near(y, 5)
        assert.are.equal(0, select("#", hand:parent()))
    end)

    it("refuses a chain of the C module", function()
        local c = P.chain2d({ 1 })
        local ok, message = pcall(c.attach, c, C.chain2d({ 1 }), 1)
        assert.is_false(ok)
        assert.are.equal("bad argument #2 to '?' (ik chain expected, got userdata)", message)
    end)

    it("returns integers and floats as the C module does", function()
        if not math.type then return end
        local c = P.chain3d({ 1, 2 })
        assert.are.equal("integer", math.type(c:count()))
        assert.are.equal("integer", math.type(c:dim()))
        assert.are.equal("float", math.type(c:reach()))
        assert.are.equal("float", math.type((c:effector())))
        assert.are.equal("float", math.type((c:rotation(1))))
        assert.are.equal("integer", math.type(c:settings().iterations))
        c:attach(P.chain3d({ 1 }), 2)
        assert.are.equal("integer", math.type(select(2, c:parent())))
    end)

    -- Lua has no hypot and no remainder: ik.pure.math has glibc's hypot and an exact
    -- remainder. Compared with glibc's through the FFI, where there is both (LuaJIT on
    -- Linux); elsewhere hypot against sqrt(x^2 + y^2) where no square overflows or
    -- underflows (within 2 ulps), remainder by its definition.
    it("computes hypot and remainder as the C library does", function()
        local ok, ffi = pcall(require, "ffi")
        local m = require("ik.pure.math")
        if not (ok and cmp.SAME_LIBM) then
            local rng = h.rng(9)
            for _ = 1, 100000 do
                local x, y = (rng.next() - 0.5) * 10 ^ rng.int(-100, 100), (rng.next() - 0.5) * 10 ^ rng.int(-100, 100)
                local want = math.sqrt(x * x + y * y)
                assert(math.abs(m.hypot(x, y) - want) <= 4.5e-16 * want, ("hypot(%.17g, %.17g)"):format(x, y))
                local r = m.remainder(x, m.TWO_PI)
                local n = (x - r) / m.TWO_PI
                assert(math.abs(r) <= m.TWO_PI / 2 * (1 + 1e-15) and math.abs(n - math.floor(n + 0.5)) <= 1e-9 * math.max(1, math.abs(n)),
                    ("remainder(%.17g, 2 pi) = %.17g"):format(x, r))
            end
            return
        end
        ffi.cdef("double hypot(double, double); double remainder(double, double);")
        math.randomseed(9)
        local function any()
            local v = math.random() * 2 ^ math.random(-1074, 1023)
            if math.random() < 0.5 then v = -v end
            return v
        end
        for _ = 1, 100000 do
            local x, y = any(), any()
            if math.random() < 0.5 then y = x * (1 + math.random() * 2 ^ -math.random(1, 60)) end
            local h, r = m.hypot(x, y), m.remainder(x, m.TWO_PI)
            assert(h == ffi.C.hypot(x, y), ("hypot(%a, %a)"):format(x, y))
            local cr = ffi.C.remainder(x, m.TWO_PI)
            assert(r == cr and 1 / r == 1 / cr, ("remainder(%a, 2 pi)"):format(x))
        end
    end)

    it("makes no garbage on the hot path", function()
        local c2, c3 = P.chain2d({ 1, 1, 1 }), P.chain3d({ 1, 1, 1 })
        c3:set_cone(1, 0.5)
        local out = c2:positions()
        local function loop(count)
            for i = 1, count do
                c2:set_angle(1 + i % 3, i * 1e-3)
                c2:set_target(i * 1e-3, 1)
                local x, y = c2:joint(1 + i % 4)
                local a = c2:angle(1 + i % 3) + c2:world_angle(1 + i % 3)
                c3:set_rotation(1 + i % 3, 1, i * 1e-3, 0, 0)
                local w, qx, qy, qz = c3:world_rotation(1 + i % 3)
                c2:positions(out)
                local d, e = c2:goal_error()
                local kind, half = c3:limit(1)
                local a1, a2, reached = P.two_bone(1, 1, i * 1e-3, 1)
                local jx, jy, jz, met = P.two_bone_middle3(1, 1, i * 1e-3, 1, 0, 0, 0, 1)
                local soft = P.soft_distance(1 + i * 1e-4, 1.5, 0.5)
            end
        end
        local kb = cmp.garbage_kb(loop, 10000)
        assert.is_true(kb < 1, ("%.2f KB for 10,000 rounds"):format(kb))
    end)
end)
