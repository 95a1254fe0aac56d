-- ik.pure.limits: src/limits.c in plain Lua, function for function, in the same order and
-- with the same arithmetic: joint limits local to the parent bone (2D: the local angle in
-- [min, max], the nearer bound around the circle; 3D: hinge, cone and twist by the
-- swing-twist decomposition), posing a bone within them, and the limits' setters and
-- getters. The conventions are chain.lua's: a limit is a table with the fields of struct
-- ik_limit (the axis flattened: axis_x ..), vectors and quaternions are multiple values, a
-- status is an integer returned first. Lua 5.1 has no bitwise operators: a flag is tested
-- with has(flags, bit) and flags are combined by addition of distinct bits.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")

local abs, sqrt, sin, cos, atan2 = math.abs, math.sqrt, math.sin, math.cos, math.atan2 or math.atan
local wrap_angle, v2_renorm, v2_unrotate = m.wrap_angle, m.v2_renorm, m.v2_unrotate
local v3_dot, v3_cross, v3_len, v3_sub = m.v3_dot, m.v3_cross, m.v3_len, m.v3_sub
local v3_normalize_or, v3_any_perpendicular = m.v3_normalize_or, m.v3_any_perpendicular
local q_mul, q_normalize, q_rotate, q_from_to, q_axis_angle = m.q_mul, m.q_normalize, m.q_rotate, m.q_from_to, m.q_axis_angle
local turn_angle, chain_set_turn_angle, chain_mark_stale = chain.turn_angle, chain.chain_set_turn_angle, chain.chain_mark_stale
local chain_fk_bone, dir_v3 = chain.chain_fk_bone, chain.dir_v3

local PI, TWO_PI = m.PI, m.TWO_PI
local RANGE, HINGE, CONE, TWIST = chain.LIMIT_RANGE, chain.LIMIT_HINGE, chain.LIMIT_CONE, chain.LIMIT_TWIST
local OK, ERR_NOT_FINITE = chain.OK, chain.ERR_NOT_FINITE
local ERR_LIMIT_RANGE, ERR_AXIS, ERR_CONE = chain.ERR_LIMIT_RANGE, chain.ERR_AXIS, chain.ERR_CONE
local check_bone = chain.check_bone

local M = {}

-- flags & bit, for a single bit.
local function has(flags, bit) return flags % (2 * bit) >= bit end
M.has = has

local function isfinite(v) return v - v == 0 end

-- The same bits (the C compares quaternions with memcmp: -0 is not +0).
local function same(a, b) return a == b and (a ~= 0 or 1 / a == 1 / b) end

-- ---- the clamps ----

-- How far short of a half turn a swing stops on a bone with a twist limit (radians).
local HALF_TURN_MARGIN = 1e-6

-- How far beyond a bound a rotation still counts as within it (radians): a rotation the
-- clamp put on a bound reads back a rounding beyond it, and must be kept as it is, to the
-- bit, by the next clamp.
local LIMIT_ROUNDING = 1e-12

-- a moved within [min, max] (wrapped angles, min <= max): the nearer bound around the circle.
local function clamp_circular(a, min, max)
    if a >= min and a <= max then return a end
    if abs(wrap_angle(a - min)) <= abs(wrap_angle(a - max)) then return min end
    return max
end

local function limit_angle(limit, angle)
    if not has(limit.flags, RANGE) then return angle end
    return clamp_circular(angle, limit.min, limit.max)
end
M.limit_angle = limit_angle

-- The angle of q's turn about unit axis (its twist about that axis), in [-pi, pi].
local function twist_angle(w, x, y, z, ax, ay, az)
    local along = x * ax + y * ay + z * az
    if along == 0 and w == 0 then return 0.0 end
    return wrap_angle(2 * atan2(along, w))
end
M.twist_angle = twist_angle

