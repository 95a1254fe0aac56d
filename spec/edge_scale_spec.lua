-- Edge scale: chains of 100,000 bones, coordinates and lengths at the limits of the range
-- (1e300, IK_MAX_COORD in src/ik.h) and beyond it, tiny numbers (1e-300, 5e-324, and 1e-160,
-- whose square is subnormal), lengths of 0, and chains too large for memory. The answer is
-- always a sound chain (every position and rotation finite, lengths kept: spec/fuzz.lua's
-- check) or a clean Lua error; never a crash, a hang or a NaN.
--
-- With IK_SPEC_QUICK=1 (make test-valgrind, where everything runs 50 times slower) the long
-- chains have 10,000 bones: the same code paths, a tenth of the work.

local h = require("spec.helpers")
local fuzz = require("spec.random_calls")
local ik = require("ik")

-- Locals: busted gives spec files an environment in which every global lookup is slow.
local unpack = table.unpack or unpack
local abs, max, sqrt, error, finite = math.abs, math.max, math.sqrt, error, h.finite

local SOLVES = { "solve_fabrik", "solve_ccd", "solve_relax" }
local MAX = 1e300
local OUT = { 1e301, -1e301, 1.7976931348623157e308 }

local function assert_sound(c, lengths, what)
    local why = fuzz.sound(c, lengths)
    assert(why == nil, what .. ": " .. tostring(why))
end

-- Every result of a solve is finite; reached is a boolean.
local function assert_result(what, reached, distance, iterations)
    assert(type(reached) == "boolean", what .. ": reached is " .. tostring(reached))
    assert(h.finite(distance) and distance >= 0, what .. ": distance is " .. tostring(distance))
    assert(h.finite(iterations), what .. ": iterations is " .. tostring(iterations))
end

-- The cheap part of the check, for long chains: every position finite, and every bone's
-- joints its length apart (1e-9 relative, and the rounding of the coordinates: 1e-15 of them).
local function assert_positions(c, lengths, what)
    local p, dim = c:positions(), c:dim()
    for k = 1, #p do
        if not finite(p[k]) then error(what .. ": position value " .. k .. " is " .. tostring(p[k])) end
    end
    local delta = {}
    for i = 1, #lengths do
        local m, scale = 0, 0
        for k = 1, dim do
            local a, b = p[(i - 1) * dim + k], p[i * dim + k]
            delta[k] = b - a
            m = max(m, abs(delta[k]))
            scale = max(scale, abs(a), abs(b))
        end
        local d2 = 0
        for k = 1, dim do
            d2 = d2 + (m > 0 and (delta[k] / m) ^ 2 or 0) -- scaled: squares of 1e305 overflow
        end
        local d = m * sqrt(d2)
        if abs(d - lengths[i]) > 1e-9 * lengths[i] + 1e-15 * scale then
            error(("%s: bone %d is %.17g long, not %.17g"):format(what, i, d, lengths[i]))
        end
    end
end

local function filled(n, value)
    local t = {}
    for i = 1, n do
        t[i] = type(value) == "function" and value(i) or value
    end
    return t
end

local N = os.getenv("IK_SPEC_QUICK") == "1" and 10000 or 100000
local N_SHOWN = N == 10000 and "10,000" or "100,000"

