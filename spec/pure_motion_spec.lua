-- ik.pure against the C module: motion over time (chain:drag, chain:simulate,
-- chain:set_rest) and the stepping controller (ik.gait, gait:update, gait:foot,
-- gait:reset, #gait, tostring), side by side on C chains and pure chains.
--   - Random worlds of 2D and 3D chains (1 to 6 bones, zero-length bones, scales from
--     1e-150 to 1e150, limits, attached chains, held tips): drags and simulations among
--     random changes of what they depend on (gravity, stiffness, damping, poses, bases,
--     lengths, limits, solves), single calls and bursts of frames with varying dt and a
--     moving base, valid and not.
--   - Walkers: a body (moved by set_base, or dragged) and legs attached to it or free,
--     stepping under random gait options over bumpy or flat ground, with frames of varying
--     dt; every leg solved after each update (the solvers ik.pure has).
--   - Misuse of ik.gait and of its methods, a ground that fails, held tips, coordinates
--     out of range.
-- Both must accept or refuse alike, with the same message, return the same values
-- (numbers the same bits and the same subtype), and leave the same visible state on every
-- chain (spec/pure_compare.lua). Then: drags, simulations and gait updates make no garbage.
--
-- Under LuaJIT the C module is ik.core itself (require("ik") there puts FFI fast paths in
-- front of some methods, whose errors name the function differently).

local C = type(jit) == "table" and require("ik.core") or require("ik")
local P = require("ik.pure")
local pc = require("spec.pure_compare")

local load = loadstring or load
local unpack = table.unpack or unpack
local pack, compare, state = pc.pack, pc.compare, pc.state

local SEEDS = { 1, 2, 3, 4, 5 }
local QUICK = os.getenv("IK_SPEC_QUICK") == "1"
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = pc.calls(400, 40)
local FRAMES = math.floor((QUICK and 60 or 600) * pc.SCALE) -- a walk's frames, per seed
local WORLD = 5 -- chains on each side
local BY_KIND -- see below

-- The solvers ik.pure has (the others raise "not ported yet").
local PORTED = {}
for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone", "aim" }) do
    PORTED[solver] = pcall(function() P.chain2d({ 1, 1 }):configure({ solver = solver }):solve(1, 1) end)
end
local SOLVERS, LONG_LEG = {}, {} -- those ported; of those, the ones for legs of 3 bones
for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone", "aim" }) do
    if PORTED[solver] then SOLVERS[#SOLVERS + 1] = solver end
    if PORTED[solver] and solver ~= "two_bone" then LONG_LEG[#LONG_LEG + 1] = solver end
end

local METHODS = {
    "drag", "simulate", "set_rest", "configure", "set_angle", "set_rotation", "set_base", "set_length",
    "set_limit", "set_hinge", "set_cone", "set_twist", "clear_limit", "attach", "detach", "solve",
    "set_target", "attach_tip", "detach_tip", "update", "foot", "reset", "count",
}
-- How often each is called, in tenths of a percent (drag and simulate most).
local WEIGHTS = {
    drag = 200, simulate = 300, set_rest = 40, configure = 90, set_angle = 30, set_rotation = 30,
    set_base = 60, set_length = 20, set_limit = 35, set_hinge = 20, set_cone = 30, set_twist = 15,
    clear_limit = 10, attach = 30, detach = 20, solve = 40, set_target = 10, attach_tip = 10,
    detach_tip = 10,
}

-- One call site per method, shared by both backends, so that an error's position and the
-- function's name are the same for both.
local method_call = pc.method_calls(METHODS)
local gait_call = load("local pack = ... return function(ik, ...) return pack(ik.gait(...)) end", "=calls")(pack)
local dot_call = load("local pack = ... return function(f, ...) return pack(f(...)) end", "=calls")(pack)

-- ---- random arguments ----

local PI, rand = math.pi, math.random
local pick, float, direction = pc.pick, pc.float, pc.direction

-- A point to drag a C chain cc's tip to (read on the C side: both sides hold the same
-- numbers): near the tip (a frame's move), within reach, far, on the tip, at the range's
-- edge; now and then a wrong one, or a wrong count.
local function drag_args(cc)
    local dim, reach = cc:dim(), cc:reach() * cc:stretch_factor()
    local t = pack(cc:effector())
    local ux, uy, uz = direction(dim)
    local function off(d) return t[1] + ux * d, t[2] + uy * d, (t[3] or 0) + uz * d end -- d from the tip
    local r, x, y, z = math.random(), nil, nil, nil
    if r < 0.45 then
        x, y, z = off(reach * pick({ 1e-12, 1e-3, 0.02, 0.05, 0.1, 0.3 }))
    elseif r < 0.65 then
        x, y, z = off(reach * float(0, 3))
    elseif r < 0.72 then
        x, y, z = t[1], t[2], t[3]
    elseif r < 0.8 then
        x, y, z = pc.edge_point()
    elseif r < 0.9 then
        local b = pack(cc:joint(1))
        x, y, z = b[1], b[2], b[3] -- onto the base: the chain folds back
    else
        x, y, z = pick({ 0 / 0, 1 / 0, 1e301, "1", {}, true, nil }), float(-3, 3), float(-3, 3)
    end
    return pc.point_args(dim, x, y, z)
end

local function dt_arg()
    if math.random() < 0.85 then
        return pick({ 1 / 60, 1 / 30, 1 / 144, 1 / 60, 0.001, 0.016, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 5 })
            * (math.random() < 0.5 and 1 or float(0.8, 1.2))
    end
    return pick({ 1e-9, 1e-300, 5e-324, 0, -0.0, -1, 0 / 0, 1 / 0, -1 / 0, "0.1", {}, nil })
end

local function gravity(dim)
    local function g()
        return pick({ 0, 0, -9.8, 9.8, 1, -30, float(-20, 20), 1e3, 1e150, 1e300, -1e300 })
    end
    if math.random() < 0.03 then return pick({ { 1 }, { 0 / 0, 0, 0 }, { 1e301, 0, 0 }, "down" }) end
    local t = { g(), g() }
    if dim == 3 then t[3] = g() end
    return t
end

local function settings_table(dim)
    local keys = {
        gravity = function() return gravity(dim) end,
        stiffness = function() return pick({ 0, 0, 1, 20, 400, 1e4, 1e6, 1e300, -1, 0 / 0 }) end,
        damping = function() return pick({ 0, 0.5, 0.5, 2, 10, 50, 1e300, -1 }) end,
        solver = function() return pick(SOLVERS) end,
        stretch = function() return pick({ true, false, false }) end,
        mix = function() return pick({ 1, 1, 0.5 }) end,
    }
    local names = { "gravity", "gravity", "stiffness", "stiffness", "damping", "solver", "stretch", "mix" }
    return pc.random_table(keys, names)
end

-- What to call name with (after self) on the C chain cc, a.n values; { chain = k } is
-- chain k of each side.
local function args_for(name, cc)
    local a, n, dim
    n, dim = cc:count(), cc:dim()
    if name == "drag" then
        return drag_args(cc)
    elseif name == "set_target" or name == "solve" then
        local t = pack(cc:effector())
        local d = cc:reach() * float(0, 1.5)
        local ux, uy, uz = direction(dim)
        local b = pack(cc:joint(1))
        a = { b[1] + ux * d, b[2] + uy * d, dim == 3 and (b[3] + uz * d) or nil }
        if name == "solve" and math.random() < 0.2 then a = { t[1], t[2], t[3] } end
        a.n = dim
        return a
    elseif name == "simulate" then
        a = { dt_arg() }
        a.n = 1
        if math.random() < 0.03 then a.n = 2; a[2] = pick({ 1, "x" }) end
        if math.random() < 0.02 then a.n = 0 end
        return a
    elseif name == "set_rest" then
        a = {}
    elseif name == "configure" then
        a = { settings_table(dim) }
    elseif name == "set_rotation" then
        a = { rand(n), float(-1, 1), float(-1, 1), float(-1, 1), float(-1, 1) }
    elseif name == "set_angle" then
        a = { rand(n), float(-4, 4) }
    elseif name == "set_base" then
        -- a small move mostly (a body moving between frames), now and then a jump
        local b = pack(cc:base())
        local s = cc:reach() * (math.random() < 0.8 and 0.05 or 2)
        a = { b[1] + s * float(-1, 1), b[2] + s * float(-1, 1) }
        if dim == 3 then
            a[3] = b[3] + s * float(-1, 1)
            if math.random() < 0.5 then for k = 4, 7 do a[k] = float(-1, 1) end end
        elseif math.random() < 0.5 then
            a[3] = b[3] + float(-0.3, 0.3)
        end
    elseif name == "set_length" then
        a = { rand(n), pick({ 0, 5e-324, float(0.2, 2), float(0.2, 2), float(0.2, 2) }) }
    end
    a = a or pc.limit_args(name, n, WORLD) or {}
    a.n = #a
    return a
end

-- The methods of one dimension.
local DIM_OF = { set_angle = 2, set_limit = 2, set_rotation = 3, set_hinge = 3, set_cone = 3, set_twist = 3 }

local function chain_for(name, world_c)
    local fits = {}
    for k, cc in ipairs(world_c) do
        if DIM_OF[name] == nil or DIM_OF[name] == cc:dim() then fits[#fits + 1] = k end
    end
    if #fits == 0 or math.random() < 0.05 then return rand(#world_c) end
    return pick(fits)
end

-- Where every joint of a chain is, as a pack (a burst's frames compare these and the rest
-- of the state at its end).
local function joints(ch) return ch:positions() end

-- ---- the random worlds ----

local function run(seed)
    local calls, world = 0, pc.new_world()
    local world_c, world_p, index_c, index_p = world.c, world.p, world.index_c, world.index_p
    math.randomseed(seed)

    local function new_chain(k)
        local dim = rand(2) + 1
        local a = pc.chain_args(dim, { 1, 2, 2, 3, 3, 4, 5, 6 }) -- 1 to 6 bones
        local cc, pch = pc.chain_pair(C, P, dim, a)
        local s = { solver = pick(SOLVERS) } -- one ik.pure has (the default, fabrik, may not be)
        if s.solver == "two_bone" and #a[1] ~= 2 then s.solver = "aim" end
        if math.random() < 0.7 then -- something to swing: gravity, stiffness, damping
            s.gravity, s.stiffness, s.damping = dim == 2 and { 0, -9.8 } or { 0, -9.8, 0 }, pick({ 0, 10, 200 }), pick({ 0, 0.5, 3 })
        end
        cc:configure(s)
        pch:configure(s)
        pc.world_set(world, k, cc, pch)
    end
    for k = 1, WORLD do new_chain(k) end

    -- name(args) on chain k of both worlds, compared (every chain's solver is one ik.pure
    -- has: spec/pure_solve_spec.lua tries the others).
    local function call(what, name, k, a)
        pc.trace(what, a)
        local ok_c, r_c = pcall(method_call[name], world_c[k], unpack(pc.resolve(a, world_c), 1, a.n))
        local ok_p, r_p = pcall(method_call[name], world_p[k], unpack(pc.resolve(a, world_p), 1, a.n))
        calls = calls + 1
        pc.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p)
    end

    -- A burst of frames on chain k: its tree's root moves along a smooth path (or its tip
    -- is dragged along one), and each frame simulates (or drags) with a varying dt.
    local function burst(what, k)
        local cc = world_c[k]
        local root = k
        while world_c[root]:parent() do
            local parent = world_c[root]:parent()
            root = index_c[parent]
            if type(root) ~= "number" then return end -- it hangs on a retired chain
        end
        local dim = cc:dim()
        local frames = rand(QUICK and 6 or 40)
        local dragging = cc:parent() == nil and math.random() < 0.3
        local rc = world_c[root]
        local b0 = pack(rc:base())
        local t0 = pack(cc:effector())
        local reach = rc:reach() * rc:stretch_factor()
        local speed = reach * pick({ 0, 0.5, 2, 10 })
        local hz = pick({ 30, 60, 144, 60 })
        for f = 1, frames do
            local dt = (1 / hz) * (math.random() < 0.8 and 1 or float(0.5, 3))
            local time = f / hz
            if dragging then
                local a = { t0[1] + speed * time, t0[2] + 0.3 * reach * math.sin(3 * time),
                    dim == 3 and t0[3] + 0.2 * reach * math.cos(2 * time) or nil, n = dim }
                call(what .. " frame " .. f, "drag", k, a)
            else
                local a = { b0[1] + speed * time, b0[2] + 0.2 * reach * math.sin(5 * time), n = 2 }
                if dim == 3 then
                    a[3], a.n = b0[3] + 0.1 * reach * math.cos(4 * time), 3
                else
                    a[3], a.n = b0[3] + 0.5 * math.sin(2 * time), 3
                end
                call(what .. " frame " .. f .. " base", "set_base", root, a)
                call(what .. " frame " .. f, "simulate", k, { dt, n = 1 })
            end
            local why = compare(joints(cc), joints(world_p[k]), index_c, index_p, what .. " frame " .. f)
            if why then pc.differs(why) end
        end
    end

    for step = 1, CALLS do
        local name = pc.weighted(METHODS, WEIGHTS, "simulate")
        local k = chain_for(name, world_c)
        local what
        local r = math.random()
        if r < 0.02 then
            new_chain(k)
            what = ("seed %d step %d: new chain %d"):format(seed, step, k)
        elseif r < 0.1 then
            what = ("seed %d step %d: chain %d burst"):format(seed, step, k)
            burst(what, k)
        else
            what = ("seed %d step %d: chain %d:%s"):format(seed, step, k, name)
            call(what, name, k, args_for(name, world_c[k]))
        end
        pc.check_world(world_c, world_p, index_c, index_p, what)
    end
    return calls
end

-- An index (for pc.compare) naming every chain and gait by its kind.
BY_KIND = setmetatable({}, { __index = function(_, v)
    local mt = getmetatable(v)
    if mt == "ik.gait" or mt == "ik.chain" then return mt end
    return nil
end })

-- ---- walkers ----

local sin, cos = math.sin, math.cos

local function qaxis(x, y, z, a)
    local s = sin(a / 2)
    return cos(a / 2), x * s, y * s, z * s
end

local function ground2(x) return 0.15 * sin(1.3 * x) + 0.05 * sin(3.1 * x + 1) end
local function ground3(x, z) return 0.12 * sin(0.9 * x + 0.4 * z) + 0.06 * sin(2.3 * z - 1.1 * x) end

-- A walker's description, drawn once and built on each side: a body of 1 to 3 bones, legs
-- of 2 (the two-bone solver) or more bones (another solver ik.pure has), attached to the
-- body's joints or free (each placed under the body every frame), and the gait's options.
local function walker_plan(dim)
    local p = { dim = dim, body = {}, legs = {} }
    for b = 1, rand(3) do p.body[b] = float(0.3, 1) end
    local count = pick({ 1, 2, 2, 4, 6, 8 })
    for k = 1, count do
        local two = math.random() < 0.7 or #LONG_LEG == 0
        local leg = {
            lengths = two and { float(0.6, 1), float(0.6, 1) } or { float(0.5, 0.9), float(0.5, 0.9), float(0.2, 0.5) },
            solver = two and "two_bone" or pick(LONG_LEG),
            free = math.random() < 0.2,
            joint = rand(#p.body + 1),
            side = k % 2 == 0 and 1 or -1,
            spread = float(-0.6, 0.6),
            bend = { float(0.2, 0.8), float(-1.4, -0.6), float(-0.8, -0.3) },
        }
        p.legs[k] = leg
    end
    local o = { stride = float(0.2, 0.6), step_time = float(0.1, 0.4) }
    if math.random() < 0.5 then o.lift = pick({ 0, 0.1, 0.3 }) end
    if math.random() < 0.5 then o.lead = pick({ 0, 0.5, 1.2 }) end
    if math.random() < 0.5 then o.max_groups = pick({ 1, 2, 3 }) end
    if math.random() < 0.3 then o.up = -1 end
    local g = rand(4)
    if g == 1 then
        o.ground = dim == 2 and ground2 or ground3
    elseif g == 2 then
        o.ground = function() return 0.25 end
    end
    if count >= 2 and math.random() < 0.6 then -- two groups in turn, or a random partition
        local groups, into = {}, rand(count)
        for k = 1, count do
            local j = math.random() < 0.5 and (k % 2 + 1) or rand(into)
            groups[j] = groups[j] or {}
            table.insert(groups[j], k)
        end
        local packed = {}
        for j = 1, count do if groups[j] then packed[#packed + 1] = groups[j] end end
        o.groups = packed
    end
    p.options = o
    p.speed = pick({ 0.3, 1, 1, 2.5 })
    p.drag = math.random() < 0.3 -- the body dragged by its tip, not moved by its base
    p.height = 1.3
    return p
end

-- The walker of plan p on the backend ik: chains (body first), legs, and place(t), which
-- moves the body (and the free legs' bases) to time t.
local function build(ik, p)
    local dim = p.dim
    local body = dim == 2 and ik.chain2d(p.body) or ik.chain3d(p.body)
    local chains, legs = { body }, {}
    for k, l in ipairs(p.legs) do
        local leg = dim == 2 and ik.chain2d(l.lengths) or ik.chain3d(l.lengths)
        leg:configure({ solver = l.solver })
        if not l.free then
            if dim == 2 then
                leg:attach(body, l.joint, -PI / 2 + l.spread)
            else
                leg:attach(body, l.joint, qaxis(0, 1, 0, l.side * (PI / 2 + l.spread)))
            end
        end
        for b = 1, #l.lengths do
            if dim == 2 then leg:set_angle(b, l.bend[b]) else leg:set_rotation(b, qaxis(0, 0, 1, l.bend[b])) end
        end
        legs[k] = leg
        chains[k + 1] = leg
    end
    local w = { body = body, legs = legs, chains = chains }
    function w.place(t)
        local x = p.speed * t
        if dim == 2 then
            local y = p.height + ground2(x)
            if not p.drag or t == 0 then body:set_base(x, y, 0.1 * sin(t)) end
        else
            local z = 0.3 * sin(0.5 * t)
            if not p.drag or t == 0 then body:set_base(x, p.height + ground3(x, z), z, qaxis(0, 1, 0, 0.3 * sin(0.5 * t))) end
        end
        if p.drag and t > 0 then
            local reach = body:reach()
            if dim == 2 then body:drag(x + reach, p.height + ground2(x)) else body:drag(x + reach, p.height, 0.3 * sin(t)) end
        end
        for k, l in ipairs(p.legs) do
            if l.free then
                local bx, by, bz = body:joint(l.joint)
                if dim == 2 then
                    legs[k]:set_base(bx, by, -PI / 2 + l.spread)
                else
                    legs[k]:set_base(bx, by, bz, qaxis(0, 0, 1, -PI / 2 + 0.2 * l.spread))
                end
            end
        end
    end
    w.place(0)
    return w
end

local function walk(seed)
    math.randomseed(seed)
    local calls = 0
    local dim = seed % 2 + 2
    local plan = walker_plan(dim)
    local wc, wp = build(C, plan), build(P, plan)
    local index_c, index_p = {}, {}
    for k, ch in ipairs(wc.chains) do index_c[ch] = k end
    for k, ch in ipairs(wp.chains) do index_p[ch] = k end
    local function check(what, ok_c, r_c, ok_p, r_p)
        calls = calls + 1
        pc.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p)
    end
    local okc, gc = pcall(gait_call, C, wc.legs, plan.options)
    local okp, gp = pcall(gait_call, P, wp.legs, plan.options)
    pc.check(("seed %d: ik.gait"):format(seed), okc, gc, okp, gp, BY_KIND, BY_KIND)
    gc, gp = gc[1], gp[1]
    index_c[gc], index_p[gp] = "gait", "gait"
    check(("seed %d: #gait"):format(seed), true, { #gc, gc:count(), tostring(gc) }, true, { #gp, gp:count(), tostring(gp) })
    local t, hz = 0, pick({ 30, 60, 144 })
    for f = 1, FRAMES do
        local what = ("seed %d frame %d"):format(seed, f)
        if math.random() < 0.05 then hz = pick({ 24, 30, 60, 144, 240 }) end
        local dt = (1 / hz) * (math.random() < 0.9 and 1 or float(0.3, 4))
        t = t + dt
        wc.place(t)
        wp.place(t)
        if math.random() < 0.01 then
            local ok_c, r_c = pcall(method_call.reset, gc)
            local ok_p, r_p = pcall(method_call.reset, gp)
            check(what .. ": reset", ok_c, r_c, ok_p, r_p)
        end
        local ok_c, r_c = pcall(method_call.update, gc, dt)
        local ok_p, r_p = pcall(method_call.update, gp, dt)
        check(what .. ": update", ok_c, r_c, ok_p, r_p)
        for k = 1, #gc do
            ok_c, r_c = pcall(method_call.foot, gc, k)
            ok_p, r_p = pcall(method_call.foot, gp, k)
            check(what .. ": foot " .. k, ok_c, r_c, ok_p, r_p)
        end
        for k = 1, #wc.legs do
            ok_c, r_c = pcall(method_call.solve, wc.legs[k])
            ok_p, r_p = pcall(method_call.solve, wp.legs[k])
            check(what .. ": leg " .. k .. " solve", ok_c, r_c, ok_p, r_p)
        end
        if f % 10 == 0 or f == FRAMES then pc.check_world(wc.chains, wp.chains, index_c, index_p, what) end
    end
    return calls
end

-- ---- misuse ----

-- Calls f(backend, ...) on both backends; they must refuse (or accept) alike, chains and
-- gaits returned compared by their kind.
local function both(what, f, ...)
    local ok_c, r_c = pcall(f, C, ...)
    local ok_p, r_p = pcall(f, P, ...)
    pc.check(what, ok_c, r_c, ok_p, r_p, BY_KIND, BY_KIND)
    return ok_c, r_c
end

describe("ik.pure against the C module (motion)", function()
    it("drags and simulates alike, bit for bit, among random changes", function()
        pc.assert_same_bits(pc.run_seeds(", drag and simulate", SEEDS, run))
    end)

    it("walks alike, bit for bit: gaits over many frames of varying dt and ground", function()
        local seeds = {}
        for s = 1, QUICK and 4 or 16 do seeds[s] = s end
        pc.assert_same_bits(pc.run_seeds(", gaits (" .. table.concat(SOLVERS, ", ") .. " legs)", seeds, walk))
    end)

    it("refuses bad gaits, updates and feet with the same messages", function()
        pc.reset()
        local function legs_of(ik, dim)
            local body = dim == 2 and ik.chain2d({ 1 }) or ik.chain3d({ 1 })
            local a = dim == 2 and ik.chain2d({ 1, 1 }, 0, 1, -PI / 2) or ik.chain3d({ 1, 1 }, 0, 1, 0)
            local b = dim == 2 and ik.chain2d({ 1, 1 }) or ik.chain3d({ 1, 1 })
            b:attach(body, 2)
            return { a, b }, body
        end
        local bad_options = {
            {}, { stride = 0 }, { stride = -1 }, { stride = 0 / 0 }, { stride = math.huge }, { stride = "1" },
            { stride = 1e301 }, { stride = 1, step_time = 0 }, { stride = 1, step_time = -1 },
            { stride = 1, step_time = 1 / 0 }, { stride = 1, lift = -0.1 }, { stride = 1, lift = 0 / 0 },
            { stride = 1, lead = -1 }, { stride = 1, lead = 0 / 0 }, { stride = 1e200, lead = 1e101 },
            { stride = 1, max_groups = 0 }, { stride = 1, max_groups = 1.5 }, { stride = 1, max_groups = 3e9 },
            { stride = 1, max_groups = -3e9 }, { stride = 1, max_groups = "2" }, { stride = 1, ground = 5 },
            { stride = 1, nope = 1 }, { stride = 1, ["stride\0x"] = 1 }, { stride = 1, [1] = 2 },
            { stride = 1, [true] = 2 }, { stride = 1, up = 0 }, { stride = 1, up = 2 }, { stride = 1, up = "1" },
            { stride = 1, up = -1.5 }, { stride = 1, groups = { { 1 } } }, { stride = 1, groups = { { 1, 2 }, { 2 } } },
            { stride = 1, groups = { { 1 }, { 3 } } }, { stride = 1, groups = { { 1 }, {}, { 2 } } },
            { stride = 1, groups = { { 1.5 }, { 2 } } }, { stride = 1, groups = 5 }, { stride = 1, groups = {} },
            { stride = 1, groups = { { 1 }, { "2" } } }, { stride = 1, groups = { { 1 }, { 0 } } },
            { stride = 1, groups = { { 1 }, 2 } }, { stride = 1, groups = setmetatable({}, { __index = {} }) },
            { stride = 1, groups = { { 1 }, setmetatable({ 2 }, { __index = {} }) } },
            { stride = 1, groups = { { 1 }, { 2 } }, max_groups = 2, lift = 0, lead = 0, up = -1, step_time = 1 },
            { stride = 1, groups = { { 2, 1 } } }, { stride = 1e300, lead = 1 }, { stride = 1, lift = 1e300 },
        }
        for _, dim in ipairs({ 2, 3 }) do
            for j, o in ipairs(bad_options) do
                both(("%dD options %d"):format(dim, j), function(ik)
                    local legs = legs_of(ik, dim)
                    return gait_call(ik, legs, o)
                end)
            end
            local cases = {
                function(ik) return gait_call(ik) end,
                function(ik) return gait_call(ik, nil, { stride = 1 }) end,
                function(ik) return gait_call(ik, {}, { stride = 1 }) end,
                function(ik) return gait_call(ik, { 5 }, { stride = 1 }) end,
                function(ik) return gait_call(ik, { ik.chain2d({ 1 }), ik.chain3d({ 1 }) }, { stride = 1 }) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, { l[1], l[1] }, { stride = 1 }) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, { l[1], l[2], l[1] }, { stride = 1 }) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, l, nil) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, l) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, l, { stride = 1 }, 5) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, setmetatable(l, { __index = {} }), { stride = 1 }) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, l, setmetatable({ stride = 1 }, { __index = {} })) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, { l[1], true }, { stride = 1, nope = 2 }) end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, { l[1], true }, { stride = 1 }) end,
                function(ik)
                    local l = legs_of(ik, dim)
                    local g = ik.gait(l, { stride = 1 })
                    return gait_call(ik, { g }, { stride = 1 })
                end,
                function(ik) local l = legs_of(ik, dim) return gait_call(ik, l, { stride = 1, groups = { l } }) end,
            }
            for j, f in ipairs(cases) do both(("%dD case %d"):format(dim, j), f) end
            -- the methods: bad self, dt, index, one argument too many
            local function with_gait(f)
                return function(ik)
                    local legs, body = legs_of(ik, dim)
                    local g = ik.gait(legs, { stride = 0.3, step_time = 0.2 })
                    return f(ik, g, legs, body)
                end
            end
            local method_cases = {
                function(_, g) return method_call.update(g, 0) end,
                function(_, g) return method_call.update(g, -1) end,
                function(_, g) return method_call.update(g, 0 / 0) end,
                function(_, g) return method_call.update(g, 1 / 0) end,
                function(_, g) return method_call.update(g, "0.1") end,
                function(_, g) return method_call.update(g) end,
                function(_, g) return method_call.update(g, nil) end,
                function(_, g) return method_call.update(g, 0.1, 1) end,
                function(_, g) return method_call.update(g, 0.1, nil) end,
                function(_, g, legs) return dot_call(g.update, legs[1], 0.1) end,
                function(_, g) return dot_call(g.update, 5, 0.1) end,
                function(_, g) return dot_call(g.foot, {}, 1) end,
                function(_, g) return dot_call(g.reset) end,
                function(_, g) return dot_call(g.count, "g") end,
                function(_, g) return method_call.foot(g, 0) end,
                function(_, g) return method_call.foot(g, 3) end,
                function(_, g) return method_call.foot(g, 1.5) end,
                function(_, g) return method_call.foot(g, "1") end,
                function(_, g) return method_call.foot(g) end,
                function(_, g) return method_call.foot(g, 1), method_call.foot(g, 2) end,
                function(_, g) return method_call.count(g), #g, tostring(g), getmetatable(g) end,
                function(ik, _, legs)
                    local one = ik.gait({ legs[1] }, { stride = 1 })
                    return tostring(one), #one
                end,
                function(_, g, legs) -- a held tip
                    legs[1]:attach_tip(legs[2], 2)
                    return method_call.update(g, 0.1)
                end,
                function(_, _, legs) return method_call.drag(legs[2], 1, 1) end, -- attached
                function(_, _, _, body) return method_call.simulate(body, 0) end,
                function(_, _, _, body) return method_call.simulate(body, 0.1, 0.2) end,
                function(_, _, _, body) return method_call.simulate(body, "0.1") end,
                function(_, _, _, body) return method_call.simulate(body) end,
                function(_, _, _, body) return method_call.simulate(body, -1 / 0) end,
                function(_, _, _, body) return method_call.set_rest(body, 1) end,
                function(_, g) return method_call.set_rest(g) end,
                function(_, g) return method_call.drag(g, 1, 2) end,
                function(_, g) return method_call.simulate(g, 0.1) end,
                function(_, _, legs) return method_call.drag(legs[1], 1, 2, 3, 4) end,
                function(_, _, legs) return method_call.drag(legs[1], 1e301, 2, 3) end,
                function(_, _, legs) return method_call.drag(legs[1], 1, 0 / 0, 3) end,
                function(_, _, legs) return method_call.drag(legs[1], 1) end,
            }
            for j, f in ipairs(method_cases) do both(("%dD method case %d"):format(dim, j), with_gait(f)) end
        end
        assert.is_true(pc.stats.errors >= 100, pc.stats.errors .. " refused alike")
    end)

    -- Joints near the range's end moving fast (a sub-step's point that overflows keeps its
    -- joint), huge gravity, stiffness and damping, zero-length and tiny bones; gaits whose
    -- frames are hitches far longer than a step (a step that is down as it starts).
    it("simulates, drags and walks alike at the extremes", function()
        local function extremes(seed)
            math.randomseed(seed)
            local calls = 0
            local dim = seed % 2 + 2
            local scale = pick({ 1e150, 1e299, 1e-150, 1 })
            local lengths = {}
            for k = 1, rand(5) do lengths[k] = pick({ 0, 1e-300, scale, scale * float(0.2, 2) }) end
            local base = { pick({ 0, 9e299, -9e299 }), pick({ 0, 9e299, -5e299 }), pick({ 0, 9e299 }) }
            local world = {}
            for s, ik in ipairs({ C, P }) do
                local ch = dim == 2 and ik.chain2d(lengths, base[1], base[2], 1) or ik.chain3d(lengths, base[1], base[2], base[3])
                world[s] = ch
            end
            local none = BY_KIND
            local function both_calls(what, name, ...)
                local ok_c, r_c = pcall(method_call[name], world[1], ...)
                local ok_p, r_p = pcall(method_call[name], world[2], ...)
                calls = calls + 1
                pc.check(what, ok_c, r_c, ok_p, r_p, none, none)
                local why = compare(state(world[1]), state(world[2]), none, none, what)
                if why then pc.differs(why) end
            end
            for f = 1, QUICK and 10 or 60 do
                local what = ("seed %d frame %d"):format(seed, f)
                if f % 10 == 1 then
                    local g = { pick({ 1e300, -1e300, 0, 9.8 }), pick({ -1e300, 1e300, -9.8 }), pick({ 1e300, 0 }) }
                    if dim == 2 then g[3] = nil end
                    both_calls(what .. " configure", "configure", { gravity = g, stiffness = pick({ 0, 1e300, 1e6 }),
                        damping = pick({ 0, 0, 1e300, 0.5 }) })
                end
                if math.random() < 0.2 then
                    both_calls(what .. " drag", "drag", pick({ 1e300, -1e300, 0 }), pick({ 1e300, -1e300 }), pick({ 1e300, 0 }))
                elseif math.random() < 0.1 then
                    both_calls(what .. " set_rest", "set_rest")
                else
                    both_calls(what .. " simulate", "simulate", pick({ 1, 1 / 60, 2, 1e-300 }))
                end
            end
            -- hitches: frames far longer than a step
            local plan = walker_plan(dim)
            plan.options.step_time = pick({ 0.01, 0.05, 0.2 })
            local wc, wp = build(C, plan), build(P, plan)
            local gc, gp = C.gait(wc.legs, plan.options), P.gait(wp.legs, plan.options)
            local t = 0
            for f = 1, QUICK and 20 or 120 do
                local dt = pick({ 1 / 60, 0.5, 1, 3, 0.02 })
                t = t + dt
                wc.place(t)
                wp.place(t)
                local ok_c, r_c = pcall(method_call.update, gc, dt)
                local ok_p, r_p = pcall(method_call.update, gp, dt)
                pc.check(("seed %d hitch %d"):format(seed, f), ok_c, r_c, ok_p, r_p, none, none)
                calls = calls + 1
                for k = 1, #gc do
                    ok_c, r_c = pcall(method_call.foot, gc, k)
                    ok_p, r_p = pcall(method_call.foot, gp, k)
                    pc.check(("seed %d hitch %d foot %d"):format(seed, f, k), ok_c, r_c, ok_p, r_p, none, none)
                end
            end
            return calls
        end
        local seeds = {}
        for s = 1, QUICK and 6 or 40 do seeds[s] = s end
        pc.assert_same_bits(pc.run_seeds(", extremes", seeds, extremes))
    end)

    it("hands on a failing ground's error, changes nothing, and goes on; refuses leaving the range", function()
        pc.reset()
        for _, dim in ipairs({ 2, 3 }) do
            for _, how in ipairs({ "error", "table error", "string", "nan", "inf", "huge", "nil", "none", "chain",
                "integer", "-0" }) do
                local fail = false
                local function ground(x, z)
                    if fail then
                        if how == "error" then error("no ground here") end
                        if how == "table error" then error({ code = 7 }) end
                        if how == "string" then return "high" end
                        if how == "nan" then return 0 / 0 end
                        if how == "inf" then return -1 / 0 end
                        if how == "huge" then return 2e300 end
                        if how == "nil" then return nil end
                        if how == "none" then return end
                        if how == "chain" then return C.chain2d({ 1 }) end
                        if how == "integer" then return 1 end
                        if how == "-0" then return -0.0 end
                    end
                    return 0.1 * sin(x) + (z or 0) * 0.01
                end
                local sides = {}
                for s, ik in ipairs({ C, P }) do
                    local leg = dim == 2 and ik.chain2d({ 1, 1 }, 0, 1.5, -PI / 2) or ik.chain3d({ 1, 1 }, 0, 1.5, 0, qaxis(0, 0, 1, -PI / 2))
                    leg:configure({ solver = "two_bone" })
                    sides[s] = { leg = leg, gait = ik.gait({ leg }, { stride = 0.3, step_time = 0.2, ground = ground }) }
                end
                local asked = false
                for f = 1, 200 do
                    fail = f % 7 == 0
                    local results = {}
                    for s = 1, 2 do
                        local side = sides[s]
                        if dim == 2 then side.leg:set_base(f / 60, 1.5, -PI / 2) else side.leg:set_base(f / 60, 1.5, 0.1 * f / 60) end
                        local before = pack(side.gait:foot(1))
                        local ok, r = pcall(method_call.update, side.gait, 1 / 60)
                        if not ok then
                            asked = true
                            assert.are.same(before, pack(side.gait:foot(1)))
                            if type(r) == "table" then r = "table " .. tostring(r.code) end
                        end
                        results[s] = { ok, r, pack(side.gait:foot(1)), pack(side.leg:target()) }
                    end
                    local why = compare(results[1], results[2], {}, {}, ("%dD %s frame %d"):format(dim, how, f))
                    if why then error(why, 0) end
                end
                assert.is_true(asked or how == "integer" or how == "-0", how .. ": the ground never failed")
            end
        end
        -- a landing beyond the range: ERR_RANGE, and nothing changes
        for _, dim in ipairs({ 2, 3 }) do
            both(dim .. "D out of range", function(ik)
                local leg = dim == 2 and ik.chain2d({ 1, 1 }, 0, 1, -PI / 2) or ik.chain3d({ 1, 1 }, 0, 1, 0)
                local g = ik.gait({ leg }, { stride = 1e299, lead = 10 })
                if dim == 2 then leg:set_base(9e299, 1, -PI / 2) else leg:set_base(9e299, 1, 0) end
                local ok, err = pcall(method_call.update, g, 0.1)
                return ok, err, pack(g:foot(1)), pack(leg:target())
            end)
        end
    end)

    it("makes no garbage when dragging, simulating and walking", function()
        local c2 = P.chain2d({ 1, 0.5, 0, 0.7 }):configure({ gravity = { 0, -9.8 }, stiffness = 30, damping = 1 })
        c2:set_limit(2, -0.5, 0.5)
        local c3 = P.chain3d({ 1, 0.5, 0.7 }):configure({ gravity = { 0, -9.8, 1 }, stiffness = 30, damping = 1 })
        c3:set_cone(2, 0.6)
        c3:set_twist(3, -0.2, 0.2)
        local body = P.chain2d({ 1, 1 })
        local tail = P.chain2d({ 0.3, 0.3, 0.3 }):configure({ gravity = { 0, -9.8 } })
        tail:attach(body, 1, PI)
        local legs2 = {}
        for k = 1, 2 do
            legs2[k] = P.chain2d({ 0.9, 0.9 }):configure({ solver = "two_bone" })
            legs2[k]:attach(body, k * 2 - 1, -PI / 2)
            legs2[k]:set_angle(1, 0.4)
            legs2[k]:set_angle(2, -0.8)
        end
        local g2 = P.gait(legs2, { stride = 0.4, step_time = 0.2, ground = ground2 })
        local body3 = P.chain3d({ 1 })
        local legs3 = {}
        for k = 1, 4 do
            legs3[k] = P.chain3d({ 0.9, 0.9 }):configure({ solver = "two_bone" })
            legs3[k]:attach(body3, k % 2 + 1, qaxis(0, 1, 0, (k % 2 == 0 and 1 or -1) * PI / 2))
            legs3[k]:set_rotation(1, qaxis(0, 0, 1, 0.5))
            legs3[k]:set_rotation(2, qaxis(0, 0, 1, -1))
        end
        local g3 = P.gait(legs3, { stride = 0.4, step_time = 0.2, ground = ground3, groups = { { 1, 4 }, { 2, 3 } } })
        local t = 0
        local function loop(count)
            for i = 1, count do
                t = t + 1 / 60
                local s = sin(i * 0.1)
                c2:drag(2 + s, 1 - s)
                c2:simulate(1 / 60)
                c2:set_rest()
                c3:drag(1 + s, s, 2)
                c3:simulate(1 / 30)
                body:set_base(t, 1.5 + 0.1 * s, 0.1 * s)
                tail:simulate(1 / 60)
                g2:update(1 / 60)
                local _, _, _, _ = g2:foot(1)
                for k = 1, 2 do legs2[k]:solve() end
                body3:set_base(t, 1.5, 0.2 * s)
                g3:update(1 / 60)
                for k = 1, 4 do legs3[k]:solve() end
            end
        end
        pc.assert_no_garbage(loop, 2000)
    end)
end)
