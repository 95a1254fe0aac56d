-- 3D chains: construction, forward kinematics against hand-computed poses and against
-- forward kinematics recomputed in Lua, quaternion normalisation, getters and setters,
-- settings (the pole), the 2D/3D method split, and every misuse path of the 3D methods
-- (the error names the argument and the chain is unchanged).
--
-- Quaternions are w, x, y, z; bone i points along its frame's local +x; joint(i+1) =
-- joint(i) + length(i) * world_rotation(i) applied to (1, 0, 0).

local h = require("spec.helpers")
local ik = require("ik")

local sqrt = math.sqrt
local NAN, INF = 0 / 0, math.huge
local R = sqrt(0.5) -- cos and sin of 45 degrees: a quarter turn is (R, axis * R)

-- Joint i of chain c equals (x, y, z) within tol * scale.
local function assert_joint(c, i, x, y, z, tol, scale)
    local jx, jy, jz = c:joint(i)
    tol = tol or 1e-12
    assert.is_true(h.near(jx, x, tol, scale) and h.near(jy, y, tol, scale) and h.near(jz, z, tol, scale),
        string.format("joint %d: got (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g)", i, jx, jy, jz, x, y, z))
end

-- Quaternion a equals b as a rotation (q ~ -q) within tol.
local function assert_rotation(what, tol, aw, ax, ay, az, bw, bx, by, bz)
    local d = h.qdist(aw, ax, ay, az, bw, bx, by, bz)
    assert.is_true(d <= tol, string.format("%s: got (%.17g, %.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g, %.17g) (distance %.3g > %g)",
        what, aw, ax, ay, az, bw, bx, by, bz, d, tol))
end

-- A 3-bone 3D chain with a non-trivial state: base, rotations, weights and settings.
local function fresh_chain3()
    local c = ik.chain3d({ 1, 2, 0.5 }, 0.5, -1, 2)
    c:set_base(0.5, -1, 2, 0.9, 0.1, -0.3, 0.2)
    c:set_rotation(1, 0.8, 0.1, 0.5, -0.2)
    c:set_rotation(2, 0.6, -0.4, 0.2, 0.6)
    c:set_rotation(3, 0.3, 0.9, 0.1, 0.2)
    c:set_weight(2, 0.5)
    c:set_weight(3, 2)
    c:configure({ solver = "ccd", iterations = 17, tolerance = 0.002, greed = 0.3, greed_ramp = false, bend = -1, pole = { 0, 0.5, 1 } })
    return c
end

