-- Large trees of attached chains: deep lines of attachments, chains with many children,
-- rigs of many chains, and rigs whose tree changed behind their back. What each costs is
-- measured by bench/trees.lua (make bench), not timed here: these check that the answers
-- are right at sizes where a quadratic walk took seconds (issue 17 of the audit).

local ik = require("ik")
local h = require("spec.helpers")

local unpack = table.unpack or unpack
-- With IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth of the sizes; against
-- ik.pure a tenth too: it walks the same O(depth) paths as the C core (an attachment's cycle
-- check and its walk to the root), each step a hash lookup in a large table, 30 times slower
-- (a line of 4,000 chains: 3.1 s where the C takes 0.09 s), and the answers are the same.
local scale = (os.getenv("IK_SPEC_QUICK") == "1" or ik.backend == "lua") and 10 or 1
local function size(n) return math.floor(n / scale) end

-- depth chains of one bone of length 1, each on the tip of the one before (joint 2), 2D or
-- 3D, every attachment turned by `turn` (2D: radians; 3D: about z).
local function line(dim, depth, turn)
    local chains = {}
    for k = 1, depth do
        local c = dim == 2 and ik.chain2d({ 1 }) or ik.chain3d({ 1 })
        if k > 1 then
            if dim == 2 then
                c:attach(chains[k - 1], 2, turn)
            else
                c:attach(chains[k - 1], 2, math.cos(turn / 2), 0, 0, math.sin(turn / 2))
            end
        end
        chains[k] = c
    end
    return chains
end

