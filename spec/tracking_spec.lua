-- Tracking without limits (src/joint_space.c, ik_joint_track): a goal that moves a little
-- each frame is met by joint-space steps from the last frame's pose, which move every joint
-- a little, as the goal did. A puppet chain plays a smooth animation of its local pose; its
-- tip is the goal of a second chain of the same bones, solved each frame (10 iterations,
-- tolerance 1e-3) by each solver, 2D and 3D. Every frame must be met, and no joint of the
-- solved chain may turn between two frames more than three times the most any joint of
-- the animation turns (bench/limits.lua measures about 1x; the passes alone gave 6x).

local h = require("spec.helpers")
local ik = require("ik")
local puppets = require("bench.puppets")

local sin = math.sin

local FRAMES = 400

-- The animation: bone i's local angle (2D) or its rotation about a fixed axis (3D) swings
-- around a rest value, slowly enough that the tip stays clear of full reach.
local function animation(rng, dim, n)
    local rest, swing, phase, axes = {}, {}, {}, {}
    for i = 1, n do
        rest[i] = (rng.next() - 0.5) * 1.2
        swing[i] = 0.2 + 0.4 * rng.next()
        phase[i] = 6.28 * rng.next()
        if dim == 3 then axes[i] = { h.random_dir(rng) } end
    end
    return function(puppet, frame)
        local t = frame / 100
        for i = 1, n do
            local a = rest[i] + swing[i] * sin(t + phase[i])
            if dim == 2 then
                puppet:set_angle(i, a)
            else
                local ax = axes[i]
                puppet:set_rotation(i, h.qaxis(ax[1], ax[2], ax[3], a))
            end
        end
    end
end

-- Each bone's local pose now, to compare frames (h.largest_turn's layout).
local function pose(c, dim)
    local p = {}
    for i = 1, c:count() do
        if dim == 2 then
            p[i] = c:angle(i)
        else
            local w, x, y, z = c:rotation(i)
            p[4 * i - 3], p[4 * i - 2], p[4 * i - 1], p[4 * i] = w, x, y, z
        end
    end
    return p
end
local largest_turn = h.largest_turn

