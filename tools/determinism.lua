-- A fixed workload for `make determinism`: every solver on 2D and 3D chains (about 4,000
-- solves, warm-started one after another, with varied settings, weights, poles and targets:
-- reachable, out of reach, on a joint), ik.solve_many (a crowd of 40 chains alike among
-- them, which the batch solves in lanes), orientation goals, aiming, mix and max_turn, rigs
-- (a figure and a spider, FABRIK and relaxation), 3,000 stateless two-bone solves, and
-- motion over time (drag, simulate, a spider's gait), and closed loops (a four-bar linkage,
-- two arms holding one another).
-- It prints every result and every final pose as hex floats, one line per call, so two runs
-- can be compared byte for byte.
--   lua5.4 tools/determinism.lua                      (from the repository root)
--   IK_CPATH="build/luajit/?.so" luajit tools/determinism.lua
-- Everything on the Lua side is exact in both VMs: the Park-Miller generator, and only +, -,
-- * and / on its numbers (no math.sin or math.sqrt, which are the VM's own). Hex floats are
-- formatted here, not by string.format("%a"): glibc and LuaJIT write subnormals differently.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")

local huge, abs, format, concat = math.huge, math.abs, string.format, table.concat

-- x exactly, as 0x1.<13 hex digits>p<exponent> (subnormals normalised too).
local function hex(x)
    if x ~= x then return "nan" end
    if x == huge then return "inf" elseif x == -huge then return "-inf" end
    if x == 0 then return (1 / x < 0) and "-0x0p+0" or "0x0p+0" end
    local sign, a, e = x < 0 and "-" or "", abs(x), 0
    while a >= 2 ^ 64 do a, e = a / 2 ^ 64, e + 64 end
    while a >= 2 do a, e = a / 2, e + 1 end
    while a < 2 ^ -64 do a, e = a * 2 ^ 64, e - 64 end
    while a < 1 do a, e = a * 2, e - 1 end
    return format("%s0x1.%013xp%+d", sign, (a - 1) * 2 ^ 52, e)
end

local seed = 20240601
local function random() -- in (0, 1); 16807 * seed < 2^46 is exact
    seed = (16807 * seed) % 2147483647
    return seed / 2147483647
end
local function uniform(a, b)
    return a + (b - a) * random()
end
-- One line: a label, then the values (numbers as hex floats); labels and counters are
-- strings, made by the caller with %d.
local out = {}
local function emit(...)
    local parts = { ... }
    for k = 1, #parts do
        if type(parts[k]) == "number" then parts[k] = hex(parts[k]) else parts[k] = tostring(parts[k]) end
    end
    out[#out + 1] = concat(parts, " ")
end

-- The chain's whole state: positions, local and world pose, base.
local function emit_pose(c)
    local p = c:positions()
    local line = {}
    for k = 1, #p do line[k] = hex(p[k]) end
    for i = 1, #c do
        if c:dim() == 2 then
            line[#line + 1] = hex(c:angle(i))
            line[#line + 1] = hex(c:world_angle(i))
        else
            local w, x, y, z = c:rotation(i)
            line[#line + 1] = concat({ hex(w), hex(x), hex(y), hex(z) }, ",")
            w, x, y, z = c:world_rotation(i)
            line[#line + 1] = concat({ hex(w), hex(x), hex(y), hex(z) }, ",")
        end
    end
    out[#out + 1] = "  " .. concat(line, " ")
end

-- ---- stateless two-bone solves: random, and on the edges of the reachable ring ----
for k = 1, 1000 do
    local l1, l2 = uniform(0.1, 2), uniform(0.1, 2)
    if k % 4 == 0 then l2 = l1 * (1 + uniform(-1e-7, 1e-7)) end
    local x, y, z = uniform(-4, 4), uniform(-4, 4), uniform(-4, 4)
    if k % 5 == 0 then -- |p| = l1 + l2 or |l1 - l2|, along a random direction
        local r = (k % 10 == 0) and (l1 + l2) or abs(l1 - l2)
        local n = abs(x) + abs(y)
        x, y = x / n * r, y / n * r
    end
    local bend = k % 2 == 0 and 1 or -1
    local label = format("%d", k)
    emit("two_bone", label, ik.two_bone(l1, l2, x, y, bend))
    emit("two_bone_joint", label, ik.two_bone_joint(x, y, l1, l2, bend))
    emit("two_bone_joint3", label, ik.two_bone_joint3(x, y, z, l1, l2, uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)))
end

-- ---- chains: every solver, 2D and 3D ----
local function random_pose(c)
    for i = 1, #c do
        if c:dim() == 2 then
            c:set_angle(i, uniform(-3.2, 3.2))
        else
            c:set_rotation(i, uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)) -- normalised by the core
        end
    end
end

local function target_for(c, k, reach)
    local dim = c:dim()
    local bx, by, bz = c:base()
    if dim == 2 then bz = 0 end
    if k % 7 == 0 then return c:joint(1 + k % (#c + 1)) end -- exactly on a joint
    local scale = (k % 11 == 0) and 3 * reach or 0.8 * reach -- sometimes out of reach
    local x, y, z = bx + uniform(-1, 1) * scale, by + uniform(-1, 1) * scale, bz + uniform(-1, 1) * scale
    if dim == 2 then return x, y end -- a 2D call refuses a z
    return x, y, z
end

local SOLVERS = { "fabrik", "ccd", "relax", "two_bone" }
local chains = { [2] = {}, [3] = {} }
for _, dim in ipairs({ 2, 3 }) do
    for _, solver in ipairs(SOLVERS) do
        for variant, n in ipairs(solver == "two_bone" and { 2, 2, 2 } or { 3, 6, 10 }) do
            local lengths, reach = {}, 0
            for i = 1, n do
                lengths[i] = uniform(0.25, 1.5)
                reach = reach + lengths[i]
            end
            local c = dim == 2 and ik.chain2d(lengths, uniform(-2, 2), uniform(-2, 2), uniform(-3, 3))
                or ik.chain3d(lengths, uniform(-2, 2), uniform(-2, 2), uniform(-2, 2))
            if dim == 3 and variant == 2 then c:set_base(0.5, -0.5, 1, uniform(-1, 1), uniform(-1, 1), 0.3, 0.2) end
            local settings = { solver = solver, iterations = 16 + 16 * variant, tolerance = variant == 1 and 1e-6 or 1e-3,
                greed = variant == 3 and 1 or 0.4, greed_ramp = variant ~= 3, bend = variant == 2 and -1 or 1 }
            if dim == 3 and solver == "two_bone" and variant ~= 3 then
                settings.pole = { uniform(-1, 1), uniform(-1, 1), variant == 1 and 1 or 0 }
            end
            c:configure(settings)
            if solver == "relax" then
                for i = 1, n + 1 do c:set_weight(i, variant == 1 and 1 or uniform(0, 2)) end
            end
            chains[dim][#chains[dim] + 1] = c
            random_pose(c)
            for k = 1, 170 do
                if k % 25 == 0 then random_pose(c) end
                local x, y, z = target_for(c, k, reach)
                local reached, distance, iterations
                if k % 2 == 0 then
                    reached, distance, iterations = c:solve(x, y, z)
                else
                    reached, distance, iterations = c["solve_" .. solver](c, x, y, z)
                end
                emit("solve", format("%dD %s %d %d", dim, solver, variant, k), reached, distance,
                    format("%d", iterations))
                emit_pose(c)
            end
        end
    end
end

-- ---- many chains in one call ----
for k = 1, 100 do
    local dim = k % 2 == 0 and 2 or 3
    local list, targets = {}, {}
    for j = 1, 4 do
        local c = chains[dim][1 + (k * 7 + j * 3) % #chains[dim]]
        list[j] = c
        local x, y, z = target_for(c, k + j, 3)
        targets[#targets + 1], targets[#targets + 2] = x, y
        if dim == 3 then targets[#targets + 1] = z end
    end
    emit("solve_many", format("%d", k), format("%d", ik.solve_many(list, targets)))
    for j = 1, 4 do emit_pose(list[j]) end
end

-- ---- a crowd in one call: chains of one bone count side by side (the batch's lanes) ----
for _, dim in ipairs({ 2, 3 }) do
    local crowd, lengths = {}, {}
    for i = 1, 10 do lengths[i] = uniform(0.5, 1.5) end
    for j = 1, 40 do
        local c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
        if j % 5 == 0 then c:configure({ tolerance = 0, iterations = 100 }) end
        random_pose(c)
        crowd[j] = c
    end
    for k = 1, 30 do
        local targets = {}
        for j = 1, #crowd do
            local x, y, z = target_for(crowd[j], k + j, 8)
            targets[#targets + 1], targets[#targets + 2] = x, y
            if dim == 3 then targets[#targets + 1] = z end
        end
        local reached, distances, iterations = {}, {}, {}
        emit("crowd", format("%dD %d", dim, k), format("%d", ik.solve_many(crowd, targets, reached, distances, iterations)))
        for j = 1, #crowd, 3 do
            emit("  result", format("%d", j), reached[j], distances[j], format("%d", iterations[j]))
            emit_pose(crowd[j])
        end
    end
end

-- ---- goals: orientation goals, aiming, mix and max_turn ----
for _, dim in ipairs({ 2, 3 }) do
    for v, solver in ipairs({ "fabrik", "ccd", "relax" }) do
        local lengths = {}
        for i = 1, 5 do lengths[i] = uniform(0.3, 1.2) end
        local c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
        c:configure({ solver = solver, mix = v == 2 and 0.5 or 1, max_turn = v == 3 and 0.2 or math.huge })
        for k = 1, 40 do
            local x, y, z = target_for(c, k, 4)
            if dim == 2 then c:set_target_angle(uniform(-3, 3)) else
                c:set_target_rotation(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1))
            end
            local reached, distance, iterations, angle = c:solve(x, y, z)
            emit("oriented", format("%dD %s %d", dim, solver, k), reached, distance, format("%d", iterations), angle)
            emit_pose(c)
            if k % 2 == 0 then c:clear_target() end
            reached, distance, iterations = c:solve_aim(target_for(c, k + 3, 4))
            emit("aim", format("%dD %s %d", dim, solver, k), reached, distance, format("%d", iterations))
            emit_pose(c)
        end
    end
end

-- ---- rigs: a figure and a spider, both rig solvers ----
local function figure(dim)
    local make = dim == 2 and ik.chain2d or ik.chain3d
    local spine = make({ 0.5, 0.5, 0.4 })
    local limbs = { make({ 0.6, 0.5 }), make({ 0.6, 0.5 }), make({ 0.3 }), make({ 0.9, 0.8 }), make({ 0.9, 0.8 }) }
    local at = { 4, 4, 4, 1, 1 } -- joints count from 1: the spine's top, and its base
    for j, limb in ipairs(limbs) do limb:attach(spine, at[j]) end
    local list = { spine }
    for j, limb in ipairs(limbs) do list[j + 1] = limb end
    return list, { 2, 3, 5, 6 }
end
local function spider(dim)
    local make = dim == 2 and ik.chain2d or ik.chain3d
    local body = make({ 0.6 })
    local list = { body }
    for j = 1, 8 do
        local leg = make({ 0.5, 0.6, 0.7 })
        leg:attach(body, 1 + j % 2)
        list[#list + 1] = leg
    end
    local goals = {}
    for j = 2, 9 do goals[#goals + 1] = j end
    return list, goals
end
for _, dim in ipairs({ 2, 3 }) do
    for _, build in ipairs({ figure, spider }) do
        for _, solver in ipairs({ "fabrik", "relax" }) do
            local list, goals = build(dim)
            local rig = ik.rig(list)
            rig:configure({ solver = solver, iterations = 60 })
            for k = 1, 12 do
                for _, g in ipairs(goals) do
                    local x, y, z = target_for(list[g], k + g, 3)
                    if dim == 2 then list[g]:set_target(x, y) else list[g]:set_target(x, y, z) end
                end
                local reached, distance, iterations = rig:solve()
                emit("rig", format("%dD %s %d %d", dim, solver, #list, k), reached, distance, format("%d", iterations))
                for _, c in ipairs(list) do emit_pose(c) end
            end
        end
    end
end

-- ---- motion over time: drag, simulate (with limits, a moving base), a gait ----
for _, dim in ipairs({ 2, 3 }) do
    local make = dim == 2 and ik.chain2d or ik.chain3d
    local snake = make({ 0.3, 0.3, 0.3, 0.3, 0.3, 0.3 })
    for i = 2, 6 do
        if dim == 2 then snake:set_limit(i, -0.5, 0.5) else snake:set_cone(i, 0.5) end
    end
    for k = 1, 60 do
        local x, y, z = target_for(snake, k, 2)
        if dim == 2 then snake:drag(x, y) else snake:drag(x, y, z) end
        emit("drag", format("%dD %d", dim, k))
        emit_pose(snake)
    end
    local tail = make({ 0.4, 0.3, 0.3, 0.2 })
    tail:configure({ gravity = dim == 2 and { 0.5, -9.81 } or { 0.5, -9.81, 0.25 }, stiffness = 30, damping = 1.5 })
    if dim == 2 then tail:set_limit(3, -0.6, 0.6) else tail:set_hinge(3, 0, 0, 1, -0.6, 0.6) end
    random_pose(tail)
    for k = 1, 90 do
        local t = k / 60
        if dim == 2 then tail:set_base(t * 2, t * t) else tail:set_base(t * 2, t * t, -t) end
        tail:simulate(k % 3 == 0 and 1 / 30 or 1 / 60)
        emit("simulate", format("%dD %d", dim, k))
        emit_pose(tail)
    end
    local list, goals = spider(dim)
    local rig = ik.rig(list)
    local legs = {}
    for j, g in ipairs(goals) do legs[j] = list[g] end
    for _, leg in ipairs(legs) do random_pose(leg) end
    local gait = ik.gait(legs, { stride = 0.2, step_time = 0.15, lift = 0.05, groups = { { 1, 3, 5, 7 }, { 2, 4, 6, 8 } },
        ground = function(x, z) return 0.1 * x - 0.02 * x * x + 0.05 * (z or 0) end })
    for k = 1, 120 do
        local t = k / 60
        if dim == 2 then list[1]:set_base(t, 0.8) else list[1]:set_base(t, 0.8, 0.2 * t) end
        gait:update(1 / 60)
        local reached, distance, iterations = rig:solve()
        emit("gait", format("%dD %d", dim, k), reached, distance, format("%d", iterations))
        for j = 1, #gait do
            if dim == 2 then
                local x, y, stepping, progress = gait:foot(j)
                emit("  foot", format("%d", j), x, y, stepping, progress)
            else
                local x, y, z, stepping, progress = gait:foot(j)
                emit("  foot", format("%d", j), x, y, z, stepping, progress)
            end
        end
    end
end

-- ---- closed loops: a four-bar linkage driven by its crank, two arms holding one another ----
for _, dim in ipairs({ 2, 3 }) do
    local make = dim == 2 and ik.chain2d or ik.chain3d
    for _, solver in ipairs({ "fabrik", "relax" }) do
        local crank, rocker = make({ 1, 3.5 }), make({ 3 })
        if dim == 2 then rocker:set_base(4, 0) else rocker:set_base(4, 0, 0) end
        if dim == 3 then
            crank:set_hinge(2, 0, 0, 1)
            rocker:set_hinge(1, 0, 0, 1)
        end
        crank:attach_tip(rocker, 2)
        local rig = ik.rig({ crank, rocker })
        rig:configure({ solver = solver, tolerance = 1e-9 })
        for k = 1, 40 do
            local a = 0.3 + k * 0.0625
            if dim == 2 then crank:set_limit(1, a, a) else crank:set_hinge(1, 0, 0, 1, a, a) end
            local reached, distance, iterations = rig:solve()
            emit("four-bar", format("%dD %s %d", dim, solver, k), reached, distance, format("%d", iterations))
            emit_pose(crank)
            emit_pose(rocker)
        end
        local body, arm, other = make({ 1, 0.5 }), make({ 0.8, 0.7 }), make({ 0.8, 0.7 })
        arm:attach(body, 3)
        other:attach(body, 3)
        if dim == 2 then other:attach_tip(arm, 3, 0.1, -0.05) else other:attach_tip(arm, 3, 0.1, -0.05, 0.02) end
        rig = ik.rig({ body, arm, other })
        rig:configure({ solver = solver })
        for k = 1, 30 do
            local x, y, z = target_for(arm, k, 1)
            arm:set_target(x, y, dim == 3 and z or nil)
            local reached, distance, iterations = rig:solve()
            emit("loop", format("%dD %s %d", dim, solver, k), reached, distance, format("%d", iterations))
            for _, c in ipairs({ body, arm, other }) do emit_pose(c) end
        end
    end
end

out[#out + 1] = ""
io.write(concat(out, "\n"))
