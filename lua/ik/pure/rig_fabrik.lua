-- ik.pure.rig_fabrik: src/rig_fabrik.c in plain Lua, in the same order and with the same
-- arithmetic (rig_tree.lua's conventions): FABRIK on a rig (Aristidou and Lasenby 2011,
-- section 5.2, multiple end effectors), and the merge at sub-bases that relaxation shares.
-- See src/rig_fabrik.c for the why of each step and the measurements.
-- The single chain's passes are fabrik.lua's (ik_fabrik_forward, ik_fabrik_backward,
-- ik_fabrik_straighten), the end of a backward pass given as three numbers.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local two_bone = require("ik.pure.two_bone")
local fabrik = require("ik.pure.fabrik")
local tree = require("ik.pure.rig_tree")

local v3_add, v3_sub, v3_scale, v3_len = m.v3_add, m.v3_sub, m.v3_scale, m.v3_len
local v3_tame, v3_normalize_or = m.v3_tame, m.v3_normalize_or
local joint_at, set_joint, pulls = tree.joint_at, tree.set_joint, tree.pulls
local kid_range, is_limb = tree.kid_range, tree.is_limb
local dir_v3 = chain.dir_v3
local SOLVER_FABRIK = chain.SOLVER_FABRIK
local LIMB_PASSES = tree.LIMB_PASSES
local OK = chain.OK

local M = {}

-- Whether FABRIK leaves child kid, hanging on sub-base s, out of the centroid there (see
-- rig_fabrik.c).
local function content(rig, kid, sx, sy, sz)
    local margin = rig.settings.tolerance + kid.reach / 200
    if rig.settings.solver ~= SOLVER_FABRIK or kid.chain.limited ~= 0 then return false end
    if not is_limb(kid) then return false end
    local d = v3_len(v3_sub(kid.goal_x, kid.goal_y, kid.goal_z, sx, sy, sz))
    return d <= kid.reach - margin and d >= kid.inner + margin
end

-- rig_merge's ASK: the request of point a, weighed w (in units of most), added to the sum,
-- the plain sum and the count.
local function ask(sx, sy, sz, px, py, pz, weight, n, ax, ay, az, w, most)
    local w_ = w / most
    sx, sy, sz = v3_add(sx, sy, sz, v3_scale(ax, ay, az, w_))
    px, py, pz = v3_add(px, py, pz, ax, ay, az)
    return sx, sy, sz, px, py, pz, weight + w_, n + 1
end

-- Joint j of node nd to the weighted centroid of what asks for it (see rig_fabrik.c);
-- before: the joints before the backward pass (node nd's relaxed, 3 numbers a joint), or
-- nil.
local function rig_merge(rig, nd, j, continues, before)
    local c = nd.chain
    local kid = rig.kid
    local sx, sy, sz, px, py, pz, ox, oy, oz = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    local weight, n = 0.0, 0
    local most = continues and nd.beyond[j] or 0.0
    -- The weights in units of the largest asking here, so their sum is at least 1.
    if nd.end_ == j and nd.weight > most then most = nd.weight end
    local from, to = kid_range(nd, j)
    for k = from, to - 1 do
        local kd = kid[k]
        if pulls(rig, nd, kd) and rig.node[kd].subtree > most then most = rig.node[kd].subtree end
    end
    if not (most > 0) then most = 1.0 end
    if continues then
        ox, oy, oz = joint_at(c, j)
        sx, sy, sz, px, py, pz, weight, n = ask(sx, sy, sz, px, py, pz, weight, n, ox, oy, oz, nd.beyond[j], most)
    end
    if nd.end_ == j then
        ox, oy, oz = nd.goal_x, nd.goal_y, nd.goal_z
        sx, sy, sz, px, py, pz, weight, n = ask(sx, sy, sz, px, py, pz, weight, n, ox, oy, oz, nd.weight, most)
    end
    for k = from, to - 1 do
        local child = rig.node[kid[k]]
        if pulls(rig, nd, kid[k])
            and not (before and content(rig, child, before[3 * j], before[3 * j + 1], before[3 * j + 2])) then
            ox, oy, oz = joint_at(child.chain, 0)
            sx, sy, sz, px, py, pz, weight, n = ask(sx, sy, sz, px, py, pz, weight, n, ox, oy, oz, child.subtree, most)
        end
    end
    if n == 1 then
        set_joint(c, j, ox, oy, oz)
    elseif n > 1 then
        local cx, cy, cz
        if weight > 0 then
            cx, cy, cz = v3_scale(sx, sy, sz, 1 / weight)
        else
            cx, cy, cz = v3_scale(px, py, pz, 1.0 / n)
        end
        if before then
            local bx, by, bz = before[3 * j], before[3 * j + 1], before[3 * j + 2]
            local dx, dy, dz = v3_sub(cx, cy, cz, bx, by, bz)
            cx, cy, cz = v3_add(bx, by, bz, v3_scale(dx, dy, dz, rig.omega))
        end
        set_joint(c, j, cx, cy, cz)
    end
end
M.rig_merge = rig_merge
tree.rig_merge = rig_merge

-- The next joint below hi (>= 1) where something joins node nd (its goal, or a child), or 0.
local function next_event(rig, nd, hi)
    local kid, node = rig.kid, rig.node
    local at = nd.end_ < hi and nd.end_ or -1
    for k = nd.first + nd.above[hi - 1], nd.first + nd.kids - 1 do
        local kd = kid[k]
        local j = node[kd].parent_joint
        if j <= at then break end
        if pulls(rig, nd, kd) then
            at = j
            break
        end
    end
    return at > 0 and at or 0
end

-- A limb of two bones without limits placed exactly from where it hangs (see rig_fabrik.c).
-- Returns false for anything else.
local function two_bone_limb(nd)
    local c = nd.chain
    local bx, by, bz = joint_at(c, 0)
    local tx, ty, tz = v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, bx, by, bz)
    local st, jx, jy, jz
    if nd.kids ~= 0 or nd.end_ ~= 2 or nd.top ~= 2 or c.limited ~= 0 then return false end
    local x1, y1, z1 = joint_at(c, 1)
    local nx, ny, nz = v3_sub(x1, y1, z1, bx, by, bz)
    if c.dim == 2 then
        -- tamed (scaled exactly) so the cross product cannot overflow to inf - inf
        nx, ny, nz = v3_tame(nx, ny, nz)
        local lx, ly = v3_tame(tx, ty, tz)
        local bend = lx * ny - ly * nx > 0 and -1 or 1 -- 1: clockwise of the line
        st, jx, jy = two_bone.two_bone_joint(tx, ty, c.length[0], c.length[1], bend)
        if st ~= OK then return false end
        jz = 0.0
    else
        st, jx, jy, jz = two_bone.two_bone_joint3(tx, ty, tz, c.length[0], c.length[1], nx, ny, nz)
        if st ~= OK then return false end
    end
    local mx, my, mz = v3_add(bx, by, bz, jx, jy, jz)
    local dx, dy, dz = v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, mx, my, mz)
    local fx, fy, fz = dir_v3(c, 1)
    dx, dy, dz = v3_normalize_or(dx, dy, dz, fx, fy, fz)
    local px, py, pz = v3_add(mx, my, mz, v3_scale(dx, dy, dz, c.length[1]))
    set_joint(c, 1, mx, my, mz)
    set_joint(c, 2, px, py, pz)
    c.pose_behind = true
    return true
