-- Joint limits on workloads made to check changes, not to tune them: chains and animations
-- of their own (other lengths, ranges, axes and motions than bench/limits.lua and
-- bench/track_limits.lua), rates only, the same on every run.
--   1. Tracking, 2D: per solver, 20 chains of 6 bones, each range 0.4 to 3 rad wide anywhere
--      in (-2.5, 2.5), a puppet whose joints follow sums of two sines within them, 600 frames
--      at 10 iterations: frames met, the chains whose joints never turn more than 3x the
--      animation's largest turn in a frame, and the largest turn.
--   2. Tracking, 3D: the same with 7 bones, each joint a hinge about a random axis across the
--      bone (0.8 to 2.8 rad wide) or a cone of 0.5 to 1.5 rad with a twist range.
--   3. 3 bones with limits and an orientation goal: 1000 goals a row from random poses
--      within the limits, solved from straight and from another random pose, 64 iterations.
--   lua5.4 bench/limits_fresh.lua      (make bench runs it)
package.path = "./?.lua;lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")
local puppets = require("bench.puppets")

local sin, cos, abs, max, min, acos = math.sin, math.cos, math.abs, math.max, math.min, math.acos
local SOLVERS = { "fabrik", "ccd", "relax" }

local seed
local function random() -- Park-Miller: the same numbers in every VM
    seed = (48271 * seed) % 2147483647
    return seed / 2147483647
end

local qaxis, qmul = puppets.qaxis, puppets.qmul

-- The largest turn of a joint between two poses (angles in 2D, quaternions in 3D).
local function largest_turn(a, b, dim)
    local most = 0
    if dim == 2 then
        for i = 1, #a do most = max(most, abs(a[i] - b[i])) end
        return most
    end
    for i = 0, #a / 4 - 1 do
        local d = abs(a[4 * i + 1] * b[4 * i + 1] + a[4 * i + 2] * b[4 * i + 2] + a[4 * i + 3] * b[4 * i + 3]
            + a[4 * i + 4] * b[4 * i + 4])
        most = max(most, 2 * acos(min(1, d)))
    end
    return most
end

-- The chains and their puppets (bench/puppets.lua), from this file's random numbers.
local function chain2d() return puppets.chain2d(random) end
local function chain3d() return puppets.chain3d(random) end

local CHAINS, FRAMES = 20, 600

local function tracking(dim, make, first_seed)
    print(string.format("\nTracking with limits, %dD: %d chains a solver, %d frames, 10 iterations a frame, tolerance 1e-3",
        dim, CHAINS, FRAMES))
    print(string.format("%-8s %11s %16s %16s", "solver", "frames met", "chains <= 3x", "largest turn"))
    local pose = dim == 2 and function(c) return c:angles() end or function(c) return c:rotations() end
    for _, solver in ipairs(SOLVERS) do
        seed = first_seed
        local met_all, calm, worst = 0, 0, 0
        for _ = 1, CHAINS do
            local puppet, chain, play = make()
            chain:configure({ solver = solver, iterations = 10, tolerance = 1e-3 })
            play(0)
            if dim == 2 then chain:set_angles(puppet:angles()) else chain:set_rotations(puppet:rotations()) end
            local before, shown = pose(chain), pose(puppet)
            local most, most_shown = 0, 0
            for f = 1, FRAMES do
                play(f)
                if chain:solve(puppet:effector()) then met_all = met_all + 1 end
                local now, shown_now = pose(chain), pose(puppet)
                most = max(most, largest_turn(before, now, dim))
                most_shown = max(most_shown, largest_turn(shown, shown_now, dim))
                before, shown = now, shown_now
            end
            if most <= 3 * most_shown then calm = calm + 1 end
            worst = max(worst, most)
        end
        print(string.format("%-8s %10.1f%% %13d/%d %12.3f rad", solver, 100 * met_all / (CHAINS * FRAMES), calm, CHAINS, worst))
    end
end

-- ---- 3 bones with limits and an orientation goal ----

local TRIALS = 1000

local function oriented(dim)
    print(string.format("\n3 bones with limits and an orientation goal, %dD: %d goals a row from random poses, 64 iterations",
        dim, TRIALS))
    print(string.format("%-8s %22s %22s", "solver", "from straight (its)", "from random (its)"))
    for _, solver in ipairs(SOLVERS) do
        local cells = {}
        for _, start in ipairs({ "straight", "random" }) do
            seed = 424242
            local reached, iterations = 0, 0
            for _ = 1, TRIALS do
                local lengths, limit = {}, {}
                for i = 1, 3 do lengths[i] = 0.8 + 2.5 * random() end
                local c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
                for i = 1, 3 do
                    if dim == 2 then
                        local w = 0.6 + 2.4 * random()
                        local lo = -w * (0.2 + 0.6 * random())
                        limit[i] = { lo, lo + w }
                        c:set_limit(i, lo, lo + w)
                    elseif random() < 0.5 then
                        local a, w = 6.28 * random(), 1 + 1.8 * random()
                        local lo = -w * random()
                        limit[i] = { lo, lo + w, axis = { 0, cos(a), sin(a) } }
                        c:set_hinge(i, 0, cos(a), sin(a), lo, lo + w)
                    else
                        local cone, twist = 0.4 + 1.1 * random(), 0.2 + random()
                        limit[i] = { cone = cone, twist = twist }
                        c:set_cone(i, cone)
                        c:set_twist(i, -twist, twist)
                    end
                end
                local function random_pose()
                    if dim == 2 then
                        local a = {}
                        for i = 1, 3 do a[i] = limit[i][1] + (limit[i][2] - limit[i][1]) * random() end
                        c:set_angles(a)
                        return
                    end
                    local r = {}
                    for i = 1, 3 do
                        local l, w, x, y, z = limit[i]
                        if l.axis then
                            w, x, y, z = qaxis(l.axis[1], l.axis[2], l.axis[3], l[1] + (l[2] - l[1]) * random())
                        else
                            local a = 6.28 * random()
                            local sw, sx, sy, sz = qaxis(0, cos(a), sin(a), l.cone * random())
                            w, x, y, z = qmul(sw, sx, sy, sz, qaxis(1, 0, 0, l.twist * (2 * random() - 1)))
                        end
                        r[#r + 1], r[#r + 2], r[#r + 3], r[#r + 4] = w, x, y, z
                    end
                    c:set_rotations(r)
                end
                random_pose()
                local gx, gy, gz = c:effector()
                if dim == 2 then c:set_target_angle(c:world_angle(3)) else c:set_target_rotation(c:world_rotation(3)) end
                if start == "random" then
                    random_pose()
                elseif dim == 2 then
                    c:set_angles({ 0, 0, 0 })
                else
                    c:set_rotations({ 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 })
                end
                c:configure({ solver = solver, iterations = 64, tolerance = 1e-3 })
                local ok, _, its
                if dim == 2 then ok, _, its = c:solve(gx, gy) else ok, _, its = c:solve(gx, gy, gz) end
                if ok then reached = reached + 1 end
                iterations = iterations + its
            end
            cells[#cells + 1] = string.format("%5.1f%% (%4.1f)", 100 * reached / TRIALS, iterations / TRIALS)
        end
        print(string.format("%-8s %22s %22s", solver, cells[1], cells[2]))
    end
end

print(string.format("%s: joint limits on workloads made apart from the other benches", ik._VERSION))
tracking(2, chain2d, 4242)
tracking(3, chain3d, 5151)
oriented(2)
oriented(3)
