-- ik.pure.goal: the start of src/goal.c in plain Lua, in the same order and with the same
-- arithmetic (chain.lua's conventions): how far the tip is from its goal, in distance and
-- angle (ik_goal_direction, ik_orientation_error, ik_tip_distance, ik_chain_goal_error).
-- Not yet: the finish around a solve (ik_save_pose, ik_orient_tip, ik_mix_pose,
-- ik_hold_turns), which comes with the solvers.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")

local abs, sqrt, atan2 = math.abs, math.sqrt, math.atan2 or math.atan
local v2_angle_between, v2_len, v3_len, q_mul, q_x_axis = m.v2_angle_between, m.v2_len, m.v3_len, m.q_mul, m.q_x_axis

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

return M
