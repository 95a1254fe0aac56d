-- ik.pure.goal: src/goal.c in plain Lua, function for function, in the same order and
-- with the same arithmetic (chain.lua's conventions): a chain's goal and the finish around
-- every solve. How far the tip is from its goal, in distance and angle
-- (ik_goal_direction, ik_orientation_error, ik_tip_distance, ik_chain_goal_error); the
-- pose before a solve kept (ik_save_pose), the tip bone turned to its orientation goal
-- (ik_orient_tip), the pose blended with the one before (ik_mix_pose) and each bone's turn
-- held to max_turn after it (ik_hold_turns).

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")

local abs, sqrt, atan2 = math.abs, math.sqrt, math.atan2 or math.atan
local v2_angle_between, v2_len, v3_len, q_mul, q_x_axis = m.v2_angle_between, m.v2_len, m.v3_len, m.q_mul, m.q_x_axis
local q_slerp, wrap_angle = m.q_slerp, m.wrap_angle
local turn_angle, chain_set_turn_angle, chain_mark_stale = chain.turn_angle, chain.chain_set_turn_angle, chain.chain_mark_stale
local limit_rotation = limits.limit_rotation

-- The same bits (the C compares quaternions with memcmp: -0 is not +0).
local function same(a, b) return a == b and (a ~= 0 or 1 / a == 1 / b) end

local M = {}

-- The world direction an orientation goal gives the tip bone.
function M.goal_direction(c)
    if c.dim == 2 then return c.target_turn_x, c.target_turn_y, 0.0 end
    return q_x_axis(c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z)
end

-- The tip bone's angle from its orientation goal.
local function orientation_error(c)
    local last = c.n - 1
    if c.dim == 2 then
        local dx, dy
        if c.pose_behind then dx, dy = chain.chain_derive_dir2(c, last) else dx, dy = c.dir[2 * last], c.dir[2 * last + 1] end
        return abs(v2_angle_between(dx, dy, c.target_turn_x, c.target_turn_y))
    end
    local w, x, y, z = chain.chain_world_rot(c, last)
    w, x, y, z = q_mul(c.target_rot_w, -c.target_rot_x, -c.target_rot_y, -c.target_rot_z, w, x, y, z)
    return 2 * atan2(sqrt(x * x + y * y + z * z), abs(w))
end
M.orientation_error = orientation_error

local function tip_distance(c)
    local p, n = c.joint, c.n
    if c.dim == 2 then return v2_len(c.target_x - p[2 * n], c.target_y - p[2 * n + 1]) end
    return v3_len(c.target_x - p[3 * n], c.target_y - p[3 * n + 1], c.target_z - p[3 * n + 2])
end
M.tip_distance = tip_distance

-- Whether there is a goal, the tip's distance from it and the tip bone's angle from the
-- orientation goal (0 without one).
function M.chain_goal_error(c)
    chain.chain_read_hold(c) -- a held tip's goal: where the held point is now
    if not c.has_target then return false, 0.0, 0.0 end
    chain.chain_update(c)
    local distance, angle_error = tip_distance(c), 0.0
    if c.has_orientation then angle_error = orientation_error(c) end
    return true, distance, angle_error
end

function M.save_pose(c)
    local n = c.n
    if c.dim == 2 then
        local turn, angle, prev_turn, prev_angle = c.turn, c.angle, c.prev_turn, c.prev_angle
        for k = 0, 2 * n - 1 do prev_turn[k] = turn[k] end
        for k = 0, n - 1 do prev_angle[k] = angle[k] end
    else
        local rot, prev_rot = c.rot, c.prev_rot
        for k = 0, 4 * n - 1 do prev_rot[k] = rot[k] end
    end
end

-- The tip bone takes its orientation goal (within its limit).
function M.orient_tip(c)
    local last = c.n - 1
    -- Through the pose, not the joints: a tip bone too short for the joints to show its
    -- direction (length 0, or 5e-324) takes the goal too.
    chain.chain_settle(c)
    chain.chain_fk(c)
    if c.dim == 2 then
        limits.pose_bone_turn(c, last, c.target_turn_x, c.target_turn_y)
    else
        limits.pose_bone_rot(c, last, c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z)
    end
end

-- Bone i's angle in the remembered pose (2D).
local function prev_angle_of(c, i)
    local from = c.prev_angle[i]
    if from ~= from then from = atan2(c.prev_turn[2 * i + 1], c.prev_turn[2 * i]) end
    return from
end

-- The local pose moved the fraction mix of the way from the remembered pose to the new one.
function M.mix_pose(c, mix)
    for i = 0, c.n - 1 do
        if mix == 0 then -- exactly the pose before, angles and all
            if c.dim == 2 then
                c.turn[2 * i], c.turn[2 * i + 1] = c.prev_turn[2 * i], c.prev_turn[2 * i + 1]
                c.angle[i] = c.prev_angle[i]
            else
                local r, p, k = c.rot, c.prev_rot, 4 * i
                r[k], r[k + 1], r[k + 2], r[k + 3] = p[k], p[k + 1], p[k + 2], p[k + 3]
            end
        elseif c.dim == 2 then
            local to = turn_angle(c, i)
            local from = prev_angle_of(c, i)
            -- A limited bone moves inside its range; others take the shorter way round.
            if c.limit[i].flags ~= 0 then
                chain_set_turn_angle(c, i, from + mix * (to - from))
            else
                chain_set_turn_angle(c, i, from + mix * wrap_angle(to - from))
            end
        else
            local r, p, k = c.rot, c.prev_rot, 4 * i
            r[k], r[k + 1], r[k + 2], r[k + 3] = q_slerp(p[k], p[k + 1], p[k + 2], p[k + 3], r[k], r[k + 1], r[k + 2], r[k + 3], mix)
        end
    end
    c.stale_from = 0
end

-- The angle of the turn from a to b.
local function turn_between(aw, ax, ay, az, bw, bx, by, bz)
    local w, x, y, z = q_mul(bw, bx, by, bz, aw, -ax, -ay, -az)
    return 2 * atan2(sqrt(x * x + y * y + z * z), abs(w))
end

-- No bone's local rotation more than max_turn from the remembered pose. A limited 3D bone's
-- limits win afterwards, and clamping a rotation into a cone or twist range can turn it
-- further from a pose within them: such a bone takes less of its turn, halved until its
-- clamped rotation is within max_turn (see src/goal.c).
function M.hold_turns(c, max_turn)
    for i = 0, c.n - 1 do
        local changed = true
        if c.dim == 2 then
            local to = turn_angle(c, i)
            local from = prev_angle_of(c, i)
            -- As in mix: inside a limited bone's range, else the shorter way round.
            local delta = c.limit[i].flags ~= 0 and to - from or wrap_angle(to - from)
            if abs(delta) <= max_turn then
                changed = false
            else
                chain_set_turn_angle(c, i, from + (delta > 0 and max_turn or -max_turn))
            end
        else
            local limit, r, p, k = c.limit[i], c.rot, c.prev_rot, 4 * i
            local fw, fx, fy, fz = p[k], p[k + 1], p[k + 2], p[k + 3]
            local tw, tx, ty, tz = r[k], r[k + 1], r[k + 2], r[k + 3]
            local hw, hx, hy, hz = tw, tx, ty, tz
            local angle, t = turn_between(fw, fx, fy, fz, tw, tx, ty, tz), 1.0
            -- A bone that did not turn keeps its bits: a rotation unit only to rounding seems
            -- turned from itself by about 1e-16, and the slerp would renormalise it.
            if same(fw, tw) and same(fx, tx) and same(fy, ty) and same(fz, tz) then angle = 0.0 end
            if angle > max_turn then
                t = max_turn / angle
                hw, hx, hy, hz = q_slerp(fw, fx, fy, fz, tw, tx, ty, tz, t)
            end
            local cw, cx, cy, cz = limit_rotation(limit, hw, hx, hy, hz)
            local gw, gx, gy, gz = limit_rotation(limit, fw, fx, fy, fz)
            -- (from a pose beyond the limits, they win: the turn is theirs)
            if limit.flags ~= 0 and turn_between(fw, fx, fy, fz, cw, cx, cy, cz) > max_turn
                and same(fw, gw) and same(fx, gx) and same(fy, gy) and same(fz, gz) then
                local tries = 0
                while tries < 40 and turn_between(fw, fx, fy, fz, cw, cx, cy, cz) > max_turn do
                    t = t / 2
                    hw, hx, hy, hz = q_slerp(fw, fx, fy, fz, tw, tx, ty, tz, t)
                    cw, cx, cy, cz = limit_rotation(limit, hw, hx, hy, hz)
                    tries = tries + 1
                end
                if turn_between(fw, fx, fy, fz, cw, cx, cy, cz) > max_turn then hw, hx, hy, hz = fw, fx, fy, fz end
            end
            if same(hw, tw) and same(hx, tx) and same(hy, ty) and same(hz, tz) then
                changed = false
            else
                r[k], r[k + 1], r[k + 2], r[k + 3] = hw, hx, hy, hz
            end
        end
        if changed then chain_mark_stale(c, i) end
    end
end

return M
