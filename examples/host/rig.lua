-- A rig for the engine host (examples/host/host.c): what a game's animation script looks
-- like when the engine owns the loop. Every frame the host calls rig.update(dt); the rig
-- moves its targets, solves its chains and writes the pose into rig.bones (x, y, world
-- angle of each 2D bone), which the host copies out. Nothing here allocates per frame:
-- the targets and the bones live in tables made once, and the solves allocate nothing.
--
-- Four 2D chains are solved in one call with ik.solve_many, each by its own solver: an arm
-- (FABRIK), a tail (CCD), a rope (relaxation, with weights) and a leg (two-bone) whose foot
-- follows a stepping path; a 3D neck (FABRIK) is solved on its own. Units: metres, y up.

local ik = require("ik")

local sin, cos, sqrt, max, pi = math.sin, math.cos, math.sqrt, math.max, math.pi

local function rep(value, n)
    local t = {}
    for i = 1, n do
        t[i] = value
    end
    return t
end

local arm = ik.chain2d({ 1.0, 0.8, 0.6 }, 0, 0)
arm:configure({ solver = "fabrik" })

local tail = ik.chain2d(rep(0.4, 5), -3, 0, pi) -- points along -x
tail:configure({ solver = "ccd", greed = 0.8 })

local rope = ik.chain2d(rep(0.25, 8), 3, 2, -pi / 2) -- hangs down
rope:configure({ solver = "relax" })
for i = 1, 9 do
    rope:set_weight(i, i / 9) -- joints near the tip move more than those near the anchor
end

local leg = ik.chain2d({ 0.9, 0.8 }, 0, -1, -pi / 2)
-- On a y-up world's leg pointing down and walking to +x, bend -1 puts the knee in front.
leg:configure({ solver = "two_bone", bend = -1 })

local neck = ik.chain3d(rep(0.5, 4), 0, 1, 0)

local chains = { arm, tail, rope, leg }
local targets = rep(0, 2 * #chains) -- x1, y1, x2, y2, ...: refilled every frame

local rig = {}
rig.bones = rep(0, 3 * (#arm + #tail + #rope + #leg))

local time = 0
local solves, reached_total, worst = 0, 0, 0

-- Distance from a chain's tip to its target (2D).
local function miss(chain, tx, ty)
    local x, y = chain:effector()
    return sqrt((x - tx) ^ 2 + (y - ty) ^ 2)
end

function rig.update(dt)
    time = time + dt
    local t = time

    -- The arm's hand circles, the tail sways, the rope's end is pulled about, and the foot
    -- slides back along the ground, then lifts and swings forward: a step every 2 pi seconds.
    targets[1], targets[2] = 1.0 + 0.8 * cos(t), 0.5 + 0.8 * sin(t)
    targets[3], targets[4] = -4.2 + 0.3 * cos(1.3 * t), 0.5 * sin(2 * t)
    targets[5], targets[6] = 3 + 0.8 * sin(0.7 * t), 0.5 + 0.2 * cos(t)
    targets[7], targets[8] = 0.5 * cos(t), -2.4 + max(0, 0.3 * sin(t))

    local reached = ik.solve_many(chains, targets)
    for k = 1, #chains do
        local d = miss(chains[k], targets[2 * k - 1], targets[2 * k])
        if d > worst then
            worst = d
        end
    end

    if neck:solve(0.8 * cos(t), 2.2, 0.8 * sin(t)) then
        reached = reached + 1
    end

    -- The pose, for the engine.
    local bones, n = rig.bones, 0
    for k = 1, #chains do
        local chain = chains[k]
        for i = 1, #chain do
            local x, y = chain:joint(i)
            bones[n + 1], bones[n + 2], bones[n + 3] = x, y, chain:world_angle(i)
            n = n + 3
        end
    end

    solves = solves + #chains + 1
    reached_total = reached_total + reached
    return reached
end

-- Called once at the end: ok when nearly every solve reached (the targets are all within
-- reach; CCD may need a few frames more now and then) and nothing went wrong.
function rig.summary()
    local share = reached_total / solves
    local ok = share >= 0.95 and worst < 0.05
    return ok, string.format("%d solves, %d reached (%.1f%%), worst 2D miss %.2g m",
        solves, reached_total, 100 * share, worst)
end

return rig
