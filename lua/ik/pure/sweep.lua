-- ik.pure.sweep: src/sweep.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's conventions): one CCD sweep, the CCD solver's iteration and the escape's
-- last resort. In 2D each bone's world data is made as soon as it has turned (chain_fk's
-- arithmetic); in 3D the turns of the joints before one are composed into one rigid map
-- (x -> R x + b) that carries the joints after them; see src/sweep.c for the method, its
-- source and the degenerate cases. The whole file is ported.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")

local cos, sin, atan2 = math.cos, math.sin, math.atan2 or math.atan
local v2_tame, wrap_angle = m.v2_tame, m.wrap_angle
local v3_add, v3_sub, v3_scale, v3_dot, v3_cross = m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot, m.v3_cross
local v3_normalize_or, v3_any_perpendicular = m.v3_normalize_or, m.v3_any_perpendicular
local q_mul, q_normalize, q_rotate, q_from_to, q_fraction = m.q_mul, m.q_normalize, m.q_rotate, m.q_from_to, m.q_fraction
local turn_angle, chain_set_turn_angle, chain_bend_side = chain.turn_angle, chain.chain_set_turn_angle, chain.chain_bend_side
local chain_mark_stale, chain_fk = chain.chain_mark_stale, chain.chain_fk
local limit_angle, limit_rotation = limits.limit_angle, limits.limit_rotation

local PI = m.PI
local ANGLE_UNKNOWN = chain.ANGLE_UNKNOWN

local M = {}

