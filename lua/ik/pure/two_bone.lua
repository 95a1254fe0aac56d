-- ik.pure.two_bone: src/two_bone.c in plain Lua, function for function, in the same order
-- and with the same arithmetic (chain.lua's conventions: a status first, then what the C
-- writes through its out pointers; `reached` a boolean).
--
-- Angle form: Ryan Juckett, "Analytic Two-Bone IK in 2D" (2008); vector form: Inigo
-- Quilez, two-bone IK without trigonometry (see src/two_bone.c for the derivations). Both
-- forms divide every length by the largest input magnitude first, and classify
-- reachability with the same test (ring_side).
--
-- All of it: the stateless solves (max4, ring_side, check_inputs, ik_two_bone,
-- ik_two_bone_joint, ik_two_bone_joint3, ik_two_bone_middle, ik_two_bone_middle3) and the
-- chain solves (two_bone_chain2d, middle_offset3, two_bone_chain3d, ik_two_bone_lean3,
-- ik_two_bone_chain). A result (ik_result) is a table with its fields, filled in place.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")

local abs, sqrt, sin, acos, atan2 = math.abs, math.sqrt, math.sin, math.acos, math.atan2 or math.atan
local clamp, fmax, v2_len, v2_normalize_or = m.clamp, m.fmax, m.v2_len, m.v2_normalize_or
local v3_dot, v3_len, v3_normalize_or = m.v3_dot, m.v3_len, m.v3_normalize_or
local v2_unrotate, v3_add, v3_sub, v3_scale = m.v2_unrotate, m.v3_add, m.v3_sub, m.v3_scale
local turn_bone3 = chain.turn_bone3

local OK, ERR_NOT_FINITE, ERR_NEGATIVE, ERR_BEND = chain.OK, chain.ERR_NOT_FINITE, chain.ERR_NEGATIVE, chain.ERR_BEND

local M = {}

local function isfinite(v) return v - v == 0 end

-- Slack, in units of m, for targets on the ring's edges: rounding must not flip reached.
local RING_EPS = 1e-12

local function max4(a, b, c, d)
    local r = a > b and a or b
    r = r > c and r or c
    return r > d and r or d
end

-- -1: closer than |l1 - l2|, 0: reachable, 1: farther than l1 + l2 (scaled inputs).
local function ring_side(h, l1, l2)
    local outer, inner = l1 + l2, l1 - l2
    if h - outer * outer > RING_EPS then return 1 end
    if inner * inner - h > RING_EPS then return -1 end
    return 0
end

local function check_inputs(l1, l2, x, y, bend)
    if not isfinite(l1) or not isfinite(l2) or not isfinite(x) or not isfinite(y) then return ERR_NOT_FINITE end
    if l1 < 0 or l2 < 0 then return ERR_NEGATIVE end
    if bend ~= 1 and bend ~= -1 then return ERR_BEND end
    return OK
end

-- The status, a1, a2, reached.
function M.two_bone(l1, l2, x, y, bend)
    local st = check_inputs(l1, l2, x, y, bend)
    if st ~= OK then return st end

    local mx = max4(l1, l2, abs(x), abs(y))
    if mx == 0 then return OK, 0.0, 0.0, true end -- everything at the origin: reached, straight
    l1, l2, x, y = l1 / mx, l2 / mx, x / mx, y / mx
    local h = x * x + y * y
    local reached = ring_side(h, l1, l2) == 0

    local a2, cos2, sin2
    if 2 * l1 * l2 > 0 then
        cos2 = clamp((h - l1 * l1 - l2 * l2) / (2 * l1 * l2), -1.0, 1.0)
        a2 = bend * acos(cos2)
        sin2 = sin(a2)
    else
        -- A zero-length bone: any a2 serves; 0 keeps the chain straight (the article).
        a2, cos2, sin2 = 0.0, 1.0, 0.0
    end
    local adjacent = l1 + l2 * cos2
    local opposite = l2 * sin2
    local tan_y = y * adjacent - x * opposite
    local tan_x = x * adjacent + y * opposite
    -- atan2(+-0, +-0) may be +-pi depending on zero signs; the vector form uses +x.
    local a1 = 0.0
    if not (tan_x == 0 and tan_y == 0) then a1 = atan2(tan_y, tan_x) end
    return OK, a1, a2, reached
end

