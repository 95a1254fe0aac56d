-- What users reach for: the whole pose in one call and back, a copy of a chain, a chain
-- from joint positions, the total length, a 3D limit read back, and which chains
-- ik.solve_many reached. Per-frame calls allocate nothing when given a table to fill.

local ik = require("ik")
local h = require("spec.helpers")

local pi, sqrt, cos, sin = math.pi, math.sqrt, math.cos, math.sin

describe("angles and rotations in bulk", function()
    it("2D angles(out) fills every local angle, set_angles(t) sets them all; a round trip is exact", function()
        local c = ik.chain2d({ 1, 1, 1 })
        c:set_angles({ 0.1, -0.2, 0.3 })
        assert.are.same({ 0.1, -0.2, 0.3 }, c:angles())
        local out = { 9, 9, 9, 9, 9 }
        assert.are.equal(out, c:angles(out))
        assert.are.same({ 0.1, -0.2, 0.3 }, out) -- the tail of a longer table is cleared
        c:solve(1, 1.5)
        local d = ik.chain2d({ 1, 1, 1 })
        d:set_angles(c:angles())
        assert.are.same(c:angles(), d:angles())
        for i = 1, 4 do
            local x1, y1 = c:joint(i)
            local x2, y2 = d:joint(i)
            assert.is_true(h.near(x1, x2, 1e-15) and h.near(y1, y2, 1e-15))
        end
    end)

    it("3D rotations(out) fills w, x, y, z of every bone, set_rotations(t) sets them all (normalised)", function()
        local c = ik.chain3d({ 1, 1 })
        local s = sqrt(0.5)
        c:set_rotations({ 2, 0, 0, 0, s, 0, s, 0 })
        local r = c:rotations()
        assert.are.same({ 1, 0, 0, 0 }, { r[1], r[2], r[3], r[4] })
        assert.is_true(h.near(r[5], s, 1e-15) and h.near(r[7], s, 1e-15))
        assert.are.equal(8, #r)
    end)

    it("set_angles and set_rotations check everything first: a bad element or a wrong count names argument 1 and changes nothing", function()
        local c2, c3 = ik.chain2d({ 1, 1 }), ik.chain3d({ 1, 1 })
        c2:set_angles({ 0.5, 0.25 })
        local cases = {
            { "set_angles", function() c2:set_angles({ 0.1 }) end },
            { "set_angles", function() c2:set_angles({ 0.1, 0 / 0 }) end },
            { "set_angles", function() c2:set_angles({ 0.1, "0.2" }) end },
            { "set_angles", function() c2:set_angles(5) end },
            { "set_rotations", function() c3:set_rotations({ 1, 0, 0, 0, 0, 0, 0, 0 }) end },
            { "set_rotations", function() c3:set_rotations({ 1, 0, 0, 0, 1, 0, 0 }) end },
        }
        for _, case in ipairs(cases) do
            local ok, msg = h.argerror(1, case[1], case[2])
            assert.is_true(ok, msg)
        end
        assert.are.same({ 0.5, 0.25 }, c2:angles())
        assert.are.same({ 1, 0, 0, 0, 1, 0, 0, 0 }, c3:rotations())
        local ok, msg = h.argerror(0, "angles", function() c3:angles() end)
        assert.is_true(ok, msg)
        ok, msg = h.argerror(0, "rotations", function() c2:rotations() end)
        assert.is_true(ok, msg)
    end)
end)

describe("clone", function()
    it("a clone behaves exactly as the chain, bit for bit: pose, base, limits, weights, settings, goals, parent", function()
        for _, dim in ipairs({ 2, 3 }) do
            local p = dim == 2 and ik.chain2d({ 2 }, 1, 1) or ik.chain3d({ 2 }, 1, 1, 1)
            local c = dim == 2 and ik.chain2d({ 1, 0.5, 0.75 }) or ik.chain3d({ 1, 0.5, 0.75 })
            c:attach(p, 2)
            c:configure({ solver = "ccd", greed = 0.7, iterations = 9 })
            c:set_weight(2, 0.5)
            if dim == 2 then c:set_limit(2, -1, 1) else c:set_cone(2, 1) end
            c:solve(2, 2, dim == 3 and 0.5 or nil)
            local d = c:clone()
            assert.are.equal(#c, #d)
            assert.are.same(c:positions(), d:positions())
            assert.are.same(c:settings(), d:settings())
            assert.are.same({ c:target() }, { d:target() })
            assert.are.equal(p, (d:parent()))
            local t = { 0.5, 2.5, 0.25 }
            assert.are.same({ c:solve(t[1], t[2], dim == 3 and t[3] or nil) }, { d:solve(t[1], t[2], dim == 3 and t[3] or nil) })
            assert.are.same(c:positions(), d:positions())
            -- and it is its own chain from then on
            d:set_weight(2, 1)
            assert.are.equal(0.5, c:weight(2))
        end
    end)
end)

describe("chains from joint positions", function()
    it("ik.chain2d_points(points) has the segments' lengths, its base on the first point, every joint on its point", function()
        local pts = { 1, 1, 4, 5, 4, 7, 2, 7 }
        local c = ik.chain2d_points(pts)
        assert.are.equal(3, #c)
        assert.is_true(h.near(c:length(1), 5, 1e-15) and h.near(c:length(2), 2, 1e-15) and h.near(c:length(3), 2, 1e-15))
        local p = c:positions()
        for k = 1, #pts do assert.is_true(h.near(p[k], pts[k], 1e-14), k .. ": " .. p[k]) end
        local bx, by, ba = c:base()
        assert.are.same({ 1, 1, 0 }, { bx, by, ba })
        assert.is_true(h.near(c:reach(), 9, 1e-14))
    end)

    it("ik.chain3d_points(points) does the same in 3D, and set_points poses an existing chain (lengths kept)", function()
        local pts = { 0, 0, 0, 0, 0, 2, 0, 3, 2, 1, 3, 2 }
        local c = ik.chain3d_points(pts)
        local p = c:positions()
        for k = 1, #pts do assert.is_true(h.near(p[k], pts[k], 1e-14), k .. ": " .. p[k]) end
        local d = ik.chain2d({ 1, 1 })
        d:set_points({ 5, 5, 5, 7, 8, 7 }) -- directions taken, lengths kept
        local x, y = d:effector()
        assert.is_true(h.near(x, 6, 1e-14) and h.near(y, 6, 1e-14), x .. ", " .. y)
        assert.are.equal(1, d:length(2))
    end)

    it("misuse: not a table, an odd count, fewer than two points, a non-finite coordinate", function()
        for _, bad in ipairs({ 5, { 1, 2, 3 }, { 1, 2 }, { 1, 2, 0 / 0, 4 }, { 1, 2, 1e301, 4 } }) do
            local ok, msg = h.argerror(1, "chain2d_points", function() ik.chain2d_points(bad) end)
            assert.is_true(ok, msg)
        end
        local ok, msg = h.argerror(1, "set_points", function() ik.chain2d({ 1 }):set_points({ 1, 2, 3 }) end)
        assert.is_true(ok, msg)
    end)
end)

describe("reading things back", function()
    it("reach() is the sum of the lengths", function()
        local c = ik.chain3d({ 1, 0.5, 0.25 })
        assert.are.equal(1.75, c:reach())
        c:set_length(2, 2)
        assert.are.equal(3.25, c:reach())
    end)

    it("3D limit(i): 'hinge', axis, min, max; or 'cone', half angle, twist min, twist max; nothing without one", function()
        local c = ik.chain3d({ 1, 1, 1 })
        assert.are.same({}, { c:limit(1) })
        c:set_hinge(1, 0, 0, 2, -0.5, 0.5)
        assert.are.same({ "hinge", 0, 0, 1, -0.5, 0.5 }, { c:limit(1) })
        c:set_cone(2, 0.7)
        assert.are.same({ "cone", 0.7, -pi, pi }, { c:limit(2) })
        c:set_twist(2, -0.1, 0.2)
        assert.are.same({ "cone", 0.7, -0.1, 0.2 }, { c:limit(2) })
        c:set_twist(3, -0.3, 0.3)
        assert.are.same({ "cone", pi, -0.3, 0.3 }, { c:limit(3) })
    end)
end)

describe("solve_many's results", function()
    it("fills the tables given with each chain's reached, distance and iterations, as chain:solve returns them", function()
        local chains, twins, targets = {}, {}, {}
        for k = 1, 70 do
            chains[k] = ik.chain2d({ 1, 1, 1 })
            twins[k] = ik.chain2d({ 1, 1, 1 })
            local a = k * 0.7
            targets[2 * k - 1], targets[2 * k] = (k % 5) * cos(a), (k % 5) * sin(a)
        end
        local reached, distances, iterations = {}, {}, {}
        local n = ik.solve_many(chains, targets, reached, distances, iterations)
        local count = 0
        for k = 1, 70 do
            local r, d, it = twins[k]:solve(targets[2 * k - 1], targets[2 * k])
            assert.are.equal(r, reached[k])
            assert.are.equal(d, distances[k])
            assert.are.equal(it, iterations[k])
            if r then count = count + 1 end
        end
        assert.are.equal(count, n)
    end)

    it("targets nil: each chain towards its kept goal; a chain without one is an error naming argument 2, and nothing is solved", function()
        local a, b = ik.chain2d({ 1, 1 }), ik.chain2d({ 1, 1 })
        a:set_target(1, 1)
        local before = b:positions()
        local ok, msg = h.argerror(2, "solve_many", function() ik.solve_many({ a, b }) end)
        assert.is_true(ok, msg)
        assert.are.same(before, b:positions())
        assert.are.same({ 1, 0 }, { a:joint(2) })
        b:set_target(-1, 1)
        assert.are.equal(2, ik.solve_many({ a, b }))
    end)
end)
