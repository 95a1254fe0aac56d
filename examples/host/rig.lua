-- A rig for the engine host (examples/host/host.c): what a game's animation script looks
-- like when the engine owns the loop. Every frame the host calls rig.update(dt); the script
-- moves its goals, solves and writes the pose into rig.bones (x, y, world angle of each 2D
-- bone), which the host copies out. Nothing here allocates per frame: the goals and the
-- bones live in tables made once, and the solves allocate nothing.
--
-- A 2D figure seen from the side, facing +x (units: metres, y up), built as an ik.rig:
--   spine      3 bones up from the hips (the rig's root; its base is the hips, which the
--              script moves: the figure sways and bobs)
--   arms       2 bones each, on the spine's top; the hands follow two moving points
--   legs       3 bones each (thigh, shin, foot), on the spine's base; each foot planted
--              with a position goal (the toe) and an orientation goal (the foot flat on the
--              ground), knees and ankles limited
-- One rig:solve() a frame moves them all together: the spine bends so that the hands can
-- follow while the feet stay put. The neck (2 bones, the head the second) is attached to
-- the spine's top but is not in the rig: after the rig's solve, neck:solve_aim turns it so
-- that the head looks at a fly. Beside the figure, single chains: a tail hanging from its
-- hips (CCD) and a rope from a fixed anchor (relaxation, with weights), both solved in one
-- ik.solve_many call, and a 3D chain (FABRIK) solved on its own.

local ik = require("ik")

local sin, cos, sqrt, abs, max, pi = math.sin, math.cos, math.sqrt, math.abs, math.max, math.pi

local function rep(value, n)
    local t = {}
    for i = 1, n do
        t[i] = value
    end
    return t
end

-- The figure. The spine's base frame points up (pi / 2); an attached chain's base frame is
-- that of the parent's bone ending at its joint, turned by the offset.
local HIP_X, HIP_Y = 0, 0.9
local spine = ik.chain2d({ 0.18, 0.18, 0.18 }, HIP_X, HIP_Y, pi / 2)
local arm_front, arm_back = ik.chain2d({ 0.30, 0.28 }), ik.chain2d({ 0.30, 0.28 })
local leg_front, leg_back = ik.chain2d({ 0.48, 0.45, 0.15 }), ik.chain2d({ 0.48, 0.45, 0.15 })
local neck = ik.chain2d({ 0.08, 0.14 })

arm_front:attach(spine, 4, pi) -- hanging down from the shoulders
arm_back:attach(spine, 4, pi)
leg_front:attach(spine, 1, pi) -- down from the hips
leg_back:attach(spine, 1, pi)
neck:attach(spine, 4) -- up, the spine going on

for i = 1, 3 do
    spine:set_limit(i, -0.3, 0.3)
end
for _, arm in ipairs({ arm_front, arm_back }) do
    arm:set_limit(2, 0, 2.6) -- the elbow bends forwards only
    arm:set_angle(1, 0.6)
    arm:set_angle(2, 1.0)
end
-- A leg's bone 1 points at -pi/2 + angle(1) in the world: the thigh swings forwards for a
-- positive angle, the knee bends backwards (a negative angle), and the foot, flat, is at
-- angle(3) = pi/2 - angle(1) - angle(2) from the shin.
for _, leg in ipairs({ leg_front, leg_back }) do
    leg:set_limit(1, -1.2, 1.6)
    leg:set_limit(2, -2.4, 0)
    leg:set_limit(3, 0.6, 2.6)
    leg:set_angle(1, 0.3)
    leg:set_angle(2, -0.6)
    leg:set_angle(3, pi / 2 + 0.3)
end
for i = 1, 2 do
    neck:set_limit(i, -1, 1)
end
neck:configure({ solver = "aim" })

-- The feet are planted: their goals are set once, the toes on the ground, the feet flat.
local FRONT_TOE, BACK_TOE, FOOT_Y = 0.30, -0.05, 0.05
leg_front:set_target(FRONT_TOE, FOOT_Y)
leg_front:set_target_angle(0)
leg_back:set_target(BACK_TOE, FOOT_Y)
leg_back:set_target_angle(0)

local figure = ik.rig({ spine, arm_front, arm_back, leg_front, leg_back })
local TOLERANCE, ANGLE_TOLERANCE = 1e-3, 1e-3
figure:configure({ tolerance = TOLERANCE, angle_tolerance = ANGLE_TOLERANCE })
local goals = { arm_front, arm_back, leg_front, leg_back }

-- The single chains: a tail on the hips (pointing back, -x), a rope from a fixed anchor.
local tail = ik.chain2d(rep(0.15, 5))
tail:attach(spine, 1, pi / 2)
tail:configure({ solver = "ccd", greed = 0.8 })

