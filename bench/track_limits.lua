-- Tracking with limits in 2D, on a workload bench/limits.lua's single tracking row does not
-- cover: many chains, each with its own random ranges (0.5 to 3 rad wide, holding 0), a
-- puppet of the same bones playing a smooth animation within them, its tip (and, for the
-- 3-bone chains, its tip bone's world angle) the goal of a chain with those limits, solved
-- each frame from the last (10 iterations, tolerance 1e-3). Per solver: the frames met, and
-- the largest turn of a joint between two frames as a multiple of the animation's largest
-- (the issue asks for at most 3). Rates only, no times: every figure is the same on every run.
--   lua5.4 bench/track_limits.lua [chains] [frames]      (make bench runs it)
package.path = "./?.lua;lua/?.lua;lua/?/init.lua;" .. package.path
package.cpath = (os.getenv("IK_CPATH") or "build/lua5.4/?.so") .. ";" .. package.cpath
local ik = require("ik")

local sin, abs, max = math.sin, math.abs, math.max
local CHAINS, FRAMES = tonumber(arg[1]) or 8, tonumber(arg[2]) or 1000

local seed
local function random()
    seed = (16807 * seed) % 2147483647
    return seed / 2147483647
end

-- One chain of n bones tracking its puppet; returns frames met and the turn ratio.
local function track(solver, n, oriented)
    local lengths, lo, hi, phase, speed = {}, {}, {}, {}, {}
    for i = 1, n do
        lengths[i] = oriented and 1 + 3 * random() or 0.5 + random()
        local width = 0.5 + 2.5 * random()
        lo[i] = -width * random()
        hi[i] = lo[i] + width
        phase[i], speed[i] = 6.28 * random(), 0.5 + random()
    end
    local puppet, chain = ik.chain2d(lengths), ik.chain2d(lengths)
    for i = 1, n do chain:set_limit(i, lo[i], hi[i]) end
    chain:configure({ solver = solver, iterations = 10, tolerance = 1e-3 })
    local function play(frame)
        for i = 1, n do
            puppet:set_angle(i, lo[i] + (hi[i] - lo[i]) * (0.5 + 0.45 * sin(phase[i] + 0.03 * speed[i] * frame)))
        end
    end
    play(0)
    chain:set_angles(puppet:angles())
    local before, shown = chain:angles(), puppet:angles()
    local met, most, most_shown = 0, 0, 0
    for frame = 1, FRAMES do
        play(frame)
        if oriented then chain:set_target_angle(puppet:world_angle(n)) end
        if chain:solve(puppet:effector()) then met = met + 1 end
        local now, shown_now = chain:angles(), puppet:angles()
        for i = 1, n do
            most = max(most, abs(now[i] - before[i]))
            most_shown = max(most_shown, abs(shown_now[i] - shown[i]))
        end
        before, shown = now, shown_now
    end
    return met, most / most_shown
end

print(string.format("ik tracking with limits (2D): %d chains a row, %d frames each, 10 iterations a frame, "
    .. "tolerance 1e-3", CHAINS, FRAMES))
print(string.format("%-28s %12s %14s %14s %16s", "row", "frames met", "worst chain", "chains <= 3x", "largest turn / anim."))
for _, row in ipairs({ { 6, false }, { 3, true } }) do
    for _, solver in ipairs({ "fabrik", "ccd", "relax" }) do
        seed = 20261127 + row[1]
        local met, worst, calm, largest = 0, FRAMES, 0, 0
        for _ = 1, CHAINS do
            local m, ratio = track(solver, row[1], row[2])
            met, worst = met + m, math.min(worst, m)
            if ratio <= 3 then calm = calm + 1 end
            largest = max(largest, ratio)
        end
        print(string.format("%-28s %11.1f%% %13.1f%% %11d/%d %16.1f",
            string.format("%d bones %s%s", row[1], solver, row[2] and " + orient." or ""),
            100 * met / (CHAINS * FRAMES), 100 * worst / FRAMES, calm, CHAINS, largest))
    end
end
