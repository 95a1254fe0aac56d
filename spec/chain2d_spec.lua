-- 2D chains: construction, forward kinematics, getters and setters, settings, and every
-- misuse path of every method (the error names the argument and the chain is unchanged).

local h = require("spec.helpers")
local ik = require("ik")

local cos, sin, pi = math.cos, math.sin, math.pi

-- Joint i of chain c equals (x, y) within tol * scale.
local function assert_joint(c, i, x, y, tol, scale)
    local jx, jy = c:joint(i)
    assert.is_true(h.near(jx, x, tol or 1e-12, scale) and h.near(jy, y, tol or 1e-12, scale),
        string.format("joint %d: got (%.17g, %.17g), want (%.17g, %.17g)", i, jx, jy, x, y))
end

describe("the module", function()
    it("has ik._VERSION == \"ik \" .. IK_VERSION of src/ik.h, as lua/ik/init.lua's VERSION is", function()
        local f = assert(io.open("src/ik.h", "r"))
        local text = f:read("*a")
        f:close()
        local version = assert(text:match('#define%s+IK_VERSION%s+"([^"]+)"'), "IK_VERSION not found")
        assert.are.equal("ik " .. version, ik._VERSION)
        -- the release init.lua takes ik.core for (another is not used: wrong_build_spec.lua)
        f = assert(io.open("lua/ik/init.lua", "r"))
        text = f:read("*a")
        f:close()
        assert.are.equal("ik " .. version, text:match('\nlocal VERSION = "([^"]+)"\n'))
    end)

    it("says which backend serves it: ik.backend \"c\" (\"lua\" under IK_BACKEND=lua), no fallback; ik.pure's \"lua\"", function()
        assert.are.equal(os.getenv("IK_BACKEND") == "lua" and "lua" or "c", ik.backend)
        assert.is_nil(ik.fallback_reason)
        local pure = require("ik.pure")
        assert.are.equal("lua", pure.backend)
        assert.are.equal(ik._VERSION, pure._VERSION)
    end)
end)

