-- Attached chains and rigs (API.md, "Attached chains and rigs"): a child carried by every
-- change of its parent and never stale; attach, detach and parent with every misuse
-- refused and nothing changed; the garbage collector; rigs over trees of chains, their
-- settings, their solves (every goal reached where the tree can reach it, conflicts
-- settled by effector_weight, limits and max_turn honoured), 2D and 3D, FABRIK and
-- relaxation.

local ik = require("ik")
local h = require("spec.helpers")

local unpack = table.unpack or unpack
local pi, sqrt, cos, sin, abs = math.pi, math.sqrt, math.cos, math.sin, math.abs

local function new(dim, lengths)
    return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

local function same_point(a, b)
    for k = 1, #a do
        if a[k] ~= b[k] then return false end
    end
    return #a == #b
end

local function quat_axis_angle(x, y, z, a)
    local s = sin(a / 2)
    local l = sqrt(x * x + y * y + z * z)
    return cos(a / 2), s * x / l, s * y / l, s * z / l
end

describe("attached chains", function()
    it("a child's base is its parent's joint j, its base frame the parent's bone ending there turned by the offset", function()
        local p = ik.chain2d({ 1, 1 }, 0.5, 0.5, 0.3)
        p:set_angle(2, 0.7)
        local c = ik.chain2d({ 2 })
        c:attach(p, 2, 0.25)
        local bx, by, ba = c:base()
        local jx, jy = p:joint(2)
        assert.are.equal(jx, bx)
        assert.are.equal(jy, by)
        assert.is_true(h.near(ba, 0.3 + 0.25, 1e-15)) -- bone 1's world angle, turned by 0.25
        local pp, j = c:parent()
        assert.are.equal(p, pp)
        assert.are.equal(2, j)
        -- joint 1: the parent's base frame
        local d = ik.chain2d({ 1 })
        d:attach(p, 1)
        local _, _, da = d:base()
        assert.is_true(h.near(da, 0.3, 1e-15))
    end)

    it("every change of the parent carries the child rigidly, and reading the child always shows its place on the current parent (solve, set_angle, set_base, set_length, set_angles, set_points), 2D and 3D, through three generations", function()
        for _, dim in ipairs({ 2, 3 }) do
            local a, b, c = new(dim, { 1, 1, 1 }), new(dim, { 1, 1 }), new(dim, { 0.5, 0.5 })
            b:attach(a, 3)
            c:attach(b, 2)
            if dim == 2 then c:set_angle(1, 0.4) else c:set_rotation(1, quat_axis_angle(0, 0, 1, 0.4)) end
            local function check(what)
                assert.is_true(same_point({ b:joint(1) }, { a:joint(3) }), what .. ": b not on a")
                assert.is_true(same_point({ c:joint(1) }, { b:joint(2) }), what .. ": c not on b")
                -- c's local pose is kept: its first bone stays at its angle to b's first bone
                if dim == 2 then
                    assert.is_true(h.near(c:angle(1), 0.4, 1e-12), what .. ": c's angle " .. c:angle(1))
                end
            end
            check("attached")
            a:solve(unpack({ 1.5, 1.5, 0.5 }, 1, dim))
            check("a solved")
            if dim == 2 then a:set_angle(2, -0.6) else a:set_rotation(2, quat_axis_angle(1, 0, 0, 0.6)) end
            check("a posed")
            if dim == 2 then a:set_base(3, 4, 1) else a:set_base(3, 4, 5, quat_axis_angle(0, 1, 0, 0.5)) end
            check("a moved")
            a:set_length(1, 2.5)
            check("a's bone lengthened")
            b:solve(unpack({ 0, 0, 0 }, 1, dim))
            check("b solved")
            if dim == 2 then a:set_angles({ 0.1, 0.2, 0.3 }) end
            check("a's angles set")
            a:set_points(dim == 2 and { 3, 4, 3, 5, 4, 5, 4, 6 } or { 3, 4, 5, 3, 5, 5, 4, 5, 5, 4, 6, 5 })
            check("a posed from points")
        end
    end)

    it("detach keeps the child where it is in the world; set_base on an attached chain is an error that says so; base() returns the world base", function()
        local p = ik.chain2d({ 1, 1 }, 1, 2, 0.5)
        local c = ik.chain2d({ 1, 1 })
        c:attach(p, 3)
        c:set_angle(2, 0.3)
        local before = c:positions()
        local ok, msg = h.argerror(0, "set_base", function() c:set_base(0, 0) end)
        assert.is_true(ok, msg)
        local _, err = pcall(c.set_base, c, 0, 0)
        assert.is_truthy(tostring(err):find("detach", 1, true), tostring(err))
        c:detach()
        assert.is_nil(c:parent())
        assert.are.same(before, c:positions())
        p:set_angle(1, 1) -- no longer carried
        assert.are.same(before, c:positions())
        c:set_base(0, 0)
        c:detach() -- nothing to do
    end)

    it("misuse is refused with the argument named, and nothing changes: another dimension, a bad joint, a chain already attached, a cycle, not a chain", function()
        local a2, b2, c2 = ik.chain2d({ 1, 1 }), ik.chain2d({ 1 }), ik.chain2d({ 1 })
        local a3 = ik.chain3d({ 1, 1 })
        b2:attach(a2, 2)
        local cases = {
            { 1, function() c2:attach(a3, 1) end },
            { 2, function() c2:attach(a2, 4) end },
            { 2, function() c2:attach(a2, 0) end },
            { 2, function() c2:attach(a2, 1.5) end },
            { 1, function() c2:attach({}, 1) end },
            { 3, function() c2:attach(a2, 1, 0 / 0) end },
            { 4, function() c2:attach(a2, 1, 0, 1) end },
            { 0, function() b2:attach(c2, 1) end }, -- already attached
            { 1, function() a2:attach(b2, 1) end }, -- a cycle: b2 hangs on a2
            { 1, function() a2:attach(a2, 1) end }, -- itself
            { 3, function() ik.chain3d({ 1 }):attach(a3, 1, 0, 0, 0, 0) end },
        }
        for k, case in ipairs(cases) do
            local before = { a2:positions(), b2:positions(), c2:positions() }
            local ok, msg = h.argerror(case[1], "attach", case[2])
            assert.is_true(ok, "case " .. k .. ": " .. msg)
            assert.are.same(before, { a2:positions(), b2:positions(), c2:positions() })
        end
        assert.is_nil(c2:parent())
        assert.is_nil(a2:parent())
    end)

    it("a child keeps its parent alive for the garbage collector; a parent does not keep its children", function()
        local weak = setmetatable({}, { __mode = "v" })
        local child
        do
            local parent = ik.chain2d({ 1, 1 }, 5, 5)
            child = ik.chain2d({ 1 })
            child:attach(parent, 3)
            weak.parent = parent
        end
        collectgarbage()
        collectgarbage()
        assert.is_not_nil(weak.parent)
        local x = child:joint(1)
        assert.are.equal(7, x)
        child:detach()
        child = nil
        collectgarbage()
        collectgarbage()
        assert.is_nil(weak.parent)
        -- a parent alone does not keep a child
        local p = ik.chain2d({ 1 })
        do
            local c = ik.chain2d({ 1 })
            c:attach(p, 2)
            weak.child = c
        end
        collectgarbage()
        collectgarbage()
        assert.is_nil(weak.child)
    end)
end)