local rope = ik.chain2d(rep(0.25, 8), 1.6, 2, -pi / 2) -- hangs down
rope:configure({ solver = "relax" })
for i = 1, 9 do
    rope:set_weight(i, i / 9) -- joints near the tip move more than those near the anchor
end

local singles = { tail, rope }
local targets = rep(0, 2 * #singles) -- x1, y1, x2, y2, ...: refilled every frame

local chain3d = ik.chain3d(rep(0.5, 4), 3, 1, 0)

-- What the host copies: every 2D bone, the figure's first.
local posed = { spine, arm_front, arm_back, leg_front, leg_back, neck, tail, rope }
local bone_count = 0
for k = 1, #posed do
    bone_count = bone_count + #posed[k]
end

local rig = {}
rig.bones = rep(0, 3 * bone_count)

local time = 0
local solves, reached_total = 0, 0
local figure_solves, figure_met = 0, 0
local worst_goal, worst_foot_angle, worst_aim, worst_single = 0, 0, 0, 0

local function wrap(a)
    return (a + pi) % (2 * pi) - pi
end

-- Distance from a chain's tip to a point (2D).
local function miss(chain, tx, ty)
    local x, y = chain:effector()
    return sqrt((x - tx) ^ 2 + (y - ty) ^ 2)
end

local function count(reached)
    solves = solves + 1
    if reached then
        reached_total = reached_total + 1
        return 1
    end
    return 0
end

function rig.update(dt)
    time = time + dt
    local t = time
    local reached = 0

    -- The hips sway and bob (the feet stay where they are), the hands trace two loops in
    -- front of the body, and a fly wanders in front of the face.
    spine:set_base(HIP_X + 0.03 * sin(0.7 * t), HIP_Y + 0.03 * sin(1.4 * t))
    arm_front:set_target(0.30 + 0.10 * cos(1.3 * t), 1.20 + 0.15 * sin(1.3 * t))
    arm_back:set_target(0.22 + 0.12 * cos(0.9 * t + 1), 1.00 + 0.12 * sin(0.9 * t + 1))
    local ok = figure:solve()
    reached = reached + count(ok)
    figure_solves = figure_solves + 1
    if ok then
        figure_met = figure_met + 1
    end
    for k = 1, #goals do
        local chain = goals[k]
        worst_goal = max(worst_goal, miss(chain, chain:target()))
        local goal = chain:target_angle() -- the feet's
        if goal then
            worst_foot_angle = max(worst_foot_angle, abs(wrap(chain:world_angle(#chain) - goal)))
        end
    end

    local aimed, aim_error = neck:solve_aim(0.75 + 0.3 * cos(0.5 * t), 1.75 + 0.25 * sin(0.8 * t))
    reached = reached + count(aimed)
    worst_aim = max(worst_aim, aim_error)

    -- The tail sways behind the hips; the rope's end is pulled about.
    local hx, hy = spine:joint(1)
    targets[1], targets[2] = hx - 0.55 + 0.08 * cos(1.3 * t), hy + 0.15 * sin(2 * t)
    targets[3], targets[4] = 1.6 + 0.8 * sin(0.7 * t), 0.5 + 0.2 * cos(t)
    local many = ik.solve_many(singles, targets)
    solves = solves + #singles
    reached_total = reached_total + many
    reached = reached + many
    for k = 1, #singles do
        worst_single = max(worst_single, miss(singles[k], targets[2 * k - 1], targets[2 * k]))
    end

    reached = reached + count((chain3d:solve(3 + 0.8 * cos(t), 2.2, 0.8 * sin(t))))

    -- The pose, for the engine.
    local bones, n = rig.bones, 0
    for k = 1, #posed do
        local chain = posed[k]
        for i = 1, #chain do
            local x, y = chain:joint(i)
            bones[n + 1], bones[n + 2], bones[n + 3] = x, y, chain:world_angle(i)
            n = n + 3
        end
    end
    return reached
end

-- Called once at the end: ok when nearly every solve reached (every goal is within reach;
-- CCD may need a few frames more now and then), the figure met all its goals on nearly
-- every frame, and nothing went wrong.
function rig.summary()
    local share = reached_total / solves
    local ok = share >= 0.95 and figure_met >= 0.95 * figure_solves and worst_single < 0.05
        and worst_goal < 0.05 and worst_foot_angle < 0.05 and worst_aim < 0.05
    return ok, string.format("%d solves, %d reached (%.1f%%), figure rig %d of %d frames "
        .. "with every goal met (worst miss %.2g m, worst foot angle %.2g rad), head aimed "
        .. "within %.2g rad, worst single-chain miss %.2g m",
        solves, reached_total, 100 * share, figure_met, figure_solves, worst_goal,
        worst_foot_angle, worst_aim, worst_single)
end

return rig
