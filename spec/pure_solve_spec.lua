-- ik.pure against the C module: the solves ported so far (chain:solve_two_bone,
-- chain:solve_aim, and chain:solve with the solver two_bone or aim), made side by side on C
-- chains and pure chains among random changes of what a solve depends on: settings
-- (solver, iterations, tolerance, angle_tolerance, escape, stretch, softness, mix,
-- max_turn, pole, bend), targets near and far, on the base and met already, orientation
-- goals, limits, weights, poses, lengths, bases, attached chains and held tips, valid and
-- not. Both must accept or refuse alike, with the same message, return the same values
-- (numbers the same bits and the same subtype) and leave the same visible state on every
-- chain after every call (spec/pure_compare.lua). A solve with a solver ik.pure does not
-- have yet must raise its error and change nothing. Then: the solves make no garbage.
--
-- Under LuaJIT the C module is ik.core itself (require("ik") there puts FFI fast paths in
-- front of some methods, whose errors name the function differently).

local C = type(jit) == "table" and require("ik.core") or require("ik")
local P = require("ik.pure")
local pc = require("spec.pure_compare")

local unpack = table.unpack or unpack
local pack, compare, state = pc.pack, pc.compare, pc.state

local SEEDS = { 1, 2, 3, 4, 5 }
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = tonumber(os.getenv("IK_PURE_CALLS") or "") or (os.getenv("IK_SPEC_QUICK") == "1" and 60 or 600)
local WORLD = 6 -- chains on each side

local METHODS = {
    "solve", "solve_two_bone", "solve_aim", "configure", "set_target", "set_target_angle",
    "set_target_rotation", "clear_target", "set_angle", "set_rotation", "set_base", "set_weight",
    "set_length", "set_limit", "set_hinge", "set_cone", "set_twist", "clear_limit", "attach", "detach",
    "attach_tip", "detach_tip",
}
-- How often each is called, in tenths of a percent (the solves most).
local WEIGHTS = {
    solve = 175, solve_two_bone = 155, solve_aim = 140, configure = 110, set_target = 20,
    set_target_angle = 30, set_target_rotation = 30, clear_target = 20, set_angle = 40,
    set_rotation = 40, set_base = 20, set_weight = 30, set_length = 30, set_limit = 40,
    set_hinge = 25, set_cone = 25, set_twist = 20, clear_limit = 10, attach = 20, detach = 10,
    attach_tip = 5, detach_tip = 5,
}

-- One call site per method, shared by both backends, so that an error's position and the
-- function's name are the same for both.
local method_call = pc.method_calls(METHODS)

-- ---- random arguments ----

