-- The lock-up escape (configure{escape}, default true; src/solve.c). FABRIK and relaxation
-- lock up on a straight chain whose target lies on its own line (in front of the root or
-- behind it): every pass keeps the chain on that line. CCD locks up when every joint sees
-- the tip and the target in one direction. With the escape on, a solve that stops making
-- progress on a target within reach bends the chain towards the `bend` side (2D) or the
-- pole (3D) and goes on; with it off, the articles' plain behaviour stays reachable.
--
-- Checked: the measured lock-ups reach with the escape and fail without it, the plain
-- behaviour keeps the chain on its line, the side the escape bends to, determinism, a
-- zero relaxation weight still pins its joint, the escape within limits, and that it acts
-- only on targets within reach. Every solve is also checked for the solve invariants.

local h = require("spec.helpers")
local ik = require("ik")

local abs, pi = math.abs, math.pi
local unpack = table.unpack or unpack

local ITERATIVE = { "fabrik", "ccd", "relax" }

local function solve(c, name, ...)
    return c["solve_" .. name](c, ...)
end

-- Solves through the direct method, configure{solver} + solve, or ik.solve_many; returns
-- reached, distance, iterations (solve_many: reached and the distance measured here).
local function solve_via(c, name, how, target)
    if how == "direct" then
        return solve(c, name, unpack(target))
    elseif how == "solve" then
        c:configure({ solver = name })
        return c:solve(unpack(target))
    end
    c:configure({ solver = name })
    local count = ik.solve_many({ c }, target)
    local tip = { c:effector() }
    local d = c:dim() == 2 and h.dist(tip[1], tip[2], target[1], target[2])
        or h.dist3(tip[1], tip[2], tip[3], target[1], target[2], target[3])
    return count == 1, d, nil
end

-- Lengths kept, joint 1 at the base, distance == |effector - target|, reached ==
-- (distance <= tolerance), 0 <= iterations <= the maximum.
local function check_solve(c, lengths, target, r, d, it, what)
    local dim, n = c:dim(), c:count()
    local pos = c:positions()
    for i = 1, n do
        local a, b = dim * (i - 1), dim * i
        local got = dim == 2 and h.dist(pos[b + 1], pos[b + 2], pos[a + 1], pos[a + 2])
            or h.dist3(pos[b + 1], pos[b + 2], pos[b + 3], pos[a + 1], pos[a + 2], pos[a + 3])
        assert.is_true(abs(got - lengths[i]) <= 1e-9 * math.max(1, lengths[i]), string.format("%s: bone %d has length %.17g, want %.17g", what, i, got, lengths[i]))
    end
    local tip = { c:effector() }
    local real = dim == 2 and h.dist(tip[1], tip[2], target[1], target[2]) or h.dist3(tip[1], tip[2], tip[3], target[1], target[2], target[3])
    assert.is_true(abs(d - real) <= 1e-12 * math.max(1, real), string.format("%s: distance %.17g, |effector - target| %.17g", what, d, real))
    local s = c:settings()
    assert.are.equal(d <= s.tolerance, r, what .. ": reached vs distance " .. d)
    if it ~= nil then
        assert.is_true(it >= 0 and it <= s.iterations, what .. ": iterations " .. tostring(it))
    end
end

describe("the escape setting", function()
    it("is on by default in 2D and 3D; configure{escape = false} turns it off and configure{escape = true} on again; nothing else changes", function()
        for _, c in ipairs({ ik.chain2d({ 1, 1 }), ik.chain3d({ 1, 1 }) }) do
            assert.is_true(c:settings().escape)
            local before = c:settings()
            c:configure({ escape = false })
            local after = c:settings()
            assert.is_false(after.escape)
            after.escape = true
            assert.are.same(before, after)
            c:configure({ escape = true })
            assert.are.same(before, c:settings())
        end
    end)
end)

-- ---------------------------------------------------------------------------------------

