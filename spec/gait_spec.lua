-- The stepping controller (API.md, "Motion over time": ik.gait, gait:update, gait:foot,
-- gait:reset, #gait): walkers over bumpy ground in 2D and 3D, at several frame rates, and
-- every misuse.

local ik = require("ik")
local h = require("spec.helpers")
local walkers = require("bench.walkers")

local STRIDE = { spider = 0.5, biped = 0.4 }
local STEP_TIME = { spider = 0.2, biped = 0.3 }

local function options(kind, extra)
    local o = { stride = STRIDE[kind], step_time = STEP_TIME[kind] }
    for k, v in pairs(extra or {}) do o[k] = v end
    return o
end

local function feet(g, dim)
    local t = {}
    for k = 1, #g do
        local v = { g:foot(k) }
        t[k] = v
        assert.are.equal(dim + 2, #v)
    end
    return t
end

describe("ik.gait", function()
    for _, kind in ipairs({ "spider", "biped" }) do
        for _, dim in ipairs({ 2, 3 }) do
            local name = ("%dD %s"):format(dim, kind)

            it(name .. " walks 30 s at 60 Hz: planted feet still, one group in the air, feet on the ground, goals met", function()
                local r = walkers.walk(walkers[kind](dim, 1), options(kind), 30, 60)
                assert.are.equal(1800, r.frames)
                assert.are.equal(0, r.moved)
                assert.is_true(r.crowd == 1, ("%d groups in the air at once"):format(r.crowd))
                assert.is_true(r.landed <= 1e-9, ("a foot landed %.3g off the ground"):format(r.landed))
                assert.is_true(r.met >= 0.99 * r.frames, ("goals met in %d of %d frames"):format(r.met, r.frames))
                for k = 1, #r.landings do
                    assert.is_true(#r.landings[k] >= 20, ("foot %d landed %d times in 30 m"):format(k, #r.landings[k]))
                end
            end)

            it(name .. ": the same walk at 30, 60 and 144 Hz lands its feet within 0.1 stride", function()
                local at = {}
                for _, hz in ipairs({ 30, 60, 144 }) do
                    at[hz] = walkers.walk(walkers[kind](dim, 1), options(kind), 30, hz)
                end
                for _, hz in ipairs({ 30, 60 }) do
                    local worst, fewest, most = walkers.compare(at[hz], at[144])
                    assert.is_true(fewest >= 20 and most <= 1, ("%d Hz: %d landings at least, counts differ by %d"):format(hz, fewest, most))
                    assert.is_true(worst <= 0.1 * STRIDE[kind],
                        ("%d Hz: a landing %.4g from 144 Hz's (stride %g)"):format(hz, worst, STRIDE[kind]))
                end
            end)

            it(name .. ": the same calls give the same bits", function()
                local a = walkers.walk(walkers[kind](dim, 1), options(kind), 5, 60)
                local b = walkers.walk(walkers[kind](dim, 1), options(kind), 5, 60)
                assert.are.same(a.landings, b.landings)
                assert.are.same(feet(a.gait, dim), feet(b.gait, dim))
            end)
        end
    end

    it("max_groups: at most that many groups in the air, every leg its own group by default", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, most in ipairs({ 1, 2, 3 }) do
                local w = walkers.spider(dim, 1.5)
                local r = walkers.walk(w, { stride = 0.4, step_time = 0.3, max_groups = most, groups = false }, 10, 60)
                assert.is_true(r.crowd <= most and r.crowd >= 1, ("%dD: %d in the air, max_groups %d"):format(dim, r.crowd, most))
                assert.are.equal(0, r.moved)
            end
        end
    end)

    it("plants feet at their homes, steps along an arc lift high, and reads back through foot()", function()
        local w = walkers.biped(2, 1)
        local g = ik.gait(w.legs, { stride = 0.4, step_time = 0.3, lift = 0.2 })
        assert.are.equal(2, #g)
        assert.are.equal(2, g:count())
        for k = 1, 2 do
            local x, y, stepping, progress = g:foot(k)
            local tx, ty = w.legs[k]:effector()
            assert.are.equal(tx, x); assert.are.equal(ty, y)
            assert.is_false(stepping); assert.are.equal(0, progress)
        end
        -- a leg of its own on a body that glides level: without a ground a foot lands at its
        -- home's own height, and the top of its arc is lift above the straight line
        local leg = ik.chain2d({ 1, 1 }, 0, 1, -math.pi / 2)
        leg:set_angle(1, 0.4); leg:set_angle(2, -0.8)
        local solo = ik.gait({ leg }, { stride = 0.4, step_time = 0.3, lift = 0.2 })
        local _, y0 = solo:foot(1)
        local top, steps = 0, 0
        for f = 1, 240 do
            leg:set_base(f / 60, 1, -math.pi / 2)
            solo:update(1 / 60)
            local x, y, stepping, progress = solo:foot(1)
            if stepping then
                assert.is_true(progress > 0 and progress < 1)
                top = math.max(top, y - y0)
            else
                assert.are.equal(y0, y)
            end
            local tx, ty = leg:target()
            assert.are.equal(x, tx); assert.are.equal(y, ty)
        end
        assert.is_true(top >= 0.99 * 0.2 and top <= 0.2 + 1e-12, ("the arc rose %.4g"):format(top))
        -- up = -1 (a y-down screen): the arc goes towards -y
        local leg2 = ik.chain2d({ 1, 1 }, 0, -1, math.pi / 2)
        leg2:set_angle(1, -0.4); leg2:set_angle(2, 0.8)
        local down = ik.gait({ leg2 }, { stride = 0.4, step_time = 0.3, lift = 0.2, up = -1 })
        local _, d0 = down:foot(1)
        local least = 0
        for f = 1, 240 do
            leg2:set_base(f / 60, -1, math.pi / 2)
            down:update(1 / 60)
            local _, y = down:foot(1)
            least = math.min(least, y - d0)
        end
        assert.is_true(least <= -0.99 * 0.2 and least >= -0.2 - 1e-12, ("the arc went %.4g"):format(least))
        -- the walker's gait follows its legs' targets too
        for f = 1, 60 do
            w.place(f / 60)
            g:update(1 / 60)
        end
        for k = 1, 2 do
            local tx, ty = w.legs[k]:target()
            local fx, fy = g:foot(k)
            assert.are.equal(fx, tx); assert.are.equal(fy, ty)
        end
        -- reset plants every foot at its home, where the body is now
        g:reset()
        for k = 1, 2 do
            local _, _, stepping, progress = g:foot(k)
            assert.is_false(stepping); assert.are.equal(0, progress)
        end
        local x1 = g:foot(1)
        local bx = w.legs[1]:base()
        assert.is_true(math.abs(x1 - bx) < 1, "the foot is under the body again")
    end)

    it("refuses bad legs and options, naming them", function()
        local w = walkers.biped(2, 1)
        local legs = w.legs
        local function bad(k, f) h.assert_argerror(k, "gait", f) end
        bad(1, function() ik.gait(nil, { stride = 1 }) end)
        bad(1, function() ik.gait({}, { stride = 1 }) end)
        bad(1, function() ik.gait({ 5 }, { stride = 1 }) end)
        bad(1, function() ik.gait({ legs[1], ik.chain3d({ 1 }) }, { stride = 1 }) end)
        bad(1, function() ik.gait({ legs[1], legs[1] }, { stride = 1 }) end)
        bad(2, function() ik.gait(legs, nil) end)
        bad(2, function() ik.gait(legs, {}) end)
        for _, o in ipairs({
            { stride = 0 }, { stride = -1 }, { stride = 0 / 0 }, { stride = math.huge }, { stride = "1" },
            { stride = 1, step_time = 0 }, { stride = 1, step_time = -1 }, { stride = 1, lift = -0.1 },
            { stride = 1, lead = -1 }, { stride = 1, lead = 0 / 0 }, { stride = 1, max_groups = 0 },
            { stride = 1, max_groups = 1.5 }, { stride = 1, ground = 5 }, { stride = 1, nope = 1 },
            { stride = 1, up = 0 }, { stride = 1, up = 2 }, { stride = 1, up = "1" },
            { stride = 1, groups = { { 1 } } }, { stride = 1, groups = { { 1, 2 }, { 2 } } },
            { stride = 1, groups = { { 1 }, { 3 } } }, { stride = 1, groups = { { 1 }, {}, { 2 } } },
            { stride = 1, groups = { { 1.5 }, { 2 } } }, { stride = 1, groups = 5 },
        }) do
            local ok, msg = h.argerror(2, "gait", function() ik.gait(legs, o) end)
            assert.is_true(ok, msg)
        end
        local _, msg = h.argerror(2, "gait", function() ik.gait(legs, { stride = 0 }) end)
        assert.is_truthy(msg:find("stride", 1, true))
        _, msg = h.argerror(2, "gait", function() ik.gait(legs, { stride = 1, lift = -1 }) end)
        assert.is_truthy(msg:find("lift", 1, true))
        _, msg = h.argerror(2, "gait", function() ik.gait(legs, { stride = 1, groups = { { 1, 2 }, { 2 } } }) end)
        assert.is_truthy(msg:find("leg 2", 1, true))
    end)

    it("refuses a bad update, and a ground that fails changes nothing", function()
        for _, dim in ipairs({ 2, 3 }) do
            local w = walkers.spider(dim, 1)
            local fail = false
            local g = ik.gait(w.legs, { stride = 0.5, step_time = 0.2, groups = w.groups,
                ground = function(x, z)
                    if fail == "error" then error("no ground here") end
                    if fail == "string" then return "high" end
                    if fail == "nan" then return 0 / 0 end
                    return w.ground(x, z)
                end })
            for _, dt in ipairs({ 0, -1, 0 / 0, math.huge }) do
                h.assert_argerror(1, "update", function() g:update(dt) end)
            end
            h.assert_argerror(1, "update", function() g:update("x") end)
            h.assert_argerror(2, "update", function() g:update(0.1, 1) end)
            h.assert_argerror(1, "foot", function() g:foot(0) end)
            h.assert_argerror(1, "foot", function() g:foot(9) end)
            h.assert_argerror(1, "foot", function() g:foot(1.5) end)
            h.assert_argerror(1, "update", function() g.update(w.body, 0.1) end)
            -- walk until a foot is about to step, then let the ground fail
            local f = 0
            for _, how in ipairs({ "error", "string", "nan" }) do
                local before
                repeat
                    f = f + 1
                    w.place(f / 60)
                    fail = how
                    before = feet(g, dim)
                    local ok, err = pcall(g.update, g, 1 / 60)
                    fail = false
                    if not ok then
                        assert.are.same(before, feet(g, dim))
                        assert.is_truthy(tostring(err):find(how == "error" and "no ground here" or "ground returned", 1, true), tostring(err))
                        break
                    end
                until f > 600
                assert.is_true(f <= 600, "the ground was never asked")
                g:update(1 / 60) -- and it goes on
            end
        end
    end)

    it("keeps its legs alive", function()
        local w = walkers.biped(2, 1)
        local g = ik.gait({ w.legs[1], w.legs[2] }, { stride = 0.4 })
        w = nil
        collectgarbage(); collectgarbage()
        g:update(1 / 60)
        assert.are.equal(2, #g)
        assert.is_truthy(tostring(g):find("ik.gait(2 legs)", 1, true))
    end)
end)