local rand = math.random
local function pick(t) return t[rand(#t)] end
local function float(lo, hi) return lo + (hi - lo) * math.random() end

local function weighted_method() return pc.weighted(METHODS, WEIGHTS, "solve") end

local direction = pc.direction

-- A target for a C chain cc (read on the C side: both sides hold the same numbers): within
-- reach, beyond it, on the base, at the tip (met already), near the tip (tracking), far
-- away; now and then a wrong one.
local function target_args(cc)
    local dim, reach = cc:dim(), cc:reach() * cc:stretch_factor()
    local b = pack(cc:joint(1))
    local t = pack(cc:effector())
    local r = math.random()
    local x, y, z
    local ux, uy, uz = direction(dim)
    if r < 0.35 then
        local d = reach * float(0, 1)
        x, y, z = b[1] + ux * d, b[2] + uy * d, (b[3] or 0) + uz * d
    elseif r < 0.5 then
        local d = reach * float(1, 3)
        x, y, z = b[1] + ux * d, b[2] + uy * d, (b[3] or 0) + uz * d
    elseif r < 0.58 then
        x, y, z = b[1], b[2], b[3]
    elseif r < 0.66 then
        x, y, z = t[1], t[2], t[3]
    elseif r < 0.8 then
        local d = reach * pick({ 1e-12, 1e-6, 1e-3, 0.02, 0.1 })
        x, y, z = t[1] + ux * d, t[2] + uy * d, (t[3] or 0) + uz * d
    elseif r < 0.86 then
        x, y, z = pc.edge_point()
    elseif r < 0.92 then
        return { n = 0 } -- towards the kept goal
    else
        x, y, z = pick({ 0 / 0, 1 / 0, 1e301, "1", {}, true }), float(-3, 3), float(-3, 3)
    end
    return pc.point_args(dim, x, y, z)
end


local function settings_table(dim)
    local keys = {
        solver = function() return pick({ "two_bone", "aim", "two_bone", "aim", "fabrik", "ccd", "relax" }) end,
        iterations = function() return pick({ 1, 2, 5, 64, 1000, 20000, 0 }) end,
        tolerance = function() return pick({ 0, 1e-12, 1e-6, 1e-3, 0.1, -1 }) end,
        angle_tolerance = function() return pick({ 0, 1e-13, 1e-12, 1e-6, 1e-3, 0.1, 0.7, 2 }) end,
        escape = function() return pick({ true, false }) end,
        stretch = function() return pick({ true, false, false }) end,
        mix = function() return pick({ 1, 1, 0, 0.3, 0.75, 1.5 }) end,
        softness = function() return pick({ 0, 0, 0.1, 0.5, 5, 1e300 }) end,
        max_turn = function() return pick({ 1 / 0, 1 / 0, 0.05, 0.5, 2, 0 }) end,
        bend = function() return pick({ 1, -1, 1, -1, 0 }) end,
        pole = function()
            if dim == 2 then return nil end
            return pick({ false, { float(-1, 1), float(-1, 1), float(-1, 1) }, { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 0 } })
        end,
    }
    local names = { "solver", "iterations", "tolerance", "angle_tolerance", "escape", "stretch", "mix",
        "softness", "max_turn", "bend", "pole" }
    return pc.random_table(keys, names)
end

-- The arguments after self of method name on the C chain cc; a chain argument is
-- { chain = k }, resolved on each side.
local function args_for(name, cc)
    local n, dim = cc:count(), cc:dim()
    local a
    if name == "solve" or name == "solve_two_bone" or name == "solve_aim" or name == "set_target" then
        return target_args(cc)
    elseif name == "configure" then
        a = { settings_table(dim) }
    elseif name == "set_target_angle" then
        a = { float(-4, 4) }
    elseif name == "set_target_rotation" or name == "set_rotation" then
        a = { float(-1, 1), float(-1, 1), float(-1, 1), float(-1, 1) }
        if name == "set_rotation" then table.insert(a, 1, rand(n)) end
    elseif name == "set_angle" then
        a = { rand(n), float(-4, 4) }
    elseif name == "set_base" then
        a = { float(-3, 3), float(-3, 3) }
        if dim == 3 then
            a[3] = float(-3, 3)
            if math.random() < 0.5 then for k = 4, 7 do a[k] = float(-1, 1) end end
        elseif math.random() < 0.5 then
            a[3] = float(-4, 4)
        end
    elseif name == "set_weight" then
        a = { rand(n + 1), pick({ 0, 1, 0.5, 2, 1e300, 5e-324 }) }
    elseif name == "set_length" then
        a = { rand(n), pick({ 0, 0, 5e-324, 1e-300, 2e-300, float(0.2, 2), float(0.2, 2), float(0.2, 2) }) }
    else
        a = pc.limit_args(name, n, WORLD) or {}
    end
    a.n = #a
    return a
end

-- A new chain's arguments: 1 to 4 bones (mostly 2 or 3), lengths at one scale, a base.
local function chain_args(dim) return pc.chain_args(dim, { 1, 2, 2, 2, 3, 3, 3, 4 }) end

-- The methods of one dimension.
local DIM_OF = {
    set_target_angle = 2, set_angle = 2, set_limit = 2, set_target_rotation = 3, set_rotation = 3,
    set_hinge = 3, set_cone = 3, set_twist = 3,
}

-- Whether the two-bone solver takes the C chain cc as it is.
local function two_bone_fits(cc)
    local oriented = (cc:dim() == 2 and cc:target_angle() or cc:dim() == 3 and cc:target_rotation()) ~= nil
    return cc:count() == (oriented and 3 or 2)
end

-- The place of a chain to call name on: mostly one that takes it (of its dimension; for
-- solve_two_bone, of its bones), now and then any.
local function chain_for(name, world_c)
    local fits = {}
    for k, cc in ipairs(world_c) do
        if (DIM_OF[name] == nil or DIM_OF[name] == cc:dim()) and (name ~= "solve_two_bone" or two_bone_fits(cc)) then
            fits[#fits + 1] = k
        end
    end
    if #fits == 0 or math.random() < 0.05 then return rand(#world_c) end
    return pick(fits)
end

-- ---- the run ----

local function run(seed)
    math.randomseed(seed)
    local world = pc.new_world()
    local world_c, world_p, index_c, index_p = world.c, world.p, world.index_c, world.index_p
    local calls = 0

    local function new_chain(k)
        local dim = rand(2) + 1
        pc.world_set(world, k, pc.chain_pair(C, P, dim, chain_args(dim)))
    end
    for k = 1, WORLD do new_chain(k) end

    local function check(what, ok_c, r_c, ok_p, r_p)
        calls = calls + 1
        pc.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p)
    end

    local PORTED = { two_bone = true, aim = true }
    for step = 1, CALLS do
        local name = weighted_method()
        local k = chain_for(name, world_c)
        local what
        if math.random() < 0.02 then
            -- a new chain in place k (its children keep the old one as their parent)
            new_chain(k)
            what = ("seed %d step %d: new chain %d"):format(seed, step, k)
        else
            local cc, pc_ = world_c[k], world_p[k]
            local a = args_for(name, cc)
            what = ("seed %d step %d: chain %d:%s"):format(seed, step, k, name)
            pc.trace(what, a)
            local ac, ap = pc.resolve(a, world_c), pc.resolve(a, world_p)
            if name == "solve" and not PORTED[cc:settings().solver] then
                -- not ported: where the C module refuses (on a clone, which the solve would
                -- change), the same error; where it solves, the pure side's error. Nothing
                -- changes on the pure side.
                local ok_c, r_c = pcall(method_call[name], cc:clone(), unpack(ac, 1, a.n))
                local ok_p, r_p = pcall(method_call[name], pc_, unpack(ap, 1, a.n))
                if ok_c then
                    local expected = ("calls:1: ik.pure: the %s solver is not ported yet"):format(cc:settings().solver)
                    if ok_p or r_p ~= expected then
                        error(("%s: expected %s, got %s"):format(what, expected, tostring(r_p)), 0)
                    end
                    calls = calls + 1
                else
                    check(what, ok_c, r_c, ok_p, r_p)
                end
            else
                local ok_c, r_c = pcall(method_call[name], cc, unpack(ac, 1, a.n))
                local ok_p, r_p = pcall(method_call[name], pc_, unpack(ap, 1, a.n))
                check(what, ok_c, r_c, ok_p, r_p)
            end
        end
        pc.check_world(world_c, world_p, index_c, index_p, what)
    end
    return calls
end

describe("ik.pure against the C module (solves)", function()
    it("accepts, refuses, returns and leaves the same, bit for bit, in random solves", function()
        pc.assert_same_bits(pc.run_seeds(", solves", SEEDS, run))
    end)

    -- Bones of length 0 or below 1e-300 (the lean solves' own branches), and a stretch
    -- whose factor overflows: every pairing of lengths, solver and setting, each towards
    -- a few targets in turn.
    -- Bones of length 0 or below 1e-300 (the lean solves' own branches), and a stretch
    -- whose factor overflows: every pairing of lengths, dimension and setting, each towards
    -- a few targets in turn.
    it("solves chains with zero-length, tiny and huge bones alike", function()
        local LENGTHS = os.getenv("IK_SPEC_QUICK") == "1" and { 0, 1e-310, 1 } or { 0, 5e-324, 1e-310, 1e-300, 1e-150, 1, 1e150 }
        local TARGETS = { { 1, 1, 0.5 }, { 0, 0, 0 }, { 1e-300, 0, 0 }, { 1e300, -1e300, 3 }, { -2, 0.5, 0 } }
        local SETTINGS = { {}, { stretch = true }, { softness = 0.5 }, { pole = { 0, 0, 1 } }, { mix = 0.5 } }
        local none, L, S = {}, #LENGTHS, #SETTINGS
        -- Every case (l0, l1, dim, settings) is one seed of run_seeds.
        local function run_case(case)
            local l0, l1 = LENGTHS[case % L + 1], LENGTHS[math.floor(case / L) % L + 1]
            local dim, k = 2 + math.floor(case / (L * L)) % 2, math.floor(case / (2 * L * L)) + 1
            local settings = SETTINGS[k]
            if dim == 2 and settings.pole then return 0 end
            local cc = dim == 2 and C.chain2d({ l0, l1 }) or C.chain3d({ l0, l1 })
            local pch = dim == 2 and P.chain2d({ l0, l1 }) or P.chain3d({ l0, l1 })
            cc:configure(settings)
            pch:configure(settings)
            for t, target in ipairs(TARGETS) do
                local name = (t + k) % 3 == 0 and "solve_aim" or "solve_two_bone"
                local r_c = method_call[name](cc, unpack(target, 1, dim))
                local r_p = method_call[name](pch, unpack(target, 1, dim))
                local what = ("lengths %g, %g, %dD, settings %d, %s %d"):format(l0, l1, dim, k, name, t)
                local why = compare(r_c, r_p, none, none, what) or compare(state(cc), state(pch), none, none, what)
                if why then pc.differs(why) end
            end
            return #TARGETS
        end
        local cases = {}
        for case = 0, 2 * L * L * S - 1 do cases[case + 1] = case end
        pc.assert_same_bits(pc.run_seeds(", edge lengths", cases, run_case))
    end)

    it("raises a clear error for a solver not ported yet, and changes nothing", function()
        local c = P.chain2d({ 1, 1 })
        local before = state(c)
        local ok, message = pcall(function() local reached = c:solve(1, 1) return reached end)
        assert.is_false(ok)
        assert.are.equal("spec/pure_solve_spec.lua:" .. (debug.getinfo(1, "l").currentline - 2)
            .. ": ik.pure: the fabrik solver is not ported yet", message)
        pc.reset()
        assert.is_nil(compare(before, state(c), {}, {}, "state"))
        c:configure({ solver = "ccd" })
        ok, message = pcall(c.solve, c)
        assert.is_false(ok)
        assert.are.equal("bad argument #2 to '?' (no target: give one, or set_target first)", message)
        c:set_target(1, 1)
        ok, message = pcall(c.solve, c)
        assert.are.equal("ik.pure: the ccd solver is not ported yet", message)
    end)

    it("makes no garbage when solving", function()
        local leg2 = P.chain2d({ 1, 1 })
        local foot2 = P.chain2d({ 1, 1, 0.3 }):configure({ solver = "two_bone", mix = 0.5, max_turn = 0.3 })
        foot2:set_limit(3, -0.5, 0.5)
        foot2:set_target_angle(-1)
        local leg3 = P.chain3d({ 1, 1 })
        local arm3 = P.chain3d({ 1, 1 }):configure({ pole = { 0, 0, 1 }, stretch = true, softness = 0.2 })
        arm3:set_cone(2, 1)
        local foot3 = P.chain3d({ 1, 1, 0.3 }):configure({ max_turn = 0.2, mix = 0.7 })
        foot3:set_target_rotation(1, 0.2, 0.1, 0)
        foot3:set_twist(3, -0.2, 0.2)
        local neck2 = P.chain2d({ 0.5, 0.5, 0.3 }):configure({ solver = "aim" })
        neck2:set_limit(2, -0.3, 0.3)
        local eye3 = P.chain3d({ 1 }):configure({ solver = "aim" })
        local neck3 = P.chain3d({ 0.5, 0.5, 0.3 }):configure({ solver = "aim", angle_tolerance = 0 })
        neck3:set_weight(2, 0)
        neck3:set_hinge(3, 0, 0, 1, -1, 1)
        local function loop(count)
            for i = 1, count do
                local s = math.sin(i * 0.1)
                leg2:solve_two_bone(1 + s, 0.5)
                foot2:solve(1 + s, -1)
                leg3:solve_two_bone(1, s, 0.5)
                arm3:solve_two_bone(3, s, 0.5)
                foot3:solve_two_bone(1, s - 1, 0.2)
                neck2:solve(s, 2)
                eye3:solve_aim(s, 1, 2)
                eye3:solve()
                neck3:solve(s, 2, 1)
            end
        end
        local kb = pc.garbage_kb(loop, 2000)
        assert.is_true(kb < 1, ("%.2f KB for 2,000 rounds"):format(kb))
    end)
end)
