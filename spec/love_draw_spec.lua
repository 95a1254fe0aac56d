-- ik.love, the LÖVE debug drawing, outside LÖVE: a stand-in `love.graphics` records every
-- call, so the specs check what is drawn where (bones, joints, the cross, limit arcs; a
-- rig's chains, goals and orientation ticks), in which colour, that LÖVE's colour and line
-- width are restored, and that a draw allocates nothing. spec/love/ runs the module inside
-- the real LÖVE runtime.

local ik = require("ik")

-- The stand-in records into preallocated fields only, so that it allocates nothing itself.
local calls
local graphics = {}
local function reset()
    calls = {
        lines = {}, circles = {}, arcs = {}, line_colours = {},
        colour = { 1, 1, 1, 1 }, width = 1,
        counting = false, line_count = 0, circle_count = 0, arc_count = 0,
    }
end
function graphics.getColor()
    local c = calls.colour
    return c[1], c[2], c[3], c[4]
end
function graphics.setColor(r, g, b, a)
    local c = calls.colour
    c[1], c[2], c[3], c[4] = r, g, b, a
end
function graphics.getLineWidth() return calls.width end
function graphics.setLineWidth(w) calls.width = w end
function graphics.line(x1, y1, x2, y2)
    if calls.counting then
        calls.line_count = calls.line_count + 1
        return
    end
    local c = calls.colour
    table.insert(calls.lines, { x1, y1, x2, y2 })
    table.insert(calls.line_colours, { c[1], c[2], c[3], c[4] })
end
function graphics.circle(mode, x, y, r)
    if calls.counting then
        calls.circle_count = calls.circle_count + 1
        return
    end
    table.insert(calls.circles, { mode, x, y, r })
end
function graphics.arc(mode, arctype, x, y, r, a1, a2)
    if calls.counting then
        calls.arc_count = calls.arc_count + 1
        return
    end
    table.insert(calls.arcs, { mode, arctype, x, y, r, a1, a2 })
end

local saved_love
local ikdraw

local function near(a, b) return math.abs(a - b) <= 1e-9 end

local function assert_point(x, y, wx, wy, what)
    assert.is_true(near(x, wx) and near(y, wy),
        string.format("%s: drawn at (%.12g, %.12g), want (%.12g, %.12g)", what, x, y, wx, wy))
end

-- A Lua object that behaves like `chain` and also has chain:limit(i) from `limits`
-- ({[i] = {min, max}}), standing in for chains with limits until they exist.
local function with_limits(chain, limits)
    local proxy = {}
    function proxy.limit(_, i)
        local l = limits[i]
        if l then return l[1], l[2] end
        return nil
    end
    return setmetatable(proxy, {
        __index = function(_, key)
            local method = chain[key]
            return function(_, ...) return method(chain, ...) end
        end,
    })
end

local function same_colour(a, b)
    return a[1] == b[1] and a[2] == b[2] and a[3] == b[3]
end

-- A small 2D figure as a rig: a 2-bone spine up from (0, 0) (the root), two 2-bone arms on
-- its top, a 1-bone neck on its top. Returns the rig and its chains.
local function figure()
    local spine = ik.chain2d({ 10, 10 }, 0, 0, math.pi / 2)
    local left, right, neck = ik.chain2d({ 8, 8 }), ik.chain2d({ 8, 8 }), ik.chain2d({ 5 })
    left:attach(spine, 3, math.pi / 2)
    right:attach(spine, 3, -math.pi / 2)
    neck:attach(spine, 3)
    return ik.rig({ spine, left, right, neck }), { spine, left, right, neck }
end

describe("ik.love", function()
    setup(function()
        saved_love = _G.love
        _G.love = { graphics = graphics }
        package.loaded["ik.love"] = nil
        ikdraw = require("ik.love")
    end)
    teardown(function()
        _G.love = saved_love
        package.loaded["ik.love"] = nil
    end)
    before_each(reset)

    it("draws a 2D chain: a line per bone from joint to joint, a circle per joint (the base filled), in screen coordinates", function()
        local c = ik.chain2d({ 30, 20, 10 }, 100, 50)
        c:set_angle(1, 0.5)
        c:set_angle(2, -0.3)
        ikdraw.draw(c)
        assert.are.equal(3, #calls.lines)
        assert.are.equal(4, #calls.circles)
        for i = 1, 3 do
            local x1, y1 = c:joint(i)
            local x2, y2 = c:joint(i + 1)
            local l = calls.lines[i]
            assert_point(l[1], l[2], x1, y1, "bone " .. i .. " start")
            assert_point(l[3], l[4], x2, y2, "bone " .. i .. " end")
        end
        for j = 1, 4 do
            local x, y = c:joint(j)
            local circle = calls.circles[j]
            assert.are.equal(j == 1 and "fill" or "line", circle[1])
            assert_point(circle[2], circle[3], x, y, "joint " .. j)
            assert.are.equal(ikdraw.style.radius, circle[4])
        end
        assert.are.equal(0, #calls.arcs)
    end)

    it("draws the target as a cross centred on (tx, ty), and no cross without a target", function()
        local c = ik.chain2d({ 30, 20 })
        ikdraw.draw(c, 40, -10, true)
        assert.are.equal(2 + 2, #calls.lines)
        local h = ikdraw.style.cross
        local a, b = calls.lines[3], calls.lines[4]
        assert_point((a[1] + a[3]) / 2, (a[2] + a[4]) / 2, 40, -10, "cross stroke 1")
        assert_point((b[1] + b[3]) / 2, (b[2] + b[4]) / 2, 40, -10, "cross stroke 2")
        assert.is_true(near(math.abs(a[3] - a[1]), 2 * h))
        reset()
        ikdraw.target(5, 6)
        assert.are.equal(2, #calls.lines)
        reset()
        ikdraw.draw(c)
        assert.are.equal(2, #calls.lines)
    end)

    it("colours the bones and the cross by the result: reached, missed, not known", function()
        local c = ik.chain2d({ 30, 20 })
        local cases = { { true, "reached" }, { false, "missed" }, { nil, "idle" } }
        for _, case in ipairs(cases) do
            reset()
            ikdraw.draw(c, 1, 2, case[1])
            local want = ikdraw.style[case[2]]
            for k, colour in ipairs(calls.line_colours) do
                for n = 1, 3 do
                    assert.are.equal(want[n], colour[n], case[2] .. ": line " .. k)
                end
            end
        end
    end)

    it("leaves LÖVE's colour and line width as it found them", function()
        local c = ik.chain2d({ 30, 20 })
        graphics.setColor(0.1, 0.2, 0.3, 0.4)
        graphics.setLineWidth(7)
        ikdraw.draw(c, 1, 2, false)
        ikdraw.target(1, 2, true)
        ikdraw.limits(with_limits(c, { { -1, 1 } }))
        assert.are.same({ 0.1, 0.2, 0.3, 0.4 }, calls.colour)
        assert.are.equal(7, calls.width)
    end)

    it("places and scales by the style: x, y, scale, and flip_y for a y-up world; other fields default", function()
        local c = ik.chain2d({ 1, 2 }, 0.5, 0.25)
        c:set_angle(1, 0.7)
        local style = { x = 400, y = 300, scale = 50, flip_y = true }
        ikdraw.draw(c, 1, 1, nil, style)
        for i = 1, 2 do
            local x1, y1 = c:joint(i)
            local x2, y2 = c:joint(i + 1)
            local l = calls.lines[i]
            assert_point(l[1], l[2], 400 + 50 * x1, 300 - 50 * y1, "bone " .. i .. " start")
            assert_point(l[3], l[4], 400 + 50 * x2, 300 - 50 * y2, "bone " .. i .. " end")
        end
        local cr = calls.lines[3]
        assert_point((cr[1] + cr[3]) / 2, (cr[2] + cr[4]) / 2, 450, 250, "the cross")
        assert.are.equal(ikdraw.style.radius, calls.circles[1][4])
    end)

    it("projects a 3D chain onto its x-y plane", function()
        local c = ik.chain3d({ 1, 1, 1 }, 1, 2, 3)
        c:solve_fabrik(1.5, 3.5, 4.2)
        ikdraw.draw(c, 1.5, 3.5, true)
        assert.are.equal(3 + 2, #calls.lines)
        assert.are.equal(4, #calls.circles)
        for i = 1, 3 do
            local x1, y1 = c:joint(i)
            local x2, y2 = c:joint(i + 1)
            local l = calls.lines[i]
            assert_point(l[1], l[2], x1, y1, "bone " .. i .. " start")
            assert_point(l[3], l[4], x2, y2, "bone " .. i .. " end")
        end
        assert.are.equal(0, #calls.arcs)
    end)

    it("draws no limit arcs for chains without chain:limit (today's chains)", function()
        local c = ik.chain2d({ 30, 20 })
        ikdraw.draw(c, 1, 2, true)
        ikdraw.limits(c)
        assert.are.equal(0, #calls.arcs)
    end)

    it("draws a limit as an arc around the bone's joint, from parent angle + min to + max", function()
        local c = ik.chain2d({ 30, 20, 10 }, 100, 50, 0.2)
        c:set_angle(1, 0.4)
        c:set_angle(2, 0.3)
        -- bone 1 limited relative to the base, bone 3 relative to bone 2, bone 2 unlimited
        -- (nil) and a whole-turn limit, which limits nothing, drawn as nothing.
        local limited = with_limits(c, { { -0.5, 1.0 }, nil, { -2.0, 0.25 } })
        ikdraw.draw(limited, 1, 2, true)
        assert.are.equal(2, #calls.arcs)
        local x1, y1 = c:joint(1)
        local a = calls.arcs[1]
        assert_point(a[3], a[4], x1, y1, "arc 1 centre")
        assert.is_true(near(a[6], 0.2 - 0.5) and near(a[7], 0.2 + 1.0), "arc 1 angles")
        local x3, y3 = c:joint(3)
        local b = calls.arcs[2]
        assert_point(b[3], b[4], x3, y3, "arc 2 centre")
        local parent = c:world_angle(2)
        assert.is_true(near(b[6], parent - 2.0) and near(b[7], parent + 0.25), "arc 2 angles")

        reset()
        ikdraw.limits(with_limits(c, { { -math.pi, math.pi } }))
        assert.are.equal(0, #calls.arcs)
        reset()
        ikdraw.draw(limited, 1, 2, true, { limits = false })
        assert.are.equal(0, #calls.arcs)
        reset()
        ikdraw.limits(with_limits(ik.chain3d({ 1, 1 }), { { -0.5, 0.5 } }))
        assert.are.equal(0, #calls.arcs)
    end)

    it("mirrors the limit arcs with flip_y: angles change sign and swap", function()
        local c = ik.chain2d({ 30, 20 })
        ikdraw.limits(with_limits(c, { { -0.5, 1.0 } }), { flip_y = true })
        local a = calls.arcs[1]
        assert.is_true(near(a[6], -1.0) and near(a[7], 0.5))
    end)

    it("draws a rig: every chain's bones and joints, in the rig's order, then a cross per goal and a tick per orientation goal", function()
        local rig, c = figure()
        c[2]:set_target(-12, 14)
        c[3]:set_target(12, 14)
        c[4]:set_target(0, 25)
        c[4]:set_target_angle(math.pi / 2)
        rig:solve()
        local met, goals = ikdraw.rig(rig)
        assert.are.equal(3, goals)
        assert.are.equal(3, met)
        -- 7 bones, 3 crosses of 2 strokes, 1 tick; 4 chains of 3 + 3 + 3 + 2 joints
        assert.are.equal(7 + 6 + 1, #calls.lines)
        assert.are.equal(11, #calls.circles)
        local n = 0
        for k = 1, 4 do
            for i = 1, #c[k] do
                n = n + 1
                local x1, y1 = c[k]:joint(i)
                local x2, y2 = c[k]:joint(i + 1)
                local l = calls.lines[n]
                assert_point(l[1], l[2], x1, y1, "chain " .. k .. " bone " .. i .. " start")
                assert_point(l[3], l[4], x2, y2, "chain " .. k .. " bone " .. i .. " end")
            end
        end
        for k = 2, 4 do
            local tx, ty = c[k]:target()
            local a, b = calls.lines[n + 1], calls.lines[n + 2]
            assert_point((a[1] + a[3]) / 2, (a[2] + a[4]) / 2, tx, ty, "chain " .. k .. "'s cross")
            assert_point((b[1] + b[3]) / 2, (b[2] + b[4]) / 2, tx, ty, "chain " .. k .. "'s cross")
            n = n + 2
        end
        -- the tick: from the neck's goal along its goal angle (pi / 2: +y, screen y down)
        local tick = calls.lines[n + 1]
        assert_point(tick[1], tick[2], 0, 25, "the tick's start")
        assert_point(tick[3], tick[4], 0, 25 + ikdraw.style.tick, "the tick's end")
        -- the joints: each chain's base filled
        assert.are.equal("fill", calls.circles[1][1])
        assert.are.equal("fill", calls.circles[4][1])
        assert.are.equal("line", calls.circles[3][1])
    end)

    it("draws a closed loop's hold as a ring round the held point, in the held chain's colour, not a cross", function()
        local body, a, b = ik.chain2d({ 10 }, 0, 0, math.pi / 2), ik.chain2d({ 8, 7 }), ik.chain2d({ 8, 7 })
        a:attach(body, 2)
        b:attach(body, 2)
        b:attach_tip(a, 3)
        a:set_target(6, 18)
        local rig = ik.rig({ body, a, b })
        assert.is_true((rig:solve()))
        local met, goals = ikdraw.rig(rig)
        assert.are.equal(2, goals)
        assert.are.equal(2, met)
        -- 5 bones and one cross of 2 strokes; 2 + 3 + 3 joints and the ring
        assert.are.equal(5 + 2, #calls.lines)
        assert.are.equal(8 + 1, #calls.circles)
        local ring, x, y = calls.circles[9], a:joint(3)
        assert.are.equal("line", ring[1])
        assert_point(ring[2], ring[3], x, y, "the ring")
        assert.are.equal(ikdraw.style.ring, ring[4])
        -- a held chain drawn alone, without a target given: its ring
        reset()
        ikdraw.draw(b)
        assert.are.equal(3 + 1, #calls.circles)
        assert_point(calls.circles[4][2], calls.circles[4][3], x, y, "the ring")
    end)

    it("colours each chain of a rig by its own goal: met within the rig's tolerance, missed, no goal (idle)", function()
        local rig, c = figure()
        c[2]:set_target(-12, 14)
        rig:solve()
        c[3]:set_target(100, 0) -- out of reach (set after the solve: it would pull the spine)
        local met, goals = ikdraw.rig(rig)
        assert.are.equal(1, met)
        assert.are.equal(2, goals)
        local want = { "idle", "reached", "missed", "idle" }
        local n = 0
        for k = 1, 4 do
            for i = 1, #c[k] do
                n = n + 1
                assert.is_true(same_colour(calls.line_colours[n], ikdraw.style[want[k]]), "chain " .. k .. " bone " .. i)
            end
        end
        for stroke = 1, 4 do -- the crosses of chains 2 and 3, two strokes each
            local k = stroke <= 2 and 2 or 3
            assert.is_true(same_colour(calls.line_colours[n + stroke], ikdraw.style[want[k]]), "cross stroke " .. stroke)
        end
        assert.are.equal(n + 4, #calls.lines)

        -- The rig's tolerance decides: the arm's tip 0.5 from its goal is met at 1, not at 0.1.
        local x, y = c[2]:effector()
        c[2]:set_target(x + 0.5, y)
        rig:configure({ tolerance = 1 })
        assert.are.equal(1, (ikdraw.rig(rig)))
        rig:configure({ tolerance = 0.1 })
        assert.are.equal(0, (ikdraw.rig(rig)))
    end)

    it("counts an orientation goal as a rig does: the tip in place but its bone turned away is missed, within angle_tolerance met", function()
        local rig, c = figure()
        c[4]:set_target(c[4]:effector())
        local a = c[4]:world_angle(1)
        c[4]:set_target_angle(a + 0.05)
        reset()
        assert.are.same({ 0, 1 }, { ikdraw.rig(rig) })
        assert.is_true(same_colour(calls.line_colours[7], ikdraw.style.missed))
        rig:configure({ angle_tolerance = 0.1 })
        reset()
        assert.are.same({ 1, 1 }, { ikdraw.rig(rig) })
        assert.is_true(same_colour(calls.line_colours[7], ikdraw.style.reached))
        -- and after a solve, met at the default tolerances
        rig:configure({ angle_tolerance = 1e-3 })
        c[4]:set_target(2, 24)
        c[4]:set_target_angle(1.2)
        assert.is_true((rig:solve()))
        assert.are.same({ 1, 1 }, { ikdraw.rig(rig) })
    end)

    it("places a rig by the style (x, y, scale, flip_y, tick); a flipped tick points the other way in y", function()
        local rig, c = figure()
        c[4]:set_target(1, 24)
        c[4]:set_target_angle(0.6)
        local style = { x = 400, y = 300, scale = 10, flip_y = true, tick = 30 }
        ikdraw.rig(rig, style)
        local x1, y1 = c[1]:joint(1)
        assert_point(calls.lines[1][1], calls.lines[1][2], 400 + 10 * x1, 300 - 10 * y1, "the root's base")
        local tick = calls.lines[#calls.lines]
        assert_point(tick[1], tick[2], 410, 60, "the tick's start")
        assert_point(tick[3], tick[4], 410 + 30 * math.cos(0.6), 60 - 30 * math.sin(0.6), "the tick's end")
        assert.are.equal(ikdraw.style.radius, calls.circles[1][4])
    end)

    it("draws a 3D rig projected onto x-y, its orientation tick the goal's +x axis projected", function()
        local root = ik.chain3d({ 1, 1 })
        local limb = ik.chain3d({ 1, 1 })
        limb:attach(root, 3)
        local rig = ik.rig({ root, limb })
        limb:set_target(2, 1.5, 0.5)
        -- a quarter turn about z: +x goes to +y
        limb:set_target_rotation(math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4))
        local reached = rig:solve()
        local met, goals = ikdraw.rig(rig)
        assert.are.equal(1, goals)
        assert.are.equal(reached, met == 1)
        assert.are.equal(4 + 2 + 1, #calls.lines)
        local tick = calls.lines[7]
        assert_point(tick[1], tick[2], 2, 1.5, "the tick's start")
        assert_point(tick[3], tick[4], 2, 1.5 + ikdraw.style.tick, "the tick's end")
        -- a goal rotation with +x along z: a tick of length 0 in the projection
        limb:set_target_rotation(math.cos(math.pi / 4), 0, -math.sin(math.pi / 4), 0)
        reset()
        ikdraw.rig(rig)
        tick = calls.lines[7]
        assert_point(tick[3], tick[4], 2, 1.5, "the tick seen end-on")
    end)

    it("a rig without goals draws its chains idle and no cross, and returns 0, 0", function()
        local rig = figure()
        assert.are.same({ 0, 0 }, { ikdraw.rig(rig) })
        assert.are.equal(7, #calls.lines)
        for k = 1, 7 do
            assert.is_true(same_colour(calls.line_colours[k], ikdraw.style.idle))
        end
    end)

    it("draws a chain of ik.pure, the pure-Lua backend, exactly as the C module's in the same pose (2D with limits and a target, 3D, a held tip)", function()
        local pure = require("ik.pure")
        local function record(draw)
            reset()
            draw()
            return { calls.lines, calls.circles, calls.arcs, calls.line_colours }
        end
        local function pose(m)
            local a = m.chain2d({ 30, 20, 10 }, 100, 50, 0.2)
            a:set_limit(2, -1, 0.5)
            a:set_angle(1, 0.5)
            a:set_angle(2, -0.3)
            local b = m.chain3d({ 1, 2 }, 1, 2, 3)
            b:set_rotation(1, 0.9, 0.1, 0.3, 0.2)
            local held, holder = m.chain2d({ 5, 5 }), m.chain2d({ 8 }, 3, 4)
            held:attach_tip(holder, 2)
            return a, b, held
        end
        local c2, c3, c_held = pose(ik)
        local p2, p3, p_held = pose(pure)
        local style = { x = 10, y = 20, scale = 3, flip_y = true }
        assert.are.same(record(function() ikdraw.draw(c2, 40, -10, false) end),
            record(function() ikdraw.draw(p2, 40, -10, false) end))
        assert.are.same(record(function() ikdraw.draw(c3, 1, 2, true, style) end),
            record(function() ikdraw.draw(p3, 1, 2, true, style) end))
        assert.are.same(record(function() ikdraw.draw(c_held) end), record(function() ikdraw.draw(p_held) end))
        assert.are.same(record(function() ikdraw.limits(c2) end), record(function() ikdraw.limits(p2) end))
        assert.are.equal(1, #record(function() ikdraw.limits(p2) end)[3])
        assert.are.same(ikdraw.positions(c2), ikdraw.positions(p2))
    end)

    it("ikdraw.rig leaves LÖVE's colour and line width as it found them", function()
        local rig, c = figure()
        c[2]:set_target(-12, 14)
        c[4]:set_target_angle(1)
        c[4]:set_target(0, 25)
        graphics.setColor(0.1, 0.2, 0.3, 0.4)
        graphics.setLineWidth(7)
        ikdraw.rig(rig)
        assert.are.same({ 0.1, 0.2, 0.3, 0.4 }, calls.colour)
        assert.are.equal(7, calls.width)
    end)

    it("reuses one positions table per chain, refilled on each call", function()
        local c = ik.chain2d({ 1, 1 })
        local p = ikdraw.positions(c)
        assert.are.equal(p, ikdraw.positions(c))
        c:set_angle(1, 1)
        local x, y = c:joint(2)
        assert.are.equal(p, ikdraw.positions(c))
        assert.is_true(near(p[3], x) and near(p[4], y))
        local other = ikdraw.positions(ik.chain2d({ 1, 1 }))
        assert.are_not.equal(p, other)
    end)

    it("allocates nothing per draw (20,000 draws of a 2D and a 3D chain with targets, a 2D rig and a 3D rig with position and orientation goals, < 1 KB)", function()
        local c2 = ik.chain2d({ 30, 20, 10, 5 }, 100, 100)
        local c3 = ik.chain3d({ 1, 1, 1 })
        c3:solve(1, 1, 1)
        local style = { x = 10, y = 20, scale = 40, flip_y = true }
        local rig2, f = figure()
        f[2]:set_target(-12, 14)
        f[3]:set_target(100, 0)
        f[4]:set_target(0, 25)
        f[4]:set_target_angle(1.5)
        f[2]:set_limit(1, -1, 1)
        rig2:solve()
        local root, limb = ik.chain3d({ 1, 1 }), ik.chain3d({ 1, 1 })
        limb:attach(root, 3)
        local rig3 = ik.rig({ root, limb })
        limb:set_target(2, 1.5, 0.5)
        limb:set_target_rotation(1, 0, 0, 1)
        rig3:solve()
        calls.counting = true
        local function loop(n)
            for k = 1, n do
                ikdraw.draw(c2, 50, 60, k % 2 == 0)
                ikdraw.draw(c3, 1, 1, nil, style)
                ikdraw.rig(rig2)
                ikdraw.rig(rig3, style)
            end
        end
        loop(2000)
        loop(2000) -- LuaJIT compiles its traces before the measurement
        collectgarbage("collect")
        collectgarbage("collect")
        collectgarbage("stop")
        -- A full collection in Lua 5.2 to 5.4 shrinks the VM's stack and frees its spare call
        -- frames; the next call grows them back once (about 1 KB, the same after 1 draw or
        -- 200,000). One draw first, so the count below is the draws' own.
        loop(1)
        local function count()
            local before = collectgarbage("count")
            loop(20000)
            return collectgarbage("count") - before
        end
        -- A one-off growth (LuaJIT, about 1 run in 10 in CI: 2.9 KB once) is counted again
        -- and the smaller count kept, as spec/alloc_spec.lua does: garbage made per draw
        -- would show in both (20,000 draws: 20 KB at a byte each).
        local grown = count()
        if grown >= 1 then grown = math.min(grown, count()) end
        collectgarbage("restart")
        assert.is_true(grown < 1, string.format("%.2f KB allocated", grown))
        assert.is_true(calls.line_count > 0 and calls.circle_count > 0 and calls.arc_count > 0)
    end)
end)