for _, dim in ipairs({ 2, 3 }) do
    for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
        it(string.format("%dD %s, no limits: a smoothly moving goal is met every frame, no joint turning more than 3x the animation's most (3 chains x %d frames)", dim, solver, FRAMES), function()
            local rng = h.rng(dim * 100 + #solver)
            for trial = 1, 3 do
                local n = dim == 2 and 6 or 7
                local lengths = {}
                for i = 1, n do lengths[i] = 0.5 + rng.next() end
                local make = dim == 2 and ik.chain2d or ik.chain3d
                local puppet, chain = make(lengths), make(lengths)
                chain:configure({ solver = solver, iterations = 10, tolerance = 1e-3 })
                local play = animation(rng, dim, n)
                play(puppet, 0)
                if dim == 2 then chain:set_angles(puppet:angles()) else chain:set_rotations(puppet:rotations()) end
                local before, shown = pose(chain, dim), pose(puppet, dim)
                local met, most_solved, most_shown = 0, 0, 0
                for frame = 1, FRAMES do
                    play(puppet, frame)
                    local reached = chain:solve(puppet:effector())
                    if reached then met = met + 1 end
                    local now, shown_now = pose(chain, dim), pose(puppet, dim)
                    most_solved = math.max(most_solved, largest_turn(before, now, dim))
                    most_shown = math.max(most_shown, largest_turn(shown, shown_now, dim))
                    before, shown = now, shown_now
                end
                local what = string.format("trial %d: %d of %d frames met, largest turn %.4f, the animation's %.4f",
                    trial, met, FRAMES, most_solved, most_shown)
                assert(met == FRAMES, what)
                assert(most_solved <= 3 * most_shown, what)
            end
        end)
    end
end

-- With an orientation goal and a limit on the tip bone, the steps' orientation rows count
-- only what the tip's limit cannot take back (src/joint_space.c, gap_turn): a 2D range, a 3D
-- cone and twist take every turn that keeps the tip's local rotation inside them, a hinge
-- the part about its axis. Counted whole, the rows held the bones still against the goal
-- and the steps crawled (10 iterations 1e-7 short of a goal a few hundredths away, where
-- damped Newton steps take 4 or 5; in bench/limits.lua 21% of 2D tracking frames missed).
describe("joint-space steps with an orientation goal and a limited tip bone", function()
    local near = { { 0.3, 0.5, 0.2 }, { 0.33, 0.47, 0.25 } } -- pose, goal's pose: angles
    for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
        it(solver .. ", 2D: a near goal met to 1e-7 in at most 6 iterations", function()
            local c, goal = ik.chain2d({ 3, 2, 2.5 }), ik.chain2d({ 3, 2, 2.5 })
            for i = 1, 3 do c:set_limit(i, -1.5, 1.5) end
            c:set_angles(near[1])
            goal:set_angles(near[2])
            c:configure({ solver = solver, iterations = 10, tolerance = 1e-7 })
            c:set_target_angle(goal:world_angle(3))
            local ok, distance, iterations = c:solve(goal:effector())
            assert(ok and iterations <= 6, ("reached %s, %g away, %d iterations"):format(tostring(ok), distance, iterations))
        end)
        for _, tip in ipairs({ "hinge", "cone and twist" }) do
            it(solver .. ", 3D, a " .. tip .. " on the tip bone: a near goal met to 1e-7 in at most 6 iterations", function()
                local c, goal = ik.chain3d({ 3, 2, 2.5 }), ik.chain3d({ 3, 2, 2.5 })
                for _, x in ipairs({ c, goal }) do
                    x:set_cone(1, 1.2)
                    x:set_cone(2, 1.2)
                    if tip == "hinge" then x:set_hinge(3, 0, 0, 1, -1.5, 1.5)
                    else x:set_cone(3, 1.0); x:set_twist(3, -0.5, 0.5) end
                end
                local function turns(c1, c2, c3)
                    local t = {}
                    for _, q in ipairs({ { h.qaxis(0, 0.6, 0.8, c1) }, { h.qaxis(0, 0, 1, c2) }, { h.qaxis(0, 0, 1, c3) } }) do
                        for k = 1, 4 do t[#t + 1] = q[k] end
                    end
                    return t
                end
                c:set_rotations(turns(0.3, 0.5, 0.2))
                goal:set_rotations(turns(0.33, 0.47, 0.25))
                c:configure({ solver = solver, iterations = 10, tolerance = 1e-7 })
                c:set_target_rotation(goal:world_rotation(3))
                local ok, distance, iterations = c:solve(goal:effector())
                assert(ok and iterations <= 6, ("reached %s, %g away, %d iterations"):format(tostring(ok), distance, iterations))
            end)
        end
    end
end)

-- Tracking with limits (src/joint_space.c, center): the steps alone leave a joint on a bound
-- once it got there, and the pose drifted into the corners of its ranges until the goal was
-- lost and found again by a jump; each tracked solve now first turns the bounded joints
-- towards the middle of their ranges, in the null space of the goal. Chains with random
-- limits, each tracking a puppet of the same bones that plays a smooth animation within
-- them, at 10 iterations a frame: bench/limits_fresh.lua's kind of chain (bench/puppets.lua),
-- drawn from random numbers of this file's own.
describe("tracking with limits", function()
    local CHAINS, FRAMES = 12, 400

    -- The chains and their puppets of bench/puppets.lua (2D: 6 bones, ranges anywhere in
    -- (-2.5, 2.5); 3D: 7 bones, hinges about random axes or cones with twist), from rng.
    local function chain2d(rng) return puppets.chain2d(rng.next) end
    local function chain3d(rng) return puppets.chain3d(rng.next) end

    -- Here, before the centring, 9, 11 and 9 of the 12 chains (FABRIK, CCD, relaxation) stayed
    -- within 3x the animation's largest turn a frame in 2D (4789, 4798 and 4784 of 4800 frames
    -- met), and 9, 11 and 9 in 3D (4782, 4791 and 4799); with it all 12 and every frame. (On 20
    -- other chains of each kind: 2D 13 to 14 of 20 before, 17 with it; 3D 16 / 18 / 16 before,
    -- the largest turn 1.68 rad, 20 of 20 with it, the largest turn 0.062.)
    for _, case in ipairs({ { 2, chain2d, 20261127 }, { 3, chain3d, 20261128 } }) do
        local dim, make, seed = case[1], case[2], case[3]
        for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
            it(("%s, %dD: 97%% of frames met, and 11 of 12 chains never turn a joint more than 3x the animation in a frame")
                :format(solver, dim), function()
                local rng = h.rng(seed)
                local met_all, calm, report = 0, 0, {}
                for ch = 1, CHAINS do
                    local puppet, chain, play = make(rng)
                    chain:configure({ solver = solver, iterations = 10, tolerance = 1e-3 })
                    play(0)
                    if dim == 2 then chain:set_angles(puppet:angles()) else chain:set_rotations(puppet:rotations()) end
                    local before, shown = pose(chain, dim), pose(puppet, dim)
                    local met, most, most_shown = 0, 0, 0
                    for frame = 1, FRAMES do
                        play(frame)
                        if chain:solve(puppet:effector()) then met = met + 1 end
                        local now, shown_now = pose(chain, dim), pose(puppet, dim)
                        most = math.max(most, largest_turn(before, now, dim))
                        most_shown = math.max(most_shown, largest_turn(shown, shown_now, dim))
                        before, shown = now, shown_now
                    end
                    met_all = met_all + met
                    if most <= 3 * most_shown then calm = calm + 1 end
                    report[#report + 1] = ("%d: %d met, %.3f / %.3f"):format(ch, met, most, most_shown)
                end
                local what = ("%d of %d frames met, %d of %d chains within 3x (chain: frames met, largest turn / the animation's: %s)")
                    :format(met_all, CHAINS * FRAMES, calm, CHAINS, table.concat(report, "; "))
                assert(met_all >= 0.97 * CHAINS * FRAMES, what)
                assert(calm >= 11, what)
            end)
        end
    end
end)

-- Tracking's prediction (src/joint_space.c, predict): a tracked solve whose goal the pose
-- does not meet starts from the pose the last two solves' motion continues to, when nothing
-- but the solves (and the base's moves) changed the chain since.
describe("tracking's prediction", function()
    local FRAMES = 400

    -- A 2D 3-bone chain with a limited tip and an orientation goal: three joints for three
    -- numbers, so the pose is fixed up to the side the middle joint bends to. The puppet
    -- takes that joint through straight and bends it the other way, three times in 400
    -- frames. Without the prediction the tracked pose bent back the side it came from, and a
    -- bound forced it across later: 0.427 / 0.433 / 0.427 rad in a frame (FABRIK / CCD /
    -- relaxation) where the animation turns 0.0125; with it 0.0151.
    local function crossing(frame)
        local t = frame / 40 + 1
        return { 0.4 * math.cos(t), 0.5 * math.sin(t), 0.25 * math.sin(0.7 * t) }
    end
    local function limited(c)
        c:set_limit(1, -1.5, 1.5)
        c:set_limit(2, -1.5, 1.5)
        c:set_limit(3, -0.3, 0.3)
        return c
    end

    for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
        it(solver .. ": a middle joint taken through straight follows the goal to the other side (every frame met, no turn over 3x the animation's)", function()
            local puppet, chain = limited(ik.chain2d({ 1.0, 0.8, 0.5 })), limited(ik.chain2d({ 1.0, 0.8, 0.5 }))
            chain:configure({ solver = solver, iterations = 10, tolerance = 1e-3 })
            puppet:set_angles(crossing(0))
            chain:set_angles(crossing(0))
            local before, shown = chain:angles(), puppet:angles()
            local met, most, most_shown, crossed = 0, 0, 0, 0
            for frame = 1, FRAMES do
                puppet:set_angles(crossing(frame))
                chain:set_target_angle(puppet:world_angle(3))
                if chain:solve(puppet:effector()) then met = met + 1 end
                local now, shown_now = chain:angles(), puppet:angles()
                most = math.max(most, largest_turn(before, now, 2))
                most_shown = math.max(most_shown, largest_turn(shown, shown_now, 2))
                if shown[2] * shown_now[2] < 0 then crossed = crossed + 1 end
                before, shown = now, shown_now
            end
            local what = ("%d of %d frames met, largest turn %.4f, the animation's %.4f, %d crossings")
                :format(met, FRAMES, most, most_shown, crossed)
            assert(crossed >= 2, what) -- the workload does what it is for
            assert(met == FRAMES, what)
            assert(most <= 3 * most_shown, what)
        end)
    end

    -- Each case: a chain tracked for some frames, then changed by the game (or not) before
    -- one more solve; against a chain given the same pose and goal without the frames
    -- before. What the game set is a new start: the two answers are the same bits.
    -- A chain tracked for 40 frames, and the puppet it tracked.
    local function forty_frames()
        local c = limited(ik.chain2d({ 1.0, 0.8, 0.5 }))
        c:configure({ iterations = 10, tolerance = 1e-3 })
        c:set_angles(crossing(0))
        local puppet = limited(ik.chain2d({ 1.0, 0.8, 0.5 }))
        for frame = 1, 40 do
            puppet:set_angles(crossing(frame))
            c:set_target_angle(puppet:world_angle(3))
            c:solve(puppet:effector())
        end
        return c, puppet
    end

    local function tracked(change)
        local c, puppet = forty_frames()
        change(c)
        local fresh = limited(ik.chain2d({ 1.0, 0.8, 0.5 }))
        fresh:configure({ iterations = 10, tolerance = 1e-3 })
        fresh:set_angles(c:angles())
        fresh:set_base(c:base())
        puppet:set_angles(crossing(41))
        for _, x in ipairs({ c, fresh }) do
            x:set_target_angle(puppet:world_angle(3))
            x:solve(puppet:effector())
        end
        return c:angles(), fresh:angles()
    end

    it("a pose the game set is where the next solve starts: the motion before it is forgotten", function()
        local a, b = tracked(function(c) c:set_angle(2, c:angle(2)) end)
        assert.are.same(b, a)
        a, b = tracked(function(c) c:set_angles(c:angles()) end)
        assert.are.same(b, a)
    end)

    it("left alone, the chain continues its motion: the next solve differs from a fresh start", function()
        local a, b = tracked(function() end)
        assert.are_not.same(b, a)
        -- the base's move keeps the motion (a chain carried by a body)
        a, b = tracked(function(c) c:set_base(0.01, -0.02, 0.005) end)
        assert.are_not.same(b, a)
    end)

    it("a goal already met moves nothing, after any motion", function()
        local c = forty_frames()
        for _ = 1, 3 do -- (the 40th frame met its goal, as every frame does)
            local was = c:angles()
            local reached, _, iterations = c:solve()
            assert.is_true(reached)
            assert.are.equal(0, iterations)
            assert.are.same(was, c:angles())
        end
    end)
end)
