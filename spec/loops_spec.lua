-- Closed loops (API.md, "Closed loops"): chain:attach_tip, detach_tip, tip_parent; the held
-- point as a single chain's goal; loops solved in rigs (a four-bar linkage against its
-- analytic solution, two hands on a staff), rigs with several roots, and every misuse.

local ik = require("ik")
local h = require("spec.helpers")
local L = require("bench.linkages")

local unpack = table.unpack or unpack
local abs, sqrt, pi = math.abs, math.sqrt, math.pi

local function new(dim, lengths)
    return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

local function snap(c)
    local s = c:dim() == 2 and h.snapshot(c) or h.snapshot3(c)
    s.target = { c:target() }
    s.tip = { c:tip_parent() }
    return s
end

local function dist(a, b)
    local d = 0
    for k = 1, #a do d = d + (a[k] - b[k]) ^ 2 end
    return sqrt(d)
end

-- Every bone of c its length, to rel relative.
local function lengths_kept(c, rel)
    for i = 1, #c do
        local l = dist({ c:joint(i) }, { c:joint(i + 1) })
        if abs(l - c:length(i)) > rel * c:length(i) then return false end
    end
    return true
end

for _, dim in ipairs({ 2, 3 }) do
    local z = dim == 3 and { 0 } or {}
    local function pt(...)
        local t = { ... }
        if dim == 3 and #t == 2 then t[3] = 0 end
        return t
    end

    describe(dim .. "D tip holds", function()
        it("attach_tip holds the tip at a joint of another chain: tip_parent names it, target() reads the point where it is now", function()
            local a, b = new(dim, { 1, 1 }), new(dim, { 1, 2 })
            if dim == 2 then b:set_base(3, 0) else b:set_base(3, 0, 0) end
            a:attach_tip(b, 3)
            local other, j = a:tip_parent()
            assert.are.equal(b, other)
            assert.are.equal(3, j)
            assert.are.same({ b:joint(3) }, { a:target() })
            if dim == 2 then b:set_angle(1, 0.5) else b:set_rotation(1, h.qaxis(0, 0, 1, 0.5)) end
            assert.are.same({ b:joint(3) }, { a:target() }) -- read where it is now
            assert.are.equal(0, #{ b:tip_parent() })
        end)

        it("an offset is given in the frame of the held chain's bone that ends at the joint", function()
            local a, b = new(dim, { 1, 1 }), new(dim, { 2 })
            if dim == 2 then
                b:set_angle(1, pi / 2)
                a:attach_tip(b, 2, 0.5, 0.25) -- along the bone 0.5, to its left 0.25
                local x, y = a:target()
                assert.is_true(abs(x - -0.25) < 1e-12 and abs(y - 2.5) < 1e-12, x .. " " .. y)
            else
                b:set_rotation(1, h.qaxis(0, 0, 1, pi / 2))
                a:attach_tip(b, 2, 0.5, 0.25, 0.125)
                local x, y, zz = a:target()
                assert.is_true(abs(x - -0.25) < 1e-12 and abs(y - 2.5) < 1e-12 and abs(zz - 0.125) < 1e-12,
                    x .. " " .. y .. " " .. zz)
            end
            -- at joint 1: the base frame
            a:detach_tip()
            if dim == 2 then
                b:set_base(1, 1, pi)
                a:attach_tip(b, 1, 1, 0)
                local x, y = a:target()
                assert.is_true(abs(x) < 1e-12 and abs(y - 1) < 1e-12)
            else
                b:set_base(1, 1, 1, h.qaxis(0, 0, 1, pi))
                a:attach_tip(b, 1, 1, 0, 0)
                local x, y, zz = a:target()
                assert.is_true(abs(x) < 1e-12 and abs(y - 1) < 1e-12 and abs(zz - 1) < 1e-12)
            end
        end)

        it("a held chain solves alone towards the held point; the other chain does not move", function()
            local a, b = new(dim, { 1, 1, 1 }), new(dim, { 1, 1 })
            if dim == 2 then b:set_base(1, 1.5) else b:set_base(1, 1.5, 0.5) end
            a:attach_tip(b, 2)
            local before = snap(b)
            local reached, d = a:solve()
            assert.is_true(reached)
            assert.is_true(dist({ a:effector() }, { b:joint(2) }) <= d + 1e-12)
            assert.is_true(d <= a:settings().tolerance)
            local after = snap(b)
            after.target, before.target = nil, nil
            h.assert_unchanged(before, after, "solving the held chain")
            -- every solver, and solve_many with nil targets
            for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
                if dim == 2 then a:set_angles({ 0, 0, 0 }) else a:set_rotations({ 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 }) end
                assert.is_true((a["solve_" .. solver](a)))
            end
            local reached_count = ik.solve_many({ a }, nil)
            assert.are.equal(1, reached_count)
        end)

        it("set_target and solve(x, y[, z]) on a held chain are errors naming the chain; nothing changes", function()
            local a, b = new(dim, { 1, 1 }), new(dim, { 1 })
            a:attach_tip(b, 2)
            local before = snap(a)
            local msg = h.assert_argerror(0, "set_target", function() a:set_target(unpack(pt(1, 1))) end)
            assert.is_truthy(msg:find("held", 1, true))
            h.assert_argerror(0, "solve", function() a:solve(unpack(pt(1, 1))) end)
            h.assert_argerror(0, "solve_ccd", function() a:solve_ccd(unpack(pt(1, 1))) end)
            h.assert_argerror(2, "solve_many", function() ik.solve_many({ a }, pt(1, 1)) end)
            h.assert_unchanged(before, snap(a), "a refused call")
        end)

        it("detach_tip leaves no position goal and keeps the orientation goal; clear_target releases the hold and both goals", function()
            local a, b = new(dim, { 1, 1 }), new(dim, { 1 })
            a:attach_tip(b, 2)
            if dim == 2 then a:set_target_angle(0.5) else a:set_target_rotation(1, 0, 0, 0) end
            a:detach_tip()
            assert.are.equal(0, #{ a:tip_parent() })
            assert.is_nil(a:target())
            if dim == 2 then assert.is_not_nil(a:target_angle()) else assert.is_not_nil(a:target_rotation()) end
            a:detach_tip() -- nothing happens without a hold
            a:attach_tip(b, 1)
            a:clear_target()
            assert.are.equal(0, #{ a:tip_parent() })
            assert.is_nil(a:target())
            if dim == 2 then assert.is_nil(a:target_angle()) else assert.is_nil(a:target_rotation()) end
            a:set_target(unpack(pt(1, 1))) -- free again
        end)

        it("every misuse of attach_tip is an error naming the argument, and changes nothing", function()
            local a, b, c = new(dim, { 1, 1 }), new(dim, { 1, 1 }), new(dim, { 1 })
            local other = new(5 - dim, { 1 })
            a:attach_tip(c, 1)
            local free = new(dim, { 1, 1 })
            local before = snap(free)
            h.assert_argerror(1, "attach_tip", function() free:attach_tip("x", 1) end)
            h.assert_argerror(1, "attach_tip", function() free:attach_tip(other, 1) end)
            h.assert_argerror(1, "attach_tip", function() free:attach_tip(free, 1) end)
            h.assert_argerror(2, "attach_tip", function() free:attach_tip(b, 0) end)
            h.assert_argerror(2, "attach_tip", function() free:attach_tip(b, 4) end)
            h.assert_argerror(2, "attach_tip", function() free:attach_tip(b, 1.5) end)
            h.assert_argerror(2, "attach_tip", function() free:attach_tip(b) end)
            h.assert_argerror(3, "attach_tip", function() free:attach_tip(b, 2, 0 / 0, 0, 0) end)
            h.assert_argerror(3, "attach_tip", function() free:attach_tip(b, 2, 1e301, 0, 0) end)
            h.assert_argerror(4, "attach_tip", function() free:attach_tip(b, 2, 1) end) -- all or none
            h.assert_argerror(3 + dim, "attach_tip", function() free:attach_tip(b, 2, 0, 0, 0, 0) end)
            h.assert_argerror(1, "attach_tip", function() ik.chain2d({ 1 }).attach_tip(5, b, 1) end)
            h.assert_unchanged(before, snap(free), "a refused attach_tip")
            local held = snap(a)
            h.assert_argerror(0, "attach_tip", function() a:attach_tip(b, 1) end) -- held already
            h.assert_unchanged(held, snap(a), "a refused attach_tip")
        end)

        it("the held chain keeps the chain holding its tip alive; a clone holds it too", function()
            local a = new(dim, { 1, 1 })
            do
                local b = new(dim, { 1, 1 })
                if dim == 2 then b:set_base(1, 2) else b:set_base(1, 2, 3) end
                a:attach_tip(b, 3)
                b:attach(new(dim, { 1 }), 1) -- and its own parent
            end
            collectgarbage()
            collectgarbage()
            local b = a:tip_parent()
            assert.is_truthy(b and b:parent())
            local copy = a:clone()
            assert.are.equal(b, (copy:tip_parent()))
            assert.are.same({ a:target() }, { copy:target() })
            -- both links kept: a parent and a hold on one chain
            local p = new(dim, { 1 })
            copy:attach(p, 2)
            assert.are.equal(p, (copy:parent()))
            assert.are.equal(b, (copy:tip_parent()))
            copy:detach()
            assert.are.equal(b, (copy:tip_parent()))
        end)

        it("a gait refuses to update while a leg's tip is held, and changes nothing", function()
            local leg, b = new(dim, { 1, 1 }), new(dim, { 1 })
            if dim == 2 then leg:set_angles({ -pi / 2, 0 }) else leg:set_rotation(1, h.qaxis(0, 0, 1, -pi / 2)) end
            local g = ik.gait({ leg }, { stride = 0.5 })
            leg:attach_tip(b, 2)
            local before = snap(leg)
            assert.has_error(function() g:update(0.1) end)
            h.assert_unchanged(before, snap(leg), "a refused update")
        end)
    end)

    describe(dim .. "D loops in rigs", function()
        for _, solver in ipairs({ "fabrik", "relax" }) do
            it(solver .. ": a four-bar linkage (crank-rocker) driven through a full crank turn in 1-degree steps closes to 1e-6 and its rocker follows the analytic angle on its branch to 1e-6", function()
                local r = L.four_bar_row(dim, solver)
                assert.are.equal(360, r.reached)
                assert.is_true(r.gap <= 1e-6, "gap " .. r.gap)
                assert.is_true(r.angle <= 1e-6, "rocker angle off by " .. r.angle)
            end)

            it(solver .. ": a linkage that cannot close at its crank's angle is not reached; every number finite, every bone its length", function()
                local r = L.impossible_row(dim, solver)
                assert.is_false(r.reached)
                assert.is_true(r.finite)
                assert.is_true(r.lengths <= 1e-12, "lengths off by " .. r.lengths)
                assert.is_true(r.gap >= 5 - 1e-9, "gap " .. r.gap) -- at best 7 - 1 - 1
            end)
        end

        it("two hands on a staff: staff-tip goals from random closed poses within the limits, from rest, reached with the loop closed (>= 97% FABRIK, >= 90% relax)", function()
            local fabrik = L.staff_rates(dim, "fabrik", 150)
            local relax = L.staff_rates(dim, "relax", 150)
            print(string.format("\nSTAFF %dD: fabrik %.1f%% (%.1f it), relax %.1f%% (%.1f it), 150 goals", dim,
                fabrik.rate, fabrik.its, relax.rate, relax.its))
            assert.is_true(fabrik.rate >= 97, "fabrik " .. fabrik.rate)
            assert.is_true(relax.rate >= 90, "relax " .. relax.rate)
        end)

        it("a loop whose held chain is outside the rig is a fixed goal: the other chain does not move", function()
            local body, arm, bar = new(dim, { 1 }), new(dim, { 1, 1 }), new(dim, { 1 })
            arm:attach(body, 2)
            if dim == 2 then bar:set_base(0.5, 1.5) else bar:set_base(0.5, 1.5, 0) end
            arm:attach_tip(bar, 2)
            local rig = ik.rig({ body, arm })
            local before = snap(bar)
            local reached, d = rig:solve()
            assert.is_true(reached)
            assert.is_true(dist({ arm:effector() }, { bar:joint(2) }) <= 1e-3 and d <= 1e-3)
            local after = snap(bar)
            before.target, after.target = nil, nil
            h.assert_unchanged(before, after, "the rig's solve")
        end)

        it("a rig may have several roots when holds join them: each root's base stays; roots not joined are an error", function()
            local left, right = new(dim, { 1, 1 }), new(dim, { 1, 1 })
            if dim == 2 then right:set_base(2.5, 0) else right:set_base(2.5, 0, 0) end
            local tool = new(dim, { 0.5 })
            tool:attach(right, 3)
            assert.has_error(function() ik.rig({ left, right, tool }) end, nil)
            left:attach_tip(right, 3)
            local rig = ik.rig({ left, right, tool })
            tool:set_target(unpack(pt(1.2, 1.4)))
            local lb, rb = { left:base() }, { right:base() }
            local reached = rig:solve()
            assert.is_true(reached)
            assert.is_true(dist({ left:effector() }, { right:joint(3) }) <= 1e-3)
            assert.are.same(lb, { left:base() })
            assert.are.same(rb, { right:base() })
        end)

        it("holds changed after ik.rig make rig:solve an error that changes nothing; the same hold made again solves", function()
            local body, arm, arm2 = new(dim, { 1 }), new(dim, { 1, 1 }), new(dim, { 1, 1 })
            arm:attach(body, 2)
            arm2:attach(body, 2)
            arm2:attach_tip(arm, 3)
            local rig = ik.rig({ body, arm, arm2 })
            arm:set_target(unpack(pt(0.5, 1.5)))
            for _, change in ipairs({
                function() arm2:detach_tip() end,
                function() arm2:clear_target() end,
                function() arm2:detach_tip(); arm2:attach_tip(arm, 2) end,
                function() arm2:detach_tip(); arm2:attach_tip(body, 2) end,
            }) do
                change()
                local before = { snap(body), snap(arm), snap(arm2) }
                local ok, err = pcall(rig.solve, rig)
                assert.is_false(ok)
                assert.is_truthy(tostring(err):find("since it was made", 1, true), err)
                h.assert_unchanged(before, { snap(body), snap(arm), snap(arm2) }, "a refused rig solve")
                arm2:detach_tip()
                arm2:attach_tip(arm, 3)
            end
            assert.is_true((rig:solve()))
        end)

        it("limits, an orientation goal on the held chain and max_turn are honoured in a loop", function()
            local body, arm, arm2 = new(dim, { 1 }), new(dim, { 1, 1 }), new(dim, { 1, 1, 0.3 })
            arm:attach(body, 2)
            arm2:attach(body, 2)
            if dim == 2 then
                arm:set_angles({ 0.5, 0.5 })
                arm2:set_angles({ -0.5, 1, 0.5 })
                arm2:set_limit(2, 0, 2)
                arm2:set_target_angle(1)
            else
                arm:set_rotation(1, h.qaxis(0, 0, 1, 0.5))
                arm2:set_hinge(2, 0, 0, 1, 0, 2)
                arm2:set_target_rotation(h.qaxis(0, 0, 1, 1))
            end
            arm2:attach_tip(arm, 3)
            local rig = ik.rig({ body, arm, arm2 })
            local reached, d = rig:solve()
            assert.is_true(reached, "distance " .. d)
            local e = arm2:goal_error()
            assert.is_true(e <= 1e-3)
            local _, ae = arm2:goal_error()
            assert.is_true(ae <= 1e-3, "orientation off by " .. ae)
            if dim == 2 then
                assert.is_true(arm2:angle(2) >= -1e-12 and arm2:angle(2) <= 2 + 1e-12)
            end
            -- max_turn: no bone of the loop turns more than it in a solve
            arm:configure({ max_turn = 0.05 })
            arm2:configure({ max_turn = 0.05 })
            body:configure({ max_turn = 0.05 })
            arm:set_target(unpack(pt(-0.5, 1.2)))
            local was = dim == 2 and arm:angle(1) or { arm:rotation(1) }
            rig:solve()
            if dim == 2 then
                assert.is_true(abs(h.angle_diff(arm:angle(1), was)) <= 0.05 + 1e-12)
            else
                local w, x, y, zz = arm:rotation(1)
                assert.is_true(h.qdist(w, x, y, zz, unpack(was)) <= 0.05 + 1e-12)
            end
        end)
    end)
end
