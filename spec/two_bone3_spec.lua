-- The stateless 3D vector two-bone solve ik.two_bone_joint3(x, y, z, r1, r2, px, py, pz)
-- -> jx, jy, jz, reached: the middle joint j for a root at the origin. |j| == r1 always;
-- reachable: |target - j| == r2, j in the plane of the target and the pole, on the pole's
-- side of the root->target line; unreachable: the closest pose (straight towards the
-- target, or folded back when r2 > r1), reached false; a pole that is zero or along the
-- target uses the fallback: world +y made perpendicular to the target, or +z when the
-- target is along y (src/ik.h). Tolerances are relative to max(r1 + r2, |target|, 1).

local h = require("spec.helpers")
local ik = require("ik")

local abs, sqrt = math.abs, math.sqrt
local TOL = 1e-9

-- Length pairs: equal, unequal both ways, very unequal, then random log-uniform ones.
local function length_pairs()
    local list = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 0.3, 5 }, { 5, 0.3 }, { 1, 1e-3 }, { 1e-3, 1 }, { 100, 30 } }
    local rng = h.rng(5024)
    for _ = 1, 8 do
        list[#list + 1] = { 0.05 * 400 ^ rng.next(), 0.05 * 400 ^ rng.next() }
    end
    return list
end

-- A random target for r1, r2 with its class: "in" (inside the reachable shell, away from
-- its edges by 1e-12 relative), "far" or "near"; nil when rounding would decide.
local function random_target(rng, r1, r2)
    local sum, diff = r1 + r2, abs(r1 - r2)
    local ux, uy, uz = h.random_dir(rng)
    local r = 1.5 * sum * rng.next()
    local x, y, z = r * ux, r * uy, r * uz
    local d = h.len3(x, y, z)
    local margin = 1e-12 * sum
    if d > sum + margin then
        return x, y, z, "far"
    elseif d < diff - margin then
        return x, y, z, "near"
    elseif d >= diff + margin and d <= sum - margin then
        return x, y, z, "in"
    end
end

-- The pole's component perpendicular to the target, normalised; nil when it is too small.
local function pole_perp(x, y, z, px, py, pz, min)
    local ux, uy, uz = h.unit3(x, y, z)
    local k = h.dot3(px, py, pz, ux, uy, uz)
    local qx, qy, qz = px - k * ux, py - k * uy, pz - k * uz
    local l = h.len3(qx, qy, qz)
    if l <= (min or 1e-3) * h.len3(px, py, pz) then
        return nil
    end
    return qx / l, qy / l, qz / l
end

describe("ik.two_bone_joint3", function()
    it("reaches every target inside the shell: |j| == r1, |target - j| == r2, j in the target-pole plane on the pole's side (16 length pairs x 1500 targets, over 5000 inside the shell, random poles, 1e-9 relative)", function()
        local chk = h.checker("two_bone_joint3 reachable")
        local rng = h.rng(5001)
        local inside = 0
        for _, lp in ipairs(length_pairs()) do
            local r1, r2 = lp[1], lp[2]
            for _ = 1, 1500 do
                local x, y, z, class = random_target(rng, r1, r2)
                local px, py, pz = h.random_dir(rng)
                local s = 10 ^ rng.uniform(-3, 3)
                px, py, pz = s * px, s * py, s * pz
                local qx, qy, qz = nil, nil, nil
                if class == "in" then
                    qx, qy, qz = pole_perp(x, y, z, px, py, pz)
                end
                if qx then
                    inside = inside + 1
                    local d = h.len3(x, y, z)
                    local scale = math.max(r1 + r2, d, 1)
                    local jx, jy, jz, reached = ik.two_bone_joint3(x, y, z, r1, r2, px, py, pz)
                    local what = string.format("r=(%.17g, %.17g) p=(%.17g, %.17g, %.17g) pole (%.17g, %.17g, %.17g)", r1, r2, x, y, z, px, py, pz)
                    chk:ok(reached == true, "%s: reached %s", what, tostring(reached))
                    chk:near(h.len3(jx, jy, jz), r1, TOL, scale, "%s: |j| vs r1", what)
                    chk:near(h.dist3(x, y, z, jx, jy, jz), r2, TOL, scale, "%s: |p - j| vs r2", what)
                    -- in the plane: j . (unit target x unit pole-perpendicular) == 0
                    local ux, uy, uz = h.unit3(x, y, z)
                    local nx, ny, nz = h.cross3(ux, uy, uz, qx, qy, qz)
                    chk:near(h.dot3(jx, jy, jz, nx, ny, nz), 0, TOL, scale, "%s: triple product (out of the plane)", what)
                    -- on the pole's side, at the height the triangle gives
                    local cosa = (r1 * r1 + d * d - r2 * r2) / (2 * r1 * d)
                    local height = r1 * sqrt(math.max(0, 1 - cosa * cosa))
                    chk:near(h.dot3(jx, jy, jz, qx, qy, qz), height, TOL, scale, "%s: height on the pole's side", what)
                    chk:ok(h.dot3(jx, jy, jz, qx, qy, qz) >= 0, "%s: j on the far side of the pole", what)
                end
            end
        end
        assert.is_true(inside > 5000, "too few reachable targets: " .. inside)
        chk:done()
    end)

    it("gives the closest pose for unreachable targets: reached false, |j| == r1, j along the target (away from it when too near and r2 > r1), tip distance == distance to the shell (1e-9 relative)", function()
        local chk = h.checker("two_bone_joint3 unreachable")
        local rng = h.rng(5002)
        local far, near = 0, 0
        for _, lp in ipairs(length_pairs()) do
            local r1, r2 = lp[1], lp[2]
            for _ = 1, 1000 do
                local x, y, z, class = random_target(rng, r1, r2)
                if class == "far" or class == "near" then
                    if class == "far" then far = far + 1 else near = near + 1 end
                    local px, py, pz = h.random_dir(rng)
                    local d = h.len3(x, y, z)
                    local scale = math.max(r1 + r2, d, 1)
                    local jx, jy, jz, reached = ik.two_bone_joint3(x, y, z, r1, r2, px, py, pz)
                    local what = string.format("r=(%.17g, %.17g) p=(%.17g, %.17g, %.17g) %s pole (%.17g, %.17g, %.17g)", r1, r2, x, y, z, class, px, py, pz)
                    chk:ok(reached == false, "%s: reached %s", what, tostring(reached))
                    chk:near(h.len3(jx, jy, jz), r1, TOL, scale, "%s: |j| vs r1", what)
                    local ux, uy, uz = h.unit3(x, y, z)
                    local sign = (class == "near" and r2 > r1) and -1 or 1
                    chk:near(jx, sign * r1 * ux, TOL, scale, "%s: j x (sign %d)", what, sign)
                    chk:near(jy, sign * r1 * uy, TOL, scale, "%s: j y (sign %d)", what, sign)
                    chk:near(jz, sign * r1 * uz, TOL, scale, "%s: j z (sign %d)", what, sign)
                    -- the tip of the closest pose: j + r2 towards the target
                    local tx, ty, tz = h.unit3(x - jx, y - jy, z - jz)
                    tx, ty, tz = jx + r2 * tx, jy + r2 * ty, jz + r2 * tz
                    local shell = class == "far" and d - (r1 + r2) or abs(r1 - r2) - d
                    chk:near(h.dist3(tx, ty, tz, x, y, z), shell, TOL, scale, "%s: tip distance vs the shell", what)
                end
            end
        end
        assert.is_true(far > 1000 and near > 100, string.format("too few unreachable targets: %d far, %d near", far, near))
        chk:done()
    end)

    it("agrees with the 2D vector form in the xy plane: pole = the target's left normal is bend -1, the right normal bend 1 (z == 0 and x, y within 1e-9, same reached; 16 length pairs x 500 targets)", function()
        local chk = h.checker("two_bone_joint3 vs two_bone_joint")
        local rng = h.rng(5003)
        for _, lp in ipairs(length_pairs()) do
            local r1, r2 = lp[1], lp[2]
            for _ = 1, 500 do
                local a, r = rng.angle(), 1.5 * (r1 + r2) * rng.next()
                local x, y = r * math.cos(a), r * math.sin(a)
                local scale = math.max(r1 + r2, r, 1)
                for _, bend in ipairs({ 1, -1 }) do
                    -- bend 1 (a2 >= 0) puts the joint to the right of the root->target line
                    local px, py = bend * y, -bend * x
                    local jx, jy, jz, reached = ik.two_bone_joint3(x, y, 0, r1, r2, px, py, 0)
                    local kx, ky, kreached = ik.two_bone_joint(x, y, r1, r2, bend)
                    local what = string.format("r=(%.17g, %.17g) p=(%.17g, %.17g, 0) bend %d", r1, r2, x, y, bend)
                    chk:ok(reached == kreached, "%s: reached %s, 2D %s", what, tostring(reached), tostring(kreached))
                    chk:near(jx, kx, TOL, scale, "%s: j x vs 2D", what)
                    chk:near(jy, ky, TOL, scale, "%s: j y vs 2D", what)
                    chk:near(jz, 0, TOL, scale, "%s: j z", what)
                end
            end
        end
        chk:done()
    end)

    it("turns with the problem: two_bone_joint3(q t, q p) == q two_bone_joint3(t, p) for random rotations q (2000 cases, 1e-9 relative)", function()
        local chk = h.checker("two_bone_joint3 rotation")
        local rng = h.rng(5004)
        for t = 1, 2000 do
            local r1, r2 = rng.uniform(0.1, 3), rng.uniform(0.1, 3)
            local ux, uy, uz = h.random_dir(rng)
            local r = 1.5 * (r1 + r2) * rng.next()
            local x, y, z = r * ux, r * uy, r * uz
            local px, py, pz = h.random_dir(rng)
            if pole_perp(x, y, z, px, py, pz, 1e-2) then
                local qw, qx, qy, qz = h.random_quat(rng)
                local jx, jy, jz, reached = ik.two_bone_joint3(x, y, z, r1, r2, px, py, pz)
                local rx, ry, rz = h.qrotate(qw, qx, qy, qz, x, y, z)
                local sx, sy, sz = h.qrotate(qw, qx, qy, qz, px, py, pz)
                local kx, ky, kz, kreached = ik.two_bone_joint3(rx, ry, rz, r1, r2, sx, sy, sz)
                local wx, wy, wz = h.qrotate(qw, qx, qy, qz, jx, jy, jz)
                local scale = math.max(r1 + r2, r, 1)
                local what = string.format("case %d r=(%.17g, %.17g) p=(%.17g, %.17g, %.17g) pole (%.17g, %.17g, %.17g)", t, r1, r2, x, y, z, px, py, pz)
                -- reached may differ only for targets within rounding of the shell's edges
                local d = h.len3(x, y, z)
                local edge = abs(d - (r1 + r2)) <= 1e-12 * scale or abs(d - abs(r1 - r2)) <= 1e-12 * scale
                chk:ok(edge or reached == kreached, "%s: reached %s, rotated %s", what, tostring(reached), tostring(kreached))
                chk:near(kx, wx, TOL, scale, "%s: x", what)
                chk:near(ky, wy, TOL, scale, "%s: y", what)
                chk:near(kz, wz, TOL, scale, "%s: z", what)
            end
        end
        chk:done()
    end)

    it("depends only on the pole's direction perpendicular to the target: scaling the pole by 1e-6 .. 1e6 or adding a multiple of the target changes nothing (1e-12 relative)", function()
        local rng = h.rng(5005)
        for t = 1, 500 do
            local r1, r2 = rng.uniform(0.1, 3), rng.uniform(0.1, 3)
            local ux, uy, uz = h.random_dir(rng)
            local r = (r1 + r2) * rng.next()
            local x, y, z = r * ux, r * uy, r * uz
            local px, py, pz = h.random_dir(rng)
            if pole_perp(x, y, z, px, py, pz, 0.1) then
                local want = { ik.two_bone_joint3(x, y, z, r1, r2, px, py, pz) }
                local s = 10 ^ rng.uniform(-6, 6)
                local k = rng.uniform(-3, 3)
                for _, p in ipairs({ { s * px, s * py, s * pz }, { px + k * x, py + k * y, pz + k * z } }) do
                    local got = { ik.two_bone_joint3(x, y, z, r1, r2, p[1], p[2], p[3]) }
                    local what = string.format("case %d pole (%.17g, %.17g, %.17g) vs (%.17g, %.17g, %.17g)", t, p[1], p[2], p[3], px, py, pz)
                    assert.are.equal(want[4], got[4], what .. ": reached")
                    for c = 1, 3 do
                        assert.is_true(h.near(got[c], want[c], 1e-12, math.max(1, r1 + r2)), string.format("%s: coordinate %d %.17g vs %.17g", what, c, got[c], want[c]))
                    end
                end
            end
        end
    end)

    it("reaches targets exactly at full extension and at |r1 - r2| (|j| == r1, |p - j| == r2 within 1e-12 relative)", function()
        local cases = {
            { 1, 2, 3, 0, 0 }, { 1, 2, 0, 0, -3 }, { 2, 3, 0, 3, 4 }, { 1, 2, 0, -1, 0 }, { 2, 1, 0, 0, 1 },
            { 3, 8, 3, 0, 4 }, { 1, 1, 0, 2, 0 }, { 0.5, 0.25, 0, 0, 0.75 },
        }
        for _, cs in ipairs(cases) do
            local r1, r2, x, y, z = cs[1], cs[2], cs[3], cs[4], cs[5]
            for _, pole in ipairs({ { 0, 1, 0 }, { 1, 1, 1 }, { 0, 0, 0 } }) do
                local jx, jy, jz, reached = ik.two_bone_joint3(x, y, z, r1, r2, pole[1], pole[2], pole[3])
                local what = string.format("r=(%g, %g) p=(%g, %g, %g) pole (%g, %g, %g)", r1, r2, x, y, z, pole[1], pole[2], pole[3])
                assert.is_true(reached, what .. ": not reached")
                assert.is_true(h.near(h.len3(jx, jy, jz), r1, 1e-12, r1 + r2), what .. ": |j| ~= r1")
                assert.is_true(h.near(h.dist3(x, y, z, jx, jy, jz), r2, 1e-12, r1 + r2), what .. ": |p - j| ~= r2")
            end
        end
    end)
end)

describe("ik.two_bone_joint3 fallback plane (pole zero or along the target)", function()
    -- r1 = r2 = 1, |target| = d: the joint is at d/2 along the target and sqrt(1 - d^2/4)
    -- along the fallback direction.
    local function want_joint(x, y, z, fx, fy, fz)
        local d = h.len3(x, y, z)
        local ux, uy, uz = h.unit3(x, y, z)
        local hgt = sqrt(1 - d * d / 4)
        return d / 2 * ux + hgt * fx, d / 2 * uy + hgt * fy, d / 2 * uz + hgt * fz
    end

    local Y_PERP = function(x, y, z)
        -- world +y made perpendicular to the target
        local ux, uy, uz = h.unit3(x, y, z)
        return h.unit3(-uy * ux, 1 - uy * uy, -uy * uz)
    end

    local CASES = {
        -- target, the fallback direction (nil: +y made perpendicular)
        { { 1, 0, 0 }, { 0, 1, 0 } },
        { { -1.5, 0, 0 }, { 0, 1, 0 } },
        { { 0, 0, 1 }, { 0, 1, 0 } },
        { { 0, 1.5, 0 }, { 0, 0, 1 } },
        { { 0, -1, 0 }, { 0, 0, 1 } },
        { { 0, 0.5, 0 }, { 0, 0, 1 } },
        { { 1, 1, 0 }, nil },
        { { 1, 0.5, -1 }, nil },
        { { -0.3, 1.2, 0.4 }, nil },
        { { 0.2, -0.9, -0.7 }, nil },
    }

    for _, cs in ipairs(CASES) do
        local t = cs[1]
        local fx, fy, fz
        if cs[2] then
            fx, fy, fz = cs[2][1], cs[2][2], cs[2][3]
        else
            fx, fy, fz = Y_PERP(t[1], t[2], t[3])
        end
        it(string.format("target (%g, %g, %g), r1 = r2 = 1: a zero pole, a pole along the target and one against it bend towards (%.4g, %.4g, %.4g) (1e-12)",
            t[1], t[2], t[3], fx, fy, fz), function()
            local wx, wy, wz = want_joint(t[1], t[2], t[3], fx, fy, fz)
            local poles = { { 0, 0, 0 }, { t[1], t[2], t[3] }, { -2 * t[1], -2 * t[2], -2 * t[3] }, { 1e-3 * t[1], 1e-3 * t[2], 1e-3 * t[3] } }
            for _, p in ipairs(poles) do
                local jx, jy, jz, reached = ik.two_bone_joint3(t[1], t[2], t[3], 1, 1, p[1], p[2], p[3])
                local what = string.format("pole (%g, %g, %g)", p[1], p[2], p[3])
                assert.is_true(h.finite(jx) and h.finite(jy) and h.finite(jz), what .. ": not finite")
                assert.is_true(reached, what .. ": not reached")
                assert.is_true(h.dist3(jx, jy, jz, wx, wy, wz) <= 1e-12,
                    string.format("%s: j = (%.17g, %.17g, %.17g), want (%.17g, %.17g, %.17g)", what, jx, jy, jz, wx, wy, wz))
            end
        end)
    end
end)

describe("ik.two_bone_joint3 degenerate input", function()
    it("handles zero-length bones: finite, |j| == r1 (1e-12), reached only on the sphere |p| == r1 + r2", function()
        local rng = h.rng(5006)
        for _, lp in ipairs({ { 0, 1 }, { 1, 0 }, { 0, 2.5 }, { 3, 0 } }) do
            local r1, r2 = lp[1], lp[2]
            for _ = 1, 200 do
                local ux, uy, uz = h.random_dir(rng)
                local d = (r1 + r2) * (rng.next() < 0.5 and rng.uniform(0, 0.99) or rng.uniform(1.01, 3))
                local px, py, pz = h.random_dir(rng)
                local jx, jy, jz, reached = ik.two_bone_joint3(d * ux, d * uy, d * uz, r1, r2, px, py, pz)
                local what = string.format("r=(%g, %g) p=(%.17g, %.17g, %.17g)", r1, r2, d * ux, d * uy, d * uz)
                assert.is_true(h.finite(jx) and h.finite(jy) and h.finite(jz), what .. ": not finite")
                assert.are.equal(false, reached, what)
                assert.is_true(h.near(h.len3(jx, jy, jz), r1, 1e-12, 8), what .. ": |j| ~= r1")
            end
            local jx, jy, jz, reached = ik.two_bone_joint3(r1 + r2, 0, 0, r1, r2, 0, 1, 0)
            assert.is_true(reached, string.format("r=(%g, %g) on the sphere: not reached", r1, r2))
            assert.is_true(h.near(h.len3(jx, jy, jz), r1, 1e-12, 8))
        end
    end)

    it("handles both bones of length 0: j at the origin, reached only for the origin, finite", function()
        for _, p in ipairs({ { 0, 0, 0 }, { 1, 0, 0 }, { -2, 3, 1 }, { 0, 0, -1e-3 } }) do
            local jx, jy, jz, reached = ik.two_bone_joint3(p[1], p[2], p[3], 0, 0, 0, 1, 0)
            assert.are.same({ 0, 0, 0 }, { jx, jy, jz })
            assert.are.equal(p[1] == 0 and p[2] == 0 and p[3] == 0, reached)
        end
    end)

    it("handles a target at the origin with any pole (zero too): finite, |j| == r1 (1e-12), reached iff r1 == r2", function()
        for _, lp in ipairs({ { 1, 1 }, { 1, 2 }, { 2, 1 }, { 0, 1 }, { 1, 0 } }) do
            for _, p in ipairs({ { 0, 1, 0 }, { 0, 0, 0 }, { 1, 2, 3 } }) do
                local r1, r2 = lp[1], lp[2]
                local jx, jy, jz, reached = ik.two_bone_joint3(0, 0, 0, r1, r2, p[1], p[2], p[3])
                local what = string.format("r=(%g, %g) pole (%g, %g, %g)", r1, r2, p[1], p[2], p[3])
                assert.is_true(h.finite(jx) and h.finite(jy) and h.finite(jz), what .. ": not finite")
                assert.are.equal(r1 == r2, reached, what)
                assert.is_true(h.near(h.len3(jx, jy, jz), r1, 1e-12, r1 + r2), what .. ": |j| ~= r1")
            end
        end
    end)

    it("stays finite and keeps |j| == r1 at extreme scales (targets and lengths 1e-150 .. 1e150; 1e-9 relative)", function()
        for _, s in ipairs({ 1e-150, 1e-100, 1e100, 1e150 }) do
            local jx, jy, jz, reached = ik.two_bone_joint3(1.5 * s, 0.5 * s, -0.2 * s, s, s, 0, s, 0)
            local what = "scale " .. s
            assert.is_true(h.finite(jx) and h.finite(jy) and h.finite(jz), what .. ": not finite")
            assert.is_true(reached, what .. ": not reached")
            assert.is_true(h.near(h.len3(jx / s, jy / s, jz / s), 1, 1e-9), what .. ": |j| ~= r1")
            assert.is_true(h.near(h.dist3(1.5, 0.5, -0.2, jx / s, jy / s, jz / s), 1, 1e-9), what .. ": |p - j| ~= r2")
            assert.is_true(jy > 0, what .. ": not on the pole's side")
        end
    end)
end)

describe("misuse of ik.two_bone_joint3", function()
    local BAD = { { "NaN", 0 / 0 }, { "inf", math.huge }, { "-inf", -math.huge }, { "a string", "abc" }, { "a table", {} }, { "a boolean", true } }
    local GOOD = { 0.5, 1.5, 0.2, 1, 2, 0, 1, 0 }

    local function call(a)
        return function()
            ik.two_bone_joint3(a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8])
        end
    end

    local function replaced(k, v)
        local a = {}
        for i = 1, 8 do a[i] = GOOD[i] end
        a[k] = v
        return a
    end

    it("rejects NaN, inf, strings, tables and booleans in any of the 8 arguments as bad argument #k to 'two_bone_joint3'", function()
        for k = 1, 8 do
            for _, bad in ipairs(BAD) do
                local ok, msg = h.argerror(k, "two_bone_joint3", call(replaced(k, bad[2])))
                assert(ok, string.format("argument #%d %s: %s", k, bad[1], msg))
            end
        end
    end)

    it("rejects nil in the target and the lengths (#1..#5), e.g. a missing z", function()
        for k = 1, 5 do
            local ok, msg = h.argerror(k, "two_bone_joint3", call(replaced(k, nil)))
            assert(ok, string.format("argument #%d nil: %s", k, msg))
        end
        h.assert_argerror(3, "two_bone_joint3", function() ik.two_bone_joint3(1, 1) end)
    end)

    it("rejects negative lengths (#4, #5)", function()
        h.assert_argerror(4, "two_bone_joint3", function() ik.two_bone_joint3(0.5, 1.5, 0, -1, 2, 0, 1, 0) end)
        h.assert_argerror(5, "two_bone_joint3", function() ik.two_bone_joint3(0.5, 1.5, 0, 1, -1e-300, 0, 1, 0) end)
    end)
end)
