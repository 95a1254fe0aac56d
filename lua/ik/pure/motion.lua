-- ik.pure.motion: src/motion.c in plain Lua, function for function, in the same order and
-- with the same arithmetic: chains moved over time, follow-the-leader (chain_drag) and
-- secondary motion (chain_simulate, chain_set_rest). The conventions are chain.lua's
-- (vectors as multiple values, flat 0-based arrays, a status returned first). Everything
-- is ported; the scratch (work, sim, sim_scratch) is the chain's own, so no call allocates.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")

local sqrt, exp, ceil, abs, atan2 = math.sqrt, math.exp, math.ceil, math.abs, math.atan2 or math.atan
local v2_renorm, v2_unrotate, v2_rotate, v2_turn, wrap_angle = m.v2_renorm, m.v2_unrotate, m.v2_rotate, m.v2_turn, m.wrap_angle
local v3_add, v3_sub, v3_scale, v3_dot, v3_cross, v3_len = m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot, m.v3_cross, m.v3_len
local v3_normalize_or, v3_any_perpendicular = m.v3_normalize_or, m.v3_any_perpendicular
local q_mul, q_normalize, q_from_to, q_x_axis, q_slerp = m.q_mul, m.q_normalize, m.q_from_to, m.q_x_axis, m.q_slerp
local joint_v3, dir_v3, check_coords = chain.joint_v3, chain.dir_v3, chain.check_coords
local chain_settle, chain_fk, chain_fk_bone, chain_follow = chain.chain_settle, chain.chain_fk, chain.chain_fk_bone, chain.chain_follow
local chain_changed = chain.chain_changed
local pose_bone, pose_bone_turn, limit_backward = limits.pose_bone, limits.pose_bone_turn, limits.limit_backward

local OK, ERR_ATTACHED, ERR_TIME_STEP = chain.OK, chain.ERR_ATTACHED, chain.ERR_TIME_STEP

local M = {}

local function isfinite(v) return v - v == 0 end

-- The same bits (the C compares the poses with memcmp: -0 is not +0).
local function same(a, b) return a == b and (a ~= 0 or 1 / a == 1 / b) end

-- ---- drag ----

-- A point of dim numbers at p[k] as a 3D vector (z = 0 in 2D), and back.
local function point_load(c, p, k)
    if c.dim == 3 then return p[k], p[k + 1], p[k + 2] end
    return p[k], p[k + 1], 0.0
end

local function point_store(c, p, k, x, y, z)
    p[k], p[k + 1] = x, y
    if c.dim == 3 then p[k + 2] = z end
end

-- Point i of the scratch points.
local function work_point(c, i) return point_load(c, c.work, i * c.dim) end
local function set_work_point(c, i, x, y, z) point_store(c, c.work, i * c.dim, x, y, z) end

-- Joint 0 on the base.
local function store_joint0(c)
    local p = c.joint
    p[0], p[1] = c.base_x, c.base_y
    if c.dim == 3 then p[2] = c.base_z end
end

-- Poses bones first..n-1 from the base out, each pointing from its joint as posed towards
-- point i + 1 of the scratch points (within its limits; a zero-length bone, or no
-- direction, keeps its world direction). The world data is current afterwards.
local function pose_towards_work(c, first)
    for i = first, c.n - 1 do
        local bx, by, bz = dir_v3(c, i)
        local wx, wy, wz = work_point(c, i + 1)
        local jx, jy, jz = joint_v3(c, i)
        local tx, ty, tz = v3_sub(wx, wy, wz, jx, jy, jz)
        if c.length[i] > 0 then
            pose_bone(c, i, v3_normalize_or(tx, ty, tz, bx, by, bz))
        else
            pose_bone(c, i, bx, by, bz)
        end
    end
    c.stale_from = c.n
end