describe("lock-ups of a 2-bone chain {1, 1} straight along +x (the default pose)", function()
    local TARGETS = { { 0.5, 0 }, { -0.5, 0 }, { 1.2, 0 } }
    -- measured without the escape: FABRIK and relaxation stay on the line for all three;
    -- CCD reaches (0.5, 0) and (-0.5, 0) (its first turn is a half turn at joint 2) and
    -- locks up on (1.2, 0), where both joints see tip and target straight ahead
    local FAILS_WITHOUT = {
        fabrik = { true, true, true },
        relax = { true, true, true },
        ccd = { false, false, true },
        two_bone = { false, false, false },
    }

    for ti, t in ipairs(TARGETS) do
        it(string.format("(%g, %g) is reached with the escape by fabrik, ccd, relax and two_bone, through the direct method, solve and solve_many", t[1], t[2]), function()
            for _, name in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
                for _, how in ipairs({ "direct", "solve", "solve_many" }) do
                    local c = ik.chain2d({ 1, 1 })
                    local r, d, it = solve_via(c, name, how, t)
                    local what = string.format("%s (%s) target (%g, %g)", name, how, t[1], t[2])
                    check_solve(c, { 1, 1 }, t, r, d, it, what)
                    assert.is_true(r, string.format("%s: not reached, distance %.17g", what, d))
                end
            end
        end)

        it(string.format("(%g, %g) without the escape: %s fail, the others reach; a failing chain stays on its line (every joint |y| <= 1e-12)", t[1], t[2],
            t[1] == 1.2 and "fabrik, relax and ccd" or "fabrik and relax"), function()
            for _, name in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
                local c = ik.chain2d({ 1, 1 })
                c:configure({ escape = false })
                local r, d, it = solve(c, name, t[1], t[2])
                local what = string.format("%s escape off target (%g, %g)", name, t[1], t[2])
                check_solve(c, { 1, 1 }, t, r, d, it, what)
                if FAILS_WITHOUT[name][ti] then
                    assert.is_false(r, what .. ": reached")
                    for i = 1, 3 do
                        local _, y = c:joint(i)
                        assert.is_true(abs(y) <= 1e-12, string.format("%s: joint %d left the line (y = %.3g)", what, i, y))
                    end
                else
                    assert.is_true(r, string.format("%s: not reached, distance %.17g", what, d))
                end
            end
        end)
    end

    it("with the escape, the chain bends to the bend side: angle(2) > 0 with bend 1 and < 0 with bend -1, as the two-bone solve bends (fabrik and relax on all three targets, ccd on (1.2, 0))", function()
        local failures = {}
        for _, name in ipairs(ITERATIVE) do
            for ti, t in ipairs(TARGETS) do
                if FAILS_WITHOUT[name][ti] then
                    for _, bend in ipairs({ 1, -1 }) do
                        local c = ik.chain2d({ 1, 1 })
                        c:configure({ bend = bend })
                        local r = solve(c, name, t[1], t[2])
                        assert.is_true(r)
                        local _, a2 = ik.two_bone(1, 1, t[1], t[2], bend)
                        if not (c:angle(2) * bend > 0) then
                            failures[#failures + 1] = string.format("%s target (%g, %g) bend %d: angle(2) = %.6g (joint 2 at y = %.6g); two_bone gives angle 2 = %.6g",
                                name, t[1], t[2], bend, c:angle(2), select(2, c:joint(2)), a2)
                        end
                    end
                end
            end
        end
        assert.are.same({}, failures)
    end)
end)

-- ---------------------------------------------------------------------------------------

