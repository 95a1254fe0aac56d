-- ik.pure.aim: src/aim.c in plain Lua, function for function, in the same order and with
-- the same arithmetic (chain.lua's conventions; a result is a table with ik_result's
-- fields, filled in place): the bones turn so the tip bone (bone n-1) points at a point,
-- the turn shared by the joints' weights (see src/aim.c for the method and why).

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local escape = require("ik.pure.escape")

local sqrt, cos, sin, atan2 = math.sqrt, math.cos, math.sin, math.atan2 or math.atan
local v2_angle_between, v2_rotate = m.v2_angle_between, m.v2_rotate
local v3_sub, v3_dot, v3_cross, v3_len, v3_tame, v3_normalize_or = m.v3_sub, m.v3_dot, m.v3_cross, m.v3_len, m.v3_tame, m.v3_normalize_or
local q_from_to, q_fraction, q_mul, q_normalize = m.q_from_to, m.q_fraction, m.q_mul, m.q_normalize
local joint_v3, dir_v3, chain_fk_bone = chain.joint_v3, chain.dir_v3, chain.chain_fk_bone
local PI = m.PI

local M = {}

-- The progress of the aim being solved (ik_aim is never nested): one table, no garbage.
local progress = {}

-- The angle between the tip bone and the line from its base to target (0 without one).
local function aim_error(c, tx, ty, tz)
    local jx, jy, jz = joint_v3(c, c.n - 1)
    local dx, dy, dz = dir_v3(c, c.n - 1)
    local ux, uy, uz = v3_tame(tx - jx, ty - jy, tz - jz)
    -- A point on the tip bone's base has no direction: every direction points at it.
    if ux == 0 and uy == 0 and uz == 0 then return 0.0 end
    return atan2(v3_len(v3_cross(dx, dy, dz, ux, uy, uz)), v3_dot(dx, dy, dz, ux, uy, uz))
end
M.aim_error = aim_error

local function aim2d(c, tx, ty, largest, units)
    local p, d, w, last = c.joint, c.dir, c.weight, c.n - 1
    local e = v2_angle_between(d[2 * last], d[2 * last + 1], tx - p[2 * last], ty - p[2 * last + 1])
    local share = 0.0
    for i = 0, c.n - 1 do
        if w[i] == 0 then -- still: carried by its parent
            chain_fk_bone(c, i)
        else
            share = share + w[i] / largest / units
            local turn = e * (share < 1 and share or 1.0)
            limits.pose_bone_turn(c, i, v2_rotate(d[2 * i], d[2 * i + 1], cos(turn), sin(turn)))
        end
    end
end

local function aim3d(c, tx, ty, tz, largest, units)
    local p, d, r, w, last = c.joint, c.dir, c.wrot, c.weight, c.n - 1
    local dx, dy, dz = d[3 * last], d[3 * last + 1], d[3 * last + 2]
    local ux, uy, uz = v3_sub(tx, ty, tz, p[3 * last], p[3 * last + 1], p[3 * last + 2])
    ux, uy, uz = v3_normalize_or(ux, uy, uz, dx, dy, dz)
    local ew, ex, ey, ez = q_from_to(dx, dy, dz, ux, uy, uz)
    local share = 0.0
    for i = 0, c.n - 1 do
        if w[i] == 0 then
            chain_fk_bone(c, i)
        else
            share = share + w[i] / largest / units
            local fw, fx, fy, fz = q_fraction(ew, ex, ey, ez, share < 1 and share or 1.0)
            -- wrot[i] is still the rotation before this iteration: pose_bone_rot replaces it.
            limits.pose_bone_rot(c, i, q_normalize(q_mul(fw, fx, fy, fz, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3])))
        end
    end
end

-- The iterations, then the angle error left.
local function aim(c, tx, ty, tz)
    local s, w = c.settings, c.weight
    local units, largest = 0.0, 0.0
    local iter = 0
    -- Summed in units of the largest weight, so weights near 1e308 cannot overflow.
    for i = 0, c.n - 1 do
        if w[i] > largest then largest = w[i] end
    end
    local error = aim_error(c, tx, ty, tz)
    if largest == 0 then return 0, error end -- every bone is still
    for i = 0, c.n - 1 do units = units + w[i] / largest end
    escape.progress_plain(progress, error, PI)
    local budget = chain.iteration_budget(s.iterations)
    while error > s.angle_tolerance and iter < budget do
        if c.dim == 2 then aim2d(c, tx, ty, largest, units) else aim3d(c, tx, ty, tz, largest, units) end
        iter = iter + 1
        error = aim_error(c, tx, ty, tz)
        if escape.progress_next(c, progress, error) == escape.STOP then break end
    end
    return iter, error
end
M.aim = aim

-- The angle atan2(s, d) (s >= 0) where it is small without atan2: for s / d <= 1e-5,
-- x - x^3 / 3 is atan(x) to rounding.
local function small_angle(s, d)
    if d > 0 and s <= 1e-5 * d then
        local x = s / d
        return x - x * x * x / 3
    end
    return atan2(s, d)
end

-- The lean aim of one bone: one turn points it at the target, so the loop's second measure
-- is the only one left (see src/aim.c). Fills out; true: it moved the chain.
function M.aim_lean3(c, tx, ty, tz, out)
    -- An aim has no softness: its aim is the goal.
    local tol = c.settings.angle_tolerance
    local iterations, error = 0, 0.0
    local d, p = c.dir, c.joint
    local dx, dy, dz = d[0], d[1], d[2]
    local ux, uy, uz = v3_tame(tx - p[0], ty - p[1], tz - p[2])
    -- The loop itself where one turn may not do: a target on the base, weight 0, or a
    -- tolerance so small that rounding may leave more.
    if (ux == 0 and uy == 0 and uz == 0) or c.weight[0] == 0 or not (tol >= 1e-12) then
        iterations, error = aim(c, tx, ty, tz)
    else
        local cx, cy, cz = v3_cross(dx, dy, dz, ux, uy, uz)
        local s2, dot = v3_dot(cx, cy, cz, cx, cy, cz), v3_dot(dx, dy, dz, ux, uy, uz)
        -- Met already? The squares settle it without a root where they can (see the C).
        local met
        if dot > 0 and s2 <= tol * tol * dot * dot then
            met = true
        elseif dot > 0 then
            met = not (s2 > 4 * tol * tol * dot * dot and tol < 0.6) and atan2(sqrt(s2), dot) <= tol
        else
            met = not (tol < 1.57) and atan2(sqrt(s2), dot) <= tol
        end
        if met then
            error = small_angle(sqrt(s2), dot)
        else
            chain.turn_bone3(c, 0, v3_normalize_or(ux, uy, uz, dx, dy, dz))
            dx, dy, dz = d[0], d[1], d[2]
            error = small_angle(v3_len(v3_cross(dx, dy, dz, ux, uy, uz)), v3_dot(dx, dy, dz, ux, uy, uz))
            iterations = 1
            if error > tol then
                local more
                more, error = aim(c, tx, ty, tz)
                iterations = iterations + more
            end
        end
    end
    out.iterations = iterations
    out.angle_error, out.distance = error, error
    out.reached = error <= tol
    return iterations > 0
end

return M