local function limit_rotation(limit, w, x, y, z)
    local flags = limit.flags
    if has(flags, HINGE) then
        local ax, ay, az = limit.axis_x, limit.axis_y, limit.axis_z
        local raw = twist_angle(w, x, y, z, ax, ay, az)
        local ox, oy, oz = v3_cross(x, y, z, ax, ay, az)
        local angle = clamp_circular(raw, limit.min, limit.max)
        -- Already a turn about the axis, within range (to rounding): returned as it is.
        if abs(wrap_angle(raw - angle)) <= LIMIT_ROUNDING and v3_len(ox, oy, oz) <= 1e-15 then
            return w, x, y, z
        end
        return q_axis_angle(ax, ay, az, angle)
    end
    if not (has(flags, CONE) or has(flags, TWIST)) then return w, x, y, z end

    local angle = twist_angle(w, x, y, z, 1.0, 0.0, 0.0)
    -- The swing is what is left once the bone's own twist is taken out: q * twist^-1.
    local tw, tx, ty, tz = q_axis_angle(1.0, 0.0, 0.0, angle)
    local sw, sx, sy, sz = q_mul(w, x, y, z, tw, -tx, -ty, -tz)
    if sw < 0 then sw, sx, sy, sz = -sw, -sx, -sy, -sz end
    local s = sqrt(sy * sy + sz * sz)
    -- The swing's largest angle: the cone's; and with a twist limit, just short of a half
    -- turn, where the twist is undefined and so could not be held.
    local max_swing = has(flags, CONE) and limit.cone or PI
    if has(flags, TWIST) and max_swing > PI - HALF_TURN_MARGIN then max_swing = PI - HALF_TURN_MARGIN end
    local twist_held = angle
    if has(flags, TWIST) then twist_held = clamp_circular(angle, limit.twist_min, limit.twist_max) end
    local cone_held = not (s > 0 and 2 * atan2(s, sw) > max_swing + LIMIT_ROUNDING)
    -- Within its limits, a rotation is returned as it is, to the bit.
    if abs(wrap_angle(angle - twist_held)) <= LIMIT_ROUNDING and cone_held then return w, x, y, z end
    tw, tx, ty, tz = q_axis_angle(1.0, 0.0, 0.0, twist_held)
    if not cone_held then sw, sx, sy, sz = q_axis_angle(0.0, sy / s, sz / s, max_swing) end
    return q_normalize(q_mul(sw, sx, sy, sz, tw, tx, ty, tz))
end
M.limit_rotation = limit_rotation

function M.chain_clamp_limits(c)
    if c.limited == 0 then return end
    for i = 0, c.n - 1 do
        local limit = c.limit[i]
        if limit.flags ~= 0 then
            local changed
            if c.dim == 2 then
                local angle = turn_angle(c, i)
                local held = limit_angle(limit, angle)
                changed = held ~= angle
                if changed then chain_set_turn_angle(c, i, held) end
            else
                local r, k = c.rot, 4 * i
                local w, x, y, z = limit_rotation(limit, r[k], r[k + 1], r[k + 2], r[k + 3])
                changed = not (same(w, r[k]) and same(x, r[k + 1]) and same(y, r[k + 2]) and same(z, r[k + 3]))
                if changed then r[k], r[k + 1], r[k + 2], r[k + 3] = w, x, y, z end
            end
            if changed then chain_mark_stale(c, i) end
        end
    end
end

-- A pose within a bone's limits at the fractions u (of a range, or of the cone's way round),
-- v (of the cone's half angle) and w (of the twist's range): a start of a solve's other
-- tries (solve.c). What a bone's limits leave free starts at 0 (2D) or unturned (3D).
function M.limit_sample_angle(limit, u)
    if not has(limit.flags, RANGE) then return 0.0 end
    return limit.min + (limit.max - limit.min) * u
end

function M.limit_sample_rotation(limit, u, v, w)
    local flags = limit.flags
    local sw, sx, sy, sz = 1.0, 0.0, 0.0, 0.0
    local tw, tx, ty, tz = 1.0, 0.0, 0.0, 0.0
    local around = TWO_PI * u
    if has(flags, HINGE) then
        return limit_rotation(limit, q_axis_angle(limit.axis_x, limit.axis_y, limit.axis_z,
            limit.min + (limit.max - limit.min) * u))
    end
    if has(flags, CONE) then sw, sx, sy, sz = q_axis_angle(0.0, cos(around), sin(around), limit.cone * v) end
    if has(flags, TWIST) then
        tw, tx, ty, tz = q_axis_angle(1.0, 0.0, 0.0, limit.twist_min + (limit.twist_max - limit.twist_min) * w)
    end
    return limit_rotation(limit, q_normalize(q_mul(sw, sx, sy, sz, tw, tx, ty, tz)))