describe("ik.chain3d construction", function()
    it("has n bones: #c, c:count() and c:dim() == 3", function()
        for n = 1, 7 do
            local lengths = {}
            for i = 1, n do lengths[i] = i end
            local c = ik.chain3d(lengths)
            assert.are.equal(n, #c)
            assert.are.equal(n, c:count())
            assert.are.equal(3, c:dim())
        end
    end)

    it("starts straight along +x at the origin: joint i = (sum of the lengths before i, 0, 0) exactly", function()
        local c = ik.chain3d({ 1, 2, 0.5, 0, 3 })
        local sums = { 0, 1, 3, 3.5, 3.5, 6.5 }
        for i = 1, 6 do
            assert.are.same({ sums[i], 0, 0 }, { c:joint(i) })
        end
        assert.are.same({ 6.5, 0, 0 }, { c:effector() })
    end)

    it("starts with every rotation the identity (1, 0, 0, 0), every weight 1 and the base at the origin with the identity rotation, exactly", function()
        local c = ik.chain3d({ 1, 1, 1 })
        for i = 1, 3 do
            assert.are.same({ 1, 0, 0, 0 }, { c:rotation(i) })
            assert.are.same({ 1, 0, 0, 0 }, { c:world_rotation(i) })
        end
        for i = 1, 4 do
            assert.are.equal(1, c:weight(i))
        end
        assert.are.same({ 0, 0, 0, 1, 0, 0, 0 }, { c:base() })
    end)

    it("places the base: ik.chain3d({1, 2}, 5, -2, 3) runs along +x from (5, -2, 3) with the identity base rotation, exactly", function()
        local c = ik.chain3d({ 1, 2 }, 5, -2, 3)
        assert.are.same({ 5, -2, 3, 1, 0, 0, 0 }, { c:base() })
        assert.are.same({ 5, -2, 3 }, { c:joint(1) })
        assert.are.same({ 6, -2, 3 }, { c:joint(2) })
        assert.are.same({ 8, -2, 3 }, { c:joint(3) })
    end)

    it("accepts zero-length bones: ik.chain3d({0, 0, 0}) has every joint at the origin", function()
        local c = ik.chain3d({ 0, 0, 0 })
        assert.are.equal(3, #c)
        for i = 1, 4 do assert.are.same({ 0, 0, 0 }, { c:joint(i) }) end
    end)

    it("copies the lengths: changing the table afterwards changes nothing", function()
        local lengths = { 1, 2 }
        local c = ik.chain3d(lengths)
        lengths[1] = 10
        assert.are.equal(1, c:length(1))
    end)

    it("accepts whole-number floats as indices (2.0 is 2)", function()
        local c = ik.chain3d({ 1, 2, 3 })
        c:set_rotation(2.0, R, 0, 0, R)
        assert.are.same({ c:rotation(2) }, { c:rotation(2.0) })
        assert.are.same({ c:joint(3) }, { c:joint(3.0) })
        assert.are.same({ c:world_rotation(2) }, { c:world_rotation(2.0) })
    end)
end)

describe("chain3d forward kinematics (hand-computed poses, 1e-12)", function()
    it("lengths {1, 2}: bone 1 turned 90 degrees about z -> joint 2 = (0, 1, 0); bone 2 then -90 about z (local) -> joint 3 = (2, 1, 0)", function()
        local c = ik.chain3d({ 1, 2 })
        c:set_rotation(1, R, 0, 0, R)
        assert_joint(c, 1, 0, 0, 0)
        assert_joint(c, 2, 0, 1, 0)
        assert_joint(c, 3, 0, 3, 0) -- bone 2 follows bone 1 while its local rotation is the identity
        c:set_rotation(2, R, 0, 0, -R)
        assert_joint(c, 2, 0, 1, 0)
        assert_joint(c, 3, 2, 1, 0)
        local ex, ey, ez = c:effector()
        assert.is_true(h.near(ex, 2, 1e-12) and h.near(ey, 1, 1e-12) and h.near(ez, 0, 1e-12))
        -- world rotation of bone 2: (90 about z) * (-90 about z) = identity
        local w, x, y, z = c:world_rotation(2)
        assert_rotation("world_rotation(2)", 1e-12, w, x, y, z, 1, 0, 0, 0)
    end)

    it("lengths {1, 2}: bone 1 turned 90 degrees about y -> joint 2 = (0, 0, -1); bone 2 then 90 about z (local) -> joint 3 = (0, 2, -1)", function()
        -- a quarter turn about +y takes +x to -z and leaves +y where it is
        local c = ik.chain3d({ 1, 2 })
        c:set_rotation(1, R, 0, R, 0)
        assert_joint(c, 2, 0, 0, -1)
        assert_joint(c, 3, 0, 0, -3)
        c:set_rotation(2, R, 0, 0, R)
        assert_joint(c, 2, 0, 0, -1)
        assert_joint(c, 3, 0, 2, -1)
        local w, x, y, z = c:world_rotation(2)
        assert_rotation("world_rotation(2)", 1e-12, w, x, y, z, h.qmul(R, 0, R, 0, R, 0, 0, R))
    end)

    it("a twist about the bone's own axis moves no joint of its bone but turns the bones after it: bone 1 90 about x, bone 2 90 about z -> joints (0,0,0), (1,0,0), (1,0,1)", function()
        local c = ik.chain3d({ 1, 1 })
        c:set_rotation(1, R, R, 0, 0)
        assert_joint(c, 2, 1, 0, 0)
        assert_joint(c, 3, 2, 0, 0)
        c:set_rotation(2, R, 0, 0, R)
        -- bone 2's local +y is bone 1's frame +y, which the twist took to world +z
        assert_joint(c, 3, 1, 0, 1)
    end)

    it("a base rotation turns the whole chain: base (1, 2, 3) turned 90 about z -> the straight chain {1, 1} runs along +y: (1,2,3), (1,3,3), (1,4,3)", function()
        local c = ik.chain3d({ 1, 1 }, 1, 2, 3)
        c:set_base(1, 2, 3, R, 0, 0, R)
        assert_joint(c, 1, 1, 2, 3)
        assert_joint(c, 2, 1, 3, 3)
        assert_joint(c, 3, 1, 4, 3)
        for i = 1, 2 do
            local w, x, y, z = c:world_rotation(i)
            assert_rotation("world_rotation(" .. i .. ")", 1e-12, w, x, y, z, R, 0, 0, R)
        end
    end)

    it("a base rotation about x and bone 1 turned 90 about z: base (1, 2, 3) 90 about x -> joints (1,2,3), (1,2,4), (1,2,5)", function()
        -- base: +y -> +z; bone 1 (90 about z in the base frame) points along the base's +y
        local c = ik.chain3d({ 1, 1 }, 1, 2, 3)
        c:set_base(1, 2, 3, R, R, 0, 0)
        assert_joint(c, 2, 2, 2, 3) -- the base's +x is still world +x
        c:set_rotation(1, R, 0, 0, R)
        assert_joint(c, 1, 1, 2, 3)
        assert_joint(c, 2, 1, 2, 4)
        assert_joint(c, 3, 1, 2, 5)
        local w, x, y, z = c:world_rotation(1)
        assert_rotation("world_rotation(1)", 1e-12, w, x, y, z, h.qmul(R, R, 0, 0, R, 0, 0, R))
    end)

    it("a half turn about z given unnormalised as (0, 0, 0, 5) turns bone 1 back: joint 2 = (-1, 0, 0), joint 3 = (-3, 0, 0)", function()
        local c = ik.chain3d({ 1, 2 })
        c:set_rotation(1, 0, 0, 0, 5)
        assert_joint(c, 2, -1, 0, 0)
        assert_joint(c, 3, -3, 0, 0)
    end)

    it("matches forward kinematics recomputed in Lua for 500 random chains, rotations and bases (positions 1e-12 relative, world rotations 1e-12)", function()
        local chk = h.checker("chain3d FK")
        local rng = h.rng(3010)
        for _ = 1, 500 do
            local n = rng.int(1, 9)
            local lengths = {}
            for i = 1, n do lengths[i] = rng.uniform(0, 3) end
            local bx, by, bz = rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(-10, 10)
            local bw, bqx, bqy, bqz = h.random_quat(rng)
            local c = ik.chain3d(lengths, bx, by, bz)
            c:set_base(bx, by, bz, bw, bqx, bqy, bqz)
            local rots = h.random_pose3(rng, c)
            local want, world = h.fk3(lengths, rots, { bx, by, bz }, { bw, bqx, bqy, bqz })
            local got = c:positions()
            chk:ok(#got == 3 * (n + 1), "n=%d: #positions() = %d", n, #got)
            for k = 1, 3 * (n + 1) do
                chk:near(got[k], want[k], 1e-12, 40, "n=%d positions[%d]", n, k)
            end
            for i = 1, n + 1 do
                local x, y, z = c:joint(i)
                chk:ok(x == got[3 * i - 2] and y == got[3 * i - 1] and z == got[3 * i], "n=%d joint(%d) differs from positions()", n, i)
            end
            local ex, ey, ez = c:effector()
            chk:ok(ex == got[3 * n + 1] and ey == got[3 * n + 2] and ez == got[3 * n + 3], "n=%d effector() differs from the last joint", n)
            for i = 1, n do
                local w, x, y, z = c:world_rotation(i)
                local q = world[i]
                chk:ok(h.qdist(w, x, y, z, q[1], q[2], q[3], q[4]) <= 1e-12, "n=%d world_rotation(%d) = (%.17g, %.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g, %.17g)",
                    n, i, w, x, y, z, q[1], q[2], q[3], q[4])
                -- the bone runs along its world rotation's +x
                local dx, dy, dz = h.qrotate(w, x, y, z, 1, 0, 0)
                local l = lengths[i]
                chk:near(got[3 * i + 1], got[3 * i - 2] + l * dx, 1e-12, 40, "n=%d bone %d x along world_rotation", n, i)
                chk:near(got[3 * i + 2], got[3 * i - 1] + l * dy, 1e-12, 40, "n=%d bone %d y along world_rotation", n, i)
                chk:near(got[3 * i + 3], got[3 * i] + l * dz, 1e-12, 40, "n=%d bone %d z along world_rotation", n, i)
                local lw, lx, ly, lz = c:rotation(i)
                local r = rots[i]
                chk:ok(h.qdist(lw, lx, ly, lz, r[1], r[2], r[3], r[4]) <= 1e-15, "n=%d rotation(%d) read back differs", n, i)
            end
        end
        chk:done()
    end)

    it("fills positions(out) in place: returns out, flat x, y, z triples of the n+1 joints, #out exact even when out was longer", function()
        local c = ik.chain3d({ 1, 2 }, 1, 1, 1)
        local out = {}
        for k = 1, 50 do out[k] = -1 end
        local ret = c:positions(out)
        assert.are.equal(out, ret)
        assert.are.equal(9, #out)
        assert.is_nil(out[10])
        assert.are.same({ 1, 1, 1, 2, 1, 1, 4, 1, 1 }, out)
        local fresh = c:positions()
        assert.are.same(out, fresh)
        assert.are_not.equal(out, fresh)
        local short = { 9 }
        c:positions(short)
        assert.are.same({ 1, 1, 1, 2, 1, 1, 4, 1, 1 }, short)
    end)

    it("sets and reads lengths; set_length moves the joints after the bone along the bone", function()
        local c = ik.chain3d({ 1, 2, 3 })
        c:set_rotation(2, R, 0, 0, R) -- bone 2 and 3 along +y
        assert.are.same({ 1, 2, 3 }, h.lengths(c))
        c:set_length(2, 5)
        assert.are.equal(5, c:length(2))
        assert_joint(c, 3, 1, 5, 0)
        assert_joint(c, 4, 1, 8, 0)
        c:set_length(1, 0)
        assert_joint(c, 2, 0, 0, 0)
        assert_joint(c, 4, 0, 8, 0)
    end)

    it("set_base(x, y, z) keeps the base rotation; set_base(x, y, z, w, qx, qy, qz) sets it", function()
        local c = ik.chain3d({ 1, 1 })
        c:set_base(0, 0, 0, R, 0, 0, R)
        c:set_base(3, 4, 5)
        local b = { c:base() }
        assert.are.same({ 3, 4, 5 }, { b[1], b[2], b[3] })
        assert_rotation("base rotation", 1e-15, b[4], b[5], b[6], b[7], R, 0, 0, R)
        assert_joint(c, 3, 3, 6, 5)
        c:set_base(-1, 0, 2, 1, 0, 0, 0)
        assert.are.same({ -1, 0, 2, 1, 0, 0, 0 }, { c:base() })
        assert_joint(c, 3, 1, 0, 2)
    end)

    it("sets and reads weights of joints 1..n+1 (default 1; 0 allowed), without moving the pose", function()
        local c = ik.chain3d({ 1, 1, 1 })
        c:set_rotation(2, R, 0, R, 0)
        local before = c:positions()
        c:set_weight(1, 0)
        c:set_weight(2, 0.5)
        c:set_weight(4, 3)
        assert.are.same({ 0, 0.5, 1, 3 }, { c:weight(1), c:weight(2), c:weight(3), c:weight(4) })
        assert.are.same(before, c:positions())
    end)
end)

describe("chain3d quaternion normalisation", function()
    it("set_rotation normalises: (2, 0, 0, 0) -> (1, 0, 0, 0), (1, 0, 0, 1) -> (sqrt 1/2, 0, 0, sqrt 1/2), (0, 3, 0, 4) -> (0, 0.6, 0, 0.8) (1e-15)", function()
        local c = ik.chain3d({ 1, 1 })
        local cases = {
            { { 2, 0, 0, 0 }, { 1, 0, 0, 0 } },
            { { 1, 0, 0, 1 }, { R, 0, 0, R } },
            { { 0, 3, 0, 4 }, { 0, 0.6, 0, 0.8 } },
            { { 1e-3, 1e-3, 1e-3, 1e-3 }, { 0.5, 0.5, 0.5, 0.5 } },
        }
        for _, cs in ipairs(cases) do
            local q, want = cs[1], cs[2]
            c:set_rotation(2, q[1], q[2], q[3], q[4])
            local w, x, y, z = c:rotation(2)
            assert_rotation(string.format("set_rotation(2, %g, %g, %g, %g)", q[1], q[2], q[3], q[4]), 1e-15,
                w, x, y, z, want[1], want[2], want[3], want[4])
        end
    end)

    it("reads back q / |q| for 1000 random quaternions scaled by 10^-100 .. 10^100: | |q| - 1 | <= 1e-15 and the rotation within 1e-15", function()
        local chk = h.checker("set_rotation normalises")
        local rng = h.rng(3020)
        local c = ik.chain3d({ 1, 1, 1 })
        for t = 1, 1000 do
            local w, x, y, z = h.random_quat(rng)
            local s = 10 ^ rng.uniform(-100, 100)
            local i = rng.int(1, 3)
            c:set_rotation(i, s * w, s * x, s * y, s * z)
            local gw, gx, gy, gz = c:rotation(i)
            chk:ok(math.abs(h.qlen(gw, gx, gy, gz) - 1) <= 1e-15, "trial %d scale %g: |q| - 1 = %.3g", t, s, h.qlen(gw, gx, gy, gz) - 1)
            chk:ok(h.qdist(gw, gx, gy, gz, w, x, y, z) <= 1e-15, "trial %d scale %g: rotation (%.17g, %.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g, %.17g)",
                t, s, gw, gx, gy, gz, w, x, y, z)
        end
        chk:done()
    end)

    it("normalises finite quaternions at extreme scales, or rejects them as a bad argument, never silently wrong: (0, 0, 0, 1e-200), (1e-200, 0, 1e-200, 0), (0, 1e200, 0, 0), (1e300, 1e300, 0, 0), (5e-324, 0, 0, 0) (1e-15)", function()
        local cases = {
            { { 0, 0, 0, 1e-200 }, { 0, 0, 0, 1 } },
            { { 1e-200, 0, 1e-200, 0 }, { R, 0, R, 0 } },
            { { 0, 1e200, 0, 0 }, { 0, 1, 0, 0 } },
            { { 1e300, 1e300, 0, 0 }, { R, R, 0, 0 } },
            { { 5e-324, 0, 0, 0 }, { 1, 0, 0, 0 } },
        }
        for _, cs in ipairs(cases) do
            local q, want = cs[1], cs[2]
            local args = string.format("%g, %g, %g, %g", q[1], q[2], q[3], q[4])
            -- set_rotation
            local c = fresh_chain3()
            local before = h.snapshot3(c)
            if pcall(c.set_rotation, c, 2, q[1], q[2], q[3], q[4]) then
                local w, x, y, z = c:rotation(2)
                assert_rotation("set_rotation(2, " .. args .. ")", 1e-15, w, x, y, z, want[1], want[2], want[3], want[4])
            else
                local ok, msg = h.argerror_any({ 2, 3, 4, 5 }, "set_rotation", function() c:set_rotation(2, q[1], q[2], q[3], q[4]) end)
                assert(ok, "set_rotation(2, " .. args .. "): " .. msg)
                h.assert_unchanged(before, h.snapshot3(c), "set_rotation(2, " .. args .. ")")
            end
            -- set_base
            c = fresh_chain3()
            before = h.snapshot3(c)
            if pcall(c.set_base, c, 1, 2, 3, q[1], q[2], q[3], q[4]) then
                local b = { c:base() }
                assert_rotation("set_base(1, 2, 3, " .. args .. ")", 1e-15, b[4], b[5], b[6], b[7], want[1], want[2], want[3], want[4])
            else
                local ok, msg = h.argerror_any({ 4, 5, 6, 7 }, "set_base", function() c:set_base(1, 2, 3, q[1], q[2], q[3], q[4]) end)
                assert(ok, "set_base(1, 2, 3, " .. args .. "): " .. msg)
                h.assert_unchanged(before, h.snapshot3(c), "set_base(1, 2, 3, " .. args .. ")")
            end
        end
    end)

    it("q and -q are the same rotation: the same joints (1e-15) for 200 random quaternions", function()
        local rng = h.rng(3021)
        local a, b = ik.chain3d({ 1, 2 }), ik.chain3d({ 1, 2 })
        for _ = 1, 200 do
            local w, x, y, z = h.random_quat(rng)
            a:set_rotation(1, w, x, y, z)
            b:set_rotation(1, -w, -x, -y, -z)
            local pa, pb = a:positions(), b:positions()
            for k = 1, #pa do
                assert.is_true(h.near(pa[k], pb[k], 1e-15, 3), string.format("coordinate %d: %.17g vs %.17g", k, pa[k], pb[k]))
            end
        end
    end)

    it("set_base normalises its rotation: base() reads back a unit quaternion, (0, 0, 0, 2) -> (0, 0, 0, 1), and the joints follow it (1e-15)", function()
        local c = ik.chain3d({ 1 })
        c:set_base(1, 2, 3, 0, 0, 0, 2)
        local b = { c:base() }
        assert.are.same({ 1, 2, 3 }, { b[1], b[2], b[3] })
        assert_rotation("base rotation", 1e-15, b[4], b[5], b[6], b[7], 0, 0, 0, 1)
        assert_joint(c, 2, 0, 2, 3, 1e-15)
        local rng = h.rng(3022)
        for _ = 1, 200 do
            local w, x, y, z = h.random_quat(rng)
            local s = 10 ^ rng.uniform(-50, 50)
            c:set_base(0, 0, 0, s * w, s * x, s * y, s * z)
            b = { c:base() }
            assert.is_true(math.abs(h.qlen(b[4], b[5], b[6], b[7]) - 1) <= 1e-15, "|base rotation| - 1 = " .. (h.qlen(b[4], b[5], b[6], b[7]) - 1))
            assert_rotation("base rotation", 1e-15, b[4], b[5], b[6], b[7], w, x, y, z)
        end
    end)

    it("world_rotation(i) is a unit quaternion equal to base * rotation(1) * ... * rotation(i) for unnormalised inputs (1e-12)", function()
        local rng = h.rng(3023)
        local c = ik.chain3d({ 1, 1, 1, 1 })
        for _ = 1, 100 do
            local qw, qx, qy, qz = h.random_quat(rng)
            local s = rng.uniform(0.01, 100)
            c:set_base(0, 0, 0, s * qw, s * qx, s * qy, s * qz)
            for i = 1, 4 do
                local w, x, y, z = h.random_quat(rng)
                s = rng.uniform(0.01, 100)
                c:set_rotation(i, s * w, s * x, s * y, s * z)
                qw, qx, qy, qz = h.qmul(qw, qx, qy, qz, w, x, y, z)
                local gw, gx, gy, gz = c:world_rotation(i)
                assert.is_true(math.abs(h.qlen(gw, gx, gy, gz) - 1) <= 1e-12)
                assert_rotation("world_rotation(" .. i .. ")", 1e-12, gw, gx, gy, gz, qw, qx, qy, qz)
            end
        end
    end)
end)

-- The IK_DEFAULT_* values of src/ik.h, read from the header so the spec follows it.
local function header_defaults()
    local f = assert(io.open("src/ik.h", "r"), "src/ik.h not found (busted runs from the repository root)")
    local text = f:read("*a")
    f:close()
    local function value(name)
        local v = text:match("#define%s+IK_DEFAULT_" .. name .. "%s+([^%s]+)")
        return assert(tonumber(v), "IK_DEFAULT_" .. name .. " not found in src/ik.h")
    end
    return {
        solver = "fabrik",
        iterations = value("ITERATIONS"),
        tolerance = value("TOLERANCE"),
        greed = value("GREED"),
        greed_ramp = value("GREED_RAMP") ~= 0,
        bend = value("BEND"),
        escape = value("ESCAPE") ~= 0,
        mix = value("MIX"),
        softness = value("SOFTNESS"),
        stretch = value("STRETCH") ~= 0,
        pole = false,
        angle_tolerance = value("ANGLE_TOLERANCE"),
        effector_weight = value("EFFECTOR_WEIGHT"),
        max_turn = math.huge, -- IK_DEFAULT_MAX_TURN: INFINITY, no limit (ik.h)
        stiffness = 0, -- ik_default_settings: no pull back to the rest pose (ik.h)
        damping = value("DAMPING"),
        gravity = { 0, 0, 0 }, -- no gravity (ik.h)
    }
end

describe("chain3d settings", function()
    local D = header_defaults()

    it("has the defaults of ik.h's IK_DEFAULT_* and pole == false", function()
        assert.are.same(D, ik.chain3d({ 1, 1 }):settings())
    end)

    it("configure{pole = {x, y, z}} sets a pole read back as a table {x, y, z} in the same direction (1e-15); pole = false clears it; other keys unchanged", function()
        local c = ik.chain3d({ 1, 1 })
        assert.are.equal(c, c:configure({ pole = { 0, 0, 2 } }))
        local s = c:settings()
        assert.are.equal("table", type(s.pole))
        assert.are.equal(3, #s.pole)
        local px, py, pz = h.unit3(s.pole[1], s.pole[2], s.pole[3])
        assert.is_true(h.near(px, 0, 1e-15) and h.near(py, 0, 1e-15) and h.near(pz, 1, 1e-15),
            string.format("pole read back (%.17g, %.17g, %.17g)", s.pole[1], s.pole[2], s.pole[3]))
        s.pole = nil
        local want = {}
        for k, v in pairs(D) do want[k] = v end
        want.pole = nil
        assert.are.same(want, s)
        c:configure({ pole = { 1, -2, 0.5 }, iterations = 9 })
        s = c:settings()
        px, py, pz = h.unit3(s.pole[1], s.pole[2], s.pole[3])
        local wx, wy, wz = h.unit3(1, -2, 0.5)
        assert.is_true(h.near(px, wx, 1e-15) and h.near(py, wy, 1e-15) and h.near(pz, wz, 1e-15))
        assert.are.equal(9, s.iterations)
        c:configure({ tolerance = 0.5 })
        assert.are.equal("table", type(c:settings().pole), "configure without pole changed the pole")
        assert.are.equal(c, c:configure({ pole = false }))
        assert.are.equal(false, c:settings().pole)
        assert.are.equal(9, c:settings().iterations)
    end)

    it("copies the pole table: changing it (or the table settings() returned) afterwards changes nothing", function()
        local c = ik.chain3d({ 1, 1 })
        local p = { 0, 1, 0 }
        c:configure({ pole = p })
        p[1], p[2] = 5, 0
        local s = c:settings()
        assert.is_true(s.pole[1] == 0 and s.pole[2] > 0 and s.pole[3] == 0)
        s.pole[2] = -1
        assert.is_true(c:settings().pole[2] > 0)
    end)

    it("accepts every solver name (two_bone on a 2-bone chain) and the edges of every range", function()
        local c = ik.chain3d({ 1, 1 })
        for _, name in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
            c:configure({ solver = name })
            assert.are.equal(name, c:settings().solver)
        end
        c:configure({ iterations = 1, tolerance = 0, greed = 1, greed_ramp = false, bend = -1 })
        local s = c:settings()
        assert.are.same({ 1, 0, 1, false, -1 }, { s.iterations, s.tolerance, s.greed, s.greed_ramp, s.bend })
    end)
end)

-- ---------------------------------------------------------------------------------------
-- Misuse. Every case runs on a fresh 3-bone 3D chain with a non-trivial state; the error
-- must name the argument (method-call syntax: the first argument after self is #1) and
-- the chain must be unchanged, compared through everything observable.

local MISUSE3 = {
    -- self is not a chain (field-call syntax: self is #1)
    { "rotation(nil, 1)", 1, "rotation", function(c) c.rotation(nil, 1) end },
    { "rotation({}, 1)", 1, "rotation", function(c) c.rotation({}, 1) end },
    { "set_rotation({}, 1, 1, 0, 0, 0)", 1, "set_rotation", function(c) c.set_rotation({}, 1, 1, 0, 0, 0) end },
    { "world_rotation('x', 1)", 1, "world_rotation", function(c) c.world_rotation("x", 1) end },

    -- rotation(i), world_rotation(i): bones 1..n
    { "rotation(0)", 1, "rotation", function(c) c:rotation(0) end },
    { "rotation(4)", 1, "rotation", function(c) c:rotation(4) end },
    { "rotation(1.5)", 1, "rotation", function(c) c:rotation(1.5) end },
    { "rotation(NaN)", 1, "rotation", function(c) c:rotation(NAN) end },
    { "rotation('a')", 1, "rotation", function(c) c:rotation("a") end },
    { "rotation(nil)", 1, "rotation", function(c) c:rotation() end },
    { "world_rotation(0)", 1, "world_rotation", function(c) c:world_rotation(0) end },
    { "world_rotation(4)", 1, "world_rotation", function(c) c:world_rotation(4) end },
    { "world_rotation(2.5)", 1, "world_rotation", function(c) c:world_rotation(2.5) end },
    { "world_rotation(inf)", 1, "world_rotation", function(c) c:world_rotation(INF) end },

    -- set_rotation(i, w, x, y, z)
    { "set_rotation(0, 1, 0, 0, 0)", 1, "set_rotation", function(c) c:set_rotation(0, 1, 0, 0, 0) end },
    { "set_rotation(4, 1, 0, 0, 0)", 1, "set_rotation", function(c) c:set_rotation(4, 1, 0, 0, 0) end },
    { "set_rotation(1.5, 1, 0, 0, 0)", 1, "set_rotation", function(c) c:set_rotation(1.5, 1, 0, 0, 0) end },
    { "set_rotation(1, NaN, 0, 0, 0)", 2, "set_rotation", function(c) c:set_rotation(1, NAN, 0, 0, 0) end },
    { "set_rotation(1, 1, inf, 0, 0)", 3, "set_rotation", function(c) c:set_rotation(1, 1, INF, 0, 0) end },
    { "set_rotation(1, 1, 0, -inf, 0)", 4, "set_rotation", function(c) c:set_rotation(1, 1, 0, -INF, 0) end },
    { "set_rotation(1, 1, 0, 0, NaN)", 5, "set_rotation", function(c) c:set_rotation(1, 1, 0, 0, NAN) end },
    { "set_rotation(1, 'a', 0, 0, 0)", 2, "set_rotation", function(c) c:set_rotation(1, "a", 0, 0, 0) end },
    { "set_rotation(1, 1, {}, 0, 0)", 3, "set_rotation", function(c) c:set_rotation(1, 1, {}, 0, 0) end },
    { "set_rotation(1, 1, 0, 0) (z missing)", 5, "set_rotation", function(c) c:set_rotation(1, 1, 0, 0) end },
    { "set_rotation(1) (the quaternion missing)", 2, "set_rotation", function(c) c:set_rotation(1) end },

    -- set_base(x, y, z [, w, qx, qy, qz])
    { "set_base(NaN, 0, 0)", 1, "set_base", function(c) c:set_base(NAN, 0, 0) end },
    { "set_base(0, inf, 0)", 2, "set_base", function(c) c:set_base(0, INF, 0) end },
    { "set_base(0, 0, NaN)", 3, "set_base", function(c) c:set_base(0, 0, NAN) end },
    { "set_base(0, 0) (z missing)", 3, "set_base", function(c) c:set_base(0, 0) end },
    { "set_base(0, 0, 'a')", 3, "set_base", function(c) c:set_base(0, 0, "a") end },
    { "set_base(0, 0, 0, NaN, 0, 0, 0)", 4, "set_base", function(c) c:set_base(0, 0, 0, NAN, 0, 0, 0) end },
    { "set_base(0, 0, 0, 1, inf, 0, 0)", 5, "set_base", function(c) c:set_base(0, 0, 0, 1, INF, 0, 0) end },
    { "set_base(0, 0, 0, 1, 0, NaN, 0)", 6, "set_base", function(c) c:set_base(0, 0, 0, 1, 0, NAN, 0) end },
    { "set_base(0, 0, 0, 1, 0, 0, -inf)", 7, "set_base", function(c) c:set_base(0, 0, 0, 1, 0, 0, -INF) end },
    { "set_base(0, 0, 0, 1) (rotation cut short)", 5, "set_base", function(c) c:set_base(0, 0, 0, 1) end },
    { "set_base(0, 0, 0, 1, 0, 0) (qz missing)", 7, "set_base", function(c) c:set_base(0, 0, 0, 1, 0, 0) end },

    -- joint, length, weight: the same ranges as in 2D
    { "joint(0)", 1, "joint", function(c) c:joint(0) end },
    { "joint(5)", 1, "joint", function(c) c:joint(5) end },
    { "joint(1.5)", 1, "joint", function(c) c:joint(1.5) end },
    { "length(4)", 1, "length", function(c) c:length(4) end },
    { "set_length(1, -1)", 2, "set_length", function(c) c:set_length(1, -1) end },
    { "set_length(1, NaN)", 2, "set_length", function(c) c:set_length(1, NAN) end },
    { "weight(5)", 1, "weight", function(c) c:weight(5) end },
    { "set_weight(2, -1)", 2, "set_weight", function(c) c:set_weight(2, -1) end },
    { "positions(5)", 1, "positions", function(c) c:positions(5) end },

    -- configure{pole = ...}
    { "configure{pole = {0, 0, 0}}", 1, "configure", function(c) c:configure({ pole = { 0, 0, 0 } }) end },
    { "configure{pole = {NaN, 0, 1}}", 1, "configure", function(c) c:configure({ pole = { NAN, 0, 1 } }) end },
    { "configure{pole = {0, inf, 1}}", 1, "configure", function(c) c:configure({ pole = { 0, INF, 1 } }) end },
    { "configure{pole = {0, 1}} (short table)", 1, "configure", function(c) c:configure({ pole = { 0, 1 } }) end },
    { "configure{pole = {}}", 1, "configure", function(c) c:configure({ pole = {} }) end },
    { "configure{pole = {0, 1, 'a'}}", 1, "configure", function(c) c:configure({ pole = { 0, 1, "a" } }) end },
    { "configure{pole = {0, nil, 1}}", 1, "configure", function(c) c:configure({ pole = { 0, nil, 1 } }) end },
    { "configure{pole = true}", 1, "configure", function(c) c:configure({ pole = true }) end },
    { "configure{pole = 1}", 1, "configure", function(c) c:configure({ pole = 1 }) end },
    { "configure{pole = 'up'}", 1, "configure", function(c) c:configure({ pole = "up" }) end },
    { "configure{pole = {0, 1, 0}, greed = 0} (one bad key)", 1, "configure", function(c) c:configure({ pole = { 0, 1, 0 }, greed = 0 }) end },
    { "configure{pole = {0, 0, 0}, iterations = 3} (pole bad)", 1, "configure", function(c) c:configure({ pole = { 0, 0, 0 }, iterations = 3 }) end },
    { "configure{nope = 1}", 1, "configure", function(c) c:configure({ nope = 1 }) end },

    -- solves: the target needs x, y and z (method-call syntax: x is #1, z is #3)
    { "solve(1, 1) (z missing)", 3, "solve", function(c) c:solve(1, 1) end },
    { "solve(1, 1, NaN)", 3, "solve", function(c) c:solve(1, 1, NAN) end },
    { "solve(NaN, 1, 1)", 1, "solve", function(c) c:solve(NAN, 1, 1) end },
    { "solve(1, inf, 1)", 2, "solve", function(c) c:solve(1, INF, 1) end },
    { "solve_ccd(1, 1) (z missing)", 3, "solve_ccd", function(c) c:solve_ccd(1, 1) end },
    { "solve_ccd(1, 1, -inf)", 3, "solve_ccd", function(c) c:solve_ccd(1, 1, -INF) end },
    { "solve_ccd('a', 1, 1)", 1, "solve_ccd", function(c) c:solve_ccd("a", 1, 1) end },
    { "solve_fabrik(1, 1) (z missing)", 3, "solve_fabrik", function(c) c:solve_fabrik(1, 1) end },
    { "solve_fabrik(1, NaN, 1)", 2, "solve_fabrik", function(c) c:solve_fabrik(1, NAN, 1) end },
    { "solve_fabrik(1, 1, {})", 3, "solve_fabrik", function(c) c:solve_fabrik(1, 1, {}) end },
    { "solve_relax(1, 1) (z missing)", 3, "solve_relax", function(c) c:solve_relax(1, 1) end },
    { "solve_relax(1, 1, NaN)", 3, "solve_relax", function(c) c:solve_relax(1, 1, NAN) end },
    { "solve_relax() (all missing)", 1, "solve_relax", function(c) c:solve_relax() end },
    -- field-call syntax: self is #1, so z is #4
    { "solve(c, 1, 1) (z missing)", 4, "solve", function(c) c.solve(c, 1, 1) end },
    { "solve_ccd(c, 1, 1, NaN)", 4, "solve_ccd", function(c) c.solve_ccd(c, 1, 1, NAN) end },
    { "solve_fabrik(c, 1, 1)", 4, "solve_fabrik", function(c) c.solve_fabrik(c, 1, 1) end },
    { "solve_relax(c, 1, 1, inf)", 4, "solve_relax", function(c) c.solve_relax(c, 1, 1, INF) end },
    -- solve_two_bone on a 3-bone chain: the chain is the bad argument
    { "solve_two_bone(c, 1, 1, 1) on 3 bones", 1, "solve_two_bone", function(c) c.solve_two_bone(c, 1, 1, 1) end },
    { "solve_two_bone(1, 1, 1) on 3 bones (bad self)", 0, "solve_two_bone", function(c) c:solve_two_bone(1, 1, 1) end },

    -- 2D-only methods on a 3D chain: the chain is the bad argument
    { "angle(1) on a 3D chain", 0, "angle", function(c) c:angle(1) end },
    { "set_angle(1, 0.5) on a 3D chain", 0, "set_angle", function(c) c:set_angle(1, 0.5) end },
    { "world_angle(1) on a 3D chain", 0, "world_angle", function(c) c:world_angle(1) end },
    { "angle(c, 1) on a 3D chain", 1, "angle", function(c) c.angle(c, 1) end },
    { "set_angle(c, 1, 0.5) on a 3D chain", 1, "set_angle", function(c) c.set_angle(c, 1, 0.5) end },
    { "world_angle(c, 1) on a 3D chain", 1, "world_angle", function(c) c.world_angle(c, 1) end },
}

-- A zero quaternion is bad as a whole: the error may name any of its four arguments.
local ZERO_QUATERNION = {
    { "set_rotation(1, 0, 0, 0, 0)", { 2, 3, 4, 5 }, "set_rotation", function(c) c:set_rotation(1, 0, 0, 0, 0) end },
    { "set_rotation(3, -0, 0, -0, 0)", { 2, 3, 4, 5 }, "set_rotation", function(c) c:set_rotation(3, -0.0, 0, -0.0, 0) end },
    { "set_base(1, 2, 3, 0, 0, 0, 0)", { 4, 5, 6, 7 }, "set_base", function(c) c:set_base(1, 2, 3, 0, 0, 0, 0) end },
}

describe("chain3d misuse", function()
    it("ik.chain3d rejects bad lengths and base positions as bad argument #k to 'chain3d'", function()
        local cases = {
            { 1, function() ik.chain3d({}) end, "{}" },
            { 1, function() ik.chain3d({ 1, -1 }) end, "{1, -1}" },
            { 1, function() ik.chain3d({ 1, NAN }) end, "{1, NaN}" },
            { 1, function() ik.chain3d({ 1, INF }) end, "{1, inf}" },
            { 1, function() ik.chain3d({ "a" }) end, "{'a'}" },
            { 1, function() ik.chain3d("x") end, "'x'" },
            { 1, function() ik.chain3d() end, "nil" },
            { 2, function() ik.chain3d({ 1 }, NAN, 0, 0) end, "x NaN" },
            { 2, function() ik.chain3d({ 1 }, "a", 0, 0) end, "x 'a'" },
            { 3, function() ik.chain3d({ 1 }, 0, INF, 0) end, "y inf" },
            { 4, function() ik.chain3d({ 1 }, 0, 0, NAN) end, "z NaN" },
            { 4, function() ik.chain3d({ 1 }, 0, 0, {}) end, "z {}" },
        }
        for _, cs in ipairs(cases) do
            local ok, msg = h.argerror(cs[1], "chain3d", cs[2])
            assert(ok, "ik.chain3d(" .. cs[3] .. "): " .. msg)
        end
    end)

    it("rejects every misuse of every 3D method with bad argument #k to 'method' and leaves the chain unchanged (" .. #MISUSE3 .. " cases)", function()
        local failures = {}
        for _, cs in ipairs(MISUSE3) do
            local desc, k, name, f = cs[1], cs[2], cs[3], cs[4]
            local c = fresh_chain3()
            local before = h.snapshot3(c)
            local ok, msg = h.argerror(k, name, function() f(c) end)
            if not ok then
                failures[#failures + 1] = desc .. ": " .. msg
            elseif not pcall(h.assert_unchanged, before, h.snapshot3(c), desc) then
                failures[#failures + 1] = desc .. ": the chain changed"
            end
        end
        assert(#failures == 0, #failures .. " of " .. #MISUSE3 .. " cases failed:\n  " .. table.concat(failures, "\n  "))
    end)

    it("rejects a zero quaternion in set_rotation and set_base as a bad argument (one of the four) and leaves the chain unchanged", function()
        for _, cs in ipairs(ZERO_QUATERNION) do
            local desc, ks, name, f = cs[1], cs[2], cs[3], cs[4]
            local c = fresh_chain3()
            local before = h.snapshot3(c)
            local ok, msg = h.argerror_any(ks, name, function() f(c) end)
            assert(ok, desc .. ": " .. msg)
            h.assert_unchanged(before, h.snapshot3(c), desc)
        end
    end)

    it("rejects a bad target of solve_two_bone on a 2-bone 3D chain (z missing, NaN) and of solve configured for two_bone, and keeps the chain unchanged", function()
        local c = ik.chain3d({ 1, 1.5 }, 1, 2, 3)
        c:set_rotation(2, 0.9, 0.1, 0.2, 0.3)
        c:configure({ pole = { 0, 1, 0 } })
        local before = h.snapshot3(c)
        h.assert_argerror(3, "solve_two_bone", function() c:solve_two_bone(1, 1) end)
        h.assert_argerror(3, "solve_two_bone", function() c:solve_two_bone(1, 1, NAN) end)
        h.assert_argerror(1, "solve_two_bone", function() c:solve_two_bone(INF, 1, 1) end)
        h.assert_unchanged(before, h.snapshot3(c), "solve_two_bone with a bad target")
        c:configure({ solver = "two_bone" })
        before = h.snapshot3(c)
        h.assert_argerror(3, "solve", function() c:solve(1, 1) end)
        h.assert_argerror(2, "solve", function() c:solve(1, NAN, 1) end)
        h.assert_unchanged(before, h.snapshot3(c), "solve (two_bone) with a bad target")
    end)

    it("rejects the 3D-only methods and a pole on a 2D chain (the chain is the bad argument; the pole is bad argument #1 to 'configure') and leaves it unchanged", function()
        local cases = {
            { "rotation(1) on a 2D chain", 0, "rotation", function(c) c:rotation(1) end },
            { "set_rotation(1, 1, 0, 0, 0) on a 2D chain", 0, "set_rotation", function(c) c:set_rotation(1, 1, 0, 0, 0) end },
            { "world_rotation(1) on a 2D chain", 0, "world_rotation", function(c) c:world_rotation(1) end },
            { "rotation(c, 1) on a 2D chain", 1, "rotation", function(c) c.rotation(c, 1) end },
            { "set_rotation(c, 1, 1, 0, 0, 0) on a 2D chain", 1, "set_rotation", function(c) c.set_rotation(c, 1, 1, 0, 0, 0) end },
            { "world_rotation(c, 1) on a 2D chain", 1, "world_rotation", function(c) c.world_rotation(c, 1) end },
            { "configure{pole = {0, 1, 0}} on a 2D chain", 1, "configure", function(c) c:configure({ pole = { 0, 1, 0 } }) end },
            { "configure{pole = {0, 1}} on a 2D chain", 1, "configure", function(c) c:configure({ pole = { 0, 1 } }) end },
        }
        for _, cs in ipairs(cases) do
            local c = ik.chain2d({ 1, 2, 0.5 }, 0.5, -1, 0.3)
            h.set_angles(c, { 0.4, -0.7, 1.1 })
            local before = h.snapshot(c)
            local ok, msg = h.argerror(cs[2], cs[3], function() cs[4](c) end)
            assert(ok, cs[1] .. ": " .. msg)
            h.assert_unchanged(before, h.snapshot(c), cs[1])
        end
    end)
end)