-- The small vector functions of the C (v2_rotate, v2_add, v2_sub, v2_tame's fast path,
-- v2_renorm) are written out in this loop, and the tamed pair both v2_angle_between and the
-- test for opposite directions take is made once (speed: under PUC Lua the calls cost more
-- than the arithmetic; the same operations in the same order, so the same bits). Each
-- bone's world data and the joint after it are made in the loop too, once the bone has
-- turned (the bones before it are final), with the arithmetic of the chain_fk the C calls
-- after its sweep (speed: the second loop over the bones cost a 10-bone CCD solve 7% under
-- Lua 5.4, 10% under LuaJIT); the map still reads the joints where the sweep began.
local behind_joint, behind_dir = {}, {} -- (grow to the longest chain swept so; never read)
local function sweep2d(c, gx, gy, m_, g, first)
    local rx, ry, bx, by = 1.0, 0.0, 0.0, 0.0 -- R as (cos, sin), and b
    local p, turn, angles, limits_of = c.joint, c.turn, c.angle, c.limit
    local dir, length, scale = c.dir, c.length, c.scale
    local any_limits = c.limited ~= 0 -- (speed: no bone's limits looked up without)
    local k = 2 * first
    -- bone j - 1's world direction and joint j, as the forward kinematics makes them (from
    -- the base at bone 0, as chain_fk does); a chain whose joints are the truth (never swept:
    -- chain_fk would leave it) gets them in scratch
    local wx, wy, fx, fy
    if first == 0 then wx, wy, fx, fy = c.base_turn_x, c.base_turn_y, c.base_x, c.base_y
    else wx, wy, fx, fy = dir[k - 2], dir[k - 1], p[k], p[k + 1] end
    local fk_joint, fk_dir = p, dir
    if c.pose_behind then fk_joint, fk_dir = behind_joint, behind_dir end
    local tx, ty = p[2 * m_], p[2 * m_ + 1]
    -- The bounds and constants in registers (speed: PUC Lua loads a float constant before
    -- each comparison, and a constant operand on the left before the operation; for the
    -- same reason one assignment a statement where a multiple one would move a value).
    local tiny, huge, three, unknown = 1e-300, 1e300, 3.0, ANGLE_UNKNOWN
    for j = first, m_ - 1 do
        local qx, qy = p[k], p[k + 1] -- joint j where the sweep began
        fk_joint[k] = fx
        fk_joint[k + 1] = fy
        local px, py = rx * qx - ry * qy + bx, ry * qx + rx * qy + by -- R pj + b
        local ax, ay = tx - px, ty - py -- to the tip
        local ux, uy = gx - px, gy - py -- to the target
        local da, du = ax * ax + ay * ay, ux * ux + uy * uy
        local cross, dot
        if not (da < huge and da > tiny and du < huge and du > tiny) then
            local sx, sy, vx, vy = ax, ay, ux, uy
            if not (da < huge and da > tiny) then sx, sy = v2_tame(ax, ay) end
            if not (du < huge and du > tiny) then vx, vy = v2_tame(ux, uy) end
            cross, dot = sx * vy - sy * vx, sx * vx + sy * vy
        else -- both tame already
            cross = ax * uy - ay * ux
            dot = ax * ux + ay * uy
        end
        local delta = g * atan2(cross, dot) -- v2_angle_between
        if cross == 0 and dot < 0 then
            delta = g * PI * (j == first and -c.settings.bend or c.settings.bend) -- see the C's top
        end
        local limit = any_limits and limits_of[j]
        local held, limited = 0.0, any_limits and limit.flags ~= 0
        if delta ~= 0 and limited then
            -- Within the limits: the held angle is exact, and delta the turn it makes.
            local angle = turn_angle(c, j)
            held = limit_angle(limit, wrap_angle(angle + delta))
            delta = wrap_angle(held - angle)
        end
        if delta ~= 0 then
            local cx, cy = cos(delta), sin(delta)
            if limited then
                chain_set_turn_angle(c, j, held)
            else
                -- Turn by complex multiplication, kept unit to first order (no sqrt).
                local ox, oy = turn[k], turn[k + 1]
                local x, y = cx * ox - cy * oy, cy * ox + cx * oy
                local r = (three - (x * x + y * y)) / 2
                turn[k] = x * r
                turn[k + 1] = y * r
                angles[j] = unknown
            end
            -- Compose the turn about pj after the map: x -> r (R x + b - pj) + pj.
            rx, ry = cx * rx - cy * ry, cy * rx + cx * ry
            local ex, ey = bx - px, by - py
            bx = cx * ex - cy * ey + px
            by = cy * ex + cx * ey + py
            tx = cx * ax - cy * ay + px
            ty = cy * ax + cx * ay + py
        end
        -- Bone j's world data and the joint after it, as chain_fk would make them after
        -- the sweep (the bones before j are final): its arithmetic. Joint j + 1 is stored
        -- at the next round, once the map has read where it was.
        local ox, oy = turn[k], turn[k + 1]
        local x, y = wx * ox - wy * oy, wy * ox + wx * oy
        local r = (three - (x * x + y * y)) / 2
        wx = x * r
        wy = y * r
        fk_dir[k] = wx
        fk_dir[k + 1] = wy
        local step = length[j] * scale
        fx = fx + wx * step
        fy = fy + wy * step
        k = k + 2
    end
    fk_joint[k], fk_joint[k + 1] = fx, fy
end