end

-- Bone i's new direction held within what its child's limit allows, given the child's new
-- direction: 2D, the child's local angle (child - parent) within its range; 3D, the angle
-- between the two directions within the child's cone.
function M.limit_backward(c, i, dx, dy, dz, cx, cy, cz)
    local limit = c.limit[i + 1]
    if c.dim == 2 and has(limit.flags, RANGE) then
        local child_angle = atan2(cy, cx)
        local loc = wrap_angle(child_angle - atan2(dy, dx))
        local held = limit_angle(limit, loc)
        if held ~= loc then dx, dy, dz = cos(child_angle - held), sin(child_angle - held), 0.0 end
    elseif c.dim == 3 and has(limit.flags, CONE) then
        local cos_angle = v3_dot(dx, dy, dz, cx, cy, cz)
        if cos_angle < cos(limit.cone) then
            local ax, ay, az = v3_cross(cx, cy, cz, dx, dy, dz)
            local px, py, pz = v3_any_perpendicular(cx, cy, cz)
            ax, ay, az = v3_normalize_or(ax, ay, az, px, py, pz)
            local qw, qx, qy, qz = q_axis_angle(ax, ay, az, limit.cone)
            dx, dy, dz = q_rotate(qw, qx, qy, qz, cx, cy, cz)
        end
    end
    return dx, dy, dz
end

-- ---- posing a bone ----

local function pose_bone_turn(c, i, wx, wy)
    local px, py
    if i == 0 then px, py = c.base_turn_x, c.base_turn_y else px, py = c.dir[2 * i - 2], c.dir[2 * i - 1] end
    local limit, turn = c.limit[i], c.turn
    turn[2 * i], turn[2 * i + 1] = v2_renorm(v2_unrotate(wx, wy, px, py))
    c.angle[i] = chain.ANGLE_UNKNOWN
    if limit.flags ~= 0 then
        local angle = atan2(turn[2 * i + 1], turn[2 * i])
        local held = limit_angle(limit, angle)
        if held ~= angle then chain_set_turn_angle(c, i, held) end
    end
    chain_fk_bone(c, i)
end
M.pose_bone_turn = pose_bone_turn

local function pose_bone_rot(c, i, w, x, y, z)
    local pw, px, py, pz = chain.parent_wrot(c, i)
    local lw, lx, ly, lz = q_normalize(q_mul(pw, -px, -py, -pz, w, x, y, z))
    local r = c.rot
    r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3] = limit_rotation(c.limit[i], lw, lx, ly, lz)
    chain_fk_bone(c, i)
end
M.pose_bone_rot = pose_bone_rot

local function pose_bone(c, i, dx, dy, dz)
    if c.dim == 2 then
        pose_bone_turn(c, i, dx, dy)
    else
        -- The smallest turn from the bone's direction now keeps its twist.
        local d, r = c.dir, c.wrot
        local tw, tx, ty, tz = q_from_to(d[3 * i], d[3 * i + 1], d[3 * i + 2], dx, dy, dz)
        pose_bone_rot(c, i, q_normalize(q_mul(tw, tx, ty, tz, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3])))
    end
end
M.pose_bone = pose_bone

-- points: 0-based, dim numbers a joint.
local function pose_points(c, points, first, last)
    local dim = c.dim
    for i = first, last - 1 do
        local k = dim * i
        local fx, fy, fz = points[k], points[k + 1], dim == 3 and points[k + 2] or 0.0
        k = dim * (i + 1)
        local tx, ty, tz = points[k], points[k + 1], dim == 3 and points[k + 2] or 0.0
        local bx, by, bz = dir_v3(c, i)
        -- A zero-length bone, or a segment with no direction, keeps its world direction.
        if c.length[i] > 0 then
            local sx, sy, sz = v3_sub(tx, ty, tz, fx, fy, fz)
            pose_bone(c, i, v3_normalize_or(sx, sy, sz, bx, by, bz))
        else
            pose_bone(c, i, bx, by, bz)
        end
    end
    c.stale_from = last
end
M.pose_points = pose_points

-- ---- setters ----

local function check_range(min, max)
    if not isfinite(min) or not isfinite(max) then return ERR_NOT_FINITE end
    if not (-PI <= min and min <= max and max <= PI) then return ERR_LIMIT_RANGE end
    return OK
