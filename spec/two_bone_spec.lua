-- The stateless analytic two-bone solvers: ik.two_bone (angle form, after Juckett) and
-- ik.two_bone_joint (vector form, after Quilez). Every pose is checked by recomputing
-- forward kinematics in Lua. Tolerances are relative to the problem's scale
-- max(l1 + l2, |target|, 1) unless a test says otherwise.

local h = require("spec.helpers")
local ik = require("ik")

local abs, sqrt, cos, sin, pi = math.abs, math.sqrt, math.cos, math.sin, math.pi
local TOL = 1e-9

-- Length pairs: equal, l1 < l2, l1 > l2, very unequal, small and large, then random ones.
local function length_pairs()
    local pairs_ = {
        { 1, 1 }, { 1, 2 }, { 2, 1 }, { 0.3, 5 }, { 5, 0.3 }, { 1, 1e-3 }, { 1e-3, 1 },
        { 7.5, 7.5 }, { 0.1, 0.25 }, { 100, 30 },
    }
    local rng = h.rng(2024)
    for _ = 1, 10 do
        -- log-uniform in [0.05, 20]
        local l1 = 0.05 * 400 ^ rng.next()
        local l2 = 0.05 * 400 ^ rng.next()
        pairs_[#pairs_ + 1] = { l1, l2 }
    end
    return pairs_
end

-- Random targets for one length pair: all four quadrants, radii from 0 to 1.5 (l1 + l2),
-- plus targets just inside and just outside both edges of the reachable ring (1e-6
-- relative). Returns a list of {x, y, class} with class "in", "far" or "near"; targets
-- within 1e-12 relative of an edge are left out (rounding decides them; the exact edges
-- have their own test).
local function targets(rng, l1, l2, count)
    local sum, diff = l1 + l2, abs(l1 - l2)
    local list = {}
    local margin = 1e-12 * sum
    for i = 1, count do
        local r
        local kind = i % 10
        if kind == 0 then
            r = sum * (1 + (rng.next() < 0.5 and -1e-6 or 1e-6))
        elseif kind == 1 then
            r = diff * (1 + (rng.next() < 0.5 and -1e-6 or 1e-6))
        else
            r = 1.5 * sum * rng.next()
        end
        local a = rng.angle()
        local x, y = r * cos(a), r * sin(a)
        local d = sqrt(x * x + y * y)
        local class
        if d > sum + margin then
            class = "far"
        elseif d < diff - margin then
            class = "near"
        elseif d >= diff + margin and d <= sum - margin then
            class = "in"
        end
        if class then
            list[#list + 1] = { x, y, class }
        end
    end
    return list
end

local function bend_ok(bend, a2)
    -- a2 may be exactly 0 (straight) or +-pi (folded) whatever the bend
    if abs(abs(a2) - pi) <= 1e-12 then
        return true
    end
    if bend == 1 then
        return a2 >= 0
    else
        return a2 <= 0
    end
end

describe("ik.two_bone (angle form)", function()
    it("reaches every target inside the ring, FK within 1e-9 relative, bend sign kept (20 length pairs x 2000 random targets, over 10,000 inside the ring, x 2 bends)", function()
        local chk = h.checker("two_bone reachable")
        local rng = h.rng(1)
        local inside = 0
        for _, lp in ipairs(length_pairs()) do
            local l1, l2 = lp[1], lp[2]
            for _, t in ipairs(targets(rng, l1, l2, 2000)) do
                local x, y, class = t[1], t[2], t[3]
                if class == "in" then
                    inside = inside + 1
                    for _, bend in ipairs({ 1, -1 }) do
                        local a1, a2, reached = ik.two_bone(l1, l2, x, y, bend)
                        local scale = math.max(l1 + l2, 1)
                        local tx = l1 * cos(a1) + l2 * cos(a1 + a2)
                        local ty = l1 * sin(a1) + l2 * sin(a1 + a2)
                        chk:ok(reached == true, "l=(%.17g,%.17g) p=(%.17g,%.17g) bend %d: reached %s", l1, l2, x, y, bend, tostring(reached))
                        chk:near(tx, x, TOL, scale, "l=(%.17g,%.17g) p=(%.17g,%.17g) bend %d: tip x", l1, l2, x, y, bend)
                        chk:near(ty, y, TOL, scale, "l=(%.17g,%.17g) p=(%.17g,%.17g) bend %d: tip y", l1, l2, x, y, bend)
                        chk:ok(bend_ok(bend, a2), "l=(%.17g,%.17g) p=(%.17g,%.17g) bend %d: a2 = %.17g has the wrong sign", l1, l2, x, y, bend, a2)
                    end
                end
            end
        end
        assert.is_true(inside > 10000, "too few reachable targets generated")
        chk:done()
    end)

    it("gives the closest pose for unreachable targets: tip distance == distance to the ring within 1e-9 relative; straight when too far, folded when too close", function()
        local chk = h.checker("two_bone unreachable")
        local rng = h.rng(2)
        local far, near = 0, 0
        for _, lp in ipairs(length_pairs()) do
            local l1, l2 = lp[1], lp[2]
            for _, t in ipairs(targets(rng, l1, l2, 1000)) do
                local x, y, class = t[1], t[2], t[3]
                if class ~= "in" then
                    local d = sqrt(x * x + y * y)
                    local ring = class == "far" and d - (l1 + l2) or abs(l1 - l2) - d
                    if class == "far" then far = far + 1 else near = near + 1 end
                    for _, bend in ipairs({ 1, -1 }) do
                        local a1, a2, reached = ik.two_bone(l1, l2, x, y, bend)
                        local scale = math.max(l1 + l2, d, 1)
                        local tx = l1 * cos(a1) + l2 * cos(a1 + a2)
                        local ty = l1 * sin(a1) + l2 * sin(a1 + a2)
                        local what = string.format("l=(%.17g,%.17g) p=(%.17g,%.17g) %s bend %d", l1, l2, x, y, class, bend)
                        chk:ok(reached == false, "%s: reached %s", what, tostring(reached))
                        chk:near(h.dist(tx, ty, x, y), ring, TOL, scale, "%s: tip distance", what)
                        if class == "far" then
                            chk:ok(abs(a2) <= TOL, "%s: not straight, a2 = %.17g", what, a2)
                        else
                            chk:ok(abs(abs(a2) - pi) <= TOL, "%s: not folded, a2 = %.17g", what, a2)
                        end
                        chk:ok(bend_ok(bend, a2), "%s: a2 = %.17g has the wrong sign", what, a2)
                    end
                end
            end
        end
        assert.is_true(far > 1000 and near > 100, "too few unreachable targets generated")
        chk:done()
    end)

    it("reaches targets exactly at full extension and exactly at |l1 - l2| (FK within 1e-12 relative)", function()
        local chk = h.checker("two_bone ring edges")
        local cases = {
            -- l1, l2, x, y (|p| is exactly l1 + l2 or |l1 - l2| in floating point)
            { 1, 2, 3, 0 }, { 1, 2, 0, 3 }, { 1, 2, -3, 0 }, { 1, 2, 0, -3 },
            { 2, 3, 3, 4 }, { 2, 3, -3, 4 }, { 2, 3, -3, -4 }, { 2, 3, 3, -4 },
            { 1, 2, 1, 0 }, { 1, 2, 0, -1 }, { 2, 1, -1, 0 }, { 2, 1, 0, 1 },
            { 3, 8, 3, 4 }, { 8, 3, -4, -3 }, { 1, 1, 2, 0 }, { 1, 1, 0, 0 },
            { 0.5, 0.25, 0, 0.75 }, { 0.5, 0.25, -0.25, 0 },
        }
        for _, cs in ipairs(cases) do
            local l1, l2, x, y = cs[1], cs[2], cs[3], cs[4]
            for _, bend in ipairs({ 1, -1 }) do
                local a1, a2, reached = ik.two_bone(l1, l2, x, y, bend)
                local what = string.format("l=(%g,%g) p=(%g,%g) bend %d", l1, l2, x, y, bend)
                chk:ok(reached == true, "%s: reached %s", what, tostring(reached))
                chk:near(l1 * cos(a1) + l2 * cos(a1 + a2), x, 1e-12, l1 + l2, "%s: tip x", what)
                chk:near(l1 * sin(a1) + l2 * sin(a1 + a2), y, 1e-12, l1 + l2, "%s: tip y", what)
                chk:ok(bend_ok(bend, a2), "%s: a2 = %.17g has the wrong sign", what, a2)
            end
        end
        chk:done()
    end)

    it("defaults bend to 1 (same results as bend = 1, bit for bit)", function()
        local rng = h.rng(3)
        for _ = 1, 200 do
            local l1, l2 = rng.uniform(0.1, 3), rng.uniform(0.1, 3)
            local x, y = rng.uniform(-6, 6), rng.uniform(-6, 6)
            assert.are.same({ ik.two_bone(l1, l2, x, y, 1) }, { ik.two_bone(l1, l2, x, y) })
            assert.are.same({ ik.two_bone_joint(x, y, l1, l2, 1) }, { ik.two_bone_joint(x, y, l1, l2) })
        end
    end)

    it("handles zero-length bones: closest pose within 1e-9, finite, reached only on the circle |p| == l1 + l2", function()
        local chk = h.checker("two_bone zero lengths")
        local rng = h.rng(4)
        for _, lp in ipairs({ { 0, 1 }, { 1, 0 }, { 0, 2.5 }, { 3, 0 } }) do
            local l1, l2 = lp[1], lp[2]
            local r = l1 + l2
            -- exactly on the circle: reachable
            for _, p in ipairs({ { r, 0 }, { 0, r }, { -r, 0 }, { 0, -r } }) do
                for _, bend in ipairs({ 1, -1 }) do
                    local a1, a2, reached = ik.two_bone(l1, l2, p[1], p[2], bend)
                    local what = string.format("l=(%g,%g) p=(%g,%g) bend %d", l1, l2, p[1], p[2], bend)
                    chk:ok(reached == true, "%s: reached %s", what, tostring(reached))
                    chk:near(l1 * cos(a1) + l2 * cos(a1 + a2), p[1], 1e-12, r, "%s: tip x", what)
                    chk:near(l1 * sin(a1) + l2 * sin(a1 + a2), p[2], 1e-12, r, "%s: tip y", what)
                end
            end
            -- off the circle: the closest pose points at the target
            for _ = 1, 200 do
                local a = rng.angle()
                local d = r * (rng.next() < 0.5 and rng.uniform(0, 0.99) or rng.uniform(1.01, 3))
                local x, y = d * cos(a), d * sin(a)
                for _, bend in ipairs({ 1, -1 }) do
                    local a1, a2, reached = ik.two_bone(l1, l2, x, y, bend)
                    local what = string.format("l=(%g,%g) p=(%.17g,%.17g) bend %d", l1, l2, x, y, bend)
                    chk:ok(h.finite(a1) and h.finite(a2), "%s: not finite: %s %s", what, tostring(a1), tostring(a2))
                    chk:ok(reached == false, "%s: reached %s", what, tostring(reached))
                    local tx = l1 * cos(a1) + l2 * cos(a1 + a2)
                    local ty = l1 * sin(a1) + l2 * sin(a1 + a2)
                    chk:near(h.dist(tx, ty, x, y), abs(d - r), TOL, math.max(r, d), "%s: tip distance", what)
                end
            end
        end
        chk:done()
    end)

    it("handles both bones of length 0: tip at the origin, reached only for the origin, finite", function()
        for _, p in ipairs({ { 0, 0 }, { 1, 0 }, { -2, 3 }, { 0, -1e-3 } }) do
            for _, bend in ipairs({ 1, -1 }) do
                local a1, a2, reached = ik.two_bone(0, 0, p[1], p[2], bend)
                assert.is_true(h.finite(a1) and h.finite(a2))
                assert.are.equal(p[1] == 0 and p[2] == 0, reached)
                local jx, jy, jreached = ik.two_bone_joint(p[1], p[2], 0, 0, bend)
                assert.are.equal(0, jx)
                assert.are.equal(0, jy)
                assert.are.equal(reached, jreached)
            end
        end
    end)

    it("handles a target at the origin: reached iff l1 == l2, else folded with the tip |l1 - l2| away (1e-12); finite", function()
        for _, lp in ipairs({ { 1, 1 }, { 1, 2 }, { 2, 1 }, { 0.5, 0.5 }, { 0, 1 }, { 1, 0 } }) do
            local l1, l2 = lp[1], lp[2]
            for _, bend in ipairs({ 1, -1 }) do
                local a1, a2, reached = ik.two_bone(l1, l2, 0, 0, bend)
                assert.is_true(h.finite(a1) and h.finite(a2), "not finite")
                assert.are.equal(l1 == l2, reached)
                local tx = l1 * cos(a1) + l2 * cos(a1 + a2)
                local ty = l1 * sin(a1) + l2 * sin(a1 + a2)
                assert.is_true(h.near(h.dist(tx, ty, 0, 0), abs(l1 - l2), 1e-12, l1 + l2),
                    string.format("l=(%g,%g) bend %d: tip %.17g, %.17g", l1, l2, bend, tx, ty))
                local jx, jy, jreached = ik.two_bone_joint(0, 0, l1, l2, bend)
                assert.is_true(h.finite(jx) and h.finite(jy), "joint not finite")
                assert.are.equal(reached, jreached)
                assert.is_true(h.near(h.dist(jx, jy, 0, 0), l1, 1e-12, l1 + l2), "|joint| ~= r1")
            end
        end
    end)
end)

describe("ik.two_bone_joint (vector form)", function()
    it("agrees with the angle form on every target (joint within 1e-9 relative, same reached), |joint| == r1 always, |target - joint| == r2 when reached (20 length pairs x 1000 targets x 2 bends)", function()
        local chk = h.checker("two_bone_joint vs two_bone")
        local rng = h.rng(5)
        for _, lp in ipairs(length_pairs()) do
            local l1, l2 = lp[1], lp[2]
            for _, t in ipairs(targets(rng, l1, l2, 1000)) do
                local x, y = t[1], t[2]
                local scale = math.max(l1 + l2, sqrt(x * x + y * y), 1)
                for _, bend in ipairs({ 1, -1 }) do
                    local a1, _, reached = ik.two_bone(l1, l2, x, y, bend)
                    local jx, jy, jreached = ik.two_bone_joint(x, y, l1, l2, bend)
                    local what = string.format("r=(%.17g,%.17g) p=(%.17g,%.17g) %s bend %d", l1, l2, x, y, t[3], bend)
                    chk:ok(jreached == reached, "%s: reached %s, angle form %s", what, tostring(jreached), tostring(reached))
                    chk:near(jx, l1 * cos(a1), TOL, scale, "%s: joint x vs angle form", what)
                    chk:near(jy, l1 * sin(a1), TOL, scale, "%s: joint y vs angle form", what)
                    chk:near(h.dist(jx, jy, 0, 0), l1, TOL, scale, "%s: |joint| vs r1 (stretched)", what)
                    if jreached then
                        chk:near(h.dist(x, y, jx, jy), l2, TOL, scale, "%s: |target - joint| vs r2", what)
                    end
                end
            end
        end
        chk:done()
    end)

    it("reaches targets exactly at full extension and at |r1 - r2| (|joint| == r1, |p - joint| == r2 within 1e-12 relative)", function()
        local cases = { { 1, 2, 3, 0 }, { 2, 3, -3, 4 }, { 1, 2, 0, -1 }, { 3, 8, 3, 4 }, { 1, 1, 0, 2 } }
        for _, cs in ipairs(cases) do
            local r1, r2, x, y = cs[1], cs[2], cs[3], cs[4]
            for _, bend in ipairs({ 1, -1 }) do
                local jx, jy, reached = ik.two_bone_joint(x, y, r1, r2, bend)
                assert.is_true(reached, string.format("r=(%g,%g) p=(%g,%g) bend %d", r1, r2, x, y, bend))
                assert.is_true(h.near(h.dist(jx, jy, 0, 0), r1, 1e-12, r1 + r2))
                assert.is_true(h.near(h.dist(x, y, jx, jy), r2, 1e-12, r1 + r2))
            end
        end
    end)

    it("handles zero-length bones: the joint stays r1 from the root (1e-12), finite, and agrees with the angle form (1e-9)", function()
        local rng = h.rng(6)
        for _, lp in ipairs({ { 0, 1 }, { 1, 0 }, { 0, 2.5 }, { 3, 0 } }) do
            local r1, r2 = lp[1], lp[2]
            for _ = 1, 100 do
                local x, y = rng.uniform(-8, 8), rng.uniform(-8, 8)
                for _, bend in ipairs({ 1, -1 }) do
                    local jx, jy, reached = ik.two_bone_joint(x, y, r1, r2, bend)
                    local a1, _, areached = ik.two_bone(r1, r2, x, y, bend)
                    local what = string.format("r=(%g,%g) p=(%.17g,%.17g) bend %d", r1, r2, x, y, bend)
                    assert.is_true(h.finite(jx) and h.finite(jy), what .. ": not finite")
                    assert.are.equal(areached, reached, what)
                    assert.is_true(h.near(h.dist(jx, jy, 0, 0), r1, 1e-12, 8), what .. ": |joint| ~= r1")
                    assert.is_true(h.near(jx, r1 * cos(a1), TOL, 8) and h.near(jy, r1 * sin(a1), TOL, 8),
                        what .. ": joint differs from the angle form")
                end
            end
        end
    end)
end)

describe("misuse of the two-bone functions", function()
    local BAD_NUMBERS = {
        { "NaN", 0 / 0 }, { "inf", math.huge }, { "-inf", -math.huge }, { "a string", "abc" },
        { "a table", {} }, { "a boolean", true },
    }

    -- call(fn, args) calls fn with args (5 slots, possibly nil) as a statement.
    local function call_two_bone(a)
        return function()
            ik.two_bone(a[1], a[2], a[3], a[4], a[5])
        end
    end
    local function call_joint(a)
        return function()
            ik.two_bone_joint(a[1], a[2], a[3], a[4], a[5])
        end
    end

    local function replaced(good, k, v)
        local a = { good[1], good[2], good[3], good[4], good[5] }
        a[k] = v
        return a
    end

    it("ik.two_bone rejects NaN, inf, strings, tables and booleans in any argument as bad argument #k", function()
        local good = { 1, 2, 0.5, 1.5, 1 }
        for k = 1, 5 do
            for _, bad in ipairs(BAD_NUMBERS) do
                local ok, msg = h.argerror(k, "two_bone", call_two_bone(replaced(good, k, bad[2])))
                assert(ok, string.format("argument #%d %s: %s", k, bad[1], msg))
            end
        end
    end)

    it("ik.two_bone rejects nil in the four required arguments as bad argument #k", function()
        local good = { 1, 2, 0.5, 1.5 }
        for k = 1, 4 do
            local ok, msg = h.argerror(k, "two_bone", call_two_bone(replaced(good, k, nil)))
            assert(ok, string.format("argument #%d nil: %s", k, msg))
        end
    end)

    it("ik.two_bone rejects negative lengths (#1, #2) and a bend other than 1 or -1 (#5)", function()
        h.assert_argerror(1, "two_bone", function() ik.two_bone(-1, 2, 0.5, 1.5) end)
        h.assert_argerror(2, "two_bone", function() ik.two_bone(1, -1e-300, 0.5, 1.5) end)
        for _, bend in ipairs({ 0, 2, 1.5, -2, -0.5, 0.999 }) do
            local ok, msg = h.argerror(5, "two_bone", function() ik.two_bone(1, 2, 0.5, 1.5, bend) end)
            assert(ok, string.format("bend %g: %s", bend, msg))
        end
    end)

    it("ik.two_bone_joint rejects NaN, inf, strings, tables and booleans in any argument as bad argument #k", function()
        local good = { 0.5, 1.5, 1, 2, -1 }
        for k = 1, 5 do
            for _, bad in ipairs(BAD_NUMBERS) do
                local ok, msg = h.argerror(k, "two_bone_joint", call_joint(replaced(good, k, bad[2])))
                assert(ok, string.format("argument #%d %s: %s", k, bad[1], msg))
            end
        end
        for k = 1, 4 do
            local ok, msg = h.argerror(k, "two_bone_joint", call_joint(replaced(good, k, nil)))
            assert(ok, string.format("argument #%d nil: %s", k, msg))
        end
    end)

    it("ik.two_bone_joint rejects negative lengths (#3, #4) and a bend other than 1 or -1 (#5)", function()
        h.assert_argerror(3, "two_bone_joint", function() ik.two_bone_joint(0.5, 1.5, -1, 2) end)
        h.assert_argerror(4, "two_bone_joint", function() ik.two_bone_joint(0.5, 1.5, 1, -2) end)
        for _, bend in ipairs({ 0, 2, 1.5, -2, -0.5 }) do
            local ok, msg = h.argerror(5, "two_bone_joint", function() ik.two_bone_joint(0.5, 1.5, 1, 2, bend) end)
            assert(ok, string.format("bend %g: %s", bend, msg))
        end
    end)
end)