local function sweep3d(c, gx, gy, gz, m_, g, first)
    local rw, rx, ry, rz = 1.0, 0.0, 0.0, 0.0
    local bx, by, bz = 0.0, 0.0, 0.0
    local p, rot, wrot = c.joint, c.rot, c.wrot
    local tx, ty, tz = p[3 * m_], p[3 * m_ + 1], p[3 * m_ + 2]
    for j = first, m_ - 1 do
        local qx, qy, qz = q_rotate(rw, rx, ry, rz, p[3 * j], p[3 * j + 1], p[3 * j + 2])
        local px, py, pz = v3_add(qx, qy, qz, bx, by, bz)
        local ax, ay, az = v3_sub(tx, ty, tz, px, py, pz) -- to the tip
        local ux, uy, uz = v3_normalize_or(ax, ay, az, 0.0, 0.0, 0.0)
        local vx, vy, vz = v3_sub(gx, gy, gz, px, py, pz)
        vx, vy, vz = v3_normalize_or(vx, vy, vz, 0.0, 0.0, 0.0)
        if not (v3_dot(ux, uy, uz, ux, uy, uz) == 0 or v3_dot(vx, vy, vz, vx, vy, vz) == 0) then
            local tw, tx_, ty_, tz_ = q_from_to(ux, uy, uz, vx, vy, vz)
            if tw == 0 and v3_dot(ux, uy, uz, vx, vy, vz) < 0 then
                -- exactly opposite: a half turn that swings the tip away from the bend side
                local sx, sy, sz = chain_bend_side(c, v3_scale(ux, uy, uz, -1))
                local cx, cy, cz = v3_cross(ux, uy, uz, v3_scale(sx, sy, sz, j == first and 1 or -1))
                local fx, fy, fz = v3_any_perpendicular(ux, uy, uz)
                tw = 0.0
                tx_, ty_, tz_ = v3_normalize_or(cx, cy, cz, fx, fy, fz)
            end
            tw, tx_, ty_, tz_ = q_fraction(tw, tx_, ty_, tz_, g)
            -- The world turn r of bone j as a change of its local rotation: with the parent's
            -- current world rotation P, local' = P^-1 r P local. Within limits, the turn made
            -- is r' = (P local') (P local)^-1.
            local pw, px_, py_, pz_
            if j == 0 then
                pw, px_, py_, pz_ = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
            else
                pw, px_, py_, pz_ =
                    q_mul(rw, rx, ry, rz, wrot[4 * j - 4], wrot[4 * j - 3], wrot[4 * j - 2], wrot[4 * j - 1])
            end
            local k = 4 * j
            local lw, lx, ly, lz = q_mul(pw, -px_, -py_, -pz_, tw, tx_, ty_, tz_)
            lw, lx, ly, lz = q_mul(lw, lx, ly, lz, pw, px_, py_, pz_)
            lw, lx, ly, lz = q_normalize(q_mul(lw, lx, ly, lz, rot[k], rot[k + 1], rot[k + 2], rot[k + 3]))
            local limit = c.limit[j]
            if limit.flags ~= 0 then
                lw, lx, ly, lz = limit_rotation(limit, lw, lx, ly, lz)
                local ow, ox, oy, oz = q_mul(pw, px_, py_, pz_, rot[k], rot[k + 1], rot[k + 2], rot[k + 3])
                local nw, nx, ny, nz = q_mul(pw, px_, py_, pz_, lw, lx, ly, lz)
                tw, tx_, ty_, tz_ = q_normalize(q_mul(nw, nx, ny, nz, ow, -ox, -oy, -oz))
            end
            rot[k], rot[k + 1], rot[k + 2], rot[k + 3] = lw, lx, ly, lz
            rw, rx, ry, rz = q_normalize(q_mul(tw, tx_, ty_, tz_, rw, rx, ry, rz))
            local sx, sy, sz = q_rotate(tw, tx_, ty_, tz_, bx - px, by - py, bz - pz)
            bx, by, bz = v3_add(sx, sy, sz, px, py, pz)
            local nx, ny, nz = q_rotate(tw, tx_, ty_, tz_, ax, ay, az)
            tx, ty, tz = v3_add(nx, ny, nz, px, py, pz)
        end
    end
end

-- One CCD iteration over joints first..m-1 towards the target (the tip is joint m); the
-- world data is current afterwards. The chain must not be pose_behind.
function M.ccd_sweep(c, tx, ty, tz, m_, greed, first)
    if c.dim == 2 then
        sweep2d(c, tx, ty, m_, greed, first)
        -- the bones after joint m, carried (all from first where the joints are the truth)
        chain_mark_stale(c, c.pose_behind and first or m_)
    else
        sweep3d(c, tx, ty, tz, m_, greed, first)
        chain_mark_stale(c, first)
    end
    chain_fk(c)
end

return M