function M.chain_drag(c, px, py, pz)
    local st = check_coords(c.dim, px, py, pz)
    if st ~= OK then return st end
    if c.parent then return ERR_ATTACHED end
    chain_settle(c)
    chain_fk(c)
    local n, dim, length, scale = c.n, c.dim, c.length, c.scale

    -- Backward from the tip: bone i points from where joint i is towards the new joint
    -- i + 1, held within what bone i + 1's limit allows.
    set_work_point(c, n, px + 0.0, py + 0.0, dim == 3 and pz + 0.0 or 0.0)
    local nx, ny, nz = dir_v3(c, n - 1)
    for i = n - 1, 0, -1 do
        local tx, ty, tz = work_point(c, i + 1)
        local dx, dy, dz = dir_v3(c, i)
        if length[i] > 0 then
            local jx, jy, jz = joint_v3(c, i)
            local sx, sy, sz = v3_sub(tx, ty, tz, jx, jy, jz)
            dx, dy, dz = v3_normalize_or(sx, sy, sz, dx, dy, dz)
        end
        if i < n - 1 and c.limited ~= 0 then dx, dy, dz = limit_backward(c, i, dx, dy, dz, nx, ny, nz) end
        local ox, oy, oz = v3_scale(dx, dy, dz, length[i] * scale)
        set_work_point(c, i, v3_sub(tx, ty, tz, ox, oy, oz))
        -- The new direction, which the bones are posed along below (a zero-length bone's
        -- too, which the points cannot tell): 2D in place of the old one (read above, and
        -- never again); 3D aside, the old one being what each bone turns from.
        if dim == 2 then
            c.dir[2 * i], c.dir[2 * i + 1] = dx, dy
        else
            local u = c.sim_scratch
            u[3 * i], u[3 * i + 1], u[3 * i + 2] = dx, dy, dz
        end
        nx, ny, nz = dx, dy, dz
    end

    -- The base moves to joint 1's new place, its frame turned with bone 1, which keeps its
    -- local angle; the other bones are posed along the points from it.
    c.base_x, c.base_y, c.base_z = work_point(c, 0)
    if dim == 2 then
        c.base_turn_x, c.base_turn_y = v2_renorm(v2_unrotate(nx, ny, c.turn[0], c.turn[1]))
        c.base_angle = atan2(c.base_turn_y, c.base_turn_x)
    else
        local d, r, rot = c.dir, c.wrot, c.rot
        local tw, tx, ty, tz = q_from_to(d[0], d[1], d[2], nx, ny, nz)
        local ww, wx, wy, wz = q_normalize(q_mul(tw, tx, ty, tz, r[0], r[1], r[2], r[3]))
        c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z =
            q_normalize(q_mul(ww, wx, wy, wz, rot[0], -rot[1], -rot[2], -rot[3]))
    end
    store_joint0(c)
    chain_fk_bone(c, 0)
    for i = 1, n - 1 do
        if dim == 2 then
            pose_bone_turn(c, i, c.dir[2 * i], c.dir[2 * i + 1])
        else
            local u = c.sim_scratch
            pose_bone(c, i, u[3 * i], u[3 * i + 1], u[3 * i + 2])
        end
    end
    c.stale_from = n
    chain_changed(c)
    return OK
end

-- ---- simulate ----

-- The longest time one call simulates, and the sub-steps per second.
local SIM_MAX_TIME = 1.0
local SIM_RATE = 240
-- Newton steps on the lengths before the exact posing (a second one leaves a residual of
-- the fourth order in the step, which the posing takes up).
local SIM_PASSES = 2

-- Where joint i is in sim after the last sub-step, and a sub-step before.
local function sim_now(c, i) return i * c.dim end
local function sim_before(c, i) return (c.n + 1 + i) * c.dim end

-- Whether the joints simulate kept still move on: the pose is the one it left.
local function sim_continues(c)
    if not c.sim_live or c.sim_scale ~= c.scale then return false end
    local a, b
    if c.dim == 2 then a, b = c.sim_turn, c.turn else a, b = c.sim_rot, c.rot end
    for k = 0, (c.dim == 2 and 2 or 4) * c.n - 1 do
        if not same(a[k], b[k]) then return false end
    end
    return true
end

-- The joints at rest in the world where the chain is now: no speed.
local function sim_start(c)
    local sim = c.sim
    for i = 0, c.n do
        point_store(c, sim, sim_now(c, i), joint_v3(c, i))
        point_store(c, sim, sim_before(c, i), joint_v3(c, i))
    end
    c.sim_base_x, c.sim_base_y, c.sim_base_z = c.base_x, c.base_y, c.base_z
    c.sim_base_before_x, c.sim_base_before_y, c.sim_base_before_z = c.base_x, c.base_y, c.base_z
    c.sim_time = 0.0
    c.sim_base_angle = c.base_angle
    c.sim_base_rot_w, c.sim_base_rot_x, c.sim_base_rot_y, c.sim_base_rot_z =
        c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
end