describe("lock-ups of 3-bone chains {1, 1, 1} straight along +x, 2D and 3D", function()
    -- measured without the escape: fabrik and relax fail on all of these; ccd fails only on
    -- (2.5, 0[, 0]) (tip and target straight ahead of every joint); in 3D CCD's half turn
    -- about a fixed perpendicular gets it out of the others
    local CASES = { { 1.5, { "fabrik", "relax" } }, { 0.5, { "fabrik", "relax" } }, { -0.5, { "fabrik", "relax" } }, { -1.5, { "fabrik", "relax" } },
        { 2.5, { "fabrik", "ccd", "relax" } } }
    for _, dim in ipairs({ 2, 3 }) do
        for _, cs in ipairs(CASES) do
            local x, failing = cs[1], cs[2]
            it(string.format("%dD target (%g, 0%s): %s fail without the escape and reach with it; ccd reaches with it", dim, x, dim == 3 and ", 0" or "", table.concat(failing, " and ")), function()
                local target = dim == 2 and { x, 0 } or { x, 0, 0 }
                for _, name in ipairs(ITERATIVE) do
                    local fails = false
                    for _, f in ipairs(failing) do fails = fails or f == name end
                    for _, escape in ipairs({ true, false }) do
                        local c = dim == 2 and ik.chain2d({ 1, 1, 1 }) or ik.chain3d({ 1, 1, 1 })
                        c:configure({ escape = escape })
                        local r, d, it = solve(c, name, unpack(target))
                        local what = string.format("%s escape %s", name, tostring(escape))
                        check_solve(c, { 1, 1, 1 }, target, r, d, it, what)
                        if escape or not fails then
                            assert.is_true(r, string.format("%s: not reached, distance %.17g", what, d))
                        else
                            assert.is_false(r, what .. ": reached")
                        end
                    end
                end
            end)
        end
    end

    it("3D, with the escape, fabrik and relax bend towards the pole: the interior joints of a chain solving (1.5, 0, 0) lie on the pole's side of the x axis (poles +y, -y, +z, -z)", function()
        for _, name in ipairs({ "fabrik", "relax" }) do
            for _, pole in ipairs({ { 0, 1, 0 }, { 0, -1, 0 }, { 0, 0, 1 }, { 0, 0, -1 } }) do
                local c = ik.chain3d({ 1, 1, 1 })
                c:configure({ pole = pole })
                local r = solve(c, name, 1.5, 0, 0)
                assert.is_true(r, name)
                for i = 2, 3 do
                    local _, y, z = c:joint(i)
                    local side = y * pole[2] + z * pole[3]
                    assert.is_true(side > 0.1, string.format("%s pole (%g, %g, %g): joint %d at y = %.6g, z = %.6g", name, pole[1], pole[2], pole[3], i, y, z))
                end
            end
        end
    end)
end)

-- ---------------------------------------------------------------------------------------

