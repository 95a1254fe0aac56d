-- ik.pure against the C module: the solves (chain:solve with every solver, solve_fabrik,
-- solve_ccd, solve_relax, solve_two_bone, solve_aim, and ik.solve_many), made side by side
-- on C chains and pure chains among random changes of what a solve depends on: settings
-- (solver, iterations, tolerance, angle_tolerance, greed, greed_ramp, escape, stretch,
-- softness, mix, max_turn, pole, bend), targets near and far, on the base and met already,
-- goals tracked frame by frame, orientation goals, limits, weights, poses, lengths, bases,
-- attached chains and held tips, valid and not. Both must accept or refuse alike, with the
-- same message, return the same values (numbers the same bits and the same subtype), fill
-- solve_many's tables alike and leave the same visible state on every chain after every
-- call (spec/pure_compare.lua). Then: the solves make no garbage.
--
-- Under LuaJIT the C module is ik.core itself (require("ik") there puts FFI fast paths in
-- front of some methods, whose errors name the function differently).

-- ik.core in every VM, too, as require("ik") is ik.pure under IK_BACKEND=lua (spec/backend.lua).
local C = require("ik.core")
local P = require("ik.pure")
local pc = require("spec.pure_compare")

local load = loadstring or load
local unpack = table.unpack or unpack
local pack, compare, state = pc.pack, pc.compare, pc.state

local SEEDS = { 1, 2, 3, 4, 5 }
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = pc.calls(600, 60)
local TRACE = os.getenv("IK_PURE_TRACE")
local WORLD = 6 -- chains on each side

local METHODS = {
    "solve", "solve_fabrik", "solve_ccd", "solve_relax", "solve_two_bone", "solve_aim", "solve_many", "track",
    "configure", "set_target", "set_target_angle",
    "set_target_rotation", "clear_target", "set_angle", "set_rotation", "set_base", "set_weight",
    "set_length", "set_limit", "set_hinge", "set_cone", "set_twist", "clear_limit", "attach", "detach",
    "attach_tip", "detach_tip",
}
-- How often each is called, in tenths of a percent (the solves most). track: a goal
-- tracked frame by frame (a few solves in a row, the target moved a little each time).
local WEIGHTS = {
    solve = 110, solve_fabrik = 50, solve_ccd = 50, solve_relax = 50, solve_two_bone = 75, solve_aim = 70,
    solve_many = 45, track = 30, configure = 100, set_target = 20,
    set_target_angle = 30, set_target_rotation = 30, clear_target = 20, set_angle = 40,
    set_rotation = 40, set_base = 20, set_weight = 30, set_length = 30, set_limit = 40,
    set_hinge = 25, set_cone = 25, set_twist = 20, clear_limit = 10, attach = 20, detach = 10,
    attach_tip = 5, detach_tip = 5,
}

-- One call site per method, shared by both backends, so that an error's position and the
-- function's name are the same for both.
local method_call = pc.method_calls(METHODS)
-- ik.solve_many's, which returns the count and the tables it filled.
local many_call = load("local pack = ... return function(ik, t, targets, a, b, c, ...) "
    .. "return pack(ik.solve_many(t, targets, a, b, c, ...), a, b, c) end", "=calls")(pack)

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
        solver = function() return pick({ "two_bone", "aim", "fabrik", "ccd", "relax", "fabrik", "ccd", "relax" }) end,
        iterations = function() return pick({ 1, 2, 5, 64, 1000, 20000, 0 }) end,
        tolerance = function() return pick({ 0, 1e-12, 1e-6, 1e-3, 0.1, -1 }) end,
        angle_tolerance = function() return pick({ 0, 1e-13, 1e-12, 1e-6, 1e-3, 0.1, 0.7, 2 }) end,
        escape = function() return pick({ true, false }) end,
        greed = function() return pick({ 0.1, 0.5, 0.5, 0.9, 1, 0, 1.5 }) end,
        greed_ramp = function() return pick({ true, false }) end,
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
    local names = { "solver", "solver", "iterations", "tolerance", "angle_tolerance", "escape", "greed",
        "greed_ramp", "stretch", "mix", "softness", "max_turn", "bend", "pole" }
    return pc.random_table(keys, names)
end

-- The arguments after self of method name on the C chain cc; a chain argument is
-- { chain = k }, resolved on each side.
local function args_for(name, cc)
    local n, dim = cc:count(), cc:dim()
    local a
    if name:sub(1, 6) == "solve_" or name == "solve" or name == "set_target" then
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