-- The base frame the fraction t of the way from the last call's to the current one (time
-- seconds later): its place on the parabola through the bases of the two calls before and
-- this one, or on the straight line when the call before is missing or took a time far from
-- this one's; the turn of its frame in between.
local function sim_base_at(c, bx, by, bz, angle, rw, rx, ry, rz, t, time)
    local r = c.sim_time / time
    if r >= 0.25 and r <= 4 then
        local before, last, now = t * (t - 1) / (r * (r + 1)), -(t + r) * (t - 1) / r, t * (t + r) / (1 + r)
        local ax, ay, az = v3_scale(c.sim_base_before_x, c.sim_base_before_y, c.sim_base_before_z, before)
        local lx, ly, lz = v3_scale(c.sim_base_x, c.sim_base_y, c.sim_base_z, last)
        local sx, sy, sz = v3_add(ax, ay, az, lx, ly, lz)
        c.base_x, c.base_y, c.base_z = v3_add(sx, sy, sz, v3_scale(bx, by, bz, now))
    else
        local dx, dy, dz = v3_sub(bx, by, bz, c.sim_base_x, c.sim_base_y, c.sim_base_z)
        c.base_x, c.base_y, c.base_z = v3_add(c.sim_base_x, c.sim_base_y, c.sim_base_z, v3_scale(dx, dy, dz, t))
    end
    if c.dim == 2 then
        c.base_angle = wrap_angle(c.sim_base_angle + t * wrap_angle(angle - c.sim_base_angle))
        c.base_turn_x, c.base_turn_y = v2_turn(c.base_angle)
    else
        c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z =
            q_slerp(c.sim_base_rot_w, c.sim_base_rot_x, c.sim_base_rot_y, c.sim_base_rot_z, rw, rx, ry, rz, t)
    end
end

-- Bone i's rest direction in the world, from its parent's frame as it is now.
local function rest_dir(c, i)
    if c.dim == 2 then
        local px, py
        if i == 0 then px, py = c.base_turn_x, c.base_turn_y else px, py = c.dir[2 * i - 2], c.dir[2 * i - 1] end
        local rt = c.rest_turn
        local dx, dy = v2_rotate(rt[2 * i], rt[2 * i + 1], px, py)
        return dx, dy, 0.0
    end
    local pw, px, py, pz = chain.parent_wrot(c, i)
    local rr = c.rest_rot
    return q_x_axis(q_mul(pw, px, py, pz, rr[4 * i], rr[4 * i + 1], rr[4 * i + 2], rr[4 * i + 3]))
end

-- Bone i's direction at the last sub-step (unit; zero for a zero-length bone), kept for the
-- sub-step by sim_keep_dirs.
local function sim_dir(c, i) return point_load(c, c.sim_scratch, i * c.dim) end

local function sim_keep_dirs(c)
    local sim, u = c.sim, c.sim_scratch
    for i = 0, c.n - 1 do
        local ax, ay, az = point_load(c, sim, sim_now(c, i + 1))
        local bx, by, bz = point_load(c, sim, sim_now(c, i))
        local x, y, z = v3_sub(ax, ay, az, bx, by, bz)
        point_store(c, u, i * c.dim, v3_normalize_or(x, y, z, 0.0, 0.0, 0.0))
    end
end