for _, dim in ipairs({ 2, 3 }) do
    describe(dim .. "D trees", function()
        it("the tip of a line of 20,000 attached chains follows its root: read after the root turns, it is where the turns put it (1e-6)", function()
            local depth = size(20000)
            local chains = line(dim, depth, 0)
            local tip = chains[depth]
            for _, angle in ipairs({ 0.5, -1.25, 3 }) do
                if dim == 2 then
                    chains[1]:set_angle(1, angle)
                else
                    chains[1]:set_rotation(1, math.cos(angle / 2), 0, 0, math.sin(angle / 2))
                end
                -- every chain along the root's bone: the tip at depth * (cos, sin)
                local p = { tip:effector() }
                assert.is_true(math.abs(p[1] - depth * math.cos(angle)) < 1e-6, "x " .. p[1])
                assert.is_true(math.abs(p[2] - depth * math.sin(angle)) < 1e-6, "y " .. p[2])
                -- a chain halfway down reads the same line
                local mid = { chains[math.floor(depth / 2)]:effector() }
                assert.is_true(math.abs(mid[1] - depth / 2 * math.cos(angle)) < 1e-6)
            end
        end)

        it("a rig over a line of 5,000 attached chains points it at a goal beyond its reach (1e-6), the root's base still", function()
            local depth = size(5000)
            local chains = line(dim, depth, 0.001)
            local rig = ik.rig(chains)
            local goal = dim == 2 and { 6 * depth, 8 * depth } or { 0, 6 * depth, 8 * depth } -- 10 reaches away
            chains[depth]:set_target(unpack(goal))
            local reached, distance = rig:solve()
            assert.is_false(reached)
            assert.is_true(math.abs(distance - 9 * depth) < 1e-6, tostring(distance))
            local tip = { chains[depth]:effector() }
            for d = 1, dim do
                assert.is_true(math.abs(tip[d] - goal[d] / 10) < 1e-6, d .. ": " .. tip[d])
            end
            local bx, by = chains[1]:base()
            assert.are.same({ 0, 0 }, { bx, by })
        end)

        it("a body of 400 bones with a 2-bone leg on every joint: every leg reaches its goal, with FABRIK and relaxation", function()
            local n = size(400)
            local ones = {}
            for i = 1, n do ones[i] = 1 end
            for _, solver in ipairs({ "fabrik", "relax" }) do
                local body = dim == 2 and ik.chain2d(ones) or ik.chain3d(ones)
                local chains = { body }
                for j = 2, n + 1 do
                    local leg = dim == 2 and ik.chain2d({ 0.5, 0.5 }) or ik.chain3d({ 0.5, 0.5 })
                    if dim == 2 then leg:attach(body, j, -math.pi / 2) else leg:attach(body, j, math.cos(-math.pi / 4), 0, 0, math.sin(-math.pi / 4)) end
                    -- each foot on the ground under its hip, a little ahead
                    local x = j - 1 + 0.3
                    leg:set_target(unpack(dim == 2 and { x, -0.8 } or { x, -0.8, 0 }))
                    chains[#chains + 1] = leg
                end
                local rig = ik.rig(chains)
                rig:configure({ solver = solver, iterations = 100 })
                local reached, distance = rig:solve()
                assert.is_true(reached, solver .. ": " .. tostring(distance))
                for k = 2, #chains, 97 do -- leg k, on joint k, where it was asked to be (1e-3)
                    local p = { chains[k]:effector() }
                    assert.is_true(math.abs(p[1] - (k - 0.7)) <= 1e-3 and math.abs(p[2] + 0.8) <= 1e-3)
                end
            end
        end)

        it("ik.rig over 40,000 chains in one tree: every chain in its place, and the errors still name the first chain to blame", function()
            local count = size(40000)
            local root = dim == 2 and ik.chain2d({ 1, 1 }) or ik.chain3d({ 1, 1 })
            local chains = { root }
            for k = 2, count do
                local c = dim == 2 and ik.chain2d({ 1 }) or ik.chain3d({ 1 })
                c:attach(chains[math.floor(k / 2)], 2)
                chains[k] = c
            end
            local rig = ik.rig(chains)
            assert.are.equal(count, #rig)
            assert.are.equal(chains[count], rig:chain(count))
            assert.are.equal(chains[1234], rig:chain(1234))
            -- a chain twice, far apart: the later place is to blame
            local twice = { unpack(chains, 1, size(7000)) }
            twice[size(7000) + 1] = chains[size(3000)]
            local ok, msg = pcall(ik.rig, twice)
            assert.is_false(ok)
            assert.is_truthy(msg:find(tostring(size(7000) + 1), 1, true), msg)
            -- a second root (a chain whose parent is not in the list) at the end
            local two = { unpack(chains, 1, size(7000)) }
            two[size(7000) + 1] = chains[size(20000)]
            ok, msg = pcall(ik.rig, two)
            assert.is_false(ok)
            assert.is_truthy(msg:find(tostring(size(7000) + 1), 1, true), msg)
        end)
    end)
end

describe("a rig's tree cannot change behind its back", function()
    it("a root detached from the chain outside it hangs on, that chain collected, and the root attached to a new chain (maybe at the same address) is a change: solve refuses and changes nothing", function()
        for try = 1, 20 do
            local root, arm = ik.chain2d({ 1, 1 }), ik.chain2d({ 1 })
            arm:attach(root, 3)
            do
                local outside = ik.chain2d({ 2 })
                root:attach(outside, 2)
            end
            local rig = ik.rig({ root, arm })
            arm:set_target(2, 1)
            assert.is_true((rig:solve()))
            root:detach()
            collectgarbage()
            collectgarbage()
            local new = ik.chain2d({ 2 })
            root:attach(new, 2)
            local before = arm:positions()
            local ok, msg = h.argerror(0, "solve", function() rig:solve() end)
            assert.is_true(ok, "try " .. try .. ": " .. tostring(msg))
            assert.are.same(before, arm:positions())
        end
    end)

    it("a root detached from the chain outside it and attached to it again at the same joint is a change too (the rig cannot tell it from a new chain); an inner chain put back as it was is not", function()
        local outside, root, arm = ik.chain2d({ 2 }), ik.chain2d({ 1, 1 }), ik.chain2d({ 1 })
        root:attach(outside, 2)
        arm:attach(root, 3)
        local rig = ik.rig({ root, arm })
        arm:set_target(3, 1)
        arm:detach()
        arm:attach(root, 3)
        assert.is_true((rig:solve())) -- the same tree
        root:detach()
        root:attach(outside, 2)
        local ok, msg = h.argerror(0, "solve", function() rig:solve() end)
        assert.is_true(ok, msg)
        assert.is_true((ik.rig({ root, arm }):solve())) -- a new rig over it solves
    end)
end)