end

-- Sets bone i's limit flags, keeping the count of limited bones.
local function set_flags(c, i, flags)
    c.limited = c.limited + ((flags ~= 0 and 1 or 0) - (c.limit[i].flags ~= 0 and 1 or 0))
    c.limit[i].flags = flags
end

function M.chain2d_set_limit(c, bone, min, max)
    local st = check_bone(c, bone, 2)
    if st ~= OK then return st end
    st = check_range(min, max)
    if st ~= OK then return st end
    c.limit[bone].min = min
    c.limit[bone].max = max
    set_flags(c, bone, RANGE)
    return OK
end

-- The status, whether the bone has a limit, and its min and max (-pi, pi when none).
function M.chain2d_limit(c, bone)
    local st = check_bone(c, bone, 2)
    if st ~= OK then return st end
    local limit = c.limit[bone]
    if has(limit.flags, RANGE) then return OK, true, limit.min, limit.max end
    return OK, false, -PI, PI
end

function M.chain3d_set_hinge(c, bone, ax, ay, az, min, max)
    local st = check_bone(c, bone, 3)
    if st ~= OK then return st end
    if not isfinite(ax) or not isfinite(ay) or not isfinite(az) then return ERR_NOT_FINITE end
    ax, ay, az = v3_normalize_or(ax, ay, az, 0.0, 0.0, 0.0)
    if ax == 0 and ay == 0 and az == 0 then return ERR_AXIS end
    st = check_range(min, max)
    if st ~= OK then return st end
    local limit = c.limit[bone]
    limit.axis_x, limit.axis_y, limit.axis_z = ax, ay, az
    limit.min = min
    limit.max = max
    set_flags(c, bone, HINGE)
    return OK
end

function M.chain3d_set_cone(c, bone, half_angle)
    local st = check_bone(c, bone, 3)
    if st ~= OK then return st end
    if not isfinite(half_angle) then return ERR_NOT_FINITE end
    if not (half_angle >= 0 and half_angle <= PI) then return ERR_CONE end
    local limit = c.limit[bone]
    limit.cone = half_angle
    set_flags(c, bone, (has(limit.flags, TWIST) and TWIST or 0) + CONE)
    return OK
end

function M.chain3d_set_twist(c, bone, min, max)
    local st = check_bone(c, bone, 3)
    if st ~= OK then return st end
    st = check_range(min, max)
    if st ~= OK then return st end
    local limit = c.limit[bone]
    limit.twist_min = min
    limit.twist_max = max
    set_flags(c, bone, (has(limit.flags, CONE) and CONE or 0) + TWIST)
    return OK
end

function M.chain_clear_limit(c, bone)
    local st = check_bone(c, bone)
    if st ~= OK then return st end
    set_flags(c, bone, 0)
    return OK
end

-- The status, then ik_limit3d's fields in its order: hinge, axis (3), min, max, cone,
-- half_angle, twist, twist_min, twist_max.
function M.chain3d_limit(c, bone)
    local st = check_bone(c, bone, 3)
    if st ~= OK then return st end
    local limit = c.limit[bone]
    local hinge, cone, twist = has(limit.flags, HINGE), has(limit.flags, CONE), has(limit.flags, TWIST)
    return OK, hinge, limit.axis_x, limit.axis_y, limit.axis_z,
        hinge and limit.min or -PI, hinge and limit.max or PI,
        cone, cone and limit.cone or PI,
        twist, twist and limit.twist_min or -PI, twist and limit.twist_max or PI
end

-- points: (n + 1) dim numbers, 0-based.
function M.chain_set_points(c, points)
    local st = chain.check_coord_array(points, c.dim * (c.n + 1))
    if st ~= OK then return st end
    chain.chain_follow(c)
    chain.chain_settle(c)
    if c.parent == nil then
        c.base_x, c.base_y = points[0] + 0.0, points[1] + 0.0
        c.base_z = c.dim == 3 and points[2] + 0.0 or 0.0
        c.stale_from = 0
    end
    chain.chain_fk(c)
    pose_points(c, points, 0, c.n)
    chain.chain_fk(c)
    chain.chain_changed(c)
    return OK
end

return M
