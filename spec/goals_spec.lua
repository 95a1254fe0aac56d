-- Goals kept on the chain, orientation goals for the tip bone, aiming, and max_turn
-- (API.md, "Goals kept on the chain, orientation, aiming, speed limit"), 2D and 3D, every
-- solver, with and without limits; and every misuse of them.

local ik = require("ik")
local h = require("spec.helpers")

local unpack = table.unpack or unpack
local pi, sqrt, cos, sin, abs = math.pi, math.sqrt, math.cos, math.sin, math.abs
local SOLVERS = { "fabrik", "ccd", "relax" }

local function new(dim, lengths, ...)
    return dim == 2 and ik.chain2d(lengths, ...) or ik.chain3d(lengths, ...)
end

-- The angle between the tip bone's world direction and a unit direction (ux, uy, uz).
local function tip_angle_to(c, ux, uy, uz)
    local n = #c
    local ax, ay, az = c:joint(n)
    local bx, by, bz = c:joint(n + 1)
    local dx, dy, dz = h.unit3(bx - ax, by - ay, (bz or 0) - (az or 0))
    local dot = dx * ux + dy * uy + dz * (uz or 0)
    local cx, cy, cz = dy * (uz or 0) - dz * uy, dz * ux - dx * (uz or 0), dx * uy - dy * ux
    return math.atan2 and math.atan2(sqrt(cx * cx + cy * cy + cz * cz), dot) or math.atan(sqrt(cx * cx + cy * cy + cz * cz), dot)
end

local function quat_axis_angle(x, y, z, a)
    local s = sin(a / 2)
    local l = sqrt(x * x + y * y + z * z)
    return cos(a / 2), s * x / l, s * y / l, s * z / l
end

-- The angle of the rotation between two unit quaternions: that of conj(q1) * q2, by atan2
-- (2 acos |q1 . q2| loses 1e-8 near 0).
local function quat_angle(w1, x1, y1, z1, w2, x2, y2, z2)
    local rw = w1 * w2 + x1 * x2 + y1 * y2 + z1 * z2
    local rx = w1 * x2 - x1 * w2 - y1 * z2 + z1 * y2
    local ry = w1 * y2 + x1 * z2 - y1 * w2 - z1 * x2
    local rz = w1 * z2 - x1 * y2 + y1 * x2 - z1 * w2
    return 2 * h.atan2(sqrt(rx * rx + ry * ry + rz * rz), abs(rw))
end