describe("a hierarchy no one holds", function()
    -- Chains 50 deep, each attached to the one before, a clone of the deepest (it hangs on
    -- the same parent) and a rig over them all, made in a function of their own so that
    -- no stack slot keeps them; returns a weak table of them all and how many there are.
    local DEPTH = 50
    local function hierarchy(dim)
        local weak = setmetatable({}, { __mode = "v" })
        local make = dim == 2 and ik.chain2d or ik.chain3d
        local chains = { make({ 1, 1 }) }
        for k = 2, DEPTH do
            chains[k] = make({ 1, 1 })
            chains[k]:attach(chains[k - 1], 3)
        end
        for k = 1, DEPTH do weak[k] = chains[k] end
        -- The clone in a local until the rig is made: held by the weak table alone, a step
        -- of the collector while ik.rig allocates may free it (Lua 5.5's did).
        local clone = chains[DEPTH]:clone()
        weak[DEPTH + 1] = clone
        weak[DEPTH + 2] = ik.rig(chains)
        return weak, DEPTH + 2
    end

    for _, dim in ipairs({ 2, 3 }) do
        it(dim .. "D: 50 chains deep, a clone and a rig over them are freed by one full collection (Lua 5.1 and LuaJIT freed a level a collection)", function()
            local weak, n = hierarchy(dim)
            collectgarbage("collect")
            local left = 0
            for k = 1, n do
                if weak[k] ~= nil then left = left + 1 end
            end
            assert.are.equal(0, left)
        end)
    end

    it("what a held chain or rig needs is kept: its parents up to the root, a rig's chains", function()
        local weak, n = hierarchy(2)
        local tip, clone, rig = weak[DEPTH], weak[DEPTH + 1], weak[DEPTH + 2]
        collectgarbage("collect")
        collectgarbage("collect")
        for k = 1, n do assert.is_not_nil(weak[k], k) end
        rig = nil
        tip:detach() -- now only the clone holds chain DEPTH - 1, and through it the rest
        collectgarbage("collect")
        collectgarbage("collect")
        assert.is_nil(weak[DEPTH + 2])
        for k = 1, DEPTH - 1 do assert.is_not_nil(weak[k], k) end
        assert.are.equal(2 * (DEPTH - 1), (clone:joint(1))) -- on the tip of chain DEPTH - 1
        clone:detach()
        collectgarbage("collect")
        for k = 1, DEPTH - 1 do assert.is_nil(weak[k], k) end
        assert.are.equal(tip, weak[DEPTH])
        assert.are.equal(clone, weak[DEPTH + 1])
    end)
end)

-- A humanoid: a 3-bone spine (the root, up from the hips), two 2-bone arms and a 2-bone
-- neck on its top, two 2-bone legs on its base: a body about 10 units tall.
local function humanoid(dim)
    local spine, arms, legs, neck = { 1.2, 1.2, 1.2 }, { 1.5, 1.4 }, { 2.2, 2.1 }, { 0.5, 0.6 }
    local chains = { new(dim, spine), new(dim, arms), new(dim, arms), new(dim, legs), new(dim, legs), new(dim, neck) }
    local offsets = { 1.2, -1.2, 3.0, -3.0, 0 }
    local joints = { 4, 4, 1, 1, 4 }
    if dim == 2 then
        chains[1]:set_base(0, 0, pi / 2)
    else
        chains[1]:set_base(0, 0, 0, quat_axis_angle(0, 0, 1, pi / 2))
    end
    for k = 2, 6 do
        if dim == 2 then
            chains[k]:attach(chains[1], joints[k - 1], offsets[k - 1])
        else
            chains[k]:attach(chains[1], joints[k - 1], quat_axis_angle(0, 0.3 * (k % 2) + 0.1, 1, offsets[k - 1]))
        end
    end
    return chains
end

-- A spider: a 2-bone body (the root) and eight 3-bone legs, four on each body joint.
local function spider(dim)
    local chains = { new(dim, { 1, 1 }) }
    for k = 1, 8 do
        chains[k + 1] = new(dim, { 1.2, 1.5, 1.8 })
        local a = (k % 2 == 1 and 1 or -1) * (0.5 + 0.3 * ((k - 1) % 4))
        if dim == 2 then chains[k + 1]:attach(chains[1], k <= 4 and 2 or 3, a)
        else chains[k + 1]:attach(chains[1], k <= 4 and 2 or 3, quat_axis_angle(0.2, 0.1, 1, a)) end
    end
    return chains
end

local function random_pose(rng, chains, dim)
    for _, c in ipairs(chains) do
        for i = 1, #c do
            if dim == 2 then
                c:set_angle(i, rng.uniform(-1.2, 1.2))
            else
                c:set_rotation(i, quat_axis_angle(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0, 1.2)))
            end
        end
    end
