-- Motion over time (API.md, "Motion over time"): follow-the-leader (`drag`) and secondary
-- motion (`simulate`, `set_rest`), 2D and 3D, with limits, and every misuse.

local ik = require("ik")
local h = require("spec.helpers")

local pi, sqrt, cos, sin, abs = math.pi, math.sqrt, math.cos, math.sin, math.abs

local function new(dim, lengths, ...)
    return dim == 2 and ik.chain2d(lengths, ...) or ik.chain3d(lengths, ...)
end

local function joint(c, i)
    local x, y, z = c:joint(i)
    return x, y, z or 0
end

-- The largest |length(i) - distance between joints i and i + 1|, relative to the length.
local function length_error(c)
    local worst = 0
    for i = 1, #c do
        local ax, ay, az = joint(c, i)
        local bx, by, bz = joint(c, i + 1)
        local d = h.dist3(ax, ay, az, bx, by, bz)
        worst = math.max(worst, abs(d - c:length(i)) / math.max(1, c:length(i)))
    end
    return worst
end

-- The pose as a flat list of local angles (2D) or quaternion components (3D).
local function pose(c)
    local t = {}
    for i = 1, #c do
        if c:dim() == 2 then
            t[#t + 1] = c:angle(i)
        else
            local w, x, y, z = c:rotation(i)
            t[#t + 1], t[#t + 2], t[#t + 3], t[#t + 4] = w, x, y, z
        end
    end
    return t
end

-- The angle of bone i's world direction from the unit direction (ux, uy, uz).
local function bone_off(c, i, ux, uy, uz)
    local ax, ay, az = joint(c, i)
    local bx, by, bz = joint(c, i + 1)
    local dx, dy, dz = h.unit3(bx - ax, by - ay, bz - az)
    local cx, cy, cz = h.cross3(dx, dy, dz, ux, uy, uz)
    return h.atan2(h.len3(cx, cy, cz), h.dot3(dx, dy, dz, ux, uy, uz))
end

-- The largest difference of two poses' local angles (2D) or rotations (3D), in radians.
local function pose_diff(a, b, dim)
    local worst = 0
    if dim == 2 then
        for i = 1, #a do worst = math.max(worst, abs(h.angle_diff(a[i], b[i]))) end
    else
        for i = 1, #a, 4 do
            -- |q - q'| = 2 sin(angle / 4) for unit quaternions
            local chord = h.qdist(a[i], a[i + 1], a[i + 2], a[i + 3], b[i], b[i + 1], b[i + 2], b[i + 3])
            worst = math.max(worst, 4 * math.asin(math.min(1, chord / 2)))
        end
    end
    return worst
end

-- The world direction of every bone (3D: twist is not simulated, and how far a bone has
-- turned about its own axis depends on the path it took, so motions compare by directions).
local function directions(c)
    local t = {}
    for i = 1, #c do
        local ax, ay, az = joint(c, i)
        local bx, by, bz = joint(c, i + 1)
        t[i] = { h.unit3(bx - ax, by - ay, bz - az) }
    end
    return t
end

local function directions_diff(a, b)
    local worst = 0
    for i = 1, #a do
        local cx, cy, cz = h.cross3(a[i][1], a[i][2], a[i][3], b[i][1], b[i][2], b[i][3])
        worst = math.max(worst, h.atan2(h.len3(cx, cy, cz), h.dot3(a[i][1], a[i][2], a[i][3], b[i][1], b[i][2], b[i][3])))
    end
    return worst
end

-- A chain of the lengths with random limits (3D: of the kind given) and a random pose within
-- them; returns the chain and its limits, for h.check_limits2 / h.check_limits3.
local function limited(rng, dim, lengths, kind)
    local c, L = new(dim, lengths), nil
    if dim == 2 then
        L = h.random_limits2(rng, #lengths, c)
        h.set_angles(c, h.random_within2(rng, L))
    else
        L = h.random_limits3(rng, #lengths, kind, c)
        h.set_rotations(c, h.random_within3(rng, L))
    end
    return c, L
end

describe("chain:drag", function()
    for _, dim in ipairs({ 2, 3 }) do
        it(dim .. "D: the tip on the point, lengths kept, bone 1's local pose kept, the base on joint 1", function()
            local rng = h.rng(31 + dim)
            local chk = h.checker("drag " .. dim .. "D")
            for trial = 1, 200 do
                local n = rng.int(1, 8)
                local lengths = {}
                for i = 1, n do lengths[i] = rng.uniform(0.2, 2) end
                local c = new(dim, lengths)
                for i = 1, n do
                    if dim == 2 then c:set_angle(i, rng.uniform(-1, 1)) else c:set_rotation(i, h.random_quat(rng)) end
                end
                for step = 1, 20 do
                    local tx, ty, tz = joint(c, n + 1)
                    local px, py, pz = tx + rng.uniform(-1, 1), ty + rng.uniform(-1, 1), tz + rng.uniform(-1, 1)
                    local first = dim == 2 and { c:angle(1) } or { c:rotation(1) }
                    if dim == 2 then c:drag(px, py) else c:drag(px, py, pz) end
                    local ex, ey, ez = joint(c, n + 1)
                    chk:ok(h.dist3(ex, ey, ez, px, py, dim == 3 and pz or 0) <= 1e-12 * math.max(1, abs(px), abs(py)),
                        "trial %d step %d: tip %.17g %.17g %.17g, point %.17g %.17g", trial, step, ex, ey, ez, px, py)
                    chk:ok(length_error(c) <= 1e-12, "trial %d step %d: lengths off by %.3g", trial, step, length_error(c))
                    if dim == 2 then
                        chk:near(c:angle(1), first[1], 1e-12, 1, "trial %d step %d: bone 1's angle", trial, step)
                    else
                        local w, x, y, z = c:rotation(1)
                        chk:ok(h.qdist(w, x, y, z, first[1], first[2], first[3], first[4]) <= 1e-12,
                            "trial %d step %d: bone 1's rotation", trial, step)
                    end
                    local bx, by, bz = c:base()
                    local jx, jy, jz = joint(c, 1)
                    chk:ok(bx == jx and by == jy and (dim == 2 or bz == jz), "trial %d: the base is joint 1", trial)
                end
            end
            chk:done()
        end)

        it(dim .. "D: limits held, the tip still on the point (ranges, cones and twists)", function()
            local rng = h.rng(47 + dim)
            local chk = h.checker("drag with limits " .. dim .. "D")
            for trial = 1, 100 do
                local n = rng.int(2, 7)
                local lengths = {}
                for i = 1, n do lengths[i] = rng.uniform(0.3, 1.5) end
                local c, L = limited(rng, dim, lengths, "cone")
                for step = 1, 30 do
                    local tx, ty, tz = joint(c, n + 1)
                    local px, py, pz = tx + rng.uniform(-2, 2), ty + rng.uniform(-2, 2), tz + rng.uniform(-2, 2)
                    if dim == 2 then c:drag(px, py) else c:drag(px, py, pz) end
                    local ex, ey, ez = joint(c, n + 1)
                    chk:ok(h.dist3(ex, ey, ez, px, py, dim == 3 and pz or 0) <= 1e-12 * math.max(1, abs(px), abs(py)),
                        "trial %d step %d: tip %.3g from the point", trial, step, h.dist3(ex, ey, ez, px, py, dim == 3 and pz or 0))
                    chk:ok(length_error(c) <= 1e-12, "trial %d step %d: lengths", trial, step)
                    if dim == 2 then h.check_limits2(chk, c, L, "drag") else h.check_limits3(chk, c, L, "drag") end
                end
            end
            chk:done()
        end)
    end

    it("zero-length bones, long ones and far points: the tip on the point, limits held", function()
        local chk = h.checker("drag, far")
        for _, dim in ipairs({ 2, 3 }) do
            local rng = h.rng(91 + dim)
            for trial = 1, 300 do
                local n = rng.int(1, 5)
                local lengths = {}
                for i = 1, n do lengths[i] = ({ 0, 1e-9, 0.5, 2, 1e3 })[rng.int(1, 5)] end
                local c, L = limited(rng, dim, lengths, "cone")
                for step = 1, 5 do
                    local px, py, pz = rng.uniform(-600, 600), rng.uniform(-600, 600), rng.uniform(-600, 600)
                    if dim == 2 then c:drag(px, py) else c:drag(px, py, pz) end
                    local ex, ey, ez = joint(c, n + 1)
                    local d = h.dist3(ex, ey, ez, px, py, dim == 3 and pz or 0)
                    chk:ok(d <= 1e-12 * 600, "%dD trial %d step %d: the tip %.3g from the point", dim, trial, step, d)
                    if dim == 2 then h.check_limits2(chk, c, L, "drag") else h.check_limits3(chk, c, L, "drag") end
                end
            end
        end
        chk:done()
    end)

    it("3D hinges are held (the tip may then fall short of the point)", function()
        local c = ik.chain3d({ 1, 1, 1 })
        c:set_hinge(2, 0, 0, 1, -0.5, 0.5)
        c:set_hinge(3, 0, 0, 1, 0, 1)
        local chk = h.checker("drag with hinges")
        local rng = h.rng(5)
        for step = 1, 100 do
            local tx, ty, tz = c:effector()
            c:drag(tx + rng.uniform(-1, 1), ty + rng.uniform(-1, 1), tz + rng.uniform(-1, 1))
            h.check_limits3(chk, c, { false, { hinge = { 0, 0, 1 }, min = -0.5, max = 0.5 }, { hinge = { 0, 0, 1 }, min = 0, max = 1 } }, "hinges")
            chk:ok(length_error(c) <= 1e-12, "step %d: lengths", step)
        end
        chk:done()
    end)

    it("along a large circle the joints follow the circle's path (within the follower's inward drift)", function()
        for _, dim in ipairs({ 2, 3 }) do
            local n, R = 5, 100
            -- the chain starts on the circle's tangent at (R, 0), pointing along the motion
            local c = dim == 2 and ik.chain2d({ 1, 1, 1, 1, 1 }, R, -n, pi / 2) or ik.chain3d({ 1, 1, 1, 1, 1 }, R, 0, -n)
            if dim == 3 then c:set_base(R, 0, -n, h.qaxis(0, 1, 0, -pi / 2)) end
            local worst = 0
            for k = 1, 2000 do
                local a = k * 0.005 -- a step of 0.5 along the circle; the chain's length is 5
                if dim == 2 then c:drag(R * cos(a), R * sin(a)) else c:drag(R * cos(a), 0, R * sin(a)) end
                if k * 0.5 >= 2 * n then
                    for j = 1, n + 1 do
                        local x, y, z = joint(c, j)
                        local r = dim == 2 and sqrt(x * x + y * y) or sqrt(x * x + z * z)
                        worst = math.max(worst, abs(r - R))
                        if dim == 3 then assert.is_true(abs(y) <= 1e-9) end
                    end
                end
            end
            -- A follower one bone behind a leader on a circle of radius R runs on the circle
            -- of radius sqrt(R^2 - L^2): within n L^2 / R of it for the joint n bones back.
            assert.is_true(worst <= n * 1 / R, ("worst %.4g"):format(worst))
            assert.is_true(worst > 0) -- the drift is real: the bound above is not vacuous
        end
    end)

    it("is refused on an attached chain, and for bad points, changing nothing", function()
        local parent = ik.chain2d({ 1, 1 })
        local child = ik.chain2d({ 1 })
        child:attach(parent, 3)
        local before = h.snapshot(child)
        h.assert_argerror(0, "drag", function() child:drag(5, 5) end)
        h.assert_unchanged(before, h.snapshot(child), "drag on an attached chain")
        local c = ik.chain2d({ 1, 1 })
        before = h.snapshot(c)
        h.assert_argerror(1, "drag", function() c:drag(0 / 0, 1) end)
        h.assert_argerror(2, "drag", function() c:drag(1, math.huge) end)
        h.assert_argerror(1, "drag", function() c:drag("x", 1) end)
        h.assert_argerror(2, "drag", function() c:drag(1) end)
        h.assert_argerror(3, "drag", function() c:drag(1, 2, 3) end)
        h.assert_argerror(1, "drag", function() c:drag(1e301, 0) end)
        h.assert_unchanged(before, h.snapshot(c), "a refused drag")
        local c3 = ik.chain3d({ 1, 1 })
        h.assert_argerror(3, "drag", function() c3:drag(1, 2) end)
        h.assert_argerror(4, "drag", function() c3:drag(1, 2, 3, 4) end)
    end)
end)

describe("chain:simulate", function()
    local G = 9.81

    for _, dim in ipairs({ 2, 3 }) do
        local function hang(c, i, a) -- bone i at angle a from straight down, in the x-y plane
            if dim == 2 then c:set_angle(i, a) else c:set_rotation(i, h.qaxis(0, 0, 1, a)) end
        end

        it(dim .. "D: a 1-bone pendulum has the period 2 pi sqrt(L / g) and keeps its amplitude", function()
            for _, L in ipairs({ 0.5, 1, 3 }) do
                for _, hz in ipairs({ 30, 60, 144 }) do
                    local c = new(dim, { L })
                    c:configure({ gravity = dim == 2 and { 0, -G } or { 0, -G, 0 }, damping = 0 })
                    local a0 = 0.05
                    hang(c, 1, -pi / 2 + a0)
                    local period = 2 * pi * sqrt(L / G)
                    local dt, prev, first, last, count = 1 / hz, nil, nil, nil, 0
                    local amp_last = 0
                    local frames = math.floor(10 * period * hz)
                    for f = 1, frames do
                        c:simulate(dt)
                        local x, y = c:effector()
                        local a = h.atan2(x, -y)
                        if prev and prev < 0 and a >= 0 then
                            local t = (f - 1 + (-prev) / (a - prev)) * dt
                            first = first or t
                            last, count = t, count + 1
                        end
                        prev = a
                        if f > frames - period * hz then amp_last = math.max(amp_last, abs(a)) end
                    end
                    local measured = (last - first) / (count - 1)
                    assert.is_true(count >= 9, "crossings")
                    assert.is_true(abs(measured / period - 1) <= 0.01,
                        ("L %g at %d Hz: period %.6g, want %.6g"):format(L, hz, measured, period))
                    assert.is_true(abs(amp_last / a0 - 1) <= 0.02,
                        ("L %g at %d Hz: amplitude %.6g after 10 periods, was %.6g"):format(L, hz, amp_last, a0))
                end
            end
        end)

        it(dim .. "D: a damped 5-bone chain settles straight down", function()
            local c = new(dim, { 1, 0.8, 1.2, 0.5, 1 })
            c:configure({ gravity = dim == 2 and { 0, -G } or { 0, -G, 0 }, damping = 2 })
            for i = 1, 5 do hang(c, i, 0.4 * i) end
            if dim == 3 then c:set_rotation(2, h.qaxis(1, 1, 0, 0.7)) end
            for f = 1, 20 * 60 do c:simulate(1 / 60) end
            for i = 1, 5 do
                local off = bone_off(c, i, 0, -1, 0)
                assert.is_true(off <= 1e-3, ("bone %d is %.3g rad from straight down"):format(i, off))
            end
            assert.is_true(length_error(c) <= 1e-12)
        end)

        it(dim .. "D: stiffness brings a displaced chain back to its rest pose; set_rest moves the rest pose", function()
            local c = new(dim, { 1, 1, 1 })
            c:configure({ stiffness = 40, damping = 3 })
            hang(c, 1, 0.8); hang(c, 2, -0.5); hang(c, 3, 1)
            for f = 1, 15 * 60 do c:simulate(1 / 60) end
            local rest = pose(new(dim, { 1, 1, 1 }))
            local d = pose_diff(pose(c), rest, dim)
            assert.is_true(d <= 1e-3, ("%.3g rad from rest"):format(d))
            -- a new rest pose
            hang(c, 2, 0.6)
            c:set_rest()
            local want = pose(c)
            hang(c, 2, -0.3); hang(c, 3, 0.5)
            for f = 1, 15 * 60 do c:simulate(1 / 60) end
            d = pose_diff(pose(c), want, dim)
            assert.is_true(d <= 1e-3, ("%.3g rad from the new rest"):format(d))
        end)

        it(dim .. "D: the same 3 s of motion at 1/30, 1/60 and 1/144 s frames ends within 1e-3 rad", function()
            for _, case in ipairs({
                { name = "a rope swinging from a still base", gravity = true, damping = 0.5, stiffness = 0, move = false },
                { name = "a tail on a body that runs and turns", gravity = true, damping = 2, stiffness = 20, move = true },
                { name = "antennae on a bobbing head", gravity = false, damping = 3, stiffness = 100, move = true },
            }) do
                local ends = {}
                for _, hz in ipairs({ 30, 60, 144 }) do
                    local c = new(dim, { 1, 0.8, 0.6, 0.4 })
                    local g = case.gravity and G or 0
                    c:configure({ gravity = dim == 2 and { 0, -g } or { 0, -g, 0 }, damping = case.damping, stiffness = case.stiffness })
                    hang(c, 1, -1.2); hang(c, 2, 0.3)
                    for f = 1, 3 * hz do
                        -- still for the first 0.5 s, then setting off smoothly (every frame
                        -- rate starts from the same state and samples the same path)
                        local u = math.max(0, f / hz - 0.5)
                        if case.move then
                            local x, y, a = 3 * u * u / (1 + u), 0.2 * sin(5 * u) ^ 2, 0.3 * sin(2 * u) ^ 2
                            if dim == 2 then c:set_base(x, y, a) else c:set_base(x, y, 0, h.qaxis(0, 1, 0, a)) end
                        end
                        c:simulate(1 / hz)
                    end
                    ends[hz] = directions(c)
                end
                local d1, d2 = directions_diff(ends[30], ends[144]), directions_diff(ends[60], ends[144])
                assert.is_true(d1 <= 1e-3 and d2 <= 1e-3,
                    ("%s: 30 Hz %.3g, 60 Hz %.3g rad from 144 Hz"):format(case.name, d1, d2))
            end
        end)

        it(dim .. "D: lengths exact and limits held after every call", function()
            local rng = h.rng(71 + dim)
            local chk = h.checker("simulate " .. dim .. "D")
            for trial = 1, 20 do
                local n = rng.int(1, 6)
                local lengths = {}
                for i = 1, n do lengths[i] = rng.uniform(0.1, 2) end
                local c, L = limited(rng, dim, lengths, "mixed")
                local g = { rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(-20, 20) }
                if dim == 2 then g[3] = nil end
                c:configure({ gravity = g, stiffness = rng.uniform(0, 50), damping = rng.uniform(0, 3) })
                for f = 1, 120 do
                    if f % 10 == 0 then
                        if dim == 2 then c:set_base(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.angle())
                        else c:set_base(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), h.random_quat(rng)) end
                    end
                    c:simulate(rng.uniform(0.001, 0.05))
                    chk:ok(length_error(c) <= 1e-12, "trial %d frame %d: lengths off by %.3g", trial, f, length_error(c))
                    if dim == 2 then h.check_limits2(chk, c, L, "simulate") else h.check_limits3(chk, c, L, "simulate") end
                    for j = 1, n + 1 do
                        local x, y, z = joint(c, j)
                        chk:ok(h.finite(x) and h.finite(y) and h.finite(z), "trial %d: joint %d not finite", trial, j)
                    end
                end
            end
            chk:done()
        end)

        it(dim .. "D: a pose set between calls gives the joints no speed; the same calls give the same bits", function()
            local function make()
                local c = new(dim, { 1, 1, 1 })
                c:configure({ gravity = dim == 2 and { 0, -G } or { 0, -G, 0 } })
                return c
            end
            local a, b = make(), make()
            hang(a, 1, 0.5)
            for f = 1, 30 do a:simulate(1 / 60) end -- a swings
            hang(a, 1, 0.2); hang(a, 2, 0); hang(a, 3, 0) -- and is posed
            hang(b, 1, 0.2) -- b never moved: the same pose at rest
            for f = 1, 30 do a:simulate(1 / 60); b:simulate(1 / 60) end
            assert.are.same(a:positions(), b:positions())
            -- the same calls, the same bits
            local c, d = make(), make()
            for _, x in ipairs({ c, d }) do
                hang(x, 1, 0.9)
                for f = 1, 50 do
                    if dim == 2 then x:set_base(f * 0.05, 0) else x:set_base(f * 0.05, 0, 0) end
                    x:simulate(1 / 50)
                end
            end
            assert.are.same(c:positions(), d:positions())
        end)

        it(dim .. "D: the base follows its parent, and the joints lag behind it", function()
            local body = new(dim, { 2 })
            local tail = new(dim, { 1, 1, 1 })
            tail:attach(body, 1)
            tail:configure({ stiffness = 30, damping = 3 })
            for f = 1, 20 do
                if dim == 2 then body:set_base(0, f * 0.05) else body:set_base(0, f * 0.05, 0) end
                tail:simulate(1 / 60)
            end
            local bx, by = body:joint(1)
            local tx, ty = tail:joint(1)
            assert.are.equal(bx, tx); assert.are.equal(by, ty)
            -- moving up, the tail's tip trails below the line of the body
            local _, ey = tail:effector()
            assert.is_true(ey < by - 0.1, ("tip y %.4g, base y %.4g"):format(ey, by))
        end)
    end

    it("takes a long dt (a hitch) as at most 1 s, finite", function()
        local c = ik.chain2d({ 1, 1 })
        c:configure({ gravity = { 0, -9.81 } })
        c:set_angle(1, 1)
        c:simulate(1e300)
        local x, y = c:effector()
        assert.is_true(h.finite(x) and h.finite(y))
        assert.is_true(length_error(c) <= 1e-12)
    end)

    it("refuses bad dt and settings, changing nothing", function()
        local c = ik.chain2d({ 1, 1 })
        c:configure({ gravity = { 0, -9.81 } })
        c:set_angle(1, 0.3)
        c:simulate(0.01)
        local before = h.snapshot(c)
        for _, dt in ipairs({ 0, -1, 0 / 0, math.huge, -math.huge }) do
            h.assert_argerror(1, "simulate", function() c:simulate(dt) end)
        end
        h.assert_argerror(1, "simulate", function() c:simulate("x") end)
        h.assert_argerror(1, "simulate", function() c:simulate() end)
        h.assert_argerror(2, "simulate", function() c:simulate(0.1, 2) end)
        h.assert_argerror(1, "set_rest", function() c.set_rest(5) end)
        for _, bad in ipairs({
            { gravity = { 0 } }, { gravity = { 0, 0, 0 } }, { gravity = { 0, 0 / 0 } }, { gravity = { 0, 1e301 } },
            { gravity = 9.81 }, { gravity = { "a", 1 } }, { stiffness = -1 }, { stiffness = math.huge },
            { damping = -0.1 }, { damping = 0 / 0 },
        }) do
            h.assert_argerror(1, "configure", function() c:configure(bad) end)
        end
        local c3 = ik.chain3d({ 1 })
        h.assert_argerror(1, "configure", function() c3:configure({ gravity = { 0, -1 } }) end)
        h.assert_unchanged(before, h.snapshot(c), "a refused call")
        local s = c:settings()
        assert.are.same({ 0, -9.81 }, s.gravity)
        assert.are.equal(0, s.stiffness)
        assert.are.equal(0.5, s.damping)
        assert.are.same({ 0, 0, 0 }, ik.chain3d({ 1 }):settings().gravity)
    end)
end)