-- One Newton step on the lengths of the bones between the scratch points (SHAKE): joint i
-- moves along the directions of the bones beside it at the last sub-step, by multipliers
-- (one per bone) that solve the lengths to first order, the base held and the other joints
-- of equal mass. The system is tridiagonal: one sweep down and one up, O(n). false when it
-- is degenerate (a step so large the bones folded): the posing from the base then does it.
local function sim_constrain(c)
    local n, length, scale = c.n, c.length, c.scale
    local sweep, s0 = c.sim_scratch, n * c.dim -- the sweep: from sim_scratch[s0] on
    local lower = 0.0
    for i = 0, n - 1 do
        local ax, ay, az = work_point(c, i + 1)
        local bx, by, bz = work_point(c, i)
        local dx, dy, dz = v3_sub(ax, ay, az, bx, by, bz)
        local len, wi, upper = v3_len(dx, dy, dz), i == 0 and 0.0 or 1.0, 0.0
        local ux, uy, uz = sim_dir(c, i)
        if not (len > 0) or not isfinite(len) then return false end
        local ex, ey, ez
        if len > 1e-150 and len < 1e150 then
            ex, ey, ez = v3_scale(dx, dy, dz, 1 / len)
        else
            ex, ey, ez = v3_normalize_or(dx, dy, dz, ux, uy, uz)
        end
        local diag = (wi + 1) * v3_dot(ex, ey, ez, ux, uy, uz)
        if i + 1 < n then
            local vx, vy, vz = sim_dir(c, i + 1)
            upper = -v3_dot(ex, ey, ez, vx, vy, vz)
        end
        if i > 0 then
            local vx, vy, vz = sim_dir(c, i - 1)
            lower = -wi * v3_dot(ex, ey, ez, vx, vy, vz)
        end
        local pivot = diag - (i > 0 and lower * sweep[s0 + 2 * (i - 1)] or 0.0)
        if not (abs(pivot) > 1e-9) then return false end
        pivot = 1 / pivot
        sweep[s0 + 2 * i] = upper * pivot
        sweep[s0 + 2 * i + 1] = (length[i] * scale - len - (i > 0 and lower * sweep[s0 + 2 * i - 1] or 0.0)) * pivot
    end
    for i = n - 2, 0, -1 do
        sweep[s0 + 2 * i + 1] = sweep[s0 + 2 * i + 1] - sweep[s0 + 2 * i] * sweep[s0 + 2 * i + 3]
    end
    for i = 1, n do
        local ux, uy, uz = sim_dir(c, i - 1)
        local mx, my, mz = v3_scale(ux, uy, uz, sweep[s0 + 2 * (i - 1) + 1])
        if i < n then
            local vx, vy, vz = sim_dir(c, i)
            mx, my, mz = v3_sub(mx, my, mz, v3_scale(vx, vy, vz, sweep[s0 + 2 * i + 1]))
        end
        local wx, wy, wz = work_point(c, i)
        set_work_point(c, i, v3_add(wx, wy, wz, mx, my, mz))
    end
    return true
end

-- Moves scratch point i by v (joint 0, the base, holds).
local function sim_push(c, i, vx, vy, vz)
    if i > 0 then
        local wx, wy, wz = work_point(c, i)
        set_work_point(c, i, v3_add(wx, wy, wz, vx, vy, vz))
    end
end

-- Bone i's spring towards its rest direction, for a sub-step: the turn it asks for, the
-- angle off rest times pull (stiffness h^2, at most 1) times the bone's length, moves its
-- end joint across the bone and its start joint back; its parent bone takes the opposite
-- torque (so the springs are conservative). A parent far shorter than the bone passes on at
-- most 1000 times its share.
local function sim_spring(c, i, pull)
    local dx, dy, dz = sim_dir(c, i)
    local rx, ry, rz = rest_dir(c, i)
    local len = c.length[i] * c.scale
    if not (len > 0) or (dx == 0 and dy == 0 and dz == 0) then return end
    local ax, ay, az = v3_cross(dx, dy, dz, rx, ry, rz)
    local s = v3_len(ax, ay, az)
    local angle = atan2(s, v3_dot(dx, dy, dz, rx, ry, rz))
    if not (angle > 0) then return end -- at rest
    -- turned half round: any axis across the bone
    local fx, fy, fz = 0.0, 0.0, 1.0
    if c.dim ~= 2 then fx, fy, fz = v3_any_perpendicular(dx, dy, dz) end
    ax, ay, az = v3_normalize_or(ax, ay, az, fx, fy, fz)
    -- The torque angle * len^2 about axis, as a move of the bone's end across it.
    local cx, cy, cz = v3_cross(ax, ay, az, dx, dy, dz)
    cx, cy, cz = v3_scale(cx, cy, cz, pull * angle * len)
    sim_push(c, i + 1, cx, cy, cz)
    sim_push(c, i, v3_scale(cx, cy, cz, -1))
    if i > 0 then
        local px, py, pz = sim_dir(c, i - 1)
        local plen = c.length[i - 1] * c.scale
        if not (plen > 0) or (px == 0 and py == 0 and pz == 0) then return end
        local ratio = len / plen < 1000 and len / plen or 1000
        cx, cy, cz = v3_cross(ax, ay, az, px, py, pz)
        cx, cy, cz = v3_scale(cx, cy, cz, -pull * angle * len * ratio)
        sim_push(c, i, cx, cy, cz)
        sim_push(c, i - 1, v3_scale(cx, cy, cz, -1))
    end
end

-- A scratch point that left the finite numbers stays where its joint is: the sub-step is
-- lost for it, never the chain's numbers.
local function sim_keep_finite(c)
    for i = 1, c.n do
        local x, y, z = work_point(c, i)
        if not (isfinite(x) and isfinite(y) and isfinite(z)) then
            set_work_point(c, i, point_load(c, c.sim, sim_now(c, i)))
        end
    end
