-- The lean solves (src/solve.c): a plain 3D chain (no limits, no orientation goal, mix 1,
-- no max_turn, no stretch) solved by two_bone (2 bones) or aim (1 bone) takes a shorter way
-- through the same math. It must give what the general way gives, to rounding: the same
-- reached and iterations, the same pose within 1e-12 of the chain's size, the same
-- distance or angle. The general way is forced on a copy by max_turn = 1e300, which never
-- holds a turn back.

local h = require("spec.helpers")
local ik = require("ik")

local function random_rest(rng, c)
    for i = 1, c:count() do c:set_rotation(i, h.random_quat(rng)) end
end

-- Every joint position and local rotation of a and b within tol.
local function same_pose(a, b, tol)
    for i = 1, a:count() + 1 do
        local ax, ay, az = a:joint(i)
        local bx, by, bz = b:joint(i)
        if h.dist3(ax, ay, az, bx, by, bz) > tol then return false, "joint " .. i end
    end
    for i = 1, a:count() do
        local aw, ax, ay, az = a:rotation(i)
        local bw, bx, by, bz = b:rotation(i)
        if h.qdist(aw, ax, ay, az, bw, bx, by, bz) > tol then return false, "rotation " .. i end
    end
    return true
end

describe("the lean 3D solves", function()
    it("two_bone: the general solve's result and pose, with and without a pole, softness, zero-length bones (3000 solves)", function()
        local rng = h.rng(9071)
        for trial = 1, 300 do
            local l1 = trial % 17 == 0 and 0 or 0.2 + 2 * rng.next()
            local l2 = trial % 23 == 0 and 0 or 0.2 + 2 * rng.next()
            local lean = ik.chain3d({ l1, l2 }, rng.next(), rng.next(), rng.next())
            random_rest(rng, lean)
            local settings = { tolerance = 1e-6 }
            if trial % 3 ~= 0 then
                local px, py, pz = h.random_dir(rng)
                settings.pole = { px, py, pz }
            end
            if trial % 4 == 0 then settings.softness = 0.3 * rng.next() end
            lean:configure(settings)
            local general = lean:clone()
            general:configure({ max_turn = 1e300 })
            local scale = l1 + l2 + 3
            for step = 1, 10 do
                local dx, dy, dz = h.random_dir(rng)
                local r = (l1 + l2) * 1.3 * rng.next()
                local x, y, z = dx * r, dy * r, dz * r
                local ra, da, ia = lean:solve_two_bone(x, y, z)
                local rb, db, ib = general:solve_two_bone(x, y, z)
                local where = string.format("trial %d step %d", trial, step)
                assert.are.equal(rb, ra, where)
                assert.are.equal(ib, ia, where)
                assert(h.near(da, db, 1e-12, scale), where .. ": distance " .. da .. " against " .. db)
                local ok, what = same_pose(lean, general, 1e-12 * scale)
                assert(ok, where .. ": " .. tostring(what))
            end
        end
    end)

    it("aim, one bone: the general solve's result and pose, met or not, tolerance 0 included (3000 solves)", function()
        local rng = h.rng(9072)
        for trial = 1, 300 do
            local lean = ik.chain3d({ 0.5 + rng.next() }, rng.next(), rng.next(), rng.next())
            random_rest(rng, lean)
            local tol = ({ 1e-3, 0, 0.1, 1e-9, 0.7 })[trial % 5 + 1]
            lean:configure({ angle_tolerance = tol })
            local general = lean:clone()
            general:configure({ max_turn = 1e300 })
            for step = 1, 10 do
                local x, y, z
                if step % 4 == 0 then
                    -- close to where it points now: met for the larger tolerances
                    local bx, by, bz = lean:joint(1)
                    local tx, ty, tz = lean:joint(2)
                    x, y, z = tx + (tx - bx) + 1e-4 * rng.next(), ty + (ty - by), tz + (tz - bz)
                else
                    local dx, dy, dz = h.random_dir(rng)
                    x, y, z = 3 * dx, 3 * dy, 3 * dz
                end
                local ra, ea, ia = lean:solve_aim(x, y, z)
                local rb, eb, ib = general:solve_aim(x, y, z)
                local where = string.format("trial %d step %d (tolerance %g)", trial, step, tol)
                assert.are.equal(rb, ra, where)
                assert.are.equal(ib, ia, where)
                assert(h.near(ea, eb, 1e-12), where .. ": angle " .. ea .. " against " .. eb)
                local ok, what = same_pose(lean, general, 1e-12 * 4)
                assert(ok, where .. ": " .. tostring(what))
            end
        end
    end)
end)
