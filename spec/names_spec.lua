-- The names that say what they mean, and the old ones kept beside them (README, The Lua
-- API): ik.two_bone_middle(l1, l2, x, y [, bend]) and ik.two_bone_middle3(l1, l2, x, y, z,
-- px, py, pz) take the lengths first, as ik.two_bone does, and give exactly what
-- ik.two_bone_joint(x, y, l1, l2 [, bend]) and ik.two_bone_joint3(x, y, z, l1, l2, px, py,
-- pz) give; their errors name the arguments in their own order. rig:chain_count() is
-- rig:count().

local h = require("spec.helpers")
local ik = require("ik")

describe("ik.two_bone_middle and ik.two_bone_middle3", function()
    it("give the old vector forms' results bit for bit, reached or not, either bend (2000 random cases each)", function()
        local rng = h.rng(4411)
        for trial = 1, 2000 do
            local l1, l2 = 0.01 + 3 * rng.next(), 0.01 + 3 * rng.next()
            local x, y, z = 8 * rng.next() - 4, 8 * rng.next() - 4, 8 * rng.next() - 4
            local px, py, pz = rng.next() - 0.5, rng.next() - 0.5, rng.next() - 0.5
            local bend = trial % 2 == 0 and 1 or -1
            local a = { ik.two_bone_middle(l1, l2, x, y, bend) }
            local b = { ik.two_bone_joint(x, y, l1, l2, bend) }
            assert.are.same(b, a, "2D trial " .. trial)
            local a3 = { ik.two_bone_middle3(l1, l2, x, y, z, px, py, pz) }
            local b3 = { ik.two_bone_joint3(x, y, z, l1, l2, px, py, pz) }
            assert.are.same(b3, a3, "3D trial " .. trial)
            assert.are.equal(4, #a3)
            -- the middle joint is l1 from the root
            assert(h.near(math.sqrt(a3[1] ^ 2 + a3[2] ^ 2 + a3[3] ^ 2), l1, 1e-12), "3D trial " .. trial)
        end
    end)

    it("default to bend 1, as ik.two_bone does, and agree with its pose", function()
        local jx, jy, reached = ik.two_bone_middle(1, 1, 1, 1)
        local a1 = ik.two_bone(1, 1, 1, 1)
        assert.is_true(reached)
        assert(h.near(jx, math.cos(a1), 1e-12) and h.near(jy, math.sin(a1), 1e-12))
    end)

    it("name the bad argument by its place in the new order", function()
        h.assert_argerror(1, "two_bone_middle", function() ik.two_bone_middle(-1, 2, 0.5, 1.5) end)
        h.assert_argerror(2, "two_bone_middle", function() ik.two_bone_middle(1, -2, 0.5, 1.5) end)
        h.assert_argerror(3, "two_bone_middle", function() ik.two_bone_middle(1, 2, 0 / 0, 1.5) end)
        h.assert_argerror(4, "two_bone_middle", function() ik.two_bone_middle(1, 2, 0.5, "x") end)
        h.assert_argerror(5, "two_bone_middle", function() ik.two_bone_middle(1, 2, 0.5, 1.5, 0) end)
        h.assert_argerror(1, "two_bone_middle3", function() ik.two_bone_middle3(-1, 2, 1, 0, 0, 0, 1, 0) end)
        h.assert_argerror(2, "two_bone_middle3", function() ik.two_bone_middle3(1, nil, 1, 0, 0, 0, 1, 0) end)
        h.assert_argerror(5, "two_bone_middle3", function() ik.two_bone_middle3(1, 2, 1, 0, math.huge, 0, 1, 0) end)
        h.assert_argerror(8, "two_bone_middle3", function() ik.two_bone_middle3(1, 2, 1, 0, 0, 0, 1, {}) end)
    end)
end)

describe("rig:chain_count()", function()
    it("is the number of chains, as rig:count() and #rig", function()
        local body, arm = ik.chain2d({ 1 }), ik.chain2d({ 1, 1 })
        arm:attach(body, 2)
        local rig = ik.rig({ body, arm })
        assert.are.equal(2, rig:chain_count())
        assert.are.equal(rig:count(), rig:chain_count())
        assert.are.equal(#rig, rig:chain_count())
    end)
end)