describe("chains of " .. N_SHOWN .. " bones", function()
    for _, dim in ipairs({ 2, 3 }) do
        local new = dim == 2 and ik.chain2d or ik.chain3d
        local target = dim == 2 and { 3000, -4000 } or { 3000, -4000, 5000 }

        it(dim .. "D: builds straight along +x (tip at the sum of the lengths), and every solver (3 iterations) leaves it sound", function()
            local lengths = filled(N, function(i) return 0.5 + (i % 7) * 0.25 end)
            local c = new(lengths)
            assert.are.equal(N, #c)
            local sum = 0
            for i = 1, N do sum = sum + lengths[i] end
            local tx = c:effector()
            assert.is_true(h.near(tx, sum, 1e-12), "tip x " .. tx .. ", sum " .. sum)
            assert_positions(c, lengths, "built")
            c:configure({ iterations = 3, tolerance = 0 })
            for _, solve in ipairs(SOLVES) do
                assert_result(solve, c[solve](c, unpack(target)))
                assert_positions(c, lengths, solve)
            end
            assert_sound(c, lengths, "after the solves")
            -- the two-bone solver is for 2 bones: a clean error
            assert.is_false(pcall(c.solve_two_bone, c, target[1], target[2], target[3]))
        end)

        it(dim .. "D: " .. N_SHOWN .. " bones of length 1e300 (tip at 1e" .. (N == 10000 and 304 or 305) .. ") and of length 0 stay finite through every solver", function()
            for _, len in ipairs({ MAX, 0 }) do
                local lengths = filled(N, len)
                local c = new(lengths)
                c:configure({ iterations = 2, tolerance = 0 })
                assert_positions(c, lengths, "built, length " .. len)
                for _, solve in ipairs(SOLVES) do
                    assert_result(solve, c[solve](c, unpack({ -MAX, MAX, -MAX }, 1, dim)))
                    assert_positions(c, lengths, solve .. ", length " .. len)
                end
                assert_sound(c, lengths, "after the solves, length " .. len)
            end
        end)
    end
end)

describe("the range of coordinates and lengths (magnitude <= 1e300)", function()
    it("accepts 1e300 for every coordinate and length: every solver and the two-bone solve give finite answers", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, n in ipairs({ 1, 2, 5 }) do
                local lengths = filled(n, MAX)
                local c = dim == 2 and ik.chain2d(lengths, MAX, -MAX, 1) or ik.chain3d(lengths, MAX, -MAX, MAX)
                for _, solve in ipairs({ "solve_fabrik", "solve_ccd", "solve_relax", "solve_two_bone", "solve" }) do
                    for _, t in ipairs({ { -MAX, MAX, -MAX }, { MAX, -MAX, MAX }, { 0, 0, 0 }, { 1e-300, -1e-300, 5e-324 } }) do
                        if solve ~= "solve_two_bone" or n == 2 then
                            assert_result(solve, c[solve](c, unpack(t, 1, dim)))
                            assert_sound(c, lengths, ("%dD, %d bones, %s(%g, %g, %g)"):format(dim, n, solve, t[1], t[2], t[3]))
                        end
                    end
                end
            end
        end
    end)

    it("rejects a larger coordinate or length as a bad argument ('out of range') and leaves the chain unchanged", function()
        local c2 = ik.chain2d({ 1, 2, 3 }, 1, 2, 0.5)
        local c3 = ik.chain3d({ 1, 2 }, 1, 2, 3)
        local c2b = ik.chain2d({ 1, 1 })
        local cases = {
            -- { k, name, call }: method-call syntax, so the first argument after self is #1
            { 1, "chain2d", function(v) ik.chain2d({ 1, math.abs(v) }) end },
            { 2, "chain2d", function(v) ik.chain2d({ 1 }, v) end },
            { 3, "chain2d", function(v) ik.chain2d({ 1 }, 0, v) end },
            { 1, "chain3d", function(v) ik.chain3d({ math.abs(v) }) end },
            { 4, "chain3d", function(v) ik.chain3d({ 1 }, 0, 0, v) end },
            { 2, "set_length", function(v) c2:set_length(2, math.abs(v)) end },
            { 2, "set_length", function(v) c3:set_length(1, math.abs(v)) end },
            { 1, "set_base", function(v) c2:set_base(v, 0) end },
            { 2, "set_base", function(v) c2:set_base(0, v, 1) end },
            { 3, "set_base", function(v) c3:set_base(0, 0, v) end },
            { 2, "set_base", function(v) c3:set_base(0, v, 0, 1, 0, 0, 0) end },
            { 1, "solve", function(v) c2:solve(v, 0) end },
            { 2, "solve_fabrik", function(v) c2:solve_fabrik(0, v) end },
            { 1, "solve_ccd", function(v) c3:solve_ccd(v, 0, 0) end },
            { 3, "solve_relax", function(v) c3:solve_relax(0, 0, v) end },
            { 2, "solve_two_bone", function(v) c2b:solve_two_bone(0, v) end },
            { 2, "solve_many", function(v) ik.solve_many({ c2, c2b }, { 1, 1, 1, v }) end },
        }
        for _, v in ipairs(OUT) do
            for _, cs in ipairs(cases) do
                local before = { fuzz.snapshot(c2), fuzz.snapshot(c3), fuzz.snapshot(c2b) }
                local msg = h.assert_argerror(cs[1], cs[2], function() cs[3](v) end)
                assert.is_truthy(msg:find("out of range", 1, true), msg)
                local after = { fuzz.snapshot(c2), fuzz.snapshot(c3), fuzz.snapshot(c2b) }
                for k = 1, 3 do
                    local why = fuzz.diff(before[k], after[k])
                    assert(why == nil, cs[2] .. "(" .. v .. ") changed a chain: " .. tostring(why))
                end
            end
        end
    end)

    it("takes any finite number in the stateless two-bone solves (they rescale): finite answers up to 1.8e308", function()
        local BIG = 1.7976931348623157e308
        for _, args in ipairs({ { BIG, BIG, BIG, -BIG }, { BIG, 1, 1, 1 }, { 1e-300, BIG, 5e-324, 1 }, { BIG, BIG, 0, 0 } }) do
            local a1, a2, r = ik.two_bone(args[1], args[2], args[3], args[4])
            assert.is_true(h.finite(a1) and h.finite(a2) and type(r) == "boolean")
            local jx, jy = ik.two_bone_joint(args[3], args[4], args[1], args[2])
            assert.is_true(h.finite(jx) and h.finite(jy))
            local x, y, z = ik.two_bone_joint3(args[3], args[4], args[3], args[1], args[2], BIG, 0, -BIG)
            assert.is_true(h.finite(x) and h.finite(y) and h.finite(z))
        end
    end)
end)

-- The two-bone solves for targets near the root: the vector forms keep |j| = r1 and, when
-- the target is reached, |j - p| = r2 (up to the ring's slack: 1e-6 of the lengths); the
-- angle form puts the tip on the target; both say the same about reached. (Where the pose
-- is nearly folded the angle form's joint is ill-conditioned -- acos near -1 -- so the two
-- forms' joints may differ by far more than their tips do.)
local function check_two_bone_near_root(x, y, r1, r2, bend)
    local what = ("(%g, %g, %.17g, %.17g, %d)"):format(x, y, r1, r2, bend)
    local scale = math.max(r1, r2)
    local jx, jy, reached = ik.two_bone_joint(x, y, r1, r2, bend)
    assert(h.finite(jx) and h.finite(jy), "two_bone_joint" .. what .. " = " .. tostring(jx) .. ", " .. tostring(jy))
    assert(h.near(math.sqrt(jx * jx + jy * jy), r1, 1e-12), "two_bone_joint" .. what .. ": |j| = "
        .. math.sqrt(jx * jx + jy * jy))
    local a1, a2, reached_angle = ik.two_bone(r1, r2, x, y, bend)
    assert(reached == reached_angle, "two_bone_joint" .. what .. ": reached differs from two_bone's")
    local kx, ky, kz = ik.two_bone_joint3(x, y, 0, r1, r2, 0, 0, 1)
    assert(h.near(math.sqrt(kx * kx + ky * ky + kz * kz), r1, 1e-12), "two_bone_joint3" .. what .. ": |j| != r1")
    local m = math.max(r1, r2, math.abs(x), math.abs(y))
    if not reached and (x / m ~= 0 or y / m ~= 0) then
        -- out of reach, the closest pose is straight or folded: the joint is on p's line,
        -- whatever |p| (scaled up first: below 1e-150 the products would underflow). Both
        -- forms divide by the largest input m first: a p that rounds to 0 has no direction.
        local k = math.max(math.abs(x), math.abs(y)) < 1e-150 and 2 ^ 600 or 1
        local px, py = x * k, y * k
        assert(math.abs(jx * py - jy * px) <= 1e-9 * r1 * math.sqrt(px * px + py * py),
            "two_bone_joint" .. what .. ": out of reach, the joint is off the target's line")
    end
    if reached then
        assert(h.near(h.dist(jx, jy, x, y), r2, 1e-6, scale), "two_bone_joint" .. what .. ": |j - p| != r2")
        local tx = r1 * math.cos(a1) + r2 * math.cos(a1 + a2)
        local ty = r1 * math.sin(a1) + r2 * math.sin(a1 + a2)
        assert(h.dist(tx, ty, x, y) <= 1e-6 * scale, "two_bone" .. what .. ": the tip misses")
    end
end

describe("the two-bone vector forms at the inner edge of the ring", function()
    -- Regression: the ring test's slack (1e-12 of the squared lengths) lets a target just
    -- inside |r1 - r2| count as reached, and there the joint's part along the target,
    -- w / (2 |p|), exceeds r1: ik.two_bone_joint(1e-10, 0, 1, 1 + 1e-7) put the joint 1000
    -- from the root. Clamped as the angle form clamps its cosine, it is the closest pose.
    it("keep |joint| = r1, for r2 = r1 +- 1e-7 and targets from 1e-10 to 1e-7 away", function()
        for _, r in ipairs({ { 1, 1 + 1e-7 }, { 1 + 1e-7, 1 }, { 5, 5 + 5e-7 }, { 1, 1 + 1e-9 } }) do
            for _, d in ipairs({ 1e-10, 3e-9, 1e-8, 9e-8 }) do
                for _, bend in ipairs({ 1, -1 }) do
                    check_two_bone_near_root(d, -d, r[1], r[2], bend)
                end
            end
        end
    end)
end)

describe("two_bone_joint3 with a pole nearly along the root->target line", function()
    -- Regression: the pole made perpendicular to the line kept a part along it of about
    -- 1e-16 / (the pole's angle off the line), so |joint| missed r1 by 2e-8 for a pole 1e-10
    -- off it (found by the libFuzzer harness).
    it("keeps |joint| = r1 (1e-12) for poles 1e-6 .. 1e-11 off the line", function()
        for _, off in ipairs({ 1e-6, 1e-9, 1e-10, 3e-11, 1e-11 }) do
            for _, t in ipairs({ { 3e-11, 0, 3e-11 }, { 0.3, 0.4, -0.5 }, { 1, 0, 0 }, { 0, 0.7, 0 } }) do
                for _, r in ipairs({ { 0.425, 0.425 * (1 + 1e-12) }, { 1, 0.6 }, { 0.6, 1 } }) do
                    -- the pole: the target's direction, turned by `off` about a perpendicular
                    local len = math.sqrt(t[1] ^ 2 + t[2] ^ 2 + t[3] ^ 2)
                    local u = { t[1] / len, t[2] / len, t[3] / len }
                    local v = math.abs(u[1]) < 0.9 and { 0, -u[3], u[2] } or { -u[3], 0, u[1] } -- u x e
                    local vl = math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)
                    local pole = {}
                    for k = 1, 3 do pole[k] = (u[k] + off * v[k] / vl) * 1e160 end
                    local x, y, z = ik.two_bone_joint3(t[1], t[2], t[3], r[1], r[2], pole[1], pole[2], pole[3])
                    local got = math.sqrt(x * x + y * y + z * z)
                    assert(h.near(got, r[1], 1e-12), ("pole %g off (%g, %g, %g), r1 %.17g: |joint| = %.17g"):format(off,
                        t[1], t[2], t[3], r[1], got))
                end
            end
        end
    end)
end)

describe("tiny numbers", function()
    it("the two-bone solves stay finite with |joint| = r1 for targets near 1e-160 (their squares are subnormal)", function()
        -- Regression: ik.two_bone_joint(1e-160, 0, 1, 1) returned (nan, -inf): 1 / |p|^2 overflowed.
        for _, d in ipairs({ 1e-150, 1e-155, 1e-158, 1e-160, 1e-162, 1e-200, 1e-300, 5e-324 }) do
            for _, r in ipairs({ { 1, 1 }, { 1, 1 + 1e-9 }, { 2, 1 }, { 1, 2 }, { 1e9, 0.5 } }) do
                for _, bend in ipairs({ 1, -1 }) do
                    check_two_bone_near_root(d, d, r[1], r[2], bend)
                    check_two_bone_near_root(d, 0, r[1], r[2], bend)
                end
            end
        end
    end)

    -- Regression: 2D CCD did not turn a chain smaller than about 1e-160 (the cross and dot
    -- products of its vectors underflowed to 0, and atan2(0, 0) is 0), and a subnormal
    -- vector normalised to a length of up to 1.41.
    it("every solver, 2D and 3D, gives the same pose for the same problem scaled by 2^-1000 .. 2^990 (1e-9)", function()
        local lengths = { 1, 0.75, 1.25, 0.5 }
        local function solved(dim, solve, k)
            local scaled = {}
            for i = 1, #lengths do scaled[i] = lengths[i] * k end
            local c = dim == 2 and ik.chain2d(scaled, 0.5 * k, -0.25 * k, 0.3) or ik.chain3d(scaled, 0.5 * k, -0.25 * k, 0.125 * k)
            if dim == 2 then c:set_angle(2, 0.4) else c:set_rotation(2, 1, 0.2, -0.1, 0.3) end
            c:configure({ tolerance = 0, iterations = 8 })
            c[solve](c, unpack({ 1.5 * k, 1.75 * k, -0.5 * k }, 1, dim))
            local p = c:positions()
            for i = 1, #p do p[i] = p[i] / k end
            return p
        end
        for _, dim in ipairs({ 2, 3 }) do
            for _, solve in ipairs({ "solve_fabrik", "solve_ccd", "solve_relax" }) do
                local want = solved(dim, solve, 1)
                for _, e in ipairs({ -1000, -900, -540, -300, 300, 540, 990 }) do
                    local got = solved(dim, solve, 2 ^ e)
                    for i = 1, #want do
                        assert(h.near(got[i], want[i], 1e-9),
                            ("%dD %s at scale 2^%d: position value %d is %.17g, at scale 1 %.17g"):format(dim, solve, e, i, got[i], want[i]))
                    end
                end
            end
        end
    end)

    it("chains with lengths 0, 5e-324 and 1e-300, at a base of 1e-300, solve to finite poses towards tiny targets and targets on their joints", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, lengths in ipairs({ { 0, 0 }, { 1e-300, 1e-300 }, { 5e-324, 1, 0 }, { 1e-300, 1, 1e-300, 1 } }) do
                local c = dim == 2 and ik.chain2d(lengths, 1e-300, -1e-300, 1e-300) or ik.chain3d(lengths, 1e-300, 0, -5e-324)
                for _, solve in ipairs({ "solve_fabrik", "solve_ccd", "solve_relax", "solve_two_bone" }) do
                    if solve ~= "solve_two_bone" or #lengths == 2 then
                        local targets = { { 1e-300, 1e-300, 1e-300 }, { 0, 0, 0 }, { 5e-324, -5e-324, 5e-324 }, { 1e-160, 1e-160, 0 } }
                        for i = 1, #lengths + 1 do
                            targets[#targets + 1] = { c:joint(i) }
                        end
                        for _, t in ipairs(targets) do
                            assert_result(solve, c[solve](c, unpack({ t[1], t[2], t[3] or 0 }, 1, dim)))
                            assert_sound(c, lengths, ("%dD %s"):format(dim, solve))
                        end
                    end
                end
            end
        end
    end)
end)

describe("relaxation weights", function()
    -- Regression: the fix was divided by the sum of the two weights and multiplied by each,
    -- so weights near 5e-324 overflowed to inf (then NaN) and weights near 1e308 summed to
    -- inf; either way the interior stopped moving and the pose was wrong (but finite).
    it("only their ratio matters: every weight scaled by 5e-324, 2^-1000, 1e300 or 1.7e308 gives the same pose, bit for bit", function()
        for _, dim in ipairs({ 2, 3 }) do
            local function pose(scale)
                local c = dim == 2 and ik.chain2d({ 1, 1, 1, 1 }) or ik.chain3d({ 1, 1, 1, 1 })
                if dim == 2 then
                    c:set_angle(2, 0.3)
                    c:set_angle(3, -0.2)
                else
                    c:set_rotation(2, 1, 0.1, 0.2, 0.3)
                end
                for i = 1, 5 do
                    c:set_weight(i, scale)
                end
                c:configure({ iterations = 20, tolerance = 0 })
                local _, distance = c:solve_relax(unpack({ 1.5, 2.0, 0.5 }, 1, dim))
                -- %.17g tells every two doubles apart, as %a does (Lua 5.1's format has no %a).
                return ("%.17g %s"):format(distance, table.concat(c:positions(), " "))
            end
            local want = pose(1)
            for _, scale in ipairs({ 5e-324, 2 ^ -1000, 1e300, 1.7e308 }) do
                assert.are.equal(want, pose(scale), ("%dD, weights %g"):format(dim, scale))
            end
        end
    end)

    it("uneven weights scaled by powers of two (even into the subnormals) give the same pose, bit for bit", function()
        local function pose(scale)
            local c = ik.chain2d({ 1, 1.5, 1, 0.5, 1 })
            c:set_angle(2, 0.7)
            c:set_angle(4, -0.4)
            local w = { 1, 3, 0.5, 2, 1, 1 }
            for i = 1, 6 do
                c:set_weight(i, w[i] * scale)
            end
            c:configure({ iterations = 10, tolerance = 0 })
            c:solve_relax(-1, 3)
            return table.concat(c:positions(), " ")
        end
        local want = pose(1)
        for _, scale in ipairs({ 2 ^ -1073, 2 ^ -1000, 2 ^ 1000, 2 ^ 1020 }) do
            assert.are.equal(want, pose(scale), "weights scaled by " .. scale)
        end
    end)
end)

describe("a chain too large", function()
    -- In a child process running the plain build of this VM (not the sanitized one: ASan
    -- does not run under a memory limit), so a crash would show as an exit status.
    local vm, cpath = h.interpreter()
    local it = h.posix and it or pending -- sh and ulimit: not under Windows

    local function child(dim, n, limit_kb)
        local limit = limit_kb and ("ulimit -v " .. limit_kb .. "; ") or ""
        local cmd = ("env -u LD_PRELOAD sh -c '%s%s spec/huge_chain.lua \"%s\" %d %d; echo \"exit status $?\"' 2>&1")
            :format(limit, vm, cpath, dim, n)
        local f = assert(io.popen(cmd))
        local out = f:read("*a")
        f:close()
        return out
    end

    it("for the core (2^24 + 1 bones) is a bad argument 'too many bones', before any allocation", function()
        local out = child(2, 2 ^ 24 + 1)
        assert.is_truthy(out:find("error: bad argument #1 to '[^']*' %(too many bones%)"), out)
        assert.is_truthy(out:find("then: ok\nexit status 0\n", 1, true), out)
    end)

    it("for the memory there is (3,000,000 3D bones, 460 MB, under a 300 MB limit) is Lua's 'not enough memory', and the VM goes on", function()
        local out = child(3, 3000000, 300000)
        assert.is_truthy(out:find("error: not enough memory\n", 1, true), out)
        assert.is_truthy(out:find("then: ok\nexit status 0\n", 1, true), out)
    end)
end)
