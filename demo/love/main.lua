-- The interactive demo of ik in LÖVE 11: `make love` builds the LuaJIT module, copies it
-- and the Lua files into demo/love/ik/ (where a game keeps them) and runs `love demo/love`.
--
-- Six rigs at once, each solved every frame from its last pose (a warm start; the spider's
-- legs from their rest pose):
--   1 arm       2 bones, the analytic two-bone solve; `b` flips its bend
--   2 tentacle  10 bones, FABRIK; its target wanders until you drag it
--   3 rope      16 bones hanging, constraint relaxation with weights rising towards the tip
--               (the dots: a joint's weight is how far it gives when the rope is pulled)
--   4 creature  walks to its flag on two two-bone legs; a foot stays planted until it is
--               too far from its hip's rest spot, then steps along an arc
--   5 3D        a 3D tentacle (FABRIK) drawn by ik.love in an orthographic x-y projection
--               (y up, scaled); its target circles in depth (z) as well
--   6 spider    an ik.rig of nine chains: a 2-bone body (the root; each frame its base
--               moves, at a limited speed, after the fly that wanders along the ledge) and
--               eight 3-bone legs attached to it, walked by ik.gait: each foot stays
--               planted on the bumpy ledge until it is too far from its home under the
--               body, then steps along an arc to a spot ahead, the legs in two alternating
--               groups. One gait:update and one rig:solve() a frame, the legs starting
--               from their rest pose (knees up); ikdraw.rig draws it, each leg in the
--               colour of its own goal
--   7 snake     24 bones crawling after its handle by chain:drag (follow-the-leader, each
--               joint's bend limited), the handle wandering until you drag it
--   8 staff     a closed loop: a figure holds a staff with both hands (the second hand
--               held on the staff by chain:attach_tip); the staff's tip follows the handle,
--               the body walks after it; one rig:solve() a frame closes the loop
--   9 linkage   a closed loop: a four-bar linkage whose crank (held by a zero-width limit)
--               turns on its own, or points at the handle while you drag it
-- The creature wags a tail of 6 bones by chain:simulate (gravity, stiffness, damping): it
-- lags behind when the creature sets off and swings when it stops.
-- Drag a cross (or the creature's flag, or the spider's fly) with the mouse. Keys act on the
-- selected rig (the last one dragged, or 1-9): f c r t pick the solver (the spider's rig:
-- f or r), [ ] greed, g greed ramp, - = halve or double the iterations, , . tolerance, b
-- the arm's bend; Esc quits. The panel shows each rig's last solve: reached, distance,
-- iterations and microseconds per solve.
--
-- Screen coordinates are pixels, y down. ik's angles are counter-clockwise in a y-up frame,
-- so on this screen a positive angle turns clockwise.
--
--   love demo/love --screenshot FILE.png   poses the rigs deterministically (fixed time
--   steps), draws a few frames, saves a PNG and quits (make love-screenshot).

-- With --screenshot nobody is there to close LÖVE's error screen (make love-screenshot, CI):
-- an error prints its traceback and exits with status 1 instead. Set before anything can fail.
for k = 1, #arg do
    if arg[k] == "--screenshot" then
        function love.errorhandler(message)
            print("Error: " .. debug.traceback(tostring(message), 2))
        end
    end
end

local ik = require("ik")
local ikdraw = require("ik.love")

local lg = love.graphics
local getTime = love.timer.getTime
local pi, sin, cos, abs, min, max = math.pi, math.sin, math.cos, math.abs, math.min, math.max

local FIXED_DT = 1 / 60
local screenshot_path -- set by --screenshot
local clock = 0       -- seconds of demo time

local function rep(value, n)
    local t = {}
    for i = 1, n do
        t[i] = value
    end
    return t
end

-- ---------------------------------------------------------------------------------------
-- The rigs. Each has its chains, the settings it passes to chain:configure (kept here, so
-- the panel never has to ask for them), a draggable handle, and the last solve's results.

local function new_rig(name, about, chains, solver, hx, hy)
    return {
        name = name,
        about = about,
        chains = chains,
        settings = { solver = solver, iterations = 64, tolerance = 0.001, greed = 0.5,
            greed_ramp = true },
        hx = hx, hy = hy,          -- the handle: the target, or the creature's flag
        reached = false, distance = 0, iterations = 0,
        us = 0,                    -- microseconds per solve, smoothed
    }
end

-- 1: the arm.
local arm_chain = ik.chain2d({ 120, 95 }, 190, 390)
local arm = new_rig("arm", "2 bones, b flips the bend", { arm_chain }, "two_bone", 310, 480)
arm.settings.bend = 1

-- 2: the tentacle, rising from the floor (base angle -pi/2 points up on this screen).
local tentacle_lengths = {}
for i = 1, 10 do
    tentacle_lengths[i] = 40 - 2.4 * (i - 1)
end
local tentacle_chain = ik.chain2d(tentacle_lengths, 520, 640, -pi / 2)
for i = 1, 10 do
    tentacle_chain:set_angle(i, 0.12) -- a gentle curl to start from
end
local tentacle = new_rig("tentacle", "10 bones, wanders until dragged", { tentacle_chain },
    "fabrik", 620, 460)
tentacle.home_x, tentacle.home_y = 620, 460
tentacle.wander = true

-- 3: the rope, hanging from its anchor (base angle pi/2 points down on this screen).
local rope_chain = ik.chain2d(rep(18, 16), 800, 110, pi / 2)
for i = 1, 17 do
    rope_chain:set_weight(i, i / 17)
end
local rope = new_rig("rope", "16 bones, weights", { rope_chain }, "relax", 900, 330)

-- 4: the creature. Two 2-bone legs hang from its hips (base angle pi/2: down).
local GROUND = 640
local LEG = { 50, 46 }
local HIP_HEIGHT = 80             -- hips above the ground: the legs are a little bent
local STEP_TRIGGER = 30           -- a foot this far from its rest spot steps
local STEP_TIME = 0.24            -- seconds per step
local STEP_LIFT = 22              -- pixels the foot rises mid-step
local WALK_SPEED = 70             -- pixels per second
local WALK_LEFT, WALK_RIGHT = 930, 1230

local creature_legs = {
    ik.chain2d(LEG, 0, 0, pi / 2),
    ik.chain2d(LEG, 0, 0, pi / 2),
}
local creature = new_rig("creature", "walks to its flag", creature_legs, "two_bone",
    WALK_RIGHT, GROUND)
creature.x = 1000
creature.facing = 1
creature.wait = 0
creature.body_y = GROUND - HIP_HEIGHT
creature.feet = {
    -- hip offset from the body's centre; foot position; a step in progress (from, to, t)
    { hip = -18, x = 1000 - 18 - 12, y = GROUND, stepping = false, from = 0, to = 0, t = 0 },
    { hip = 18, x = 1000 + 18 + 12, y = GROUND, stepping = false, from = 0, to = 0, t = 0 },
}
-- The knee points the way the creature walks. Made once: configure takes a table.
local BEND = { [1] = { bend = 1 }, [-1] = { bend = -1 } }
-- Its tail: 6 bones from its rear, out and up behind it, moved by chain:simulate (pixels
-- and seconds: gravity down the screen, each bone pulled back straight by stiffness).
local tail = ik.chain2d(rep(9, 6), 1000 - 40, GROUND - HIP_HEIGHT, pi + 0.5)
tail:configure({ gravity = { 0, 400 }, stiffness = 600, damping = 3 })

-- 7: the snake, on the floor between the tentacle and the creature: its head crawls after
-- the handle at a limited speed and chain:drag pulls the body after it, each joint bending
-- at most 0.45 rad.
local SNAKE_SPEED = 150
local snake_chain = ik.chain2d(rep(7, 24), 600, 650, 0)
for i = 2, 24 do
    snake_chain:set_limit(i, -0.45, 0.45)
end
local snake = new_rig("snake", "24 bones, chain:drag after its head", { snake_chain }, "fabrik", 800, 650)
snake.home_x, snake.home_y, snake.phase, snake.wander = 770, 640, 0, true

-- 5: a 3D tentacle in a y-up world of its own (units: metres), drawn by ik.love scaled and
-- flipped onto the screen. At rest a 3D chain points along +x; its base is turned a quarter
-- turn about z, so it points up.
local VIEW3D = { x = 1090, y = 470, scale = 62, flip_y = true, width = 3, radius = 3 }
local chain3d = ik.chain3d(rep(0.42, 8), 0, 0, 0)
chain3d:set_base(0, 0, 0, cos(pi / 4), 0, 0, sin(pi / 4))
local rig3d = new_rig("3D", "8 bones in 3D, seen along z", { chain3d }, "fabrik", 0, 0)
rig3d.wx, rig3d.wy, rig3d.wz = 0.9, 2.0, 0 -- the target, in its world
rig3d.home_x, rig3d.home_y = 0.9, 2.0
rig3d.wander, rig3d.phase = true, 0

local function screen3d(x, y)
    return VIEW3D.x + x * VIEW3D.scale, VIEW3D.y - y * VIEW3D.scale
end

-- 6: the spider, a rig on a ledge across the top left. Its body is the root: bone 1 the
-- abdomen, bone 2 the cephalothorax, its base (the abdomen's rear end) set every frame.
-- Legs 1-4 hang on joint 2 (the waist) and reach back, legs 5-8 on joint 3 (the front)
-- and reach forwards, a rear leg the mirror image of a front one. On this y-down screen a
-- femur's direction -1.45 is steeply up and forwards, -0.5 less steeply; -(pi - a) is the
-- same, backwards.
local LEDGE_LEFT, LEDGE_RIGHT = 30, 760
local function ground(x)
    return 282 + 9 * sin(x / 47) + 5 * sin(x / 19 + 1.3)
end
local SPIDER_BODY = { 44, 22 }
local SPIDER_LEG = { 58, 78, 58 } -- femur, tibia, tarsus
local SPIDER_HEIGHT = 62          -- the waist above the ground
local SPIDER_SPEED = 120          -- pixels per second at most
local SPIDER_STRIDE = 26          -- a foot this far from its home steps (ik.gait's stride)
local SPIDER_STEP_TIME = 0.14     -- seconds per step
local SPIDER_LIFT = 20            -- pixels a foot rises mid-step
-- Leg k from the rear: its rest spot's x from its hip, and its femur's direction at rest.
local SPIDER_REST = { -122, -96, -70, -44, 44, 70, 96, 122 }
local SPIDER_FEMUR = { -(pi - 0.5), -(pi - 0.8), -(pi - 1.1), -(pi - 1.45), -1.45, -1.1, -0.8, -0.5 }

local spider_body = ik.chain2d(SPIDER_BODY, 300 - SPIDER_BODY[1], ground(300) - SPIDER_HEIGHT, 0)
for i = 1, 2 do
    spider_body:set_limit(i, -0.15, 0.15) -- the body bends a little for its legs
end
local spider_chains = { spider_body }
local spider_feet = {}
for k = 1, 8 do
    local leg = ik.chain2d(SPIDER_LEG)
    -- The leg's base frame is the body bone's turned by the femur's rest direction.
    leg:attach(spider_body, k <= 4 and 2 or 3, SPIDER_FEMUR[k])
    spider_chains[k + 1] = leg
    -- pose: the leg's angles at rest (below).
    spider_feet[k] = { chain = leg, rest = SPIDER_REST[k], pose = { 0, 0, 0 } }
end
local spider_rig = ik.rig(spider_chains)
local spider = new_rig("spider", "a rig of 9 chains: 8 legs follow their feet", spider_chains,
    "fabrik", 520, 150)
spider.rig = spider_rig
spider.x = 300                     -- the waist's x, moved towards the fly's
spider.vx = 0
spider.tilt = 0
spider.home_x, spider.phase, spider.wander = 395, 0, true

-- Each leg's rest pose, knee up: the femur along its rest direction, the tibia and tarsus
-- solved by ik.two_bone for the rest spot on level ground, the ankle bent outwards. Every
-- frame the legs start the rig's solve from it, so each comes out close to it, knee up.
-- (The legs have no limits: in a rig, limits trap the solve in minima that a chain's own
-- solve escapes.)
for k = 1, 8 do
    local foot, a = spider_feet[k], SPIDER_FEMUR[k]
    local kx, ky = SPIDER_LEG[1] * cos(a), SPIDER_LEG[1] * sin(a) -- the knee, from the hip
    local tibia, ankle = ik.two_bone(SPIDER_LEG[2], SPIDER_LEG[3], foot.rest - kx,
        SPIDER_HEIGHT - ky, foot.rest > 0 and 1 or -1)
    foot.pose[1], foot.pose[2], foot.pose[3] = 0, tibia - a, ankle
    foot.chain:set_angles(foot.pose)
end

-- 8: a figure holding a staff with both hands, a closed loop: a torso (2 bones, up), two
-- arms on its top, the staff (a short grip, then the rigid shaft) in the first hand, and
-- the second hand held on the staff at the end of its grip (chain:attach_tip). The staff's
-- tip goes to the handle; the body walks after it. One rig:solve() closes the loop.
local STAFF_X, STAFF_Y = 1120, 300 -- the torso's base
local staff_torso = ik.chain2d({ 40, 36 }, STAFF_X, STAFF_Y, -pi / 2)
local staff_arm1, staff_arm2 = ik.chain2d({ 34, 30 }), ik.chain2d({ 34, 30 })
local staff_pole = ik.chain2d({ 26, 96 })
staff_arm1:attach(staff_torso, 3, pi / 2 + 0.4)
staff_arm2:attach(staff_torso, 3, -(pi / 2 + 0.4))
staff_pole:attach(staff_arm1, 3)
for i = 1, 2 do staff_torso:set_limit(i, -0.3, 0.3) end
staff_arm1:set_limit(2, -2.6, 0)
staff_arm2:set_limit(2, 0, 2.6)
staff_pole:set_limit(1, -1.3, 1.3) -- the wrist
staff_pole:set_limit(2, 0, 0) -- the shaft goes on straight from the grip
staff_arm1:set_angles({ -0.6, -1.2 })
staff_arm2:set_angles({ 0.9, 1.4 })
staff_pole:set_angles({ -0.4, 0 })
staff_arm2:attach_tip(staff_pole, 2)
local staff_chains = { staff_torso, staff_arm1, staff_arm2, staff_pole }
local staff = new_rig("staff", "a loop: two hands on one staff", staff_chains, "fabrik", 1215, 170)
staff.rig = ik.rig(staff_chains)
staff.x = STAFF_X

-- 9: a four-bar linkage (crank 28, coupler 110, rocker 80, ground 120: a crank-rocker),
-- a closed loop: the crank + coupler chain's tip held on the rocker's. The crank is held
-- at its angle by a zero-width limit that turns a little every frame (or points at the
-- handle while it is dragged); one rig:solve() a frame moves the coupler and the rocker.
local LINK_X, LINK_Y, LINK_GROUND = 560, 420, 120
local link_crank = ik.chain2d({ 28, 110 }, LINK_X, LINK_Y, 0)
local link_rocker = ik.chain2d({ 80 }, LINK_X + LINK_GROUND, LINK_Y, 0)
link_crank:set_angles({ -1.2, 1.0 })
link_rocker:set_angle(1, -2.0)
link_crank:attach_tip(link_rocker, 2)
local linkage = new_rig("linkage", "a loop: a four-bar linkage driven by its crank",
    { link_crank, link_rocker }, "fabrik", LINK_X + 28 * cos(-1.2), LINK_Y + 28 * sin(-1.2))
linkage.rig = ik.rig({ link_crank, link_rocker })
linkage.angle, linkage.wander = -1.2, true
linkage.settings.tolerance = 1e-6

local rigs = { arm, tentacle, rope, creature, rig3d, spider, snake, staff, linkage }
local selected = arm
local message, message_time = nil, 0 -- a line of feedback after a key, for a few seconds

local function configure(rig)
    if rig.rig then
        -- A rig has settings of its own (its chains' solver, greed and tolerance are not
        -- used in a rig's solve): solver fabrik or relax, iterations, tolerance.
        local s = rig.settings
        rig.rig:configure({ solver = s.solver, iterations = s.iterations, tolerance = s.tolerance })
        return
    end
    for _, chain in ipairs(rig.chains) do
        chain:configure(rig.settings)
    end
    if rig == creature then
        for _, chain in ipairs(rig.chains) do
            chain:configure(BEND[creature.facing])
        end
    end
end

for _, rig in ipairs(rigs) do
    configure(rig)
end

-- ---------------------------------------------------------------------------------------
-- Updates. Each solve is timed with love.timer.getTime; the panel shows a running average.

local function record(rig, reached, distance, iterations, seconds, solves)
    rig.reached, rig.distance, rig.iterations = reached, distance, iterations
    local us = seconds * 1e6 / solves
    rig.us = rig.us == 0 and us or 0.95 * rig.us + 0.05 * us
end

local function solve_one(rig, x, y)
    local started = getTime()
    local reached, distance, iterations = rig.chains[1]:solve(x, y)
    record(rig, reached, distance, iterations, getTime() - started, 1)
end

local function update_tentacle(dt)
    if tentacle.wander then
        tentacle.phase = (tentacle.phase or 0) + dt
        local t = tentacle.phase
        tentacle.hx = tentacle.home_x + 90 * sin(0.7 * t)
        tentacle.hy = tentacle.home_y + 60 * sin(1.3 * t)
    end
end

-- A foot: planted, or on its way along an arc from `from` to `to` (smoothstep in x, a sine
-- hump in y).
local function update_foot(foot, other, hip_x, dt)
    local rest_x = hip_x + 6 * creature.facing
    if not foot.stepping then
        if abs(foot.x - rest_x) > STEP_TRIGGER and not other.stepping then
            foot.stepping, foot.t, foot.from = true, 0, foot.x
            -- Land ahead of the rest spot when walking, so the stride is even.
            local moving = abs(creature.hx - creature.x) > 2 and 1 or 0
            foot.to = rest_x + creature.facing * moving * 0.8 * STEP_TRIGGER
        end
        return
    end
    foot.t = min(1, foot.t + dt / STEP_TIME)
    local s = foot.t
    local e = s * s * (3 - 2 * s)
    foot.x = foot.from + (foot.to - foot.from) * e
    foot.y = GROUND - STEP_LIFT * sin(pi * s)
    if foot.t >= 1 then
        foot.stepping, foot.y = false, GROUND
    end
end

local function update_creature(dt)
    local c = creature
    local to_goal = c.hx - c.x
    if abs(to_goal) > 2 then
        local facing = to_goal > 0 and 1 or -1
        if facing ~= c.facing then
            c.facing = facing
            for _, chain in ipairs(c.chains) do
                chain:configure(BEND[facing])
            end
        end
        c.x = c.x + facing * min(abs(to_goal), WALK_SPEED * dt)
        c.wait = 0
    elseif c.dragging ~= true then
        -- At the flag: rest a moment, then the flag moves to the other end of the field.
        c.wait = c.wait + dt
        if c.wait > 1.5 then
            c.hx = c.hx > (WALK_LEFT + WALK_RIGHT) / 2 and WALK_LEFT or WALK_RIGHT
        end
    end

    local feet = c.feet
    local lift = 0
    for k = 1, 2 do
        local foot = feet[k]
        update_foot(foot, feet[3 - k], c.x + foot.hip, dt)
        if foot.stepping then
            lift = max(lift, sin(pi * foot.t))
        end
    end
    -- The body dips a little while a foot is in the air.
    c.body_y = GROUND - HIP_HEIGHT + 4 * lift

    local all_reached, worst, most, spent = true, 0, 0, 0
    for k = 1, 2 do
        local chain, foot = c.chains[k], feet[k]
        chain:set_base(c.x + foot.hip, c.body_y + 8)
        local started = getTime()
        local reached, distance, iterations = chain:solve(foot.x, foot.y)
        spent = spent + getTime() - started
        all_reached = all_reached and reached
        worst, most = max(worst, distance), max(most, iterations)
    end
    record(c, all_reached, worst, most, spent, 2)

    -- The tail: its base on the creature's rear, pointing back and up; the joints follow
    -- with their own inertia.
    tail:set_base(c.x - 40 * c.facing, c.body_y - 4, c.facing > 0 and pi + 0.5 or -0.5)
    tail:simulate(dt)
end

local function update_snake(dt)
    local sn = snake
    if sn.wander then
        sn.phase = sn.phase + dt
        sn.hx = sn.home_x + 130 * sin(0.55 * sn.phase)
        sn.hy = sn.home_y + 35 * sin(1.4 * sn.phase)
    end
    local x, y = snake_chain:effector()
    local dx, dy = sn.hx - x, sn.hy - y
    local d = math.sqrt(dx * dx + dy * dy)
    local step = min(d, SNAKE_SPEED * dt)
    if d > 0 then
        x, y = x + dx / d * step, y + dy / d * step
    end
    local started = getTime()
    snake_chain:drag(x, y)
    record(sn, d - step <= 1, d - step, 1, getTime() - started, 1)
end

-- The rest spot of a foot: its rest offset from the leg's hip, on the ground.
local function spider_rest(foot)
    local hx = foot.chain:joint(1)
    local x = hx + foot.rest
    return x, ground(x)
end

local function update_spider(dt)
    local sp = spider
    if sp.wander then
        sp.phase = sp.phase + dt
        sp.hx = sp.home_x + 230 * sin(0.45 * sp.phase)
        sp.hy = ground(sp.hx) - 150 + 12 * sin(3.1 * sp.phase)
    end

    -- The body: its waist towards the fly's x, speed limited and eased, its height and tilt
    -- from the ground under it.
    local goal = max(LEDGE_LEFT + 170, min(LEDGE_RIGHT - 170, sp.hx))
    local want = max(-SPIDER_SPEED, min(SPIDER_SPEED, 3 * (goal - sp.x)))
    sp.vx = sp.vx + (want - sp.vx) * min(1, 6 * dt)
    sp.x = sp.x + sp.vx * dt
    local slope = (ground(sp.x + 60) - ground(sp.x - 60)) / 120
    sp.tilt = sp.tilt + (max(-0.25, min(0.25, math.atan(slope))) - sp.tilt) * min(1, 5 * dt)
    -- The body dips a little while feet are in the air (read from the gait's last update).
    local lift = 0
    for k = 1, 8 do
        local _, _, stepping, progress = spider.gait:foot(k)
        if stepping then
            lift = max(lift, sin(pi * progress))
        end
    end
    local waist_y = (ground(sp.x - 70) + ground(sp.x) + ground(sp.x + 70)) / 3 - SPIDER_HEIGHT
        - 3 * lift
    local length = SPIDER_BODY[1]
    spider_body:set_base(sp.x - length * cos(sp.tilt), waist_y - length * sin(sp.tilt), sp.tilt)

    -- The feet: ik.gait keeps them planted, steps a group when its foot strays past the
    -- stride from its home under the body, and sets every leg's goal to its foot.
    sp.gait:update(dt)

    for k = 1, 8 do
        spider_feet[k].chain:set_angles(spider_feet[k].pose)
    end
    local started = getTime()
    local reached, distance, iterations = spider_rig:solve()
    record(sp, reached, distance, iterations, getTime() - started, 1)
end

-- Every foot on its rest spot, and the legs solved there: the spider as it starts. The gait
-- takes each foot's home from there (kept under the body as it moves). On this y-down
-- screen up is -y.
local function spider_stand()
    spider_body:set_base(spider.x - SPIDER_BODY[1], ground(spider.x) - SPIDER_HEIGHT, 0)
    for k = 1, 8 do
        local foot = spider_feet[k]
        foot.chain:set_target(spider_rest(foot))
    end
    spider_rig:solve()
    local legs = {}
    for k = 1, 8 do legs[k] = spider_feet[k].chain end
    spider.gait = ik.gait(legs, { stride = SPIDER_STRIDE, step_time = SPIDER_STEP_TIME,
        lift = SPIDER_LIFT, lead = 0.6, up = -1, ground = ground,
        groups = { { 1, 3, 5, 7 }, { 2, 4, 6, 8 } } })
end
spider_stand()

local function update_3d(dt)
    local r = rig3d
    r.phase = r.phase + dt
    if r.wander then
        r.wx = r.home_x + 0.8 * sin(0.6 * r.phase)
        r.wy = r.home_y + 0.5 * sin(1.1 * r.phase)
    end
    r.wz = 1.3 * sin(0.9 * r.phase) -- always moving in depth
    r.hx, r.hy = screen3d(r.wx, r.wy)
    local started = getTime()
    local reached, distance, iterations = chain3d:solve(r.wx, r.wy, r.wz)
    record(r, reached, distance, iterations, getTime() - started, 1)
end

local function update_staff(dt)
    local st = staff
    -- The body walks after the handle (standing back from the staff's tip), at a limited
    -- speed.
    local goal = max(1010, min(1200, st.hx - 100))
    st.x = st.x + max(-60 * dt, min(60 * dt, goal - st.x))
    staff_torso:set_base(st.x, STAFF_Y)
    staff_pole:set_target(st.hx, st.hy)
    local started = getTime()
    local reached, distance, iterations = st.rig:solve()
    record(st, reached, distance, iterations, getTime() - started, 1)
end

local function update_linkage(dt)
    local l = linkage
    if l.wander then
        l.angle = l.angle + 1.4 * dt
        l.hx, l.hy = LINK_X + 28 * cos(l.angle), LINK_Y + 28 * sin(l.angle)
    else
        l.angle = math.atan2(l.hy - LINK_Y, l.hx - LINK_X)
    end
    l.angle = math.atan2(sin(l.angle), cos(l.angle))
    link_crank:set_limit(1, l.angle, l.angle)
    local started = getTime()
    local reached, distance, iterations = l.rig:solve()
    record(l, reached, distance, iterations, getTime() - started, 1)
end

local function update(dt)
    clock = clock + dt
    update_staff(dt)
    update_linkage(dt)
    update_tentacle(dt)
    update_3d(dt)
    solve_one(arm, arm.hx, arm.hy)
    solve_one(tentacle, tentacle.hx, tentacle.hy)
    solve_one(rope, rope.hx, rope.hy)
    update_creature(dt)
    update_spider(dt)
    update_snake(dt)
    if message and clock - message_time > 4 then
        message = nil
    end
end

-- ---------------------------------------------------------------------------------------
-- Mouse: press near a handle to pick it up (and select its rig), drag, release.

local HANDLE_RADIUS = 24
local dragging -- the rig whose handle is held

local function handle_at(x, y)
    local best, best_d = nil, HANDLE_RADIUS
    for _, rig in ipairs(rigs) do
        local hy = rig == creature and rig.hy - 20 or rig.hy -- the flag's cloth
        local d = math.sqrt((x - rig.hx) ^ 2 + (y - hy) ^ 2)
        if d < best_d then
            best, best_d = rig, d
        end
    end
    return best
end

function love.mousepressed(x, y, button)
    if button ~= 1 then
        return
    end
    dragging = handle_at(x, y)
    if dragging then
        selected = dragging
        if dragging == tentacle or dragging == rig3d or dragging == spider or dragging == snake
            or dragging == linkage then
            dragging.wander = false
        elseif dragging == creature then
            creature.dragging = true
        end
    end
end

function love.mousemoved(x, y)
    if not dragging then
        return
    end
    if dragging == creature then
        creature.hx = max(WALK_LEFT, min(WALK_RIGHT, x)) -- the flag stays on the ground
    elseif dragging == rig3d then
        rig3d.wx = (x - VIEW3D.x) / VIEW3D.scale -- screen to its world; z keeps circling
        rig3d.wy = (VIEW3D.y - y) / VIEW3D.scale
        rig3d.hx, rig3d.hy = x, y
    else
        dragging.hx, dragging.hy = x, y
    end
end

function love.mousereleased(_, _, button)
    if button == 1 and dragging then
        if dragging == tentacle or dragging == snake then
            -- It wanders again around where it was let go.
            dragging.home_x, dragging.home_y = dragging.hx, dragging.hy
            dragging.phase, dragging.wander = 0, true
        elseif dragging == rig3d then
            rig3d.home_x, rig3d.home_y = rig3d.wx, rig3d.wy
            rig3d.phase, rig3d.wander = 0, true
        elseif dragging == spider then
            -- It wanders along the ledge again from where it was let go.
            spider.home_x = max(LEDGE_LEFT + 230, min(LEDGE_RIGHT - 230, spider.hx))
            spider.phase = math.asin(max(-1, min(1, (spider.hx - spider.home_x) / 230))) / 0.45
            spider.wander = true
        elseif dragging == creature then
            creature.dragging = false
        elseif dragging == linkage then
            linkage.wander = true -- the crank turns on from where it was let go
        end
        dragging = nil
    end
end

-- ---------------------------------------------------------------------------------------
-- Keys.

local function say(text)
    message, message_time = text, clock
end

-- Applies a change to the selected rig's settings; configure rejects a bad one (a two-bone
-- solve on a chain of more bones) and changes nothing, so the old value is put back.
local function change(key, value)
    if selected.rig and (key == "greed" or key == "greed_ramp") then
        say(selected.name .. ": a rig has no greed (it solves by FABRIK or relaxation)")
        return
    end
    local settings = selected.settings
    local old = settings[key]
    settings[key] = value
    local ok, err = pcall(configure, selected)
    if not ok then
        settings[key] = old
        configure(selected)
        say(selected.name .. ": " .. tostring(err):gsub("^.-: ", ""))
    end
end

local SOLVER_KEYS = { f = "fabrik", c = "ccd", r = "relax", t = "two_bone" }

function love.keypressed(key)
    local s = selected.settings
    if key == "escape" then
        love.event.quit(0)
    elseif tonumber(key) and rigs[tonumber(key)] then
        selected = rigs[tonumber(key)]
    elseif SOLVER_KEYS[key] then
        change("solver", SOLVER_KEYS[key])
    elseif key == "[" or key == "]" then
        local greed = s.greed + (key == "]" and 0.05 or -0.05)
        change("greed", max(0.05, min(1, math.floor(greed * 20 + 0.5) / 20)))
    elseif key == "g" then
        change("greed_ramp", not s.greed_ramp)
    elseif key == "-" or key == "=" then
        change("iterations", max(1, min(1024, key == "=" and s.iterations * 2
            or math.floor(s.iterations / 2))))
    elseif key == "," or key == "." then
        change("tolerance", max(1e-6, min(10, key == "." and s.tolerance * 10
            or s.tolerance / 10)))
    elseif key == "b" then
        arm.settings.bend = -arm.settings.bend
        configure(arm)
        say("arm: bend " .. arm.settings.bend .. (arm.settings.solver == "two_bone" and ""
            or " (only the two-bone solver uses it)"))
    end
end

-- ---------------------------------------------------------------------------------------
-- Drawing. ik.love draws the chains; the rest is scenery and the panel.

local font, small
local BACKGROUND = { 0.10, 0.11, 0.14 }
local TEXT = { 0.88, 0.89, 0.92 }
local DIM = { 0.55, 0.57, 0.63 }
local ACCENT = { 1.00, 0.82, 0.35 }

local tentacle_style = { width = 4, radius = 3 }
local spider_style = { width = 3, radius = 2.5, cross = 4, limits = false }
local leg_style = { width = 5, radius = 4 }
local tail_style = { width = 4, radius = 2 }
local snake_style = { width = 6, radius = 3 }

local function draw_handle_ring(rig)
    local mx, my = love.mouse.getPosition()
    if dragging == rig or (not dragging and handle_at(mx, my) == rig) then
        lg.setColor(ACCENT)
        lg.setLineWidth(1)
        local hy = rig == creature and rig.hy - 20 or rig.hy
        lg.circle("line", rig.hx, hy, HANDLE_RADIUS)
    end
end

local function draw_rope_weights()
    lg.setColor(0.45, 0.65, 1.0, 0.55)
    for i = 2, 17 do
        local x, y = rope_chain:joint(i)
        lg.circle("fill", x, y, 2 + 5 * rope_chain:weight(i))
    end
    -- The anchor.
    lg.setColor(DIM)
    lg.rectangle("fill", 770, 100, 60, 8)
end

local function draw_creature()
    local c = creature
    -- The flag it walks to.
    lg.setColor(DIM)
    lg.setLineWidth(2)
    lg.line(c.hx, GROUND, c.hx, GROUND - 44)
    lg.setColor(ACCENT)
    lg.polygon("fill", c.hx, GROUND - 44, c.hx + 22, GROUND - 36, c.hx, GROUND - 28)

    ikdraw.draw(tail, nil, nil, nil, tail_style)
    for k = 1, 2 do
        ikdraw.draw(c.chains[k], c.feet[k].x, c.feet[k].y, c.reached, leg_style)
    end
    -- The body, and an eye on the side it faces.
    lg.setColor(0.42, 0.50, 0.78)
    lg.ellipse("fill", c.x, c.body_y, 44, 18)
    lg.setColor(0.95, 0.95, 0.98)
    lg.circle("fill", c.x + 30 * c.facing, c.body_y - 6, 5)
    lg.setColor(0.1, 0.1, 0.12)
    lg.circle("fill", c.x + 32 * c.facing, c.body_y - 6, 2.5)
end

-- The ledge: a strip of ground made once (a triangle strip along the bumps), its edge a line.
local ledge_mesh, ledge_edge
local function make_ledge()
    local vertices, edge = {}, {}
    for x = LEDGE_LEFT, LEDGE_RIGHT, 10 do
        local y = ground(x)
        vertices[#vertices + 1] = { x, y }
        vertices[#vertices + 1] = { x, y + 26 }
        edge[#edge + 1] = x
        edge[#edge + 1] = y
    end
    ledge_mesh = lg.newMesh(vertices, "strip", "static")
    ledge_edge = edge
end

local function draw_spider()
    local sp = spider
    lg.setColor(0.22, 0.24, 0.29)
    lg.draw(ledge_mesh)
    lg.setColor(0.32, 0.35, 0.42)
    lg.setLineWidth(2)
    lg.line(ledge_edge)

    -- The fly it follows.
    lg.setColor(0.75, 0.85, 1.0, 0.45)
    lg.ellipse("fill", sp.hx - 4, sp.hy - 5, 6, 3)
    lg.ellipse("fill", sp.hx + 4, sp.hy - 5, 6, 3)
    lg.setColor(ACCENT)
    lg.circle("fill", sp.hx, sp.hy, 4)

    ikdraw.rig(spider_rig, spider_style)

    -- The body over the legs' roots: the abdomen and the cephalothorax, each an ellipse
    -- along its bone, and the eyes at the front.
    for i = 1, 2 do
        local x1, y1 = spider_body:joint(i)
        local x2, y2 = spider_body:joint(i + 1)
        lg.push()
        lg.translate((x1 + x2) / 2, (y1 + y2) / 2)
        lg.rotate(spider_body:world_angle(i))
        if i == 1 then
            lg.setColor(0.36, 0.30, 0.52)
            lg.ellipse("fill", -6, 0, 32, 21)
            lg.setColor(0.46, 0.40, 0.66)
            lg.ellipse("fill", -10, -6, 14, 7)
        else
            lg.setColor(0.42, 0.36, 0.60)
            lg.ellipse("fill", 2, 0, 19, 14)
            lg.setColor(0.95, 0.95, 0.98)
            lg.circle("fill", 14, -6, 4)
            lg.circle("fill", 8, -8, 3)
            lg.setColor(0.1, 0.1, 0.12)
            lg.circle("fill", 15, -6, 2)
            lg.circle("fill", 9, -8, 1.5)
        end
        lg.pop()
    end
end

-- The loops: the staff's shaft and the figure's head under the rig's lines; the linkage's
-- ground and pivots.
local staff_style = { width = 4, radius = 2.5, cross = 6, limits = false }
local link_style = { width = 5, radius = 4, limits = false }
local function draw_loops()
    local hx, hy = staff_torso:joint(3)
    lg.setColor(0.85, 0.80, 0.70)
    lg.circle("fill", hx, hy - 12, 10)
    local gx, gy = staff_pole:joint(1)
    local tx, ty = staff_pole:joint(3)
    lg.setColor(0.55, 0.40, 0.25)
    lg.setLineWidth(6)
    lg.line(gx, gy, tx, ty)
    ikdraw.rig(staff.rig, staff_style)

    lg.setColor(0.32, 0.35, 0.42)
    lg.setLineWidth(3)
    lg.line(LINK_X - 14, LINK_Y + 6, LINK_X + LINK_GROUND + 14, LINK_Y + 6)
    ikdraw.rig(linkage.rig, link_style)
    lg.setColor(0.32, 0.35, 0.42)
    lg.polygon("fill", LINK_X, LINK_Y, LINK_X - 8, LINK_Y + 10, LINK_X + 8, LINK_Y + 10)
    lg.polygon("fill", LINK_X + LINK_GROUND, LINK_Y, LINK_X + LINK_GROUND - 8, LINK_Y + 10,
        LINK_X + LINK_GROUND + 8, LINK_Y + 10)
end

local function draw_panel()
    local x0, y0 = 20, 494
    lg.setColor(0, 0, 0, 0.35)
    lg.rectangle("fill", x0 - 10, y0 - 10, 440, 216, 6, 6)
    lg.setFont(small)
    local columns = { 0, 100, 178, 240, 320, 370 }
    local head = { "rig", "solver", "reached", "distance", "iters", "µs/solve" }
    lg.setColor(DIM)
    for k = 1, #head do
        lg.print(head[k], x0 + columns[k], y0)
    end
    for n, rig in ipairs(rigs) do
        local y = y0 + 4 + 21 * n
        lg.setColor(rig == selected and ACCENT or TEXT)
        lg.print((rig == selected and "> " or "  ") .. n .. " " .. rig.name, x0 + columns[1], y)
        lg.print(rig.settings.solver, x0 + columns[2], y)
        lg.setColor(rig.reached and ikdraw.style.reached or ikdraw.style.missed)
        lg.print(rig.reached and "yes" or "no", x0 + columns[3], y)
        lg.setColor(rig == selected and ACCENT or TEXT)
        lg.print(string.format("%.3g", rig.distance), x0 + columns[4], y)
        lg.print(tostring(rig.iterations), x0 + columns[5], y)
        lg.print(string.format("%.1f", rig.us), x0 + columns[6], y)
    end
end

local function draw_help()
    local s = selected.settings
    lg.setFont(font)
    lg.setColor(TEXT)
    lg.print("drag the crosses, the flag and the fly   1-9 pick a rig   f c r t solver   [ ] greed   "
        .. "g ramp   - = iterations   , . tolerance   b arm's bend   Esc quit",
        20, 14)
    lg.setColor(ACCENT)
    if selected.rig then
        lg.print(string.format("%s (%s): rig:solve() by %s, iterations %d, tolerance %g px",
            selected.name, selected.about, s.solver, s.iterations, s.tolerance), 20, 38)
    else
        lg.print(string.format("%s (%s): %s, iterations %d, tolerance %g %s, greed %.2f, ramp %s%s",
            selected.name, selected.about, s.solver, s.iterations, s.tolerance,
            selected == rig3d and "m" or "px", s.greed, s.greed_ramp and "on" or "off",
            selected == arm and (", bend " .. s.bend) or ""), 20, 38)
    end
    lg.setFont(small)
    lg.setColor(DIM)
    lg.print("y is down: a positive angle turns clockwise on screen", 20, 62)
    if message then
        lg.setColor(ikdraw.style.missed)
        lg.print(message, 20, 82)
    end
end

function love.draw()
    lg.clear(BACKGROUND)
    -- The floor.
    lg.setColor(0.22, 0.24, 0.29)
    lg.rectangle("fill", 460, GROUND, 820, 80)

    ikdraw.draw(arm_chain, arm.hx, arm.hy, arm.reached)
    ikdraw.draw(tentacle_chain, tentacle.hx, tentacle.hy, tentacle.reached, tentacle_style)
    ikdraw.draw(snake_chain, snake.hx, snake.hy, snake.reached, snake_style)
    draw_rope_weights()
    ikdraw.draw(rope_chain, rope.hx, rope.hy, rope.reached)
    draw_creature()
    draw_spider()
    -- The 3D tentacle: its floor (y = 0) edge-on, then the chain projected onto x-y.
    lg.setColor(0.22, 0.24, 0.29)
    lg.setLineWidth(2)
    lg.line(VIEW3D.x - 150, VIEW3D.y, VIEW3D.x + 150, VIEW3D.y)
    ikdraw.draw(chain3d, rig3d.wx, rig3d.wy, rig3d.reached, VIEW3D)
    draw_loops()
    for _, rig in ipairs(rigs) do
        draw_handle_ring(rig)
    end

    lg.setFont(small)
    lg.setColor(DIM)
    lg.print("1 arm", 150, 364)
    lg.print("2 tentacle", 490, 660)
    lg.print("3 rope", 840, 96)
    lg.print("4 creature", 1150, 660)
    lg.print("5 3D, seen along z", VIEW3D.x - 150, VIEW3D.y + 8)
    lg.print("6 spider", LEDGE_LEFT + 6, ground(LEDGE_LEFT) + 30)
    lg.print("7 snake", 650, 690)
    lg.print("8 staff", STAFF_X - 20, STAFF_Y + 8)
    lg.print("9 linkage", LINK_X + 20, LINK_Y + 14)

    draw_panel()
    draw_help()
end

-- ---------------------------------------------------------------------------------------

local frames_drawn = 0

function love.load(args)
    for k = 1, #args do
        if args[k] == "--screenshot" and args[k + 1] then
            screenshot_path = args[k + 1]
        end
    end
    font = lg.newFont(15)
    small = lg.newFont(13)
    lg.setLineStyle("smooth")
    make_ledge()

    if screenshot_path then
        -- A fixed pose: the arm's and the rope's targets placed by hand, then 2.2 seconds
        -- of fixed steps (the tentacles wander; the creature is mid-stride to its flag; the
        -- spider walks after its fly).
        arm.hx, arm.hy = 300, 470
        selected = spider -- the help line shows the rig's settings
        rope.hx, rope.hy = 985, 395 -- out of reach: the rope pulled taut, "missed"
        for _ = 1, 132 do
            update(FIXED_DT)
        end
    end
end

function love.update(dt)
    -- Fixed steps for the screenshot, so the picture does not depend on the machine.
    update(screenshot_path and FIXED_DT or min(dt, 0.05))
end

-- Draws a few frames first (fonts, antialiasing), then saves the screen and quits; gives up
-- with exit status 1 if the capture has not finished long after.
local function capture()
    frames_drawn = frames_drawn + 1
    if frames_drawn == 600 then
        print("screenshot: no capture after 600 frames")
        love.event.quit(1)
    elseif frames_drawn == 3 then
        lg.captureScreenshot(function(image)
            local data = image:encode("png"):getString()
            local file, err = io.open(screenshot_path, "wb")
            if not file then
                print("screenshot: " .. tostring(err))
                love.event.quit(1)
                return
            end
            file:write(data)
            file:close()
            print("screenshot: " .. screenshot_path)
            love.event.quit(0)
        end)
    end
end

local draw_scene = love.draw
function love.draw()
    draw_scene()
    if screenshot_path then
        capture()
    end
end