describe("the escape is deterministic and keeps its other promises", function()
    it("solving a lock-up twice from the same start gives the same pose bit for bit (2D and 3D, 3 solvers, bend 1 and -1, pole and no pole)", function()
        for _, name in ipairs(ITERATIVE) do
            for _, variant in ipairs({ 1, 2 }) do
                local a, b = ik.chain2d({ 1, 1, 1 }), ik.chain2d({ 1, 1, 1 })
                a:configure({ bend = variant == 1 and 1 or -1 })
                b:configure({ bend = variant == 1 and 1 or -1 })
                assert.are.same({ solve(a, name, 1.5, 0) }, { solve(b, name, 1.5, 0) })
                assert.are.same(a:positions(), b:positions(), name .. " 2D")
                local a3, b3 = ik.chain3d({ 1, 1, 1 }), ik.chain3d({ 1, 1, 1 })
                local pole = variant == 1 and { 0.3, 1, -0.2 } or false
                a3:configure({ pole = pole })
                b3:configure({ pole = pole })
                assert.are.same({ solve(a3, name, 1.5, 0, 0) }, { solve(b3, name, 1.5, 0, 0) })
                assert.are.same(a3:positions(), b3:positions(), name .. " 3D")
                assert.are.same(h.rotations(a3), h.rotations(b3), name .. " 3D rotations")
            end
        end
    end)

    it("a zero relaxation weight pins its interior joint even when the escape acts: {1, 1, 1} with weight(2) = 0 reaches (1.5, 0) with joint 2 still at (1, 0); {1, 1, 1, 1} with weight(3) = 0 reaches (2.5, 0) with joint 3 still at (2, 0) (2D and 3D, exactly)", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, cs in ipairs({ { { 1, 1, 1 }, 2, 1.5 }, { { 1, 1, 1, 1 }, 3, 2.5 } }) do
                local lengths, joint, x = cs[1], cs[2], cs[3]
                local c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
                c:set_weight(joint, 0)
                local before = { c:joint(joint) }
                local target = dim == 2 and { x, 0 } or { x, 0, 0 }
                local r, d, it = c:solve_relax(unpack(target))
                local what = string.format("%dD %d bones, weight(%d) = 0", dim, #lengths, joint)
                check_solve(c, lengths, target, r, d, it, what)
                assert.is_true(r, string.format("%s: not reached, distance %.17g", what, d))
                assert.are.same(before, { c:joint(joint) }, what .. ": the pinned joint moved")
                -- and without the escape the chain stays locked on its line
                c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
                c:set_weight(joint, 0)
                c:configure({ escape = false })
                assert.is_false((c:solve_relax(unpack(target))), what .. ", escape off: reached")
            end
        end
    end)

    it("within limits: a 2-bone chain whose bone 2 may bend only one way ([0, pi] or [-pi, 0]) escapes to the allowed side whichever the bend setting (3 solvers, bend 1 and -1, target (0.5, 0))", function()
        for _, name in ipairs(ITERATIVE) do
            for _, range in ipairs({ { 0, pi }, { -pi, 0 } }) do
                for _, bend in ipairs({ 1, -1 }) do
                    local c = ik.chain2d({ 1, 1 })
                    c:set_limit(2, range[1], range[2])
                    c:configure({ bend = bend })
                    local r, d, it = solve(c, name, 0.5, 0)
                    local what = string.format("%s range [%g, %g] bend %d", name, range[1], range[2], bend)
                    check_solve(c, { 1, 1 }, { 0.5, 0 }, r, d, it, what)
                    assert.is_true(r, string.format("%s: not reached, distance %.17g", what, d))
                    assert.is_true(h.angle_within(c:angle(2), range[1], range[2]), what .. ": angle(2) = " .. c:angle(2))
                end
            end
        end
    end)

    it("a target within reach that the limits put out of reach costs bounded work: {1, 1} with bone 2 locked at 0 and target (0.5, 0) gives reached false, iterations <= the maximum, finite joints (3 solvers, escape on, iterations 64 and 1000)", function()
        for _, name in ipairs(ITERATIVE) do
            for _, iterations in ipairs({ 64, 1000 }) do
                local c = ik.chain2d({ 1, 1 })
                c:set_limit(2, 0, 0)
                c:configure({ iterations = iterations })
                local r, d, it = solve(c, name, 0.5, 0)
                local what = string.format("%s iterations %d", name, iterations)
                check_solve(c, { 1, 1 }, { 0.5, 0 }, r, d, it, what)
                assert.is_false(r, what)
                assert.are.equal(0, c:angle(2), what)
            end
        end
    end)

    it("the escape acts only on targets within reach: targets inside the hole of the reach ring ({2, 0.5}, target (0.5, 0) on the line) and beyond the total length give the same pose bit for bit with the escape on and off (2D and 3D, 3 solvers)", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, x in ipairs({ 0.5, -0.5, 1.2, 3, -3 }) do
                for _, name in ipairs(ITERATIVE) do
                    local on = dim == 2 and ik.chain2d({ 2, 0.5 }) or ik.chain3d({ 2, 0.5 })
                    local off = dim == 2 and ik.chain2d({ 2, 0.5 }) or ik.chain3d({ 2, 0.5 })
                    off:configure({ escape = false })
                    local target = dim == 2 and { x, 0 } or { x, 0, 0 }
                    local ron = { solve(on, name, unpack(target)) }
                    local roff = { solve(off, name, unpack(target)) }
                    local what = string.format("%dD %s target x = %g", dim, name, x)
                    assert.is_false(ron[1], what .. ": reached")
                    assert.are.same(roff, ron, what .. ": results")
                    assert.are.same(off:positions(), on:positions(), what .. ": poses")
                end
            end
        end
    end)
end)
