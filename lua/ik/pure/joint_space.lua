-- ik.pure.joint_space: src/joint_space.c in plain Lua, function for function, in the same
-- order and with the same arithmetic (chain.lua's conventions): damped least-squares steps
-- on the joint rotations of a chain, its limits as bounds (ik_joint_finish,
-- ik_joint_track), and the one-bone primitives rigs share (ik_joint_axes,
-- ik_joint_blocked, ik_joint_turn, ik_joint_has_bounds, ik_joint_bound_angle,
-- ik_solve_spd). See src/joint_space.c for the method and the measures behind its numbers.
--
-- A turn is three numbers (an angle in the first for a 2D bone or a 3D hinge, else a world
-- rotation vector). Where the C fills an array the caller owns, the caller passes a flat
-- 0-based table: joint_axes' axes (axes[3 * i] .. + 2), solve_spd's a (rows of `stride`),
-- e and y. The step's own arrays (the rows, the system, the columns, the solutions) are
-- this module's, made once: finish is never nested, and each helper that fills one has its
-- own, so no call makes garbage. The C's static joint_turn (a joint's turn for a solution)
-- is solution_turn here, as joint_turn is ik_joint_turn's name. joint_track returns met,
-- the steps used, and joint m's distance after them, or the caller's distance (its last
-- argument) as it came when no step was taken (the C leaves *distance unwritten then).
--
-- Verified: spec/pure_joint_space_spec.lua calls every function here (and sweep.lua's,
-- escape.lua's kick and finish) side by side with the C core's own, through LuaJIT's FFI,
-- on random chains: the same bits in every result and every chain's state, every line
-- taken; no garbage in Lua 5.1 to 5.4 and LuaJIT.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")

local abs, sqrt, cos, sin, acos = math.abs, math.sqrt, math.cos, math.sin, math.acos
local atan2 = math.atan2 or math.atan
local v2_rotate, v2_unrotate, v2_renorm, wrap_angle, clamp = m.v2_rotate, m.v2_unrotate, m.v2_renorm, m.wrap_angle, m.clamp
local v3_sub, v3_scale, v3_dot, v3_cross, v3_len = m.v3_sub, m.v3_scale, m.v3_dot, m.v3_cross, m.v3_len
local v3_normalize_or, v3_any_perpendicular = m.v3_normalize_or, m.v3_any_perpendicular
local q_mul, q_normalize, q_rotate, q_x_axis, q_axis_angle = m.q_mul, m.q_normalize, m.q_rotate, m.q_x_axis, m.q_axis_angle
local joint_v3, turn_angle, chain_set_turn_angle = chain.joint_v3, chain.turn_angle, chain.chain_set_turn_angle
local chain_mark_stale, chain_fk, chain_settle, parent_wrot = chain.chain_mark_stale, chain.chain_fk, chain.chain_settle, chain.parent_wrot
local chain_reach_to, joint_distance, iteration_budget = chain.chain_reach_to, chain.joint_distance, chain.iteration_budget
local has, limit_angle, limit_rotation, twist_angle = limits.has, limits.limit_angle, limits.limit_rotation, limits.twist_angle

local RANGE, HINGE, CONE, TWIST = chain.LIMIT_RANGE, chain.LIMIT_HINGE, chain.LIMIT_CONE, chain.LIMIT_TWIST
local ANGLE_UNKNOWN, TRACK_NEAR = chain.ANGLE_UNKNOWN, chain.TRACK_NEAR
local INFINITY = math.huge
local NAN = 0 / 0

local M = {}

local function isfinite(v) return v - v == 0 end

-- ---- the finish on chains with limits: damped least squares within the bounds ----

local FINISH_MAX_TURN = 0.4
local FINISH_UNBEND = 0.3
local FINISH_UNBENDS = 2
local FINISH_DAMPING = 1e-3

-- The world axis of bone j's hinge (its parent's frame), 3D.
local function hinge_axis(c, j)
    local pw, px, py, pz = parent_wrot(c, j)
    local l = c.limit[j]
    return q_rotate(pw, px, py, pz, l.axis_x, l.axis_y, l.axis_z)
end

-- Whether a joint at a bound would be pushed beyond it by a turn of sign s (2D, hinge).
local function pushed_out(angle, s, limit)
    local room = 1e-9
    return (s < 0 and angle <= limit.min + room) or (s > 0 and angle >= limit.max - room)
end

-- Bone j's current angle about its 2D range or its hinge's axis.
local function joint_bound_angle(c, j)
    if c.dim == 2 then return turn_angle(c, j) end
    local r, l = c.rot, c.limit[j]
    return twist_angle(r[4 * j], r[4 * j + 1], r[4 * j + 2], r[4 * j + 3], l.axis_x, l.axis_y, l.axis_z)
end
M.joint_bound_angle = joint_bound_angle

local function joint_has_bounds(c, j)
    if c.dim == 2 then return has(c.limit[j].flags, RANGE) end
    return has(c.limit[j].flags, HINGE)
end
M.joint_has_bounds = joint_has_bounds

-- Keeps the local pose of bones first..m-1 in work (2D: the turn; 3D: x, y, z of the
-- quaternion, w >= 0).
local function keep_pose(c, first, m_)
    local work = c.work
    if c.dim == 2 then -- the turn itself: no angle read from it (an atan2)
        local turn = c.turn
        for k = 2 * first, 2 * m_ - 1 do work[k] = turn[k] end
    else
        local rot = c.rot
        for j = first, m_ - 1 do
            local s = rot[4 * j] < 0 and -1.0 or 1.0
            work[3 * j], work[3 * j + 1], work[3 * j + 2] = s * rot[4 * j + 1], s * rot[4 * j + 2], s * rot[4 * j + 3]
        end
    end
end

local function restore_pose(c, first, m_)
    local work = c.work
    if c.dim == 2 then
        local turn, angle = c.turn, c.angle
        for j = first, m_ - 1 do
            turn[2 * j], turn[2 * j + 1] = work[2 * j], work[2 * j + 1]
            angle[j] = ANGLE_UNKNOWN
        end
    else
        local rot = c.rot
        for j = first, m_ - 1 do
            local x, y, z = work[3 * j], work[3 * j + 1], work[3 * j + 2]
            local w2 = 1 - (x * x + y * y + z * z)
            rot[4 * j], rot[4 * j + 1], rot[4 * j + 2], rot[4 * j + 3] =
                q_normalize(w2 > 0 and sqrt(w2) or 0.0, x, y, z)
        end
    end
    chain_mark_stale(c, first)
    chain_fk(c)