end

local function rig_limb_forward(rig, nd)
    local c = nd.chain
    local tolerance = rig.settings.tolerance
    local gx, gy, gz = nd.goal_x, nd.goal_y, nd.goal_z
    local x0, y0, z0 = joint_at(c, 0)
    if nd.end_ == 1 or v3_len(v3_sub(gx, gy, gz, x0, y0, z0)) >= nd.reach - tolerance then
        fabrik.fabrik_straighten(c, gx, gy, gz, nd.end_)
        return
    end
    if two_bone_limb(nd) then return end
    fabrik.fabrik_forward(c, 0, nd.end_)
    for _ = 1, LIMB_PASSES - 1 do
        local bx, by, bz = joint_at(c, 0)
        local ex, ey, ez = joint_at(c, nd.end_)
        if v3_len(v3_sub(gx, gy, gz, ex, ey, ez)) <= tolerance then break end
        fabrik.fabrik_backward(c, 0, nd.end_, gx, gy, gz)
        set_joint(c, 0, bx, by, bz)
        fabrik.fabrik_forward(c, 0, nd.end_)
    end
end
M.rig_limb_forward = rig_limb_forward
tree.rig_limb_forward = rig_limb_forward

-- ---- FABRIK ----

local function fabrik_backward(rig)
    for o = rig.count - 1, 0, -1 do
        local nd = rig.node[rig.order[o]]
        local c = nd.chain
        local hi = nd.top
        if hi >= 0 then
            local relaxed = nd.relaxed
            for lo = 0, c.n do relaxed[3 * lo], relaxed[3 * lo + 1], relaxed[3 * lo + 2] = joint_at(c, lo) end
            rig_merge(rig, nd, hi, false, relaxed)
            while hi > 0 do
                local ax, ay, az = joint_at(c, hi)
                local lo = next_event(rig, nd, hi)
                fabrik.fabrik_backward(c, lo, hi, ax, ay, az)
                rig_merge(rig, nd, lo, true, relaxed)
                hi = lo
            end
        end
    end
end

local function fabrik_forward(rig)
    for o = 0, rig.count - 1 do
        local nd = rig.node[rig.order[o]]
        local c = nd.chain
        local hi = nd.top < nd.last and nd.top or nd.last
        if nd.top >= 0 then
            if nd.parent >= 0 then chain.chain_take_base(c) else set_joint(c, 0, c.base_x, c.base_y, c.base_z) end
            if nd.kids == 0 and nd.end_ >= 1 and nd.end_ == nd.top then
                rig_limb_forward(rig, nd)
            else
                fabrik.fabrik_forward(c, 0, hi)
            end
            tree.rig_place_tip(nd)
        end
    end
end

function M.rig_fabrik_iteration(rig)
    fabrik_backward(rig)
    fabrik_forward(rig)
end

-- The over-relaxation at sub-bases after an iteration (see rig_merge).
function M.rig_fabrik_omega(omega, before, distance)
    if distance > before then return omega / 2 > 1 and omega / 2 or 1.0 end
    if distance > 0.9 * before then return omega * 1.2 < 4 and omega * 1.2 or 4.0 end
    return omega
end

return M