-- The status, jx, jy, reached.
local function two_bone_joint(x, y, r1, r2, bend)
    local st = check_inputs(r1, r2, x, y, bend)
    if st ~= OK then return st end

    local mx = max4(r1, r2, abs(x), abs(y))
    if mx == 0 then return OK, 0.0, 0.0, true end
    r1, r2 = r1 / mx, r2 / mx
    local px, py = x / mx, y / mx
    local h = px * px + py * py
    local side = ring_side(h, r1, r2)

    -- p is divided by |p| and never by h (see the C).
    local w = h + r1 * r1 - r2 * r2
    local len = v2_len(px, py)
    local ux, uy = v2_normalize_or(px, py, 1.0, 0.0)
    local jx, jy
    if len == 0 then
        -- Target on the root: the angle form's a1 = 0, so the joint is on +x.
        jx, jy = r1, 0.0
    elseif side ~= 0 or r1 == 0 or r2 == 0 then
        -- Out of reach, or a zero-length bone: straight along p, or folded back (-p) when
        -- the second bone is the longer one. The joint stays at distance r1.
        local s = w < 0 and -r1 or r1
        jx, jy = ux * s, uy * s
    else
        -- j.p = w / 2 fixes the part along p; |j| = r1 gives the part across (clamped).
        local along = clamp(w / (2 * len), -r1, r1)
        local across = r1 * r1 - along * along
        across = across > 0 and sqrt(across) or 0.0
        -- bend 1 (a2 >= 0) puts the joint clockwise of the root->target line.
        local s = bend * across
        jx, jy = ux * along - -uy * s, uy * along - ux * s
    end
    return OK, jx * mx, jy * mx, side == 0
end
M.two_bone_joint = two_bone_joint