end

-- ---- one bone in a step ----

-- Bone j's world direction and its parent's +x (3D): d and p of ik_joint_axes and
-- ik_joint_blocked.
local function dir_and_parent_x(c, j)
    local d = c.dir
    local px, py, pz = q_x_axis(parent_wrot(c, j))
    return d[3 * j], d[3 * j + 1], d[3 * j + 2], px, py, pz
end

-- The world axes joint j turns about, into axes (3 numbers each); returns how many. mode
-- bit 1: the cone holds the bone (no swing away from the parent's +x); bit 2: the twist
-- limit holds it (no twist about the bone).
local function joint_axes(c, j, mode, axes)
    if c.dim == 2 then
        axes[0], axes[1], axes[2] = 0.0, 0.0, 1.0
        return 1
    end
    if has(c.limit[j].flags, HINGE) then
        axes[0], axes[1], axes[2] = hinge_axis(c, j)
        return 1
    end
    if mode == 0 then
        axes[0], axes[1], axes[2] = 1.0, 0.0, 0.0
        axes[3], axes[4], axes[5] = 0.0, 1.0, 0.0
        axes[6], axes[7], axes[8] = 0.0, 0.0, 1.0
        return 3
    end
    local n = 0
    local dx, dy, dz, px, py, pz = dir_and_parent_x(c, j)
    local fx, fy, fz = v3_any_perpendicular(dx, dy, dz)
    if mode % 2 == 0 then
        local cx, cy, cz = v3_cross(px, py, pz, dx, dy, dz)
        axes[3 * n], axes[3 * n + 1], axes[3 * n + 2] = v3_normalize_or(cx, cy, cz, fx, fy, fz)
        n = n + 1
    end
    local k = v3_dot(px, py, pz, dx, dy, dz)
    local sx, sy, sz = v3_sub(px, py, pz, v3_scale(dx, dy, dz, k))
    axes[3 * n], axes[3 * n + 1], axes[3 * n + 2] = v3_normalize_or(sx, sy, sz, fx, fy, fz)
    n = n + 1
    if mode % 4 < 2 then
        axes[3 * n], axes[3 * n + 1], axes[3 * n + 2] = dx, dy, dz
        n = n + 1
    end
    return n
end
M.joint_axes = joint_axes

-- What bone j's limits block of the turn tx, ty, tz: -1 all, else the mode bits.
local function joint_blocked(c, j, tx, ty, tz)
    local limit = c.limit[j]
    local flags = limit.flags
    local mode = 0
    if flags == 0 then return 0 end
    if joint_has_bounds(c, j) then return pushed_out(joint_bound_angle(c, j), tx, limit) and -1 or 0 end
    if c.dim == 2 then return 0 end
    local dx, dy, dz, px, py, pz = dir_and_parent_x(c, j)
    if has(flags, CONE) then
        -- out: the turn's part that swings the bone away from the parent's axis
        local cx, cy, cz = v3_cross(px, py, pz, dx, dy, dz)
        local sx, sy, sz = v3_normalize_or(cx, cy, cz, 0.0, 0.0, 0.0)
        local swing, out = acos(clamp(v3_dot(px, py, pz, dx, dy, dz), -1, 1)), v3_dot(tx, ty, tz, sx, sy, sz)
        if out > 0 and (swing >= limit.cone - 1e-9 or swing + out - limit.cone > 0.5 * out) then mode = mode + 1 end
    end
    if has(flags, TWIST) then
        local r = c.rot
        local twist = twist_angle(r[4 * j], r[4 * j + 1], r[4 * j + 2], r[4 * j + 3], 1.0, 0.0, 0.0)
        local along = v3_dot(tx, ty, tz, dx, dy, dz)
        if (along > 0 and (twist >= limit.twist_max - 1e-9 or twist + along - limit.twist_max > 0.5 * along)) or
            (along < 0 and (twist <= limit.twist_min + 1e-9 or limit.twist_min - (twist + along) > -0.5 * along)) then
            mode = mode + 2
        end
    end
    return mode
end
M.joint_blocked = joint_blocked

-- Turns bone j (its local pose; the caller marks the chain stale) by tx, ty, tz, within its
-- limits.
local function joint_turn(c, j, tx, ty, tz)
    local limit = c.limit[j]
    if c.dim == 2 and limit.flags == 0 then
        -- A free joint's turn turned by t: no angle read back from it (an atan2).
        local turn = c.turn
        turn[2 * j], turn[2 * j + 1] = v2_renorm(v2_rotate(turn[2 * j], turn[2 * j + 1], cos(tx), sin(tx)))
        c.angle[j] = ANGLE_UNKNOWN
    elseif c.dim == 2 then
        local a = turn_angle(c, j) + tx
        chain_set_turn_angle(c, j, limit_angle(limit, wrap_angle(a)))
    else
        local rw, rx, ry, rz
        if has(limit.flags, HINGE) then
            rw, rx, ry, rz = q_axis_angle(limit.axis_x, limit.axis_y, limit.axis_z, tx) -- in the parent's frame already
        else
            local angle = v3_len(tx, ty, tz)
            local ux, uy, uz = v3_normalize_or(tx, ty, tz, 0.0, 0.0, 0.0) -- 1 / angle overflows
            if not (angle > 0 and isfinite(angle)) or v3_dot(ux, uy, uz, ux, uy, uz) == 0 then return end
            local pw, px, py, pz = parent_wrot(c, j)
            rw, rx, ry, rz = q_axis_angle(ux, uy, uz, angle)
            rw, rx, ry, rz = q_mul(pw, -px, -py, -pz, rw, rx, ry, rz)
            rw, rx, ry, rz = q_mul(rw, rx, ry, rz, pw, px, py, pz)
        end
        local r, k = c.rot, 4 * j
        r[k], r[k + 1], r[k + 2], r[k + 3] =
            limit_rotation(limit, q_normalize(q_mul(rw, rx, ry, rz, r[k], r[k + 1], r[k + 2], r[k + 3])))
    end
end
M.joint_turn = joint_turn

-- The rows of a step (struct finish_rows): k rows, oriented, unit (1 / the reach), scale
-- (of the orientation rows), e[0..5] (the error), gap_axis_x .. z, hinge_tip, distance (the
-- tip's from the target, world units).
local function new_rows()
    return { k = 0, oriented = false, unit = 0.0, scale = 0.0, e = { [0] = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 },
        gap_axis_x = 0.0, gap_axis_y = 0.0, gap_axis_z = 0.0, hinge_tip = false, distance = 0.0 }
end

-- The turn bone m - 1 still needs so that the tip bone can take its orientation goal
-- within its limit (2D an angle, 3D a world rotation vector).
local function orientation_gap(c, m_)
    local limit = c.limit[m_]
    if c.dim == 2 then
        local d = c.dir
        local dx, dy = d[2 * m_ - 2], d[2 * m_ - 1]
        local loc = wrap_angle(c.target_angle - atan2(dy, dx))
        return wrap_angle(loc - limit_angle(limit, loc)), 0.0, 0.0
    end
    local wr = c.wrot
    local ww, wx, wy, wz = wr[4 * m_ - 4], wr[4 * m_ - 3], wr[4 * m_ - 2], wr[4 * m_ - 1]
    local gw, gx, gy, gz = c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z
    local lw, lx, ly, lz = q_normalize(q_mul(ww, -wx, -wy, -wz, gw, gx, gy, gz))
    local hw, hx, hy, hz = limit_rotation(limit, lw, lx, ly, lz)
    -- bone m - 1 must become goal * held^-1: the turn from w to that, in the world
    local rw, rx, ry, rz = q_mul(gw, gx, gy, gz, hw, -hx, -hy, -hz)
    rw, rx, ry, rz = q_normalize(q_mul(rw, rx, ry, rz, ww, -wx, -wy, -wz))
    local s = sqrt(rx * rx + ry * ry + rz * rz)
    if rw < 0 then rw, rx, ry, rz = -rw, -rx, -ry, -rz end
    if not (s > 0) then return 0.0, 0.0, 0.0 end
    local angle = 2 * atan2(s, rw)
    return rx / s * angle, ry / s * angle, rz / s * angle
end

local function gap_angle(c, gx, gy, gz)
    if c.dim == 2 then return abs(gx) end
    return v3_len(gx, gy, gz)
end

-- A gap below GAP_NONE is rounding: none.
local GAP_NONE = 1e-12

-- The axis gap_turn works with, and whether the tip bone's limit is a hinge.
local function gap_axis(c, m_, gx, gy, gz)
    local limit = c.limit[m_]
    local hinge_tip = c.dim == 3 and has(limit.flags, HINGE)
    if c.dim == 2 then return gx ~= 0 and 1.0 or 0.0, 0.0, 0.0, hinge_tip end
    if hinge_tip then
        local wr = c.wrot
        local ww, wx, wy, wz = wr[4 * m_ - 4], wr[4 * m_ - 3], wr[4 * m_ - 2], wr[4 * m_ - 1]
        local lw, lx, ly, lz = q_normalize(q_mul(ww, -wx, -wy, -wz,
            c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z))
        local about = twist_angle(lw, lx, ly, lz, limit.axis_x, limit.axis_y, limit.axis_z)
        if not (about > limit.min and about < limit.max) then return 0.0, 0.0, 0.0, hinge_tip end
        local ax, ay, az = q_rotate(ww, wx, wy, wz, limit.axis_x, limit.axis_y, limit.axis_z)
        return ax, ay, az, hinge_tip
    end
    if v3_len(gx, gy, gz) > GAP_NONE then
        local ax, ay, az = v3_normalize_or(gx, gy, gz, 0.0, 0.0, 0.0)
        return ax, ay, az, hinge_tip
    end
    return 0.0, 0.0, 0.0, hinge_tip
end

-- The error of the pose now (rows.e): whether met, and its size against the tolerances.
local function finish_error(c, tx, ty, tz, m_, rows)
    -- joint_v3, v3_sub and v3_len's fast path written out (speed: taken twice a step)
    local p, jx, jy, jz = c.joint, 0.0, 0.0, 0.0
    if c.dim == 3 then
        jx, jy, jz = p[3 * m_], p[3 * m_ + 1], p[3 * m_ + 2]
    else
        jx, jy = p[2 * m_], p[2 * m_ + 1]
    end
    local ex, ey, ez = tx - jx, ty - jy, tz - jz
    local d, tolerance = ex * ex + ey * ey + ez * ez, c.settings.tolerance
    if d < 1e300 and d > 1e-300 then d = sqrt(d) else d = v3_len(ex, ey, ez) end
    local e, unit = rows.e, rows.unit
    rows.distance = d
    e[0], e[1], e[2] = ex * unit, ey * unit, ez * unit
    rows.k = c.dim
    local size = d * unit
    rows.gap_axis_x, rows.gap_axis_y, rows.gap_axis_z = 0.0, 0.0, 0.0
    rows.hinge_tip = false
    if not rows.oriented then return d <= tolerance, size end
    local gx, gy, gz = orientation_gap(c, m_)
    rows.gap_axis_x, rows.gap_axis_y, rows.gap_axis_z, rows.hinge_tip = gap_axis(c, m_, gx, gy, gz)
    e[c.dim] = rows.scale * gx
    if c.dim == 3 then e[4], e[5] = rows.scale * gy, rows.scale * gz end
    rows.k = c.dim == 2 and 3 or 6
    local angle = gap_angle(c, gx, gy, gz)
    size = d * unit + rows.scale * angle
    -- Met: the point behind and the tip bone's own error (the arc) within the tolerance
    -- together, the angle within its own (see the C).
    return angle <= c.settings.angle_tolerance and d + angle * c.length[m_] <= tolerance, size
end

-- How a turn of bone m - 1 (world rotation vector) changes the orientation gap, to first
-- order: what the tip bone's limit cannot take back.
local function gap_turn(rows, tx, ty, tz)
    local gx, gy, gz = rows.gap_axis_x, rows.gap_axis_y, rows.gap_axis_z
    local ax, ay, az = v3_scale(gx, gy, gz, v3_dot(gx, gy, gz, tx, ty, tz))
    if rows.hinge_tip then return v3_sub(tx, ty, tz, ax, ay, az) end
    return ax, ay, az
end

-- Joint j's columns of the step (1 to 3, col[6 * i + k]), its axes in axes (3D); returns
-- how many.
local function joint_columns(c, j, mode, rx, ry, rz, rows, col, axes)
    if c.dim == 2 then
        -- the orientation row: gap_turn
        col[0], col[1], col[2] = -ry, rx, rows.scale * rows.gap_axis_x
        return 1
    end
    local n = joint_axes(c, j, mode, axes)
    local scale = rows.scale
    for i = 0, n - 1 do
        local x, y, z = axes[3 * i], axes[3 * i + 1], axes[3 * i + 2]
        local vx, vy, vz = v3_cross(x, y, z, rx, ry, rz)
        local ax, ay, az = gap_turn(rows, x, y, z)
        local o = 6 * i
        col[o], col[o + 1], col[o + 2] = vx, vy, vz
        col[o + 3], col[o + 4], col[o + 5] = scale * ax, scale * ay, scale * az
    end
    return n
end

-- solution_turn's columns and axes (its own: joint_mode calls it between finish_step's
-- joint_columns and their use).
local turn_col, turn_axes = {}, {}
for i = 0, 17 do turn_col[i] = 0.0 end
for i = 0, 8 do turn_axes[i] = 0.0 end

-- Joint j's turn for the solution y (the C's static joint_turn): 2D and hinges an angle
-- (first), else a rotation vector.
local function solution_turn(c, j, mode, rx, ry, rz, rows, y)
    local col, axes = turn_col, turn_axes
    -- (joint_columns fills axes as the C's second ik_joint_axes call does: the same call)
    local n = joint_columns(c, j, mode, rx, ry, rz, rows, col, axes)
    local wx, wy, wz = 0.0, 0.0, 0.0
    local flat = c.dim == 2 or has(c.limit[j].flags, HINGE)
    for i = 0, n - 1 do
        local t = 0.0
        local o = 6 * i
        for k = 0, rows.k - 1 do t = t + col[o + k] * y[k] end
        if flat then return t, 0.0, 0.0 end
        wx, wy, wz = wx + axes[3 * i] * t, wy + axes[3 * i + 1] * t, wz + axes[3 * i + 2] * t
    end
    return wx, wy, wz
end

-- Solves the symmetric positive definite k x k system a y = e by Cholesky (a: rows of
-- `stride` numbers, 0-based; its lower half becomes the factor); false when a is not
-- positive definite (or a pivot is not finite).
local function solve_spd(a, stride, k, e, y)
    -- (ri, rj: the rows' first indices, made once a row, not once a product: speed)
    for i = 0, k - 1 do
        local ri = i * stride
        for j = 0, i do
            local rj = j * stride
            local sum = a[ri + j]
            for l = 0, j - 1 do sum = sum - a[ri + l] * a[rj + l] end
            if i == j then
                if not (sum > 0 and sum - sum == 0) then return false end -- isfinite (no call)
                a[ri + i] = sqrt(sum)
            else
                a[ri + j] = sum / a[rj + j]
            end
        end
    end
    for i = 0, k - 1 do -- L z = e
        local ri = i * stride
        local sum = e[i]
        for l = 0, i - 1 do sum = sum - a[ri + l] * y[l] end
        y[i] = sum / a[ri + i]
    end
    for i = k - 1, 0, -1 do -- L^T y = z
        local sum = y[i]
        for l = i + 1, k - 1 do sum = sum - a[l * stride + i] * y[l] end
        y[i] = sum / a[i * stride + i]
    end
    return true
end
M.solve_spd = solve_spd

-- How bone j takes part in a step, given the first solution y0 (drop: there was one): -1
-- left out, else the mode of joint_axes.
local function joint_mode(c, j, rx, ry, rz, rows, y0, drop)
    if not drop or c.limit[j].flags == 0 then return 0 end
    return joint_blocked(c, j, solution_turn(c, j, 0, rx, ry, rz, rows, y0))
end

-- From joint j to the tip, in reaches.
local function lever(c, tx, ty, tz, j, rows)
    local jx, jy, jz = joint_v3(c, j)
    return v3_scale(tx - jx, ty - jy, tz - jz, rows.unit)
end

-- free_step2's levers (x, y at 2j, 2j + 1), then each joint's turn before the scale at 2j:
-- kept between its loops, not made again (speed). Grows to the longest chain solved; nothing
-- per solve.
local step_levers = {}

-- The step for a 2D chain without limits and orientation rows, in closed form. (k is 2j
-- throughout: speed, under PUC Lua an index costs what the arithmetic does.)
local function free_step2(c, m_, first, rows, lambda2)
    local p, unit, e, levers = c.joint, rows.unit, rows.e, step_levers
    local tx, ty = p[2 * m_], p[2 * m_ + 1]
    local a, b, d = lambda2, 0.0, lambda2
    for j = first, m_ - 1 do -- the columns (-r.y, r.x), r the lever in reaches
        local k = 2 * j
        local rx, ry = (tx - p[k]) * unit, (ty - p[k + 1]) * unit
        levers[k] = rx
        levers[k + 1] = ry
        a = a + ry * ry
        b = b - ry * rx
        d = d + rx * rx
    end
    local det = a * d - b * b
    if not (det > 0 and det - det == 0) then return false end -- isfinite (no call: speed)
    local y0 = (d * e[0] - b * e[1]) / det
    local y1 = (a * e[1] - b * e[0]) / det
    local largest = 0.0
    for j = first, m_ - 1 do
        local k = 2 * j
        local t = levers[k] * y1 - levers[k + 1] * y0
        levers[k] = t
        if t < 0 then t = -t end -- abs without a call (speed)
        if t > largest then largest = t end
    end
    if not (largest > 1e-15) then return false end
    local scale = largest > FINISH_MAX_TURN and FINISH_MAX_TURN / largest or 1.0
    -- Each turn by the rotation (1 - h^2, 2h) / (1 + h^2), h = t / 2 (see the C), and with it
    -- the bone's world data and the joint after it: chain_fk's arithmetic in its order, as
    -- free2 in src/batch_lanes.h does for the C's batch (speed: one loop, no call). The
    -- chain is current (finish settled it and made its joints); the bones after m - 1 by
    -- chain_fk.
    if c.stale_from < c.n then chain_fk(c) end -- (never from finish)
    local turn, angle, joint, dir, length, cscale = c.turn, c.angle, p, c.dir, c.length, c.scale
    local work = c.work -- the pose before the step, as keep_pose keeps it (finish leaves it here)
    local px, py
    if first == 0 then
        px, py = c.base_turn_x, c.base_turn_y
        joint[0], joint[1] = c.base_x, c.base_y
    else
        px, py = dir[2 * first - 2], dir[2 * first - 1]
    end
    local jx, jy = joint[2 * first], joint[2 * first + 1]
    -- (Constants in registers and one assignment a statement: under PUC Lua a constant
    -- operand on the left costs a load, a multiple assignment a move.)
    local one, three, unknown = 1.0, 3.0, ANGLE_UNKNOWN
    for j = first, m_ - 1 do
        local k = 2 * j
        local h = levers[k] * scale / 2
        local hh = h * h
        local f = one / (1 + hh)
        -- v2_renorm(v2_rotate(turn, r)) inlined (speed: no calls in the loop)
        local ax, ay = turn[k], turn[k + 1]
        local qx, qy = (one - hh) * f, 2 * h * f
        work[k] = ax
        work[k + 1] = ay
        local x, y = qx * ax - qy * ay, qy * ax + qx * ay
        local s = (three - (x * x + y * y)) / 2
        ax = x * s
        ay = y * s
        turn[k] = ax
        turn[k + 1] = ay
        angle[j] = unknown
        local step = length[j] * cscale
        x = px * ax - py * ay -- v2_rotate(turn, parent)
        y = py * ax + px * ay
        s = (three - (x * x + y * y)) / 2 -- v2_renorm
        px = x * s
        py = y * s
        dir[k] = px
        dir[k + 1] = py
        jx = jx + px * step
        jy = jy + py * step
        joint[k + 2] = jx
        joint[k + 3] = jy
    end
    if m_ < c.n then
        c.stale_from = m_
        chain_fk(c)
    end
    return true
end

-- The same for a 3D chain without limits: a 3 x 3 system solved by its cofactors.
local function free_step3(c, m_, first, rows, lambda2)
    local p, unit, e = c.joint, rows.unit, rows.e
    local tx, ty, tz = p[3 * m_], p[3 * m_ + 1], p[3 * m_ + 2]
    local a00, a01, a02, a11, a12, a22 = lambda2, 0.0, 0.0, lambda2, 0.0, lambda2
    for j = first, m_ - 1 do
        local rx, ry, rz = v3_scale(tx - p[3 * j], ty - p[3 * j + 1], tz - p[3 * j + 2], unit)
        local rr = v3_dot(rx, ry, rz, rx, ry, rz)
        a00, a11, a22 = a00 + (rr - rx * rx), a11 + (rr - ry * ry), a22 + (rr - rz * rz)
        a01, a02, a12 = a01 - rx * ry, a02 - rx * rz, a12 - ry * rz
    end
    local a10, a20, a21 = a01, a02, a12
    local k00 = a11 * a22 - a12 * a21
    local k01 = a02 * a21 - a01 * a22
    local k02 = a01 * a12 - a02 * a11
    local k11 = a00 * a22 - a02 * a20
    local k12 = a02 * a10 - a00 * a12
    local k22 = a00 * a11 - a01 * a10
    local k10, k20, k21 = k01, k02, k12
    local det = a00 * k00 + a01 * k10 + a02 * k20
    if not (det > 0 and isfinite(det)) then return false end
    local e0, e1, e2 = e[0], e[1], e[2]
    local yx = (0.0 + k00 * e0 + k01 * e1 + k02 * e2) / det
    local yy = (0.0 + k10 * e0 + k11 * e1 + k12 * e2) / det
    local yz = (0.0 + k20 * e0 + k21 * e1 + k22 * e2) / det
    local largest = 0.0
    for j = first, m_ - 1 do
        local rx, ry, rz = v3_scale(tx - p[3 * j], ty - p[3 * j + 1], tz - p[3 * j + 2], unit)
        local size = v3_len(v3_cross(rx, ry, rz, yx, yy, yz))
        if size > largest then largest = size end
    end
    if not (largest > 1e-15) then return false end
    local scale = largest > FINISH_MAX_TURN and FINISH_MAX_TURN / largest or 1.0
    local rot = c.rot
    for j = first, m_ - 1 do
        local pw, px, py, pz = parent_wrot(c, j)
        local rx, ry, rz = v3_scale(tx - p[3 * j], ty - p[3 * j + 1], tz - p[3 * j + 2], unit)
        local cx, cy, cz = v3_cross(rx, ry, rz, yx, yy, yz)
        local wx, wy, wz = v3_scale(cx, cy, cz, scale / 2)
        local qw, qx, qy, qz = q_normalize(1.0, wx, wy, wz)
        qw, qx, qy, qz = q_mul(pw, -px, -py, -pz, qw, qx, qy, qz)
        qw, qx, qy, qz = q_mul(qw, qx, qy, qz, pw, px, py, pz) -- in the parent's frame
        local k = 4 * j
        rot[k], rot[k + 1], rot[k + 2], rot[k + 3] =
            q_normalize(q_mul(qw, qx, qy, qz, rot[k], rot[k + 1], rot[k + 2], rot[k + 3]))
    end
    chain_mark_stale(c, first)
    chain_fk(c)
    return true
end

-- finish_step's system (6 x 6, stride 6), columns, axes and solutions.
local step_a, step_col, step_axes, step_y, step_y0 = {}, {}, {}, {}, {}
for i = 0, 35 do step_a[i] = 0.0 end
for i = 0, 17 do step_col[i] = 0.0 end
for i = 0, 8 do step_axes[i] = 0.0 end
for i = 0, 5 do step_y[i], step_y0[i] = 0.0, 0.0 end

-- One damped least-squares step of bones first..m-1; false when no joint can move.
local function finish_step(c, m_, first, rows, lambda2)
    local tx, ty, tz = joint_v3(c, m_)
    if c.limited == 0 and not rows.oriented then
        if c.dim == 2 then return free_step2(c, m_, first, rows, lambda2) end
        return free_step3(c, m_, first, rows, lambda2)
    end
    local a, col, axes, y, y0 = step_a, step_col, step_axes, step_y, step_y0
    local rk = rows.k
    local drop = false
    for i = 0, 5 do y[i] = 0.0 end
    while true do
        local moving, again = 0, false
        for i = 0, 5 do y0[i] = y[i] end
        for k = 0, rk - 1 do
            for l = 0, rk - 1 do a[6 * k + l] = k == l and lambda2 or 0.0 end
        end
        for j = first, m_ - 1 do
            local rx, ry, rz = lever(c, tx, ty, tz, j, rows)
            local mode = joint_mode(c, j, rx, ry, rz, rows, y0, drop)
            if mode >= 0 then
                moving = moving + 1
                local n = joint_columns(c, j, mode, rx, ry, rz, rows, col, axes)
                for i = 0, n - 1 do
                    local o = 6 * i
                    for k = 0, rk - 1 do
                        for l = 0, k do a[6 * k + l] = a[6 * k + l] + col[o + k] * col[o + l] end
                    end
                end
            end
        end
        if moving == 0 or not solve_spd(a, 6, rk, rows.e, y) then return false end
        if drop then break end
        local j = first
        while j < m_ and not again do
            local rx, ry, rz = lever(c, tx, ty, tz, j, rows)
            again = joint_mode(c, j, rx, ry, rz, rows, y, true) ~= 0
            j = j + 1
        end
        if not again then break end
        drop = true -- solve again without the ways out the bounds hold
    end
    -- No joint turns more than FINISH_MAX_TURN: the linearisation holds for small turns.
    local largest = 0.0
    for j = first, m_ - 1 do
        local rx, ry, rz = lever(c, tx, ty, tz, j, rows)
        local mode = joint_mode(c, j, rx, ry, rz, rows, y0, drop)
        if mode >= 0 then
            local ux, uy, uz = solution_turn(c, j, mode, rx, ry, rz, rows, y)
            local size
            if c.dim == 2 or has(c.limit[j].flags, HINGE) then size = abs(ux) else size = v3_len(ux, uy, uz) end
            if size > largest then largest = size end
        end
    end
    if not (largest > 1e-15) then return false end
    local scale = largest > FINISH_MAX_TURN and FINISH_MAX_TURN / largest or 1.0
    for k = 0, rk - 1 do y[k] = y[k] * scale end
    -- Every turn from the pose the step was taken at: the world data stays the old one
    -- until the forward kinematics below, as the linearisation assumes.
    for j = first, m_ - 1 do
        local rx, ry, rz = lever(c, tx, ty, tz, j, rows)
        local mode = joint_mode(c, j, rx, ry, rz, rows, y0, drop)
        if mode >= 0 then joint_turn(c, j, solution_turn(c, j, mode, rx, ry, rz, rows, y)) end
    end
    chain_mark_stale(c, first)
    chain_fk(c)
    return true
end

-- Turns each bounded joint towards the middle of its range.
local function unbend(c, m_, first)
    local moved = false
    for j = first, m_ - 1 do
        if joint_has_bounds(c, j) then
            local limit = c.limit[j]
            local angle = joint_bound_angle(c, j)
            local mid = (limit.min + limit.max) / 2
            local turn = clamp(mid - angle, -FINISH_UNBEND, FINISH_UNBEND)
            if not (abs(turn) < 1e-3) then
                if c.dim == 2 then
                    chain_set_turn_angle(c, j, angle + turn)
                else
                    local r, k = c.rot, 4 * j
                    local qw, qx, qy, qz = q_axis_angle(limit.axis_x, limit.axis_y, limit.axis_z, turn)
                    r[k], r[k + 1], r[k + 2], r[k + 3] =
                        limit_rotation(limit, q_normalize(q_mul(qw, qx, qy, qz, r[k], r[k + 1], r[k + 2], r[k + 3])))
                end
                moved = true
            end
        end
    end
    chain_mark_stale(c, first)
    chain_fk(c)
    return moved
end

local function limits_oriented(c, m_)
    return c.has_orientation and m_ == c.n - 1 and m_ > 0 and c.limit[m_].flags ~= 0
end
M.limits_oriented = limits_oriented

-- The steps are taken where the unit and every joint and the target, from the base in
-- reaches, are finite and within FINISH_RANGE. The C measures only the target at scale 1
-- with no joint pinned (first 0), where the joints cannot be out of range; so does PUC Lua
-- here. Under LuaJIT they are measured still (the same answer): the joints' loop is where
-- the compiler roots the trace that covers a tracked solve, and without it a 10-bone chain
-- tracked in about twice the time (docs/performance.md, the module against plain Lua).
local FINISH_RANGE = 1e100
local ROOTS_TRACE = rawget(_G, "jit") ~= nil

local function finish_in_range(c, tx, ty, tz, m_, first, unit)
    local bx, by, bz = joint_v3(c, 0)
    if not (unit > 0 and unit < INFINITY) then return false end
    if not ROOTS_TRACE and first == 0 and c.scale == 1 then -- the target alone (2D: z 0)
        local vx, vy, vz = (tx - bx) * unit, (ty - by) * unit, (tz - bz) * unit
        return vx <= FINISH_RANGE and vx >= -FINISH_RANGE and vy <= FINISH_RANGE and vy >= -FINISH_RANGE
            and vz <= FINISH_RANGE and vz >= -FINISH_RANGE
    end
    if c.dim == 2 then
        -- The loop below without calls, abs(v) <= R as -R <= v <= R (speed: PUC Lua calls
        -- even math.abs), the target after it (no branch in the loop for LuaJIT's trace);
        -- z is 0 throughout. Only whether all are in range is returned: the order is free.
        local p, hi, lo = c.joint, FINISH_RANGE, -FINISH_RANGE -- in registers (speed)
        for k = 0, 2 * m_, 2 do
            local vx, vy = (p[k] - bx) * unit, (p[k + 1] - by) * unit
            if not (vx <= hi and vx >= lo and vy <= hi and vy >= lo) then return false end
        end
        local vx, vy = (tx - bx) * unit, (ty - by) * unit
        return vx <= hi and vx >= lo and vy <= hi and vy >= lo
    end
    for j = 0, m_ + 1 do
        local px, py, pz
        if j > m_ then px, py, pz = tx, ty, tz else px, py, pz = joint_v3(c, j) end
        local vx, vy, vz = v3_scale(px - bx, py - by, pz - bz, unit)
        if not (abs(vx) <= FINISH_RANGE and abs(vy) <= FINISH_RANGE and abs(vz) <= FINISH_RANGE) then return false end
    end
    return true
end

-- finish's rows and the rows of a step being measured (finish is never nested).
local the_rows, now_rows = new_rows(), new_rows()

-- Tracking with limits: before the steps, each joint with bounds turns towards the middle
-- of its range, the tip's share of that turn taken out by the other joints (see the C).
local CENTER_RATE = 0.05
local CENTER_DAMPING = 1e-6

-- Bone j's turn towards the middle of its range, before the projection.
local function center_pull(c, j)
    local limit = c.limit[j]
    local half = (limit.max - limit.min) / 2
    if not joint_has_bounds(c, j) or not (half > 0) then return 0.0 end
    return CENTER_RATE * ((limit.min + half - joint_bound_angle(c, j)) / half)
end

-- center's right-hand side (made once); its system, columns, axes and solution are
-- finish_step's arrays, free before the steps.
local center_b = {}
for i = 0, 5 do center_b[i] = 0.0 end

-- The turn above, from finish's rows of the pose as it stands (goal not met); each bone's
-- pull kept in c.work (free until finish's steps). Returns whether it turned.
local function center(c, m_, first, rows)
    local a, col, axes, b, y, pull = step_a, step_col, step_axes, center_b, step_y, c.work
    local px, py, pz = joint_v3(c, m_)
    local ways, pulled, rk = 0, false, rows.k
    for i = 0, 5 do b[i] = 0.0 end
    for k = 0, rk - 1 do
        for l = 0, rk - 1 do a[6 * k + l] = k == l and CENTER_DAMPING or 0.0 end
    end
    for j = first, m_ - 1 do
        local g = center_pull(c, j)
        pull[j] = g
        if g ~= 0 then pulled = true end
        local rx, ry, rz = lever(c, px, py, pz, j, rows)
        local n = joint_columns(c, j, 0, rx, ry, rz, rows, col, axes)
        ways = ways + n
        for i = 0, n - 1 do
            local o = 6 * i
            for k = 0, rk - 1 do
                for l = 0, k do a[6 * k + l] = a[6 * k + l] + col[o + k] * col[o + l] end
                b[k] = b[k] + col[o + k] * g -- a joint with bounds has one column
            end
        end
    end
    if not pulled or ways <= rk or not solve_spd(a, 6, rk, b, y) then return false end
    for j = first, m_ - 1 do
        local rx, ry, rz = lever(c, px, py, pz, j, rows)
        local ux, uy, uz = solution_turn(c, j, 0, rx, ry, rz, rows, y)
        joint_turn(c, j, pull[j] - ux, -uy, -uz)
    end
    chain_mark_stale(c, first)
    chain_fk(c)
    return true
end

-- Tracking's prediction (see the C): a tracked solve whose goal the pose does not meet starts
-- from the pose the last two solves' motion continues to, each bone turned again by its turn
-- between the starts of the last tracked solve and this one (at most PREDICT_CAP; times
-- PREDICT_SPARE where the bones can turn more ways than the rows ask, which chains without
-- limits then leave out), within its limits.
local PREDICT_COS = 0.99875026039496628 -- cos(PREDICT_CAP), PREDICT_CAP = 0.05
local PREDICT_COS_HALF = 0.99968751627570263 -- cos(PREDICT_CAP / 2): a quaternion's w
local PREDICT_SPARE = 0.9

-- How many ways bones first..m-1 can turn (2D and hinges 1 each, other 3D joints 3).
local function ways_to_turn(c, first, m_)
    if c.limited == 0 then return (m_ - first) * (c.dim == 2 and 1 or 3) end
    local ways = 0
    for j = first, m_ - 1 do
        ways = ways + ((c.dim == 2 or has(c.limit[j].flags, HINGE)) and 1 or 3)
    end
    return ways
end

-- Bones first..m-1 continue their motion (a goal not met: apply); every bone's start kept.
-- rows: the steps' rows of the pose now. Returns whether a bone turned.
local function predict(c, first, m_, apply, rows)
    local spare = ways_to_turn(c, first, m_) > rows.k
    if spare and c.limited == 0 then return false end
    local k = spare and PREDICT_SPARE or 1.0
    apply = apply and c.track_have and c.track_seen == chain.chain_pose_version(c)
    c.track_recorded = true
    local from = m_
    for j = 0, c.n - 1 do
        local go = apply and j >= first and j < m_
        local limit = c.limit[j]
        if c.dim == 2 then
            local turn, track = c.turn, c.track_turn
            local nx, ny = turn[2 * j], turn[2 * j + 1]
            local dx, dy = v2_unrotate(nx, ny, track[2 * j], track[2 * j + 1])
            track[2 * j], track[2 * j + 1] = nx, ny
            if go and dx >= PREDICT_COS and dy ~= 0 then -- (dy 0: unturned)
                if limit.flags ~= 0 then
                    local a = wrap_angle(turn_angle(c, j) + k * atan2(dy, dx))
                    chain_set_turn_angle(c, j, limit_angle(limit, a))
                else
                    if k ~= 1 then
                        dx, dy = 1 + k * (dx - 1), k * dy
                        local s = 1 / sqrt(dx * dx + dy * dy)
                        dx, dy = dx * s, dy * s
                    end
                    turn[2 * j], turn[2 * j + 1] = v2_renorm(v2_rotate(nx, ny, dx, dy))
                    c.angle[j] = ANGLE_UNKNOWN
                end
                if j < from then from = j end
            end
        else
            local r, track, o = c.rot, c.track_rot, 4 * j
            local nw, nx, ny, nz = r[o], r[o + 1], r[o + 2], r[o + 3]
            local dw, dx, dy, dz = q_mul(track[o], -track[o + 1], -track[o + 2], -track[o + 3], nw, nx, ny, nz)
            track[o], track[o + 1], track[o + 2], track[o + 3] = nw, nx, ny, nz
            if dw < 0 then dw, dx, dy, dz = -dw, -dx, -dy, -dz end
            if go and dw >= PREDICT_COS_HALF and not (dx == 0 and dy == 0 and dz == 0) then
                if k ~= 1 then dw, dx, dy, dz = 1 + k * (dw - 1), k * dx, k * dy, k * dz end
                local w, x, y, z = q_normalize(q_mul(nw, nx, ny, nz, dw, dx, dy, dz))
                if limit.flags ~= 0 then w, x, y, z = limit_rotation(limit, w, x, y, z) end
                r[o], r[o + 1], r[o + 2], r[o + 3] = w, x, y, z
                if j < from then from = j end
            end
        end
    end
    if from == m_ then return false end
    chain_mark_stale(c, from)
    chain_fk(c)
    return true
end

-- The steps used, whether met, and the tip's distance (NaN when none was measured). centre:
-- a tracked solve, which turns the bounded joints first (center, above). The C writes this
-- in phases (ik_steps: steps_begin, ik_steps_keep, the step, ik_steps_after with weigh) so
-- its batch can take many chains' steps side by side; ik.pure has no batch, and one
-- function here is those phases in a row, the same operations in the same order.
local function finish(c, tx, ty, tz, m_, iterations, first, centre)
    local reach = chain_reach_to(c, m_)
    local rows, now = the_rows, now_rows
    local iter, unbends, stuck = 0, 0, 0
    rows.oriented = limits_oriented(c, m_)
    -- The orientation rows weigh a radian as an eighth of the reach (see the C).
    rows.unit = 1 / reach
    rows.scale = 1.0 / 8
    -- The C copies the rows whole before it measures a step (now = rows) and back when the
    -- step is kept; finish_error sets every field but these three, which hold throughout,
    -- so here they are set on both once and a kept step swaps the two (speed: no copies).
    now.oriented, now.unit, now.scale = rows.oriented, rows.unit, rows.scale
    -- The steps turn the local pose: the joints are made from it.
    if c.pose_behind then
        chain_settle(c)
        chain_mark_stale(c, first)
    end
    chain_fk(c)
    if not finish_in_range(c, tx, ty, tz, m_, first, rows.unit) then return 0, false, NAN end
    local lambda2 = FINISH_DAMPING
    -- The error of the pose as it stands: measured again only when the pose changed.
    local done, size = finish_error(c, tx, ty, tz, m_, rows)
    if centre and predict(c, first, m_, not done, rows) then
        done, size = finish_error(c, tx, ty, tz, m_, rows)
    end
    if centre and c.limited ~= 0 and not done and center(c, m_, first, rows) then
        done, size = finish_error(c, tx, ty, tz, m_, rows)
    end
    -- The pose before each step kept, for a step that does not gain (free_step2 keeps it in
    -- its own loop: speed).
    local keeps = c.dim ~= 2 or c.limited ~= 0 or rows.oriented
    while iter < iterations and not done do
        if keeps then keep_pose(c, first, m_) end
        iter = iter + 1
        if not finish_step(c, m_, first, rows, lambda2) then
            if unbends >= FINISH_UNBENDS or not unbend(c, m_, first) then break end
            unbends = unbends + 1
            done, size = finish_error(c, tx, ty, tz, m_, rows)
        else
            local met_now, after = finish_error(c, tx, ty, tz, m_, now)
            if after < size then
                -- a gain of less than a percent twice running: a minimum the limits made
                stuck = after > 0.99 * size and stuck + 1 or 0
                lambda2 = lambda2 * 0.25
                if lambda2 < 1e-12 then lambda2 = 1e-12 end
                rows, now = now, rows
                size, done = after, met_now
            else
                restore_pose(c, first, m_) -- (3D: to rounding, so measured again)
                lambda2 = lambda2 * 8
                if lambda2 > 1 then stuck = stuck + 2 end
                done, size = finish_error(c, tx, ty, tz, m_, rows)
            end
            if stuck >= 2 then
                if unbends >= FINISH_UNBENDS or not unbend(c, m_, first) then break end
                unbends = unbends + 1
                stuck = 0
                lambda2 = FINISH_DAMPING
                done, size = finish_error(c, tx, ty, tz, m_, rows)
            end
        end
    end
    return iter, done, rows.distance
end

-- On a 3D chain without limits, a solver on points keeps its world rotations over the
-- steps and derives the pose from the joints they leave (see the C).
local function keeps_twist(c, points) return points and c.dim == 3 and c.limited == 0 end

local function keep_points_rot(c)
    local from, to = c.wrot, c.points_rot
    for k = 0, 4 * c.n - 1 do to[k] = from[k] end
end

local function derive_from_points(c)
    local wrot, from, dir = c.wrot, c.points_rot, c.dir
    for i = 0, c.n - 1 do
        local k = 4 * i
        local w, x, y, z = from[k], from[k + 1], from[k + 2], from[k + 3]
        wrot[k], wrot[k + 1], wrot[k + 2], wrot[k + 3] = w, x, y, z
        dir[3 * i], dir[3 * i + 1], dir[3 * i + 2] = q_x_axis(w, x, y, z)
    end
    c.pose_behind = true
end

-- The steps used. points: a solver on points (FABRIK, relaxation).
function M.joint_finish(c, tx, ty, tz, m_, iterations, first, points)
    local twist = keeps_twist(c, points)
    if twist then keep_points_rot(c) end
    local used = finish(c, tx, ty, tz, m_, iterations, first, false)
    if twist then derive_from_points(c) end
    return used
end

-- Tracking: whether the steps met the goal, the steps used, and joint m's distance after
-- them (distance, the caller's, when no step was taken).
function M.joint_track(c, tx, ty, tz, m_, first, points, distance)
    -- One free bone: the solver points it at the goal, the smallest turn there is.
    if not c.settings.escape or m_ == 0 or (m_ == 1 and c.limited == 0) then return false, 0, distance end
    local reach = chain_reach_to(c, m_)
    if not (joint_distance(c, m_, tx, ty, tz) < TRACK_NEAR * reach) then return false, 0, distance end
    if c.limited == 0 then
        local bx, by, bz = joint_v3(c, 0)
        if not (v3_len(tx - bx, ty - by, tz - bz) < reach - c.settings.tolerance) then return false, 0, distance end
    end
    local twist = keeps_twist(c, points)
    if twist then keep_points_rot(c) end
    local used, met, left = finish(c, tx, ty, tz, m_, iteration_budget(c.settings.iterations), first, true)
    if twist then derive_from_points(c) end
    return met, used, left
end

return M