-- ik.solve_many's arguments, on the C world: a few chains (mostly of one dimension, now
-- and then one twice, or one after its parent), their targets (within reach, beyond,
-- tracked; nil: the kept goals; now and then a wrong number or too few), the tables to fill
-- (nil, empty, filled already, one table twice; now and then a wrong one). chains holds
-- places in the world (or a value that is no chain); odd: the chains' array is a proxy.
local function many_args(world_c)
    local dim = world_c[rand(#world_c)]:dim()
    local a = { chains = {}, outs = {} }
    local count = pick({ 0, 1, 2, 2, 3, 3, 4, 5, 6, 8 })
    for j = 1, count do
        local k = rand(#world_c)
        for _ = 1, 5 do
            if world_c[k]:dim() == dim or math.random() < 0.05 then break end
            k = rand(#world_c)
        end
        a.chains[j] = k
    end
    if count > 0 and math.random() < 0.02 then a.chains[rand(count)] = pick({ 5, "chain", {} }) end
    a.odd = math.random() < 0.01
    if math.random() < 0.3 then
        a.targets = nil
    else
        local t = {}
        for j = 1, count do
            local k = a.chains[j]
            local cc = type(k) == "number" and k >= 1 and world_c[k]
            if cc and cc:dim() == dim then
                local x = target_args(cc)
                if x.n ~= dim or type(x[1]) ~= "number" or math.random() < 0.3 then
                    local b = pack(cc:effector())
                    local ux, uy, uz = direction(dim)
                    local d = cc:reach() * pick({ 0.3, 0.01, 1e-3, 2 })
                    x = { b[1] + ux * d, b[2] + uy * d, (b[3] or 0) + uz * d }
                end
                for i = 1, dim do t[#t + 1] = x[i] end
            else
                for _ = 1, dim do t[#t + 1] = float(-3, 3) end
            end
        end
        if #t > 0 and math.random() < 0.03 then t[rand(#t)] = pick({ 0 / 0, 1 / 0, 1e301, "1", true }) end
        if #t > 0 and math.random() < 0.02 then t[#t] = nil end
        if math.random() < 0.01 then t = pick({ 5, "targets", setmetatable({}, { __index = t }) }) end
        a.targets = t
    end
    for o = 1, 3 do
        local r = math.random()
        a.outs[o] = r < 0.4 and "nil" or r < 0.85 and "empty" or r < 0.95 and "filled"
            or r < 0.98 and "twice" or "wrong"
    end
    return a
end

-- The chains' array of one side (world: that side's chains); the places of many_args.
local function many_side(a, world)
    local t = {}
    for j, k in ipairs(a.chains) do
        if type(k) == "number" and k >= 1 then t[j] = world[k] else t[j] = k end
    end
    if a.odd then t = setmetatable({}, { __index = t }) end
    return t
end

-- The tables to fill, new for each side: nil, empty, filled already (with values that
-- stay beyond the chains), the one before again, or a wrong value.
local function many_outs(a)
    local outs = {}
    for o = 1, 3 do
        local kind = a.outs[o]
        if kind == "empty" then
            outs[o] = {}
        elseif kind == "filled" then
            outs[o] = { 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, x = 1 }
        elseif kind == "twice" then
            outs[o] = outs[o - 1] or {}
        elseif kind == "wrong" then
            outs[o] = "table"
        end
    end
    return outs[1], outs[2], outs[3]
end

-- Seeds 1..count; 1..quick with IK_SPEC_QUICK=1.
local function seeds_to(count, quick)
    local t = {}
    for k = 1, os.getenv("IK_SPEC_QUICK") == "1" and quick or count do t[k] = k end
    return t
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

    for step = 1, CALLS do
        local name = weighted_method()
        local k = chain_for(name, world_c)
        local what
        if math.random() < 0.02 then
            -- a new chain in place k (its children keep the old one as their parent)
            new_chain(k)
            what = ("seed %d step %d: new chain %d"):format(seed, step, k)
        elseif name == "solve_many" then
            local a = many_args(world_c)
            what = ("seed %d step %d: solve_many"):format(seed, step)
            if TRACE then print(what, #a.chains) end
            local ok_c, r_c = pcall(many_call, C, many_side(a, world_c), a.targets, many_outs(a))
            local ok_p, r_p = pcall(many_call, P, many_side(a, world_p), a.targets, many_outs(a))
            check(what, ok_c, r_c, ok_p, r_p)
        elseif name == "track" then
            -- A goal tracked frame by frame: from near the tip, moved a little each solve.
            local cc, pc_ = world_c[k], world_p[k]
            local call = method_call[pick({ "solve", "solve", "solve_fabrik", "solve_ccd", "solve_relax" })]
            local dim = cc:dim()
            local t = pack(cc:effector())
            local d = cc:reach() * pick({ 1e-4, 1e-3, 0.01, 0.03 })
            for frame = 1, rand(3, 8) do
                local ux, uy, uz = direction(dim)
                t[1], t[2] = t[1] + ux * d, t[2] + uy * d
                if dim == 3 then t[3] = t[3] + uz * d end
                what = ("seed %d step %d: chain %d tracked, frame %d"):format(seed, step, k, frame)
                local ok_c, r_c = pcall(call, cc, unpack(t, 1, dim))
                local ok_p, r_p = pcall(call, pc_, unpack(t, 1, dim))
                check(what, ok_c, r_c, ok_p, r_p)
                pc.check_world(world_c, world_p, index_c, index_p, what)
            end
        else
            local cc, pc_ = world_c[k], world_p[k]
            local a = args_for(name, cc)
            what = ("seed %d step %d: chain %d:%s"):format(seed, step, k, name)
            pc.trace(what, a)
            local ac, ap = pc.resolve(a, world_c), pc.resolve(a, world_p)
            local ok_c, r_c = pcall(method_call[name], cc, unpack(ac, 1, a.n))
            local ok_p, r_p = pcall(method_call[name], pc_, unpack(ap, 1, a.n))
            check(what, ok_c, r_c, ok_p, r_p)
        end
        pc.check_world(world_c, world_p, index_c, index_p, what)
    end
    return calls
end

describe("ik.pure against the C module (solves)", function()
    it("accepts, refuses, returns and leaves the same, bit for bit, in random solves", function()
        pc.assert_same_bits(pc.run_seeds(", solves", SEEDS, run))
    end)

    -- Bones of length 0 or below 1e-300 (the lean solves' own branches, FABRIK's slow
    -- step), and a stretch whose factor overflows: every pairing of lengths, dimension and
    -- setting, each towards a few targets in turn, with each solver.
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
                for _, name in ipairs({ (t + k) % 3 == 0 and "solve_aim" or "solve_two_bone", "solve_fabrik",
                    "solve_ccd", "solve_relax" }) do
                    local r_c = method_call[name](cc, unpack(target, 1, dim))
                    local r_p = method_call[name](pch, unpack(target, 1, dim))
                    local what = ("lengths %g, %g, %dD, settings %d, %s %d"):format(l0, l1, dim, k, name, t)
                    local why = compare(r_c, r_p, none, none, what) or compare(state(cc), state(pch), none, none, what)
                    if why then pc.differs(why) end
                end
            end
            return 4 * #TARGETS
        end
        local cases = {}
        for case = 0, 2 * L * L * S - 1 do cases[case + 1] = case end
        pc.assert_same_bits(pc.run_seeds(", edge lengths", cases, run_case))
    end)

    -- Chains folded back on themselves and goals within reach, where the solvers stall:
    -- the escape's bends, the joint-space steps and the CCD sweeps after them (with limits,
    -- orientation goals, pinned joints, fixed and ramped greed), each solve compared.
    it("escapes and steps alike from folded chains", function()
        local function run_folded(seed)
            math.randomseed(seed)
            local calls, none = 0, {}
            for trial = 1, 20 do
                local dim, n = rand(2) + 1, rand(2, 6)
                local lengths = {}
                for i = 1, n do lengths[i] = float(0.2, 1.2) end
                local cc = dim == 2 and C.chain2d(lengths) or C.chain3d(lengths)
                local pch = dim == 2 and P.chain2d(lengths) or P.chain3d(lengths)
                local set = { solver = pick({ "fabrik", "ccd", "relax" }), iterations = pick({ 5, 64, 200 }),
                    tolerance = pick({ 1e-3, 1e-9, 0 }) }
                if math.random() < 0.5 then set.greed, set.greed_ramp = pick({ 0.05, 0.3, 1 }), math.random() < 0.3 end
                local function both(name, ...)
                    cc[name](cc, ...)
                    pch[name](pch, ...)
                end
                both("configure", set)
                if math.random() < 0.3 then both("set_weight", rand(n + 1), pick({ 0, 0.5, 2 })) end
                for i = 1, n do
                    if math.random() < 0.15 then
                        if dim == 2 then both("set_limit", i, -1, 0.5) else both("set_cone", i, 0.7) end
                    end
                end
                if math.random() < 0.3 then
                    if dim == 2 then both("set_target_angle", 1) else both("set_target_rotation", 1, 0.2, 0.3, 0.1) end
                end
                if math.random() < 0.5 then
                    for i = 2, n do
                        if dim == 2 then both("set_angle", i, 3.1) else both("set_rotation", i, 0.01, 0, 0, 1) end
                    end
                end
                for t = 1, 5 do
                    local x, y, z = 0.05 * n, 0, 0
                    if math.random() < 0.5 then
                        x, y, z = float(-0.6, 0.6) * n, float(-0.6, 0.6) * n, float(-0.6, 0.6) * n
                    end
                    local what = ("seed %d trial %d (%dD, %d bones, %s) solve %d")
                        :format(seed, trial, dim, n, set.solver, t)
                    local r_c = method_call.solve(cc, x, y, dim == 3 and z or nil)
                    local r_p = method_call.solve(pch, x, y, dim == 3 and z or nil)
                    local why = compare(r_c, r_p, none, none, what) or compare(state(cc), state(pch), none, none, what)
                    if why then pc.differs(why) end
                    calls = calls + 1
                end
            end
            return calls
        end
        pc.assert_same_bits(pc.run_seeds(", folded chains", seeds_to(15, 2), run_folded))
    end)

    -- Many chains, most of them FABRIK without limits (the C module's batch, in lanes of
    -- one bone count), beyond one block of 64, attached to chains before and after them in
    -- the array, held by them, or twice in it: the same results and states as the C's.
    it("solves many chains at once as the C module does, batch and blocks", function()
        local function run_many(seed)
            math.randomseed(seed)
            local dim, count = 2 + seed % 2, pick({ 3, 20, 64, 65, 100, 150 })
            local world_c, world_p, index_c, index_p = {}, {}, {}, {}
            for k = 1, count do
                local n = pick({ 1, 2, 2, 3, 3, 3, 4, 5 })
                local lengths = {}
                for i = 1, n do lengths[i] = float(0.2, 2) end
                local cc = dim == 2 and C.chain2d(lengths) or C.chain3d(lengths)
                local pch = dim == 2 and P.chain2d(lengths) or P.chain3d(lengths)
                local set = { solver = pick({ "fabrik", "fabrik", "fabrik", "fabrik", "ccd", "relax", "aim" }),
                    escape = math.random() < 0.8, iterations = pick({ 1, 5, 64, 64, 64 }),
                    tolerance = pick({ 1e-3, 1e-6, 0 }) }
                if math.random() < 0.1 then set.mix = 0.5 end
                cc:configure(set)
                pch:configure(set)
                if math.random() < 0.1 then
                    if dim == 2 then cc:set_limit(n, -1, 1) pch:set_limit(n, -1, 1)
                    else cc:set_cone(n, 1) pch:set_cone(n, 1) end
                end
                world_c[k], world_p[k], index_c[cc], index_p[pch] = cc, pch, k, k
            end
            for k = 1, count do
                local r = math.random()
                if r < 0.25 then
                    local other = rand(count)
                    local j = rand(world_c[other]:count() + 1)
                    pcall(world_c[k].attach, world_c[k], world_c[other], j)
                    pcall(world_p[k].attach, world_p[k], world_p[other], j)
                elseif r < 0.3 then
                    local other = rand(count)
                    local j = rand(world_c[other]:count() + 1)
                    pcall(world_c[k].attach_tip, world_c[k], world_c[other], j)
                    pcall(world_p[k].attach_tip, world_p[k], world_p[other], j)
                end
            end
            local calls = 0
            for round = 1, 4 do
                local order, targets = {}, nil
                for k = 1, count do order[k] = k end
                for k = count, 2, -1 do
                    local j = rand(k)
                    order[k], order[j] = order[j], order[k]
                end
                if math.random() < 0.2 then order[#order + 1] = order[1] end -- one chain twice
                local held = false
                for _, k in ipairs(order) do held = held or world_c[k]:tip_parent() ~= nil end
                if round % 2 == 1 and not held then
                    targets = {}
                    for _, k in ipairs(order) do
                        local b = pack(world_c[k]:joint(1))
                        local ux, uy, uz = direction(dim)
                        local d = world_c[k]:reach() * pick({ 0.5, 0.9, 1.5, 0.01 })
                        targets[#targets + 1] = b[1] + ux * d
                        targets[#targets + 1] = b[2] + uy * d
                        if dim == 3 then targets[#targets + 1] = b[3] + uz * d end
                    end
                else
                    for _, k in ipairs(order) do
                        if world_c[k]:tip_parent() == nil then
                            local b = pack(world_c[k]:joint(1))
                            local ux, uy, uz = direction(dim)
                            local d = world_c[k]:reach() * pick({ 0.5, 0.9, 1.5 })
                            world_c[k]:set_target(b[1] + ux * d, b[2] + uy * d, dim == 3 and b[3] + uz * d or nil)
                            world_p[k]:set_target(b[1] + ux * d, b[2] + uy * d, dim == 3 and b[3] + uz * d or nil)
                        end
                    end
                end
                local list_c, list_p = {}, {}
                for j, k in ipairs(order) do list_c[j], list_p[j] = world_c[k], world_p[k] end
                local what = ("seed %d (%dD, %d chains) round %d"):format(seed, dim, count, round)
                local ok_c, r_c = pcall(many_call, C, list_c, targets, {}, {}, {})
                local ok_p, r_p = pcall(many_call, P, list_p, targets, {}, {}, {})
                pc.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p)
                pc.check_world(world_c, world_p, index_c, index_p, what)
                calls = calls + 1
            end
            return calls
        end
        pc.assert_same_bits(pc.run_seeds(", solve_many", seeds_to(24, 4), run_many))
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

    it("makes no garbage when solving with FABRIK, CCD and relaxation, or many chains at once", function()
        local rope2 = P.chain2d({ 0.5, 0.5, 0.5, 0.5, 0.5 })
        local arm2 = P.chain2d({ 1, 1, 0.3 }):configure({ solver = "ccd" })
        arm2:set_limit(2, -1, 1)
        arm2:set_limit(3, -0.5, 0.5)
        arm2:set_target_angle(0.5)
        local tail2 = P.chain2d({ 0.4, 0.4, 0.4, 0.4 }):configure({ solver = "relax" })
        tail2:set_weight(3, 0)
        local arm3 = P.chain3d({ 1, 1, 0.3 })
        arm3:set_hinge(2, 0, 0, 1, 0, 2)
        arm3:set_cone(3, 0.5)
        arm3:set_target_rotation(1, 0.3, 0.2, 0)
        local tail3 = P.chain3d({ 0.4, 0.4, 0.4, 0.4 }):configure({ solver = "relax", pole = { 0, 0, 1 } })
        tail3:set_cone(2, 0.6)
        tail3:set_twist(3, -0.3, 0.3)
        local slow3 = P.chain3d({ 1, 1, 1 }):configure({ solver = "ccd", greed = 0.3, greed_ramp = false })
        local free3 = P.chain3d({ 1, 1, 1 }):configure({ mix = 0.5, max_turn = 0.3 })
        local many = { rope2, arm2, tail2 }
        local targets, reached, distances, iterations = { 0, 0, 0, 0, 0, 0 }, {}, {}, {}
        local function loop(count)
            for i = 1, count do
                local s, c = math.sin(i * 0.1), math.cos(i * 0.07)
                rope2:solve(1 + s, c)
                rope2:solve(1 + s + 1e-3, c)
                rope2:solve_relax(10, 0)
                arm2:solve(1 + s, c)
                arm2:solve_fabrik(s, 1 + c)
                tail2:solve(s, 1)
                tail2:solve_ccd(1, s)
                arm3:solve(1, s, c)
                arm3:solve_relax(c, 1, s)
                arm3:solve_ccd(s, c, 1)
                tail3:solve(s, c, 1)
                slow3:solve(c, 1, s)
                free3:solve_fabrik(1, c, s)
                targets[1], targets[2], targets[3], targets[4], targets[5], targets[6] = s, 1, 1, c, c, s
                P.solve_many(many, targets, reached, distances, iterations)
                P.solve_many(many)
            end
        end
        local kb = pc.garbage_kb(loop, 200)
        assert.is_true(kb < 1, ("%.2f KB for 200 rounds"):format(kb))
    end)
end)