-- The status, jx, jy, jz, reached.
local function two_bone_joint3(tx, ty, tz, r1, r2, qx, qy, qz)
    if not (isfinite(tx) and isfinite(qx) and isfinite(ty) and isfinite(qy) and isfinite(tz) and isfinite(qz)) then
        return ERR_NOT_FINITE
    end
    if not isfinite(r1) or not isfinite(r2) then return ERR_NOT_FINITE end
    if r1 < 0 or r2 < 0 then return ERR_NEGATIVE end

    local mx = max4(r1, r2, fmax(abs(tx), abs(ty)), abs(tz))
    if mx == 0 then return OK, 0.0, 0.0, 0.0, true end
    -- In units of m: by one division where 1 / m is exact to rounding, else by three.
    local px, py, pz
    if mx > 1e-300 and mx < 1e300 then
        local inv = 1 / mx
        r1, r2 = r1 * inv, r2 * inv
        px, py, pz = tx * inv, ty * inv, tz * inv
    else
        r1, r2 = r1 / mx, r2 / mx
        px, py, pz = tx / mx, ty / mx, tz / mx
    end
    local h = v3_dot(px, py, pz, px, py, pz)
    local side = ring_side(h, r1, r2)

    -- The bend direction: the pole made perpendicular to the root->target axis, with the
    -- C's fallbacks (+y, then +z) when that leaves nothing.
    local ax, ay, az = v3_normalize_or(px, py, pz, 0.0, 0.0, 0.0)
    local bx, by, bz = qx, qy, qz
    -- A pole of unit length already (a chain's, stored normalised) is taken as it is.
    if not (abs(v3_dot(bx, by, bz, bx, by, bz) - 1) < 1e-12) then bx, by, bz = v3_normalize_or(bx, by, bz, 0.0, 0.0, 0.0) end
    local k = v3_dot(bx, by, bz, ax, ay, az)
    bx, by, bz = bx - ax * k, by - ay * k, bz - az * k
    local across = v3_dot(bx, by, bz, bx, by, bz)
    if across > 0.01 then
        local s = 1 / sqrt(across)
        bx, by, bz = bx * s, by * s, bz * s
    else
        if not (v3_len(bx, by, bz) > 1e-12) then
            bx, by, bz = 0.0 - ax * ay, 1.0 - ay * ay, 0.0 - az * ay
            if not (v3_len(bx, by, bz) > 1e-12) then bx, by, bz = 0.0 - ax * az, 0.0 - ay * az, 1.0 - az * az end
        end
        bx, by, bz = v3_normalize_or(bx, by, bz, 0.0, 1.0, 0.0)
        -- Made perpendicular once more (a pole nearly along the axis cancels above).
        k = v3_dot(bx, by, bz, ax, ay, az)
        bx, by, bz = v3_normalize_or(bx - ax * k, by - ay * k, bz - az * k, bx, by, bz)
    end

    -- |p| as p.axis: not sqrt(h), which is 0 for |p| below 1e-162 (as in 2D).
    local len = v3_dot(px, py, pz, ax, ay, az)
    local w = h + r1 * r1 - r2 * r2
    local jx, jy, jz
    if len == 0 then
        jx, jy, jz = bx * r1, by * r1, bz * r1
    elseif side ~= 0 or r1 == 0 or r2 == 0 then
        -- Out of reach or a zero-length bone: straight along p, or folded back (as 2D).
        local s = w < 0 and -r1 or r1
        jx, jy, jz = ax * s, ay * s, az * s
    else
        local along = clamp(w / (2 * len), -r1, r1)
        across = r1 * r1 - along * along
        across = across > 0 and sqrt(across) or 0.0
        jx, jy, jz = ax * along + bx * across, ay * along + by * across, az * along + bz * across
    end
    return OK, jx * mx, jy * mx, jz * mx, side == 0
end
M.two_bone_joint3 = two_bone_joint3

function M.two_bone_middle(l1, l2, x, y, bend) return two_bone_joint(x, y, l1, l2, bend) end

function M.two_bone_middle3(l1, l2, tx, ty, tz, px, py, pz)
    return two_bone_joint3(tx, ty, tz, l1, l2, px, py, pz)
end

-- 2D chain: the target in the base frame, the angle form's a1 and a2 as the local angles.
local function two_bone_chain2d(c, tx, ty)
    local lx, ly = v2_unrotate(tx - c.base_x, ty - c.base_y, c.base_turn_x, c.base_turn_y)
    -- Only a target so far from the base that the difference overflows fails here.
    local st, a1, a2 = M.two_bone(c.length[0], c.length[1], lx, ly, c.settings.bend)
    if st == OK then
        chain.chain_set_turn_angle(c, 0, a1)
        chain.chain_set_turn_angle(c, 1, a2)
        chain.chain_mark_stale(c, 0)
        chain.chain_fk(c)
    end
end

-- 3D chain: the vector form gives the middle joint (whether it could, and its offset j from
-- the base), bending towards the pole, or, with no pole, in the plane the chain bends in
-- now (the middle joint's current offset). Only a target so far from the base that the
-- difference overflows fails.
local function middle_offset3(c, bx, by, bz, tx, ty, tz)
    local s, px, py, pz = c.settings
    if s.use_pole then
        px, py, pz = s.pole_x, s.pole_y, s.pole_z
    else
        local p = c.joint
        px, py, pz = v3_sub(p[3], p[4], p[5], bx, by, bz)
    end
    local tx2, ty2, tz2 = v3_sub(tx, ty, tz, bx, by, bz)
    local st, jx, jy, jz = two_bone_joint3(tx2, ty2, tz2, c.length[0], c.length[1], px, py, pz)
    if st ~= OK then return false end
    return true, jx, jy, jz
end

-- The bones turn onto the middle joint and the (closest) tip by their smallest rotations,
-- keeping twist.
local function two_bone_chain3d(c, tx, ty, tz)
    local p, d, q = c.work, c.dir, c.joint
    local bx, by, bz = q[0], q[1], q[2]
    local ok, jx, jy, jz = middle_offset3(c, bx, by, bz, tx, ty, tz)
    if not ok then return end
    local mx, my, mz = v3_add(bx, by, bz, jx, jy, jz)
    local ux, uy, uz = v3_sub(tx, ty, tz, mx, my, mz)
    ux, uy, uz = v3_normalize_or(ux, uy, uz, d[3], d[4], d[5])
    p[0], p[1], p[2] = bx, by, bz
    p[3], p[4], p[5] = mx, my, mz
    p[6], p[7], p[8] = v3_add(mx, my, mz, v3_scale(ux, uy, uz, c.length[1]))
    limits.pose_points(c, p, 0, 2)
    chain.chain_fk(c)
end

-- The lean solve: the middle joint as above; bone 0 turned onto it and bone 1 onto the
-- target (or the closest point), each by turn_bone3, which writes the local rotation and
-- the world data at once. Fills out; true: it moved the chain.
function M.two_bone_lean3(c, ax, ay, az, out)
    local p, d = c.joint, c.dir
    local l0 = c.length[0]
    out.iterations = 1
    local ok, jx, jy, jz = middle_offset3(c, p[0], p[1], p[2], ax, ay, az)
    if ok then
        local mx, my, mz = v3_add(p[0], p[1], p[2], jx, jy, jz)
        -- |j| is l0 to rounding: j / l0 is bone 0's direction, unit enough for turn_bone3.
        -- A bone of length 0 keeps its world rotation, as pose_points keeps it for a
        -- segment with no direction.
        if l0 > 1e-300 then
            turn_bone3(c, 0, v3_scale(jx, jy, jz, 1 / l0))
        elseif l0 > 0 then
            turn_bone3(c, 0, v3_normalize_or(jx, jy, jz, d[0], d[1], d[2]))
        else
            turn_bone3(c, 0, d[0], d[1], d[2])
        end
        if c.length[1] > 0 then
            local ux, uy, uz = v3_sub(ax, ay, az, mx, my, mz)
            turn_bone3(c, 1, v3_normalize_or(ux, uy, uz, d[3], d[4], d[5]))
        else
            turn_bone3(c, 1, d[3], d[4], d[5])
        end
    end
    out.distance = v3_len(p[6] - c.target_x, p[7] - c.target_y, p[8] - c.target_z)
    out.angle_error = 0.0
    out.reached = out.distance <= c.settings.tolerance
    return true
end

-- Bones 0 and 1 towards the target; the iterations (1).
function M.two_bone_chain(c, tx, ty, tz)
    if c.dim == 2 then two_bone_chain2d(c, tx, ty) else two_bone_chain3d(c, tx, ty, tz) end
    return 1
end

return M