describe("ik.chain2d construction", function()
    it("has n bones: #c, c:count() and c:dim() == 2", function()
        for n = 1, 7 do
            local lengths = {}
            for i = 1, n do lengths[i] = i end
            local c = ik.chain2d(lengths)
            assert.are.equal(n, #c)
            assert.are.equal(n, c:count())
            assert.are.equal(2, c:dim())
        end
    end)

    it("starts straight along +x at the origin: joint i = (sum of the lengths before i, 0) exactly", function()
        local c = ik.chain2d({ 1, 2, 0.5, 0, 3 })
        local sums = { 0, 1, 3, 3.5, 3.5, 6.5 }
        for i = 1, 6 do
            local x, y = c:joint(i)
            assert.are.equal(sums[i], x)
            assert.are.equal(0, y)
        end
        local ex, ey = c:effector()
        assert.are.equal(6.5, ex)
        assert.are.equal(0, ey)
    end)

    it("starts with every local angle 0, every weight 1 and the base at (0, 0, 0)", function()
        local c = ik.chain2d({ 1, 1, 1 })
        for i = 1, 3 do
            assert.are.equal(0, c:angle(i))
            assert.are.equal(0, c:world_angle(i))
        end
        for i = 1, 4 do
            assert.are.equal(1, c:weight(i))
        end
        assert.are.same({ 0, 0, 0 }, { c:base() })
    end)

    it("places and rotates the base: ik.chain2d({1, 2, 3}, 5, -2, pi/2) points along +y from (5, -2) (1e-12)", function()
        local c = ik.chain2d({ 1, 2, 3 }, 5, -2, pi / 2)
        local bx, by, ba = c:base()
        assert.are.equal(5, bx)
        assert.are.equal(-2, by)
        assert.is_true(h.near(ba, pi / 2, 1e-15))
        assert_joint(c, 1, 5, -2)
        assert_joint(c, 2, 5, -1)
        assert_joint(c, 3, 5, 1)
        assert_joint(c, 4, 5, 4)
        local ex, ey = c:effector()
        assert.is_true(h.near(ex, 5, 1e-12) and h.near(ey, 4, 1e-12))
    end)

    it("takes an optional base angle: ik.chain2d(lengths, x, y) has base angle 0", function()
        local c = ik.chain2d({ 2 }, 1, 2)
        assert.are.same({ 1, 2, 0 }, { c:base() })
        assert_joint(c, 2, 3, 2)
    end)

    it("accepts zero-length bones", function()
        local c = ik.chain2d({ 0, 0, 0 })
        assert.are.equal(3, #c)
        for i = 1, 4 do assert_joint(c, i, 0, 0) end
    end)

    it("copies the lengths: changing the table afterwards changes nothing", function()
        local lengths = { 1, 2 }
        local c = ik.chain2d(lengths)
        lengths[1] = 10
        assert.are.equal(1, c:length(1))
    end)

    it("accepts whole-number floats as indices (2.0 is 2)", function()
        local c = ik.chain2d({ 1, 2, 3 })
        assert.are.same({ c:joint(2) }, { c:joint(2.0) })
        c:set_angle(2.0, 0.5)
        assert.are.equal(0.5, c:angle(2))
    end)
end)

describe("chain2d pose", function()
    it("computes forward kinematics: lengths {1, 2}, angles {pi/2, -pi/2} -> joints (0,0), (0,1), (2,1) (1e-12)", function()
        local c = ik.chain2d({ 1, 2 })
        c:set_angle(1, pi / 2)
        c:set_angle(2, -pi / 2)
        assert_joint(c, 1, 0, 0)
        assert_joint(c, 2, 0, 1)
        assert_joint(c, 3, 2, 1)
        local ex, ey = c:effector()
        assert.is_true(h.near(ex, 2, 1e-12) and h.near(ey, 1, 1e-12))
    end)

    it("computes forward kinematics: lengths {1, 1, 1}, angles {pi/2, pi/2, pi/2} from base (1, 1, pi) -> (1,1), (1,0), (2,0), (2,1) (1e-12)", function()
        -- world angles 3pi/2, 2pi, 5pi/2: down, right, up
        local c = ik.chain2d({ 1, 1, 1 }, 1, 1, pi)
        for i = 1, 3 do c:set_angle(i, pi / 2) end
        assert_joint(c, 1, 1, 1)
        assert_joint(c, 2, 1, 0)
        assert_joint(c, 3, 2, 0)
        assert_joint(c, 4, 2, 1)
    end)

    it("matches forward kinematics recomputed in Lua for 500 random chains, poses and bases (1e-12 relative)", function()
        local chk = h.checker("chain2d FK")
        local rng = h.rng(10)
        for _ = 1, 500 do
            local n = rng.int(1, 9)
            local lengths = {}
            for i = 1, n do lengths[i] = rng.uniform(0, 3) end
            local bx, by, ba = rng.uniform(-10, 10), rng.uniform(-10, 10), rng.angle()
            local c = ik.chain2d(lengths, bx, by, ba)
            local angles = h.random_pose(rng, c)
            local want = h.fk(lengths, angles, bx, by, ba)
            local got = c:positions()
            chk:ok(#got == 2 * (n + 1), "n=%d: #positions() = %d", n, #got)
            for k = 1, 2 * (n + 1) do
                chk:near(got[k], want[k], 1e-12, 40, "n=%d positions[%d]", n, k)
            end
            for i = 1, n + 1 do
                local x, y = c:joint(i)
                chk:ok(x == got[2 * i - 1] and y == got[2 * i], "n=%d joint(%d) differs from positions()", n, i)
            end
            local ex, ey = c:effector()
            chk:ok(ex == got[2 * n + 1] and ey == got[2 * n + 2], "n=%d effector() differs from the last joint", n)
            local wa = ba
            for i = 1, n do
                wa = wa + angles[i]
                chk:ok(h.angle_diff(c:world_angle(i), wa) <= 1e-12, "n=%d world_angle(%d)", n, i)
                local w = c:world_angle(i)
                chk:ok(w >= -pi and w <= pi, "n=%d world_angle(%d) = %.17g not in [-pi, pi]", n, i, w)
            end
        end
        chk:done()
    end)

    it("reads angles back wrapped to [-pi, pi]: 3pi/2 -> -pi/2, -3pi/2 -> pi/2, 7 -> 7 - 2pi (1e-12)", function()
        local c = ik.chain2d({ 1, 1 })
        local cases = { { 3 * pi / 2, -pi / 2 }, { -3 * pi / 2, pi / 2 }, { 7, 7 - 2 * pi }, { 0.5, 0.5 }, { -0.5, -0.5 } }
        for _, cs in ipairs(cases) do
            c:set_angle(1, cs[1])
            assert.is_true(h.near(c:angle(1), cs[2], 1e-12), string.format("set %.17g read %.17g", cs[1], c:angle(1)))
        end
        local rng = h.rng(11)
        for _ = 1, 500 do
            local a = rng.uniform(-1000, 1000)
            c:set_angle(2, a)
            local got = c:angle(2)
            assert.is_true(got >= -pi and got <= pi, string.format("set %.17g read %.17g", a, got))
            assert.is_true(h.angle_diff(got, a) <= 1e-9, string.format("set %.17g read %.17g", a, got))
        end
    end)

    it("has world_angle(i) = base angle + angle(1) + ... + angle(i), wrapped: base 0.3, angles {1, 2, 3} -> 1.3, 3.3 - 2pi, 6.3 - 2pi (1e-12)", function()
        local c = ik.chain2d({ 1, 1, 1 }, 0, 0, 0.3)
        c:set_angle(1, 1)
        c:set_angle(2, 2)
        c:set_angle(3, 3)
        assert.is_true(h.near(c:world_angle(1), 1.3, 1e-12))
        assert.is_true(h.near(c:world_angle(2), 3.3 - 2 * pi, 1e-12))
        assert.is_true(h.near(c:world_angle(3), 6.3 - 2 * pi, 1e-12))
    end)

    it("fills positions(out) in place: returns out, flat x, y pairs of the n+1 joints, #out exact even when out was longer", function()
        local c = ik.chain2d({ 1, 2 }, 1, 1)
        local out = {}
        for k = 1, 50 do out[k] = -1 end
        local ret = c:positions(out)
        assert.are.equal(out, ret)
        assert.are.equal(6, #out)
        assert.is_nil(out[7])
        assert.are.same({ 1, 1, 2, 1, 4, 1 }, out)
        local fresh = c:positions()
        assert.are.same(out, fresh)
        assert.are_not.equal(out, fresh)
        -- shorter table: grown to the full length
        local short = { 9 }
        c:positions(short)
        assert.are.same({ 1, 1, 2, 1, 4, 1 }, short)
    end)

    it("sets and reads lengths; set_length moves the joints after the bone", function()
        local c = ik.chain2d({ 1, 2, 3 })
        assert.are.same({ 1, 2, 3 }, h.lengths(c))
        c:set_length(2, 5)
        assert.are.equal(5, c:length(2))
        assert_joint(c, 3, 6, 0)
        assert_joint(c, 4, 9, 0)
        c:set_length(1, 0)
        assert.are.equal(0, c:length(1))
        assert_joint(c, 2, 0, 0)
        assert_joint(c, 4, 8, 0)
    end)

    it("sets the base; set_base(x, y) keeps the angle, set_base(x, y, a) reads the angle back wrapped (1e-12)", function()
        local c = ik.chain2d({ 1, 1 }, 0, 0, 0.25)
        c:set_base(3, 4)
        local bx, by, ba = c:base()
        assert.are.same({ 3, 4, 0.25 }, { bx, by, ba })
        assert_joint(c, 1, 3, 4)
        assert_joint(c, 3, 3 + 2 * cos(0.25), 4 + 2 * sin(0.25))
        c:set_base(-1, 2, pi / 2)
        bx, by, ba = c:base()
        assert.are.equal(-1, bx)
        assert.are.equal(2, by)
        assert.is_true(h.near(ba, pi / 2, 1e-15))
        assert_joint(c, 3, -1, 4)
        c:set_base(0, 0, 3 * pi / 2)
        bx, by, ba = c:base()
        assert.is_true(h.near(ba, -pi / 2, 1e-12), string.format("base angle %.17g", ba))
        assert_joint(c, 3, 0, -2)
    end)

    it("sets and reads weights of joints 1..n+1 (default 1; 0 allowed)", function()
        local c = ik.chain2d({ 1, 1, 1 })
        for i = 1, 4 do
            assert.are.equal(1, c:weight(i))
        end
        c:set_weight(1, 0)
        c:set_weight(2, 0.5)
        c:set_weight(4, 3)
        assert.are.same({ 0, 0.5, 1, 3 }, { c:weight(1), c:weight(2), c:weight(3), c:weight(4) })
    end)

    it("does not move the pose when weights change", function()
        local c = ik.chain2d({ 1, 1, 1 })
        h.set_angles(c, { 0.1, 0.2, 0.3 })
        local before = c:positions()
        c:set_weight(2, 0.25)
        assert.are.same(before, c:positions())
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
        solver = "fabrik", -- ik_default_settings: IK_SOLVER_FABRIK, documented in ik.h
        iterations = value("ITERATIONS"),
        tolerance = value("TOLERANCE"),
        greed = value("GREED"),
        greed_ramp = value("GREED_RAMP") ~= 0,
        bend = value("BEND"),
        escape = value("ESCAPE") ~= 0,
        mix = value("MIX"),
        softness = value("SOFTNESS"),
        stretch = value("STRETCH") ~= 0,
        angle_tolerance = value("ANGLE_TOLERANCE"),
        effector_weight = value("EFFECTOR_WEIGHT"),
        max_turn = math.huge, -- IK_DEFAULT_MAX_TURN: INFINITY, no limit (ik.h)
        stiffness = 0, -- ik_default_settings: no pull back to the rest pose (ik.h)
        damping = value("DAMPING"),
        gravity = { 0, 0 }, -- no gravity (ik.h); 3 numbers on a 3D chain
    }
end

describe("chain2d settings", function()
    local D = header_defaults()

    it("has the defaults of ik.h's IK_DEFAULT_* (solver fabrik, iterations " .. D.iterations .. ", tolerance " .. D.tolerance
        .. ", greed " .. D.greed .. ", greed_ramp " .. tostring(D.greed_ramp) .. ", bend " .. D.bend .. ")", function()
        local s = ik.chain2d({ 1, 1 }):settings()
        assert.are.equal(D.solver, s.solver)
        assert.are.equal(D.iterations, s.iterations)
        assert.are.equal(D.tolerance, s.tolerance)
        assert.are.equal(D.greed, s.greed)
        assert.are.equal(D.greed_ramp, s.greed_ramp)
        assert.are.equal(D.bend, s.bend)
        assert.are.same(D, s)
    end)

    it("configure returns the chain and changes only the keys given", function()
        local c = ik.chain2d({ 1, 1 })
        assert.are.equal(c, c:configure({ iterations = 7 }))
        local want = { solver = D.solver, iterations = 7, tolerance = D.tolerance, greed = D.greed, greed_ramp = D.greed_ramp, bend = D.bend,
            escape = D.escape, mix = D.mix, softness = D.softness, stretch = D.stretch,
            angle_tolerance = D.angle_tolerance, effector_weight = D.effector_weight, max_turn = D.max_turn,
            stiffness = D.stiffness, damping = D.damping, gravity = D.gravity }
        assert.are.same(want, c:settings())
        assert.are.equal(c, c:configure({ solver = "ccd", tolerance = 0.01, greed = 0.25, greed_ramp = not D.greed_ramp, bend = -1 }))
        want = { solver = "ccd", iterations = 7, tolerance = 0.01, greed = 0.25, greed_ramp = not D.greed_ramp, bend = -1,
            escape = D.escape, mix = D.mix, softness = D.softness, stretch = D.stretch,
            angle_tolerance = D.angle_tolerance, effector_weight = D.effector_weight, max_turn = D.max_turn,
            stiffness = D.stiffness, damping = D.damping, gravity = D.gravity }
        assert.are.same(want, c:settings())
        assert.are.equal(c, c:configure({}))
        assert.are.same(want, c:settings())
    end)

    it("accepts every solver name, the edges of every range (iterations 1, tolerance 0, greed 1), and two_bone on a 2-bone chain", function()
        local c = ik.chain2d({ 1, 1 })
        for _, name in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
            c:configure({ solver = name })
            assert.are.equal(name, c:settings().solver)
        end
        c:configure({ iterations = 1, tolerance = 0, greed = 1 })
        local s = c:settings()
        assert.are.same({ 1, 0, 1 }, { s.iterations, s.tolerance, s.greed })
        c:configure({ greed = 1e-9, iterations = 1000000 })
        assert.are.equal(1e-9, c:settings().greed)
    end)

    it("keeps settings per chain", function()
        local a, b = ik.chain2d({ 1 }), ik.chain2d({ 1 })
        a:configure({ iterations = 3 })
        assert.are.equal(D.iterations, b:settings().iterations)
    end)
end)

-- ---------------------------------------------------------------------------------------
-- Misuse. Every case runs on a fresh 3-bone chain with a non-trivial state; the error
-- must name the argument (method-call syntax: the first argument after self is #1) and
-- the chain must be unchanged, compared through everything observable.

local function fresh_chain()
    local c = ik.chain2d({ 1, 2, 0.5 }, 0.5, -1, 0.3)
    h.set_angles(c, { 0.4, -0.7, 1.1 })
    c:set_weight(2, 0.5)
    c:set_weight(3, 2)
    c:configure({ solver = "ccd", iterations = 17, tolerance = 0.002, greed = 0.3, greed_ramp = false, bend = -1 })
    return c
end

local NAN, INF = 0 / 0, math.huge

-- { description, k, method name, function(c) ... end }. n = 3 bones, joints 1..4.
local MISUSE = {
    -- self is not a chain (field-call syntax: self is #1)
    { "count(nil)", 1, "count", function(c) c.count(nil) end },
    { "count({})", 1, "count", function(c) c.count({}) end },
    { "dim(1)", 1, "dim", function(c) c.dim(1) end },
    { "joint({}, 1)", 1, "joint", function(c) c.joint({}, 1) end },
    { "effector('x')", 1, "effector", function(c) c.effector("x") end },
    { "positions(nil)", 1, "positions", function(c) c.positions(nil) end },
    { "length(io.stdout, 1)", 1, "length", function(c) c.length(io.stdout, 1) end },
    { "set_length({}, 1, 1)", 1, "set_length", function(c) c.set_length({}, 1, 1) end },
    { "base(nil)", 1, "base", function(c) c.base(nil) end },
    { "set_base({}, 0, 0)", 1, "set_base", function(c) c.set_base({}, 0, 0) end },
    { "angle(nil, 1)", 1, "angle", function(c) c.angle(nil, 1) end },
    { "set_angle({}, 1, 0)", 1, "set_angle", function(c) c.set_angle({}, 1, 0) end },
    { "world_angle(nil, 1)", 1, "world_angle", function(c) c.world_angle(nil, 1) end },
    { "weight({}, 1)", 1, "weight", function(c) c.weight({}, 1) end },
    { "set_weight(nil, 1, 1)", 1, "set_weight", function(c) c.set_weight(nil, 1, 1) end },
    { "configure({}, {})", 1, "configure", function(c) c.configure({}, {}) end },
    { "settings(nil)", 1, "settings", function(c) c.settings(nil) end },
    { "solve(nil, 0, 0)", 1, "solve", function(c) c.solve(nil, 0, 0) end },
    { "solve_ccd({}, 0, 0)", 1, "solve_ccd", function(c) c.solve_ccd({}, 0, 0) end },
    { "solve_fabrik({}, 0, 0)", 1, "solve_fabrik", function(c) c.solve_fabrik({}, 0, 0) end },
    { "solve_relax({}, 0, 0)", 1, "solve_relax", function(c) c.solve_relax({}, 0, 0) end },
    { "solve_two_bone({}, 0, 0)", 1, "solve_two_bone", function(c) c.solve_two_bone({}, 0, 0) end },

    -- joint(i): joints 1..n+1
    { "joint(0)", 1, "joint", function(c) c:joint(0) end },
    { "joint(5)", 1, "joint", function(c) c:joint(5) end },
    { "joint(-1)", 1, "joint", function(c) c:joint(-1) end },
    { "joint(1.5)", 1, "joint", function(c) c:joint(1.5) end },
    { "joint(NaN)", 1, "joint", function(c) c:joint(NAN) end },
    { "joint(inf)", 1, "joint", function(c) c:joint(INF) end },
    { "joint(2^53)", 1, "joint", function(c) c:joint(2 ^ 53) end },
    { "joint('a')", 1, "joint", function(c) c:joint("a") end },
    { "joint(nil)", 1, "joint", function(c) c:joint(nil) end },

    -- bones 1..n
    { "length(0)", 1, "length", function(c) c:length(0) end },
    { "length(4)", 1, "length", function(c) c:length(4) end },
    { "length(2.5)", 1, "length", function(c) c:length(2.5) end },
    { "length(nil)", 1, "length", function(c) c:length() end },
    { "angle(0)", 1, "angle", function(c) c:angle(0) end },
    { "angle(4)", 1, "angle", function(c) c:angle(4) end },
    { "angle(1.5)", 1, "angle", function(c) c:angle(1.5) end },
    { "angle('x')", 1, "angle", function(c) c:angle("x") end },
    { "world_angle(0)", 1, "world_angle", function(c) c:world_angle(0) end },
    { "world_angle(4)", 1, "world_angle", function(c) c:world_angle(4) end },
    { "world_angle(1.5)", 1, "world_angle", function(c) c:world_angle(1.5) end },

    -- set_length(i, l)
    { "set_length(0, 1)", 1, "set_length", function(c) c:set_length(0, 1) end },
    { "set_length(4, 1)", 1, "set_length", function(c) c:set_length(4, 1) end },
    { "set_length(1.5, 1)", 1, "set_length", function(c) c:set_length(1.5, 1) end },
    { "set_length(1, -1)", 2, "set_length", function(c) c:set_length(1, -1) end },
    { "set_length(1, -1e-300)", 2, "set_length", function(c) c:set_length(1, -1e-300) end },
    { "set_length(1, NaN)", 2, "set_length", function(c) c:set_length(1, NAN) end },
    { "set_length(1, inf)", 2, "set_length", function(c) c:set_length(1, INF) end },
    { "set_length(1, 'a')", 2, "set_length", function(c) c:set_length(1, "a") end },
    { "set_length(1, nil)", 2, "set_length", function(c) c:set_length(1) end },

    -- set_angle(i, a)
    { "set_angle(0, 0)", 1, "set_angle", function(c) c:set_angle(0, 0) end },
    { "set_angle(4, 0)", 1, "set_angle", function(c) c:set_angle(4, 0) end },
    { "set_angle(1.5, 0)", 1, "set_angle", function(c) c:set_angle(1.5, 0) end },
    { "set_angle(1, NaN)", 2, "set_angle", function(c) c:set_angle(1, NAN) end },
    { "set_angle(1, inf)", 2, "set_angle", function(c) c:set_angle(1, INF) end },
    { "set_angle(1, -inf)", 2, "set_angle", function(c) c:set_angle(1, -INF) end },
    { "set_angle(1, 'a')", 2, "set_angle", function(c) c:set_angle(1, "a") end },
    { "set_angle(1, nil)", 2, "set_angle", function(c) c:set_angle(1) end },

    -- weight(i), set_weight(i, w): joints 1..n+1
    { "weight(0)", 1, "weight", function(c) c:weight(0) end },
    { "weight(5)", 1, "weight", function(c) c:weight(5) end },
    { "weight(1.5)", 1, "weight", function(c) c:weight(1.5) end },
    { "set_weight(0, 1)", 1, "set_weight", function(c) c:set_weight(0, 1) end },
    { "set_weight(5, 1)", 1, "set_weight", function(c) c:set_weight(5, 1) end },
    { "set_weight(2.5, 1)", 1, "set_weight", function(c) c:set_weight(2.5, 1) end },
    { "set_weight(2, -1)", 2, "set_weight", function(c) c:set_weight(2, -1) end },
    { "set_weight(2, NaN)", 2, "set_weight", function(c) c:set_weight(2, NAN) end },
    { "set_weight(2, inf)", 2, "set_weight", function(c) c:set_weight(2, INF) end },
    { "set_weight(2, 'a')", 2, "set_weight", function(c) c:set_weight(2, "a") end },

    -- set_base(x, y [, a])
    { "set_base(NaN, 0)", 1, "set_base", function(c) c:set_base(NAN, 0) end },
    { "set_base('a', 0)", 1, "set_base", function(c) c:set_base("a", 0) end },
    { "set_base(0, inf)", 2, "set_base", function(c) c:set_base(0, INF) end },
    { "set_base(0, nil)", 2, "set_base", function(c) c:set_base(0) end },
    { "set_base(0, 0, NaN)", 3, "set_base", function(c) c:set_base(0, 0, NAN) end },
    { "set_base(0, 0, -inf)", 3, "set_base", function(c) c:set_base(0, 0, -INF) end },
    { "set_base(0, 0, 'a')", 3, "set_base", function(c) c:set_base(0, 0, "a") end },

    -- positions(out)
    { "positions(5)", 1, "positions", function(c) c:positions(5) end },
    { "positions('x')", 1, "positions", function(c) c:positions("x") end },

    -- configure(t)
    { "configure()", 1, "configure", function(c) c:configure() end },
    { "configure(5)", 1, "configure", function(c) c:configure(5) end },
    { "configure{nope = 1}", 1, "configure", function(c) c:configure({ nope = 1 }) end },
    { "configure{[1] = 1}", 1, "configure", function(c) c:configure({ 1 }) end },
    { "configure{iterations = 0}", 1, "configure", function(c) c:configure({ iterations = 0 }) end },
    { "configure{iterations = -3}", 1, "configure", function(c) c:configure({ iterations = -3 }) end },
    { "configure{iterations = 1.5}", 1, "configure", function(c) c:configure({ iterations = 1.5 }) end },
    { "configure{iterations = NaN}", 1, "configure", function(c) c:configure({ iterations = NAN }) end },
    { "configure{iterations = inf}", 1, "configure", function(c) c:configure({ iterations = INF }) end },
    { "configure{iterations = 2^40}", 1, "configure", function(c) c:configure({ iterations = 2 ^ 40 }) end },
    { "configure{iterations = 'x'}", 1, "configure", function(c) c:configure({ iterations = "x" }) end },
    { "configure{tolerance = -1}", 1, "configure", function(c) c:configure({ tolerance = -1 }) end },
    { "configure{tolerance = NaN}", 1, "configure", function(c) c:configure({ tolerance = NAN }) end },
    { "configure{tolerance = inf}", 1, "configure", function(c) c:configure({ tolerance = INF }) end },
    { "configure{greed = 0}", 1, "configure", function(c) c:configure({ greed = 0 }) end },
    { "configure{greed = 1.5}", 1, "configure", function(c) c:configure({ greed = 1.5 }) end },
    { "configure{greed = -0.5}", 1, "configure", function(c) c:configure({ greed = -0.5 }) end },
    { "configure{greed = NaN}", 1, "configure", function(c) c:configure({ greed = NAN }) end },
    { "configure{greed_ramp = 'yes'}", 1, "configure", function(c) c:configure({ greed_ramp = "yes" }) end },
    { "configure{greed_ramp = 1}", 1, "configure", function(c) c:configure({ greed_ramp = 1 }) end },
    { "configure{bend = 0}", 1, "configure", function(c) c:configure({ bend = 0 }) end },
    { "configure{bend = 2}", 1, "configure", function(c) c:configure({ bend = 2 }) end },
    { "configure{bend = 0.5}", 1, "configure", function(c) c:configure({ bend = 0.5 }) end },
    { "configure{solver = 'nope'}", 1, "configure", function(c) c:configure({ solver = "nope" }) end },
    { "configure{solver = 1}", 1, "configure", function(c) c:configure({ solver = 1 }) end },
    { "configure{iterations = 5, greed = 0} (one bad key)", 1, "configure", function(c) c:configure({ iterations = 5, greed = 0 }) end },
    { "configure{tolerance = 1, nope = true} (one unknown key)", 1, "configure", function(c) c:configure({ tolerance = 1, nope = true }) end },
}

-- Every solve method, field-call syntax c.solve(c, ...): self is #1, x is #2, y is #3.
-- (The name must be a literal: c[name](...) gives the VM no name to report.)
local SOLVE_FIELD = {
    { "solve(c, NaN, 0)", 2, "solve", function(c) c.solve(c, NAN, 0) end },
    { "solve(c, 0, inf)", 3, "solve", function(c) c.solve(c, 0, INF) end },
    { "solve(c, 0)", 3, "solve", function(c) c.solve(c, 0) end },
    { "solve_ccd(c, 'a', 0)", 2, "solve_ccd", function(c) c.solve_ccd(c, "a", 0) end },
    { "solve_ccd(c, 0, NaN)", 3, "solve_ccd", function(c) c.solve_ccd(c, 0, NAN) end },
    { "solve_ccd(c)", 2, "solve_ccd", function(c) c.solve_ccd(c) end },
    { "solve_fabrik(c, inf, 0)", 2, "solve_fabrik", function(c) c.solve_fabrik(c, INF, 0) end },
    { "solve_fabrik(c, 0, 'a')", 3, "solve_fabrik", function(c) c.solve_fabrik(c, 0, "a") end },
    { "solve_relax(c, NaN, 0)", 2, "solve_relax", function(c) c.solve_relax(c, NAN, 0) end },
    { "solve_relax(c, 0, nil)", 3, "solve_relax", function(c) c.solve_relax(c, 0, nil) end },
}
for _, cs in ipairs(SOLVE_FIELD) do
    MISUSE[#MISUSE + 1] = cs
end

describe("chain2d misuse", function()
    it("ik.chain2d rejects bad lengths and bases as bad argument #k to 'chain2d'", function()
        local cases = {
            { 1, function() ik.chain2d({}) end, "{}" },
            { 1, function() ik.chain2d({ 1, -1 }) end, "{1, -1}" },
            { 1, function() ik.chain2d({ 1, 0 / 0 }) end, "{1, NaN}" },
            { 1, function() ik.chain2d({ 1, math.huge }) end, "{1, inf}" },
            { 1, function() ik.chain2d({ 1, "a" }) end, "{1, 'a'}" },
            { 1, function() ik.chain2d({ {} }) end, "{{}}" },
            { 1, function() ik.chain2d("x") end, "'x'" },
            { 1, function() ik.chain2d(5) end, "5" },
            { 1, function() ik.chain2d() end, "nil" },
            { 2, function() ik.chain2d({ 1 }, 0 / 0) end, "x NaN" },
            { 2, function() ik.chain2d({ 1 }, "a") end, "x 'a'" },
            { 3, function() ik.chain2d({ 1 }, 0, math.huge) end, "y inf" },
            { 4, function() ik.chain2d({ 1 }, 0, 0, 0 / 0) end, "angle NaN" },
            { 4, function() ik.chain2d({ 1 }, 0, 0, {}) end, "angle {}" },
        }
        for _, cs in ipairs(cases) do
            local ok, msg = h.argerror(cs[1], "chain2d", cs[2])
            assert(ok, "ik.chain2d(" .. cs[3] .. "): " .. msg)
        end
    end)

    it("rejects every misuse of every method with bad argument #k to 'method' and leaves the chain unchanged (" .. #MISUSE .. " cases)", function()
        for _, cs in ipairs(MISUSE) do
            local desc, k, name, f = cs[1], cs[2], cs[3], cs[4]
            local c = fresh_chain()
            local before = h.snapshot(c)
            local ok, msg = h.argerror(k, name, function() f(c) end)
            assert(ok, desc .. ": " .. msg)
            h.assert_unchanged(before, h.snapshot(c), desc)
        end
    end)

    it("rejects a bad target in method-call syntax as #1 / #2 (c:solve(0/0, 0) is #1, c:solve_ccd(0, 1/0) is #2) and leaves the chain unchanged", function()
        local cases = {
            { 1, "solve", function(c) c:solve(NAN, 0) end },
            { 2, "solve", function(c) c:solve(0, INF) end },
            { 1, "solve_ccd", function(c) c:solve_ccd("a", 0) end },
            { 2, "solve_ccd", function(c) c:solve_ccd(0, INF) end },
            { 1, "solve_fabrik", function(c) c:solve_fabrik(-INF, 0) end },
            { 2, "solve_fabrik", function(c) c:solve_fabrik(0, NAN) end },
            { 1, "solve_relax", function(c) c:solve_relax(NAN, NAN) end },
            { 2, "solve_relax", function(c) c:solve_relax(1, {}) end },
        }
        for _, cs in ipairs(cases) do
            local c = fresh_chain()
            local before = h.snapshot(c)
            local ok, msg = h.argerror(cs[1], cs[2], function() cs[3](c) end)
            assert(ok, cs[2] .. ": " .. msg)
            h.assert_unchanged(before, h.snapshot(c), cs[2])
        end
    end)

    it("rejects solve_two_bone on a 3-bone chain (and a bad target on a 2-bone chain) and leaves the chain unchanged", function()
        local c = fresh_chain()
        local before = h.snapshot(c)
        -- the chain (self) is the bad argument: method-call syntax reports it as bad self
        h.assert_argerror(0, "solve_two_bone", function() c:solve_two_bone(1, 1) end)
        h.assert_argerror(1, "solve_two_bone", function() c.solve_two_bone(c, 1, 1) end)
        h.assert_unchanged(before, h.snapshot(c), "solve_two_bone on 3 bones")

        local c2 = ik.chain2d({ 1, 1 }, 1, 2, 0.5)
        c2:set_angle(2, 0.3)
        before = h.snapshot(c2)
        h.assert_argerror(1, "solve_two_bone", function() c2:solve_two_bone(NAN, 0) end)
        h.assert_argerror(2, "solve_two_bone", function() c2:solve_two_bone(0, INF) end)
        h.assert_unchanged(before, h.snapshot(c2), "solve_two_bone with a bad target")
    end)

    it("rejects solve on a 2-bone chain configured for two_bone whose target is bad, and keeps it unchanged", function()
        local c = ik.chain2d({ 1, 1 })
        c:configure({ solver = "two_bone" })
        local before = h.snapshot(c)
        h.assert_argerror(1, "solve", function() c:solve(NAN, 0) end)
        h.assert_unchanged(before, h.snapshot(c), "solve")
    end)
end)