end

-- One sub-step of h seconds: each joint moves on with its speed (times keep) and gravity,
-- and the fraction pull of the way towards its place at rest; the distance constraints
-- between equal masses pull the joints together (the base holds), and the bones are posed
-- along them from the base, which makes the lengths exact and holds the limits.
local function sim_step(c, h, keep, pull)
    local s, sim = c.settings, c.sim
    -- The forces act in the middle of the sub-step, where the speed has decayed by half
    -- of keep: the scheme stays second order with damping.
    local half = sqrt(keep)
    local fx, fy, fz = v3_scale(s.gravity_x, s.gravity_y, c.dim == 3 and s.gravity_z or 0.0, h * h * half)
    sim_keep_dirs(c)
    set_work_point(c, 0, c.base_x, c.base_y, c.base_z)
    for i = 1, c.n do
        local nx, ny, nz = point_load(c, sim, sim_now(c, i))
        local bx, by, bz = point_load(c, sim, sim_before(c, i))
        local vx, vy, vz = v3_sub(nx, ny, nz, bx, by, bz)
        vx, vy, vz = v3_scale(vx, vy, vz, keep)
        set_work_point(c, i, v3_add(nx, ny, nz, v3_add(vx, vy, vz, fx, fy, fz)))
    end
    sim_keep_finite(c)
    if pull > 0 then
        for i = 0, c.n - 1 do sim_spring(c, i, pull * half) end
        sim_keep_finite(c)
    end
    for _ = 1, SIM_PASSES do
        if not sim_constrain(c) then break end
    end
    sim_keep_finite(c)
    store_joint0(c)
    pose_towards_work(c, 0)
    for i = 0, c.n do
        local now, before = sim_now(c, i), sim_before(c, i)
        point_store(c, sim, before, point_load(c, sim, now))
        point_store(c, sim, now, joint_v3(c, i))
    end
end

function M.chain_simulate(c, dt)
    if dt ~= dt or not (dt > 0) or not isfinite(dt) then return ERR_TIME_STEP end
    chain_follow(c)
    chain_settle(c)
    chain_fk(c)
    if not sim_continues(c) then sim_start(c) end

    -- A longer dt (a hitch) counts as SIM_MAX_TIME: the work per call is bounded.
    local time = dt < SIM_MAX_TIME and dt or SIM_MAX_TIME
    local steps = ceil(time * SIM_RATE)
    if steps < 1 then steps = 1 end
    local h = time / steps
    local keep = exp(-c.settings.damping * h)
    local pull = c.settings.stiffness * h * h
    if pull > 1 then pull = 1.0 end
    local bx, by, bz, angle = c.base_x, c.base_y, c.base_z, c.base_angle
    local tx, ty = c.base_turn_x, c.base_turn_y
    local rw, rx, ry, rz = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
    for k = 1, steps do
        if k < steps then
            sim_base_at(c, bx, by, bz, angle, rw, rx, ry, rz, k / steps, time)
        else
            c.base_x, c.base_y, c.base_z, c.base_angle = bx, by, bz, angle
            c.base_turn_x, c.base_turn_y = tx, ty
            c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z = rw, rx, ry, rz
        end
        sim_step(c, h, keep, pull)
    end

    c.sim_live = true
    c.sim_scale = c.scale
    c.sim_base_before_x, c.sim_base_before_y, c.sim_base_before_z = c.sim_base_x, c.sim_base_y, c.sim_base_z
    c.sim_time = time
    c.sim_base_x, c.sim_base_y, c.sim_base_z = bx, by, bz
    c.sim_base_angle = angle
    c.sim_base_rot_w, c.sim_base_rot_x, c.sim_base_rot_y, c.sim_base_rot_z = rw, rx, ry, rz
    local from, to
    if c.dim == 2 then from, to = c.turn, c.sim_turn else from, to = c.rot, c.sim_rot end
    for k = 0, (c.dim == 2 and 2 or 4) * c.n - 1 do to[k] = from[k] end
    chain_changed(c)
    return OK
end

function M.chain_set_rest(c)
    chain_follow(c)
    chain_settle(c)
    local from, to
    if c.dim == 2 then from, to = c.turn, c.rest_turn else from, to = c.rot, c.rest_rot end
    for k = 0, (c.dim == 2 and 2 or 4) * c.n - 1 do to[k] = from[k] end
    return OK
end

return M