describe("goals kept on the chain", function()
    it("set_target keeps the goal, target() reads it back (nil without one), clear_target removes it", function()
        for _, dim in ipairs({ 2, 3 }) do
            local c = new(dim, { 1, 1 })
            assert.is_nil(c:target())
            c:set_target(unpack({ 0.5, 1.25, -0.75 }, 1, dim))
            assert.are.same({ unpack({ 0.5, 1.25, -0.75 }, 1, dim) }, { c:target() })
            c:clear_target()
            assert.is_nil(c:target())
        end
    end)

    it("solve() without coordinates solves towards the kept goal, exactly as solve(x, y[, z]) does, and solve(x, y) replaces the goal", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, solver in ipairs({ "fabrik", "ccd", "relax", "aim" }) do
                local a, b = new(dim, { 1, 0.8, 0.6 }), new(dim, { 1, 0.8, 0.6 })
                a:configure({ solver = solver })
                b:configure({ solver = solver })
                local t = { 1.1, 0.9, -0.4 }
                a:set_target(unpack(t, 1, dim))
                local r1 = { a:solve() }
                local r2 = { b:solve(unpack(t, 1, dim)) }
                assert.are.same(r2, r1)
                assert.are.same(b:positions(), a:positions())
                assert.are.same({ b:target() }, { unpack(t, 1, dim) })
                -- every solve_* keeps setting the goal too
                b:solve_fabrik(unpack({ 0.2, 0.3, 0.4 }, 1, dim))
                assert.are.same({ unpack({ 0.2, 0.3, 0.4 }, 1, dim) }, { b:target() })
            end
        end
    end)

    it("solve() without a kept goal is an error naming argument 1 (the first coordinate), and changes nothing", function()
        for _, dim in ipairs({ 2, 3 }) do
            local c = new(dim, { 1, 1 })
            local before = c:positions()
            -- called as methods, as a user does (not as tail calls, which leave Lua no name or
            -- method to count from), so the error names the method and argument 1
            local calls = {
                solve = function() c:solve() end,
                solve_fabrik = function() c:solve_fabrik() end,
                solve_ccd = function() c:solve_ccd() end,
                solve_relax = function() c:solve_relax() end,
                solve_two_bone = function() c:solve_two_bone() end,
                solve_aim = function() c:solve_aim() end,
            }
            for name, call in pairs(calls) do
                local ok, msg = h.argerror(1, name, call)
                assert.is_true(ok, msg)
            end
            assert.are.same(before, c:positions())
            assert.is_nil(c:target())
        end
    end)

    it("goal_error reads how far a chain is from its kept goals: nil without a position goal; after a solve, the solve's own distance and the tip bone's angle from its orientation goal (0 without one), which make its reached; an attached chain's after its parent moved", function()
        local seed = 7
        local function random()
            seed = (16807 * seed) % 2147483647
            return seed / 2147483647
        end
        for _, dim in ipairs({ 2, 3 }) do
            for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
                for _ = 1, 40 do
                    local oriented = random() < 0.5
                    local lengths = {}
                    for i = 1, solver ~= "two_bone" and 4 or oriented and 3 or 2 do lengths[i] = 0.5 + random() end
                    local c = new(dim, lengths)
                    assert.is_nil(c:goal_error())
                    c:configure({ solver = solver, iterations = 1 + math.floor(20 * random()) })
                    local goal
                    if oriented and dim == 2 then
                        goal = 6 * random()
                        c:set_target_angle(goal)
                    elseif oriented then
                        goal = { quat_axis_angle(random(), random(), 1, 3 * random()) }
                        c:set_target_rotation(unpack(goal))
                    end
                    local t = { 6 * random() - 3, 6 * random() - 3, 6 * random() - 3 }
                    local reached, distance = c:solve(unpack(t, 1, dim))
                    local d, a = c:goal_error()
                    assert.are.equal(distance, d)
                    local want = 0
                    if oriented and dim == 2 then
                        want = abs(h.wrap(c:world_angle(#c) - goal))
                    elseif oriented then
                        local w, x, y, z = c:world_rotation(#c)
                        want = quat_angle(goal[1], goal[2], goal[3], goal[4], w, x, y, z)
                    end
                    assert.is_true(abs(a - want) <= 1e-9, solver .. ": angle error " .. a .. ", the tip bone " .. want .. " off")
                    local st = c:settings()
                    assert.are.equal(reached, d <= st.tolerance and a <= st.angle_tolerance)
                    c:clear_target()
                    assert.is_nil(c:goal_error())
                end
            end
            -- an attached chain: its tip goes where its parent carries it
            local parent, child = new(dim, { 1, 1 }), new(dim, { 1 })
            child:attach(parent, 3)
            child:set_target(unpack({ 3, 0, 0 }, 1, dim))
            assert.are.equal(0, child:goal_error()) -- straight along +x, the tip at (3, 0)
            if dim == 2 then parent:set_angles({ pi / 2, 0 })
            else parent:set_rotations({ cos(pi / 4), 0, 0, sin(pi / 4), 1, 0, 0, 0 }) end
            local d = child:goal_error() -- the tip at (0, 3) now
            assert.is_true(abs(d - sqrt(18)) <= 1e-12, "the attached chain's distance is " .. d)
        end
        local ok, msg = h.argerror(1, "goal_error", function() ik.chain2d({ 1 }).goal_error(ik.rig({ ik.chain2d({ 1 }) })) end)
        assert.is_true(ok, msg)
    end)

    it("the misuse of the goal setters names the argument and changes nothing", function()
        local c2, c3 = ik.chain2d({ 1, 1 }), ik.chain3d({ 1, 1 })
        local cases = {
            { 1, "set_target", function() c2:set_target(0 / 0, 1) end },
            { 2, "set_target", function() c2:set_target(1, 1e301) end },
            { 3, "set_target", function() c2:set_target(1, 1, 1) end },
            { 3, "set_target", function() c3:set_target(1, 1, "1") end },
            { 1, "set_target_angle", function() c2:set_target_angle(1 / 0) end },
            { 0, "set_target_angle", function() c3:set_target_angle(1) end },
            { 1, "set_target_rotation", function() c3:set_target_rotation(0, 0, 0, 0) end },
            { 4, "set_target_rotation", function() c3:set_target_rotation(1, 0, 0, 0 / 0) end },
            { 0, "set_target_rotation", function() c2:set_target_rotation(1, 0, 0, 0) end },
            { 0, "target_angle", function() c3:target_angle() end },
            { 0, "target_rotation", function() c2:target_rotation() end },
        }
        for _, case in ipairs(cases) do
            local ok, msg = h.argerror(case[1], case[2], case[3])
            assert.is_true(ok, msg)
        end
        assert.is_nil(c2:target())
        assert.is_nil(c2:target_angle())
        assert.is_nil(c3:target_rotation())
    end)
end)

describe("orientation goals", function()
    it("2D: every solver puts the tip on the target with the tip bone at the goal angle (within angle_tolerance), reached covers both; clear_target removes the orientation goal", function()
        local rng = h.rng(5101)
        for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
            local reached, trials = 0, 200
            for _ = 1, trials do
                local c = ik.chain2d({ 1, 0.9, 0.8, 0.5 })
                c:configure({ solver = solver, iterations = 200 })
                -- a reachable goal: the tip and tip angle of a random pose
                local probe = ik.chain2d({ 1, 0.9, 0.8, 0.5 })
                for i = 1, 4 do probe:set_angle(i, rng.uniform(-1.2, 1.2)) end
                local tx, ty = probe:effector()
                local goal = probe:world_angle(4)
                c:set_target_angle(goal)
                assert.is_true(h.near(c:target_angle(), goal, 1e-15))
                local r, d = c:solve(tx, ty)
                local err = abs(h.wrap(c:world_angle(4) - goal))
                assert.are.equal(d <= 1e-3 and err <= 1e-3, r)
                if r then reached = reached + 1 end
            end
            assert.is_true(reached >= trials * 0.9, solver .. ": " .. reached .. " of " .. trials)
        end
        local c = ik.chain2d({ 1, 1 })
        c:set_target_angle(1)
        c:clear_target()
        assert.is_nil(c:target_angle())
    end)

    -- CCD reaches the point behind the tip bone as it reaches any point with three bones: it
    -- converges slowly there (84% of random points in 200 iterations without an orientation
    -- goal), so its bar is lower.
    it("3D: every solver gives the tip bone the goal rotation (twist included, within angle_tolerance) with the tip on the target", function()
        local rng = h.rng(5102)
        for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
            local reached, trials = 0, 150
            for _ = 1, trials do
                local c = ik.chain3d({ 1, 0.9, 0.8, 0.5 })
                c:configure({ solver = solver, iterations = 200 })
                local probe = ik.chain3d({ 1, 0.9, 0.8, 0.5 })
                for i = 1, 4 do probe:set_rotation(i, quat_axis_angle(rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(0, 1))) end
                local tx, ty, tz = probe:effector()
                local gw, gx, gy, gz = probe:world_rotation(4)
                c:set_target_rotation(gw, gx, gy, gz)
                local r, d = c:solve(tx, ty, tz)
                local err = quat_angle(gw, gx, gy, gz, c:world_rotation(4))
                assert.are.equal(d <= 1e-3 and err <= 1e-3, r)
                if r then reached = reached + 1 end
            end
            assert.is_true(reached >= trials * (solver == "ccd" and 0.8 or 0.9), solver .. ": " .. reached .. " of " .. trials)
        end
    end)

    it("two_bone with an orientation goal takes a 3-bone chain (a leg and its foot): the first two bones solve exactly for the point behind the foot", function()
        for _, dim in ipairs({ 2, 3 }) do
            local c = new(dim, { 1, 1, 0.3 })
            c:configure({ solver = "two_bone" })
            if dim == 2 then c:set_target_angle(-0.4) else c:set_target_rotation(quat_axis_angle(0, 0, 1, -0.4)) end
            local r, d, it = c:solve(unpack({ 1.2, -0.6, 0 }, 1, dim))
            assert.is_true(r)
            assert.are.equal(1, it)
            assert.is_true(d < 1e-12)
            -- the foot points along the goal: from joint 3 to the tip at angle -0.4
            local ax, ay = c:joint(3)
            local bx, by = c:joint(4)
            assert.is_true(h.near(math.atan2 and math.atan2(by - ay, bx - ax) or math.atan(by - ay, bx - ax), -0.4, 1e-12))
        end
        -- without an orientation goal a 3-bone chain is not a two-bone chain
        local c = ik.chain2d({ 1, 1, 0.3 })
        local ok, msg = h.argerror(0, "solve_two_bone", function() c:solve_two_bone(1, 1) end)
        assert.is_true(ok, msg)
        -- and a 2-bone chain with one cannot carry it
        c = ik.chain2d({ 1, 1 })
        c:set_target_angle(0.5)
        ok, msg = h.argerror(0, "solve_two_bone", function() c:solve_two_bone(1, 1) end)
        assert.is_true(ok, msg)
    end)

    it("the tip bone's limit wins over the orientation goal: within it, as close as it allows", function()
        local c = ik.chain2d({ 1, 1, 0.5 })
        c:set_limit(3, -0.2, 0.2)
        c:set_target_angle(pi / 2)
        c:solve(1.5, 0.5)
        local local_angle = c:angle(3)
        assert.is_true(local_angle >= -0.2 - 1e-12 and local_angle <= 0.2 + 1e-12)
    end)

    it("angle_tolerance sets when an orientation goal counts as met", function()
        local c = ik.chain2d({ 1, 1, 0.5 })
        c:configure({ angle_tolerance = 0.5 })
        c:set_limit(3, -0.2, 0.2)
        c:set_target_angle(0.6)
        local r, d = c:solve(1.5, 0.3)
        local err = abs(h.wrap(c:world_angle(3) - 0.6))
        assert.are.equal(err <= 0.5 and d <= 1e-3, r)
        c:configure({ angle_tolerance = 0 })
        assert.are.equal(0, c:settings().angle_tolerance)
        local ok, msg = h.argerror(1, "configure", function() c:configure({ angle_tolerance = -1 }) end)
        assert.is_true(ok, msg)
    end)
end)

describe("aiming", function()
    it("2D and 3D: solve_aim points the tip bone at the point from where joint n ends up, within angle_tolerance; the base stays; lengths are kept", function()
        local rng = h.rng(5201)
        for _, dim in ipairs({ 2, 3 }) do
            local ok = 0
            for _ = 1, 200 do
                local c = new(dim, { 1, 0.5, 0.4 })
                local t = { rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-5, 5) }
                local r, err, it = c:solve_aim(unpack(t, 1, dim))
                local ax, ay, az = c:joint(3)
                local ux, uy, uz = h.unit3(t[1] - ax, t[2] - ay, dim == 3 and t[3] - (az or 0) or 0)
                local measured = tip_angle_to(c, ux, uy, uz)
                assert.is_true(h.near(err, measured, 1e-9), string.format("reported %g, measured %g", err, measured))
                assert.are.equal(err <= 1e-3, r)
                assert.is_true(it <= 64)
                local bx, by = c:joint(1)
                assert.is_true(bx == 0 and by == 0)
                if r then ok = ok + 1 end
            end
            assert.is_true(ok >= 190, dim .. "D: " .. ok .. " of 200 aimed")
        end
    end)

    it("the joints share the turn by their weights: weight 0 keeps a bone still, the others turn in proportion", function()
        local c = ik.chain2d({ 1, 1, 1 })
        c:set_weight(2, 0)
        c:configure({ iterations = 1 })
        c:solve_aim(-1, 3) -- far to the left: a big turn
        assert.are.equal(0, c:angle(2))
        local a1, a3 = c:angle(1), c:angle(3)
        assert.is_true(a1 > 0 and h.near(a1, a3, 1e-12), string.format("angles %g and %g", a1, a3))
        -- weights 3 : 1: bone 1 takes three quarters of the first turn
        local d = ik.chain2d({ 1, 1 })
        d:set_weight(1, 3)
        d:set_weight(2, 1)
        d:configure({ iterations = 1 })
        d:solve_aim(2, 1e6) -- straight up, far away: a quarter turn from +x
        assert.is_true(h.near(d:angle(1), 3 * d:angle(2), 1e-9), string.format("%g vs %g", d:angle(1), d:angle(2)))
    end)

    it("limits are honoured, and the other bones take up the turn a limited one cannot make", function()
        local c = ik.chain2d({ 1, 1, 1 })
        c:set_limit(1, -0.1, 0.1)
        local r = c:solve_aim(0, 10)
        assert.is_true(r)
        assert.is_true(c:angle(1) <= 0.1 + 1e-12)
    end)

    it("solver = 'aim' makes solve aim; every weight 0 turns nothing (not reached, the error reported)", function()
        local a, b = ik.chain2d({ 1, 1 }), ik.chain2d({ 1, 1 })
        a:configure({ solver = "aim" })
        assert.are.same({ b:solve_aim(0.3, 2) }, { a:solve(0.3, 2) })
        assert.are.same(b:positions(), a:positions())
        local c = ik.chain3d({ 1, 1 })
        for i = 1, 3 do c:set_weight(i, 0) end
        local before = c:positions()
        local r, err, it = c:solve_aim(1, 1, 0)
        assert.is_false(r)
        assert.is_true(h.near(err, pi / 2, 1e-12))
        assert.are.equal(0, it)
        assert.are.same(before, c:positions())
    end)
end)

describe("max_turn", function()
    it("no bone's local rotation changes by more than max_turn in one solve, by any solver, 2D and 3D; the target is reached over frames, with reached false until then", function()
        for _, dim in ipairs({ 2, 3 }) do
            for _, solver in ipairs({ "fabrik", "ccd", "relax", "aim" }) do
                local c = new(dim, { 1, 1, 1 })
                c:configure({ max_turn = 0.05, solver = solver })
                local t = { -1, 1.5, 0.5 }
                local frames, reached = 0, false
                while not reached and frames < 400 do
                    local before = dim == 2 and c:angles() or c:rotations()
                    reached = c:solve(unpack(t, 1, dim))
                    frames = frames + 1
                    local after = dim == 2 and c:angles() or c:rotations()
                    for i = 1, #c do
                        local turn
                        if dim == 2 then
                            turn = abs(h.wrap(after[i] - before[i]))
                        else
                            local k = 4 * (i - 1)
                            turn = quat_angle(before[k + 1], before[k + 2], before[k + 3], before[k + 4],
                                after[k + 1], after[k + 2], after[k + 3], after[k + 4])
                        end
                        assert.is_true(turn <= 0.05 + 1e-9, string.format("%dD %s frame %d bone %d turned %g", dim, solver, frames, i, turn))
                    end
                end
                assert.is_true(reached, string.format("%dD %s: not reached in %d frames", dim, solver, frames))
                assert.is_true(frames > 10, string.format("%dD %s: reached in %d frames: max_turn did not hold", dim, solver, frames))
            end
        end
    end)

    it("limits win over max_turn: a pose beyond a limit is brought within it even if that turns further", function()
        local c = ik.chain2d({ 1, 1 })
        c:set_angle(2, 2.5)
        c:set_limit(2, -0.5, 0.5)
        c:configure({ max_turn = 0.01 })
        c:solve(1, 1)
        assert.is_true(c:angle(2) <= 0.5 + 1e-12)
    end)

    it("max_turn must be > 0 (math.huge: no limit, the default)", function()
        local c = ik.chain2d({ 1, 1 })
        assert.are.equal(math.huge, c:settings().max_turn)
        for _, bad in ipairs({ 0, -1, 0 / 0 }) do
            local ok, msg = h.argerror(1, "configure", function() c:configure({ max_turn = bad }) end)
            assert.is_true(ok, msg)
        end
        c:configure({ max_turn = 0.1 })
        c:configure({ max_turn = math.huge })
        assert.are.equal(math.huge, c:settings().max_turn)
    end)
end)