end

local function straighten(chains, dim)
    for _, c in ipairs(chains) do
        for i = 1, #c do
            if dim == 2 then c:set_angle(i, 0) else c:set_rotation(i, 1, 0, 0, 0) end
        end
    end
end

-- Every chain sound: finite joints, lengths kept, a child's base on its parent's joint.
local function assert_sound(chains, what)
    for k, c in ipairs(chains) do
        local dim = c:dim()
        local p = c:positions()
        for _, v in ipairs(p) do assert.is_true(h.finite(v), what) end
        for i = 1, #c do
            local d2 = 0
            for a = 1, dim do d2 = d2 + (p[dim * i + a] - p[dim * (i - 1) + a]) ^ 2 end
            assert.is_true(h.near(sqrt(d2), c:length(i), 1e-9), string.format("%s: chain %d bone %d is %.17g, not %.17g", what, k, i, sqrt(d2), c:length(i)))
        end
        local parent, j = c:parent()
        if parent then
            assert.is_true(same_point({ c:joint(1) }, { parent:joint(j) }), what .. ": chain " .. k .. " off its parent")
        end
    end
end

describe("rigs", function()
    it("ik.rig takes an array of chains that form one tree; #rig and rig:chain(k) give them back in the order given", function()
        local chains = humanoid(2)
        local rig = ik.rig({ chains[3], chains[1], chains[2], chains[6], chains[4], chains[5] })
        assert.are.equal(6, #rig)
        assert.are.equal(6, rig:count())
        assert.are.equal(chains[3], rig:chain(1))
        assert.are.equal(chains[1], rig:chain(2))
        assert.are.equal("ik.rig(6 chains)", tostring(rig))
        -- a subtree is a tree too; its root hangs on a chain outside, which the rig holds still
        local arm = ik.rig({ chains[2] })
        assert.are.equal(1, #arm)
    end)

    it("refuses what is not one tree, naming the problem: no chain, not a chain, a chain twice, two roots, two dimensions", function()
        local c = humanoid(2)
        local lone = ik.chain2d({ 1 })
        local cases = {
            { {}, "at least one chain" },
            { { c[1], "x" }, "chain 2 is not an ik chain" },
            { { c[1], c[2], c[2] }, "chain 3" },
            { { c[1], lone }, "chain 2: the chains do not form one tree" },
            { { c[2], c[3] }, "the chains do not form one tree" },
            { { c[1], ik.chain3d({ 1 }) }, "chain 2" },
        }
        for _, case in ipairs(cases) do
            local ok, err = pcall(ik.rig, case[1])
            assert.is_false(ok)
            assert.is_truthy(tostring(err):find("bad argument #1 to '", 1, true), tostring(err))
            assert.is_truthy(tostring(err):find(case[2], 1, true), tostring(err) .. " lacks " .. case[2])
        end
    end)

    it("configure: solver fabrik (default) or relax, iterations, tolerance, angle_tolerance; anything else is an error naming argument 1 and changing nothing", function()
        local rig = ik.rig(humanoid(2))
        assert.are.same({ solver = "fabrik", iterations = 64, tolerance = 1e-3, angle_tolerance = 1e-3 }, rig:settings())
        assert.are.equal(rig, rig:configure({ solver = "relax", iterations = 10, tolerance = 0.01, angle_tolerance = 0.1 }))
        assert.are.same({ solver = "relax", iterations = 10, tolerance = 0.01, angle_tolerance = 0.1 }, rig:settings())
        for _, bad in ipairs({ { solver = "ccd" }, { solver = "aim" }, { iterations = 0 }, { tolerance = -1 }, { mix = 0.5 }, { iterations = "3" } }) do
            local ok, msg = h.argerror(1, "configure", function() rig:configure(bad) end)
            assert.is_true(ok, msg)
        end
        assert.are.same({ solver = "relax", iterations = 10, tolerance = 0.01, angle_tolerance = 0.1 }, rig:settings())
    end)

    it("with no goal, nothing moves: true, 0, 0", function()
        local chains = humanoid(2)
        local rig = ik.rig(chains)
        local before = {}
        for k, c in ipairs(chains) do before[k] = c:positions() end
        assert.are.same({ true, 0, 0 }, { rig:solve() })
        for k, c in ipairs(chains) do assert.are.same(before[k], c:positions()) end
    end)

    for _, solver in ipairs({ "fabrik", "relax" }) do
        for _, dim in ipairs({ 2, 3 }) do
            it(string.format("%dD %s: goals from random poses of the whole humanoid and spider, solved from a straight start, are reached (humanoid FABRIK >= 90%%, spider >= 80%%; relaxation lower) and every chain stays sound", dim, solver), function()
                local rng = h.rng(7000 + dim + (solver == "relax" and 10 or 0))
                for _, make in ipairs({ humanoid, spider }) do
                    local chains = make(dim)
                    local rig = ik.rig(chains):configure({ solver = solver, iterations = 100 })
                    local reached, trials = 0, 60
                    for _ = 1, trials do
                        random_pose(rng, chains, dim)
                        for k = 2, #chains do chains[k]:set_target(chains[k]:effector()) end
                        straighten(chains, dim)
                        local r, d, it = rig:solve()
                        local worst = 0
                        for k = 2, #chains do
                            local t = { chains[k]:target() }
                            local e = { chains[k]:effector() }
                            local d2 = 0
                            for a = 1, dim do d2 = d2 + (t[a] - e[a]) ^ 2 end
                            worst = math.max(worst, sqrt(d2))
                        end
                        assert.is_true(h.near(d, worst, 1e-12), string.format("reported %.17g, worst goal %.17g", d, worst))
                        assert.are.equal(d <= 1e-3, r)
                        assert.is_true(it <= 100)
                        assert_sound(chains, solver)
                        if r then reached = reached + 1 end
                    end
                    local bar = solver == "fabrik" and (make == humanoid and 0.9 or 0.8) or (make == humanoid and 0.5 or 0.2)
                    assert.is_true(reached >= trials * bar, string.format("%s: %d of %d", make == humanoid and "humanoid" or "spider", reached, trials))
                end
            end)
        end
    end

    it("goals that only the whole tree can reach are reached: two hands too far apart for straight arms on a straight spine bend the spine", function()
        for _, solver in ipairs({ "fabrik", "relax" }) do
            local spine = ik.chain2d({ 1, 1, 1 }, 0, 0, pi / 2)
            local left, right = ik.chain2d({ 1, 1 }), ik.chain2d({ 1, 1 })
            left:attach(spine, 4, pi / 2)
            right:attach(spine, 4, -pi / 2)
            -- both hands to the right of the body, at (3.2, 1.5) and (3.2, 0.5): the left arm
            -- cannot reach across from the straight spine's top at (0, 3)
            left:set_target(3.2, 1.5)
            right:set_target(3.2, 0.5)
            local d = sqrt(3.2 ^ 2 + 1.5 ^ 2)
            assert.is_true(sqrt((3.2 - 0) ^ 2 + (1.5 - 3) ^ 2) > 2, "the goal is within the arm's reach from the straight spine")
            local rig = ik.rig({ spine, left, right }):configure({ solver = solver, iterations = 1000 })
            local r = rig:solve()
            assert.is_true(r, solver .. ": not reached")
            assert.is_true(d > 0)
        end
    end)

    it("FABRIK moves a sub-base the whole way the one limb that cannot reach asks: the limbs content there (their goals inside their reach) have no say, so it takes 4 iterations, not 13, and every goal is met, 2D and 3D", function()
        for _, dim in ipairs({ 2, 3 }) do
            -- a 2-bone body standing up (its top at (0, 2)) with four 2-bone legs on its top:
            -- three goals within 1.3 of the top, one 2.6 away (the legs are 2 long)
            local body = dim == 2 and ik.chain2d({ 1, 1 }, 0, 0, pi / 2)
                or ik.chain3d({ 1, 1 }, 0, 0, 0, cos(pi / 4), 0, 0, sin(pi / 4))
            local goals = { { -0.8, 2.3, 0.2 }, { 0.3, 3, -0.4 }, { -0.5, 1.5, 0.5 }, { 2.6, 2, 0 } }
            local chains = { body }
            for k = 1, 4 do
                local leg = new(dim, { 1, 1 })
                leg:attach(body, 3)
                leg:set_target(unpack(goals[k], 1, dim))
                chains[k + 1] = leg
            end
            local r, d, iterations = ik.rig(chains):solve()
            assert.is_true(r, dim .. "D: not reached")
            assert.is_true(d <= 1e-3)
            -- counted in the centroid, the three content legs held the top back: 13 iterations
            assert.is_true(iterations <= 5, dim .. "D: " .. iterations .. " iterations")
            -- the top moved just far enough for the far leg, which ends straight
            local top = { body:effector() }
            local far = 0
            for a = 1, dim do far = far + (goals[4][a] - top[a]) ^ 2 end
            assert.is_true(abs(sqrt(far) - 2) <= 2e-3, dim .. "D: the far leg's goal is " .. sqrt(far) .. " from the top")
        end
    end)

    it("unreachable goals give a finite pose that points the limbs at them", function()
        for _, dim in ipairs({ 2, 3 }) do
            local chains = humanoid(dim)
            local far = { { 100, 0, 0 }, { -100, 0, 0 }, { 0, -100, 0 }, { 10, -100, 0 }, { 0, 100, 0 } }
            for k = 2, 6 do chains[k]:set_target(unpack(far[k - 1], 1, dim)) end
            for _, solver in ipairs({ "fabrik", "relax" }) do
                local r, d = ik.rig(chains):configure({ solver = solver }):solve()
                assert.is_false(r)
                assert.is_true(h.finite(d))
                assert_sound(chains, solver)
                -- each limb points at its goal: its tip is the closest of its joints
                for k = 2, 6 do
                    local t = far[k - 1]
                    local function dist(i)
                        local p = { chains[k]:joint(i) }
                        local s = 0
                        for a = 1, dim do s = s + (p[a] - t[a]) ^ 2 end
                        return sqrt(s)
                    end
                    assert.is_true(dist(3) < dist(2) and dist(2) < dist(1), solver .. " limb " .. k)
                end
            end
        end
    end)

    it("effector_weight settles conflicts: the heavier goal wins the shared bones, the lighter one gives way", function()
        local function solve_with(wl, wr)
            local spine = ik.chain2d({ 1, 1 }, 0, 0, pi / 2)
            local left, right = ik.chain2d({ 1 }), ik.chain2d({ 1 })
            left:attach(spine, 3, pi / 2)
            right:attach(spine, 3, -pi / 2)
            left:configure({ effector_weight = wl })
            right:configure({ effector_weight = wr })
            left:set_target(-3, 2)
            right:set_target(3, 2)
            ik.rig({ spine, left, right }):configure({ iterations = 500 }):solve()
            local function miss(c)
                local x, y = c:effector()
                local tx, ty = c:target()
                return sqrt((x - tx) ^ 2 + (y - ty) ^ 2)
            end
            return miss(left), miss(right)
        end
        local l1, r1 = solve_with(1, 1)
        assert.is_true(abs(l1 - r1) < 1e-6, "equal weights: misses " .. l1 .. " and " .. r1)
        local l2, r2 = solve_with(4, 1)
        assert.is_true(l2 < r2, "left heavier: misses " .. l2 .. " and " .. r2)
        local l3, r3 = solve_with(0, 0)
        assert.is_true(abs(l3 - r3) < 1e-6, "all weights 0 count as equal: " .. l3 .. " and " .. r3)
    end)

    it("limits, orientation goals and max_turn are honoured in a rig", function()
        local chains = humanoid(2)
        for _, c in ipairs(chains) do
            for i = 1, #c do c:set_limit(i, -1, 1) end
        end
        chains[2]:set_target(-1.5, 4)
        chains[2]:set_target_angle(pi)
        chains[3]:set_target(1.5, 4)
        chains[3]:configure({ max_turn = 0.05 })
        local rig = ik.rig(chains)
        local before = chains[3]:angles()
        rig:solve()
        for k, c in ipairs(chains) do
            for i = 1, #c do
                local a = c:angle(i)
                assert.is_true(a >= -1 - 1e-12 and a <= 1 + 1e-12, string.format("chain %d bone %d at %g", k, i, a))
            end
        end
        local after = chains[3]:angles()
        for i = 1, #after do assert.is_true(abs(h.wrap(after[i] - before[i])) <= 0.05 + 1e-9) end
        assert_sound(chains, "limited")
    end)

    it("a chain without goals in it or below it keeps its local pose and is carried", function()
        local chains = humanoid(2)
        chains[6]:set_angle(1, 0.3)
        chains[6]:set_angle(2, -0.2)
        chains[2]:set_target(-2, 3)
        ik.rig(chains):solve()
        assert.are.equal(0.3, chains[6]:angle(1))
        assert.are.equal(-0.2, chains[6]:angle(2))
        assert_sound(chains, "carried")
    end)

    it("a rig whose chains were attached or detached since it was made refuses to solve (argument 1) and changes nothing", function()
        local chains = humanoid(2)
        local rig = ik.rig(chains)
        chains[2]:set_target(-2, 3)
        chains[6]:detach()
        local before = chains[2]:positions()
        local ok, msg = h.argerror(0, "solve", function() rig:solve() end)
        assert.is_true(ok, msg)
        assert.are.same(before, chains[2]:positions())
        chains[6]:attach(chains[1], 4)
        local reached, distance = rig:solve() -- the tree as it was made: solves again
        assert.is_true(reached, tostring(distance))
    end)

    it("the rig keeps its chains alive", function()
        local weak = setmetatable({}, { __mode = "v" })
        local rig
        do
            local chains = humanoid(2)
            weak[1] = chains[3]
            rig = ik.rig(chains)
        end
        collectgarbage()
        collectgarbage()
        assert.is_not_nil(weak[1])
        assert.are.equal(weak[1], rig:chain(3))
    end)

    it("solve_many solves attached chains in the array's order: a child after its parent sees the parent's new pose", function()
        local p, c = ik.chain2d({ 1, 1 }), ik.chain2d({ 1, 1 })
        c:attach(p, 3)
        local n = ik.solve_many({ p, c }, { 0, 2, -1, 2 })
        assert.are.equal(2, n)
        assert.is_true(same_point({ c:joint(1) }, { p:joint(3) }))
        local x, y = c:effector()
        assert.is_true(h.near(x, -1, 1e-3) and h.near(y, 2, 1e-3))
    end)

    -- A leg whose limits hold it where the passes cannot move it (found building the LÖVE
    -- spider): a chain's own solve leaves by CCD sweeps within the limits, and so does a rig.
    local function limited_leg()
        local c = ik.chain2d({ 62, 74, 50 }, 0, 0, -0.863)
        c:set_limit(1, -0.9, 1.2)
        c:set_limit(2, 0.3, 2.7)
        c:set_limit(3, -0.3, 1.5)
        c:set_angles({ 1.2, 1.192, 1.5 })
        return c
    end

    it("a limb held by its limits reaches as the chain's own solve does (CCD sweeps within the limits), with both rig solvers", function()
        local alone = limited_leg()
        assert.is_true((alone:solve(47.6, 46.4)))
        for _, solver in ipairs({ "fabrik", "relax" }) do
            local leg = limited_leg()
            leg:set_target(47.6, 46.4)
            local rig = ik.rig({ leg }):configure({ solver = solver })
            local reached, distance, iterations = rig:solve()
            assert.is_true(reached, solver .. ": distance " .. distance)
            assert.is_true(iterations <= 64)
            local x, y = leg:effector()
            assert.is_true(h.near(x, 47.6, 1e-3) and h.near(y, 46.4, 1e-3))
            for i, a in ipairs(leg:angles()) do
                local lo, hi = leg:limit(i)
                assert.is_true(a >= lo - 1e-9 and a <= hi + 1e-9, solver .. ": bone " .. i .. " beyond its limit")
            end
        end
    end)

    it("a parent held back by max_turn: the limbs on it are solved again from where it leaves them, and reach", function()
        for _, solver in ipairs({ "fabrik", "relax" }) do
            local body = ik.chain2d({ 1, 1 })
            local a, b = ik.chain2d({ 1, 1, 1 }), ik.chain2d({ 1, 1, 1 })
            a:attach(body, 3, -1.0)
            b:attach(body, 2, -2.1)
            body:configure({ max_turn = 0.02 })
            a:set_target(3.2, 1.1)
            b:set_target(-0.2, 1.4)
            local before = body:angles()
            local rig = ik.rig({ body, a, b }):configure({ solver = solver })
            local reached, distance = rig:solve()
            assert.is_true(reached, solver .. ": distance " .. distance)
            for i, angle in ipairs(body:angles()) do
                assert.is_true(math.abs(angle - before[i]) <= 0.02 + 1e-12, solver .. ": the body turned beyond max_turn")
            end
        end
    end)
end)
