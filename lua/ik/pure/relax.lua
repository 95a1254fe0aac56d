-- ik.pure.relax: src/relax.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's conventions): constraint relaxation on the points b[0..m-1] (the chain's
-- work array), mapped onto bones of exact length after each pass, within limits; the
-- escape and the joint-space steps where the C takes them. See src/relax.c for the method
-- and why. Points are read and written as 3D (z = 0 on a 2D chain), as the C's load and
-- store do. The progress of a solve is a table made once here (a solve is never nested).

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local escape = require("ik.pure.escape")
local fabrik = require("ik.pure.fabrik")
local joint_space = require("ik.pure.joint_space")

local v3_add, v3_sub, v3_scale, v3_dot, v3_len, v3_normalize_or =
    m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot, m.v3_len, m.v3_normalize_or
local joint_v3, dir_v3, joint_distance = chain.joint_v3, chain.dir_v3, chain.joint_distance
local iteration_budget = chain.iteration_budget
local progress_start, progress_next = escape.progress_start, escape.progress_next
local GO_ON, STOP, CRAWL = escape.GO_ON, escape.STOP, escape.CRAWL

local M = {}

local function load(c, points, i)
    if c.dim == 3 then return points[3 * i], points[3 * i + 1], points[3 * i + 2] end
    return points[2 * i], points[2 * i + 1], 0.0
end

local function store(c, points, i, x, y, z)
    local k = c.dim * i
    points[k], points[k + 1] = x, y
    if c.dim == 3 then points[k + 2] = z end
end

-- Joints 0..m-1 of the chain into b.
local function copy_joints(c, b, m_)
    local p = c.joint
    for k = 0, m_ * c.dim - 1 do b[k] = p[k] end
end

-- Maps the relaxed points b[0..m-1] to exact-length bones into out[0..m] (may be b). A
-- segment with no direction keeps its bone's direction, as pose_points does.
local function map_points(c, b, tx, ty, tz, m_, out)
    local jx, jy, jz = load(c, b, 0)
    local rx, ry, rz = jx, jy, jz
    local length = c.length
    store(c, out, 0, jx, jy, jz)
    for i = 0, m_ - 2 do
        local bx, by, bz = load(c, b, i + 1)
        local ux, uy, uz = v3_normalize_or(bx - rx, by - ry, bz - rz, dir_v3(c, i))
        rx, ry, rz = bx, by, bz
        jx, jy, jz = v3_add(jx, jy, jz, v3_scale(ux, uy, uz, length[i]))
        store(c, out, i + 1, jx, jy, jz)
    end
    local ux, uy, uz = v3_normalize_or(tx - jx, ty - jy, tz - jz, dir_v3(c, m_ - 1))
    store(c, out, m_, v3_add(jx, jy, jz, v3_scale(ux, uy, uz, length[m_ - 1])))
end

-- The mapped points become the chain's joints: as they are (pose_behind) without limits;
-- posed within the limits with them, and b then the joints of that pose.
local function take_points(c, b, tx, ty, tz, m_)
    if c.limited == 0 then
        map_points(c, b, tx, ty, tz, m_, c.joint)
        c.pose_behind = true
        return
    end
    map_points(c, b, tx, ty, tz, m_, b)
    limits.pose_points(c, b, 0, m_)
    copy_joints(c, b, m_)
end

-- One relaxation pass over the points (see src/relax.c).
local function relax_pass(c, b, tx, ty, tz, m_)
    local len, weight = c.length, c.weight
    local px, py, pz = load(c, b, m_ - 1)
    local ux, uy, uz = v3_normalize_or(tx - px, ty - py, tz - pz, 0.0, 0.0, 0.0)
    store(c, b, m_ - 1, v3_sub(tx, ty, tz, v3_scale(ux, uy, uz, len[m_ - 1])))

    for i = m_ - 2, 1, -1 do
        -- Each end moves by its weight's share of the fix; only the ratio matters (see C).
        local larger = weight[i] > weight[i + 1] and weight[i] or weight[i + 1]
        local ix, iy, iz = load(c, b, i)
        local nx, ny, nz = load(c, b, i + 1)
        local vx, vy, vz = nx - ix, ny - iy, nz - iz
        ux, uy, uz = v3_normalize_or(vx, vy, vz, 0.0, 0.0, 0.0)
        if (ux ~= 0 or uy ~= 0 or uz ~= 0) and larger > 0 then
            local share, share_next = weight[i] / larger, weight[i + 1] / larger
            local total = share + share_next
            -- u * (l - d) moves the ends apart (or together) to distance l.
            local fx, fy, fz = v3_scale(ux, uy, uz, len[i] - v3_len(vx, vy, vz))
            ix, iy, iz = v3_sub(ix, iy, iz, v3_scale(fx, fy, fz, share / total))
            nx, ny, nz = v3_add(nx, ny, nz, v3_scale(fx, fy, fz, share_next / total))
            store(c, b, i, ix, iy, iz)
            store(c, b, i + 1, nx, ny, nz)
        end
        -- Limits: turn b[i] about b[i + 1] so bone i keeps within its child's limit.
        if c.limited ~= 0 and weight[i] > 0 and len[i + 1] > 0 then
            local ax, ay, az = tx, ty, tz
            if i + 2 < m_ then ax, ay, az = load(c, b, i + 2) end
            local cx, cy, cz = v3_normalize_or(ax - nx, ay - ny, az - nz, 0.0, 0.0, 0.0)
            local dx, dy, dz = v3_normalize_or(nx - ix, ny - iy, nz - iz, 0.0, 0.0, 0.0)
            if v3_dot(cx, cy, cz, cx, cy, cz) > 0 and v3_dot(dx, dy, dz, dx, dy, dz) > 0 then
                dx, dy, dz = limits.limit_backward(c, i, dx, dy, dz, cx, cy, cz)
                store(c, b, i, v3_sub(nx, ny, nz, v3_scale(dx, dy, dz, v3_len(nx - ix, ny - iy, nz - iz))))
            end
        end
    end

    local ax, ay, az = load(c, b, 0)
    local bx, by, bz = load(c, b, 1)
    ux, uy, uz = v3_normalize_or(bx - ax, by - ay, bz - az, 0.0, 0.0, 0.0)
    if ux ~= 0 or uy ~= 0 or uz ~= 0 then store(c, b, 1, v3_add(ax, ay, az, v3_scale(ux, uy, uz, len[0]))) end
end

local the_progress = {}

local function relax_run(c, tx, ty, tz, m_, iter)
    local s = c.settings
    local b = c.work
    local pinned, budget = 0, iteration_budget(s.iterations)

    -- No bone before the tip bone (a 1-bone chain with an orientation goal): nothing to
    -- relax, the tip bone takes its goal afterwards (solve.lua).
    if m_ == 0 or joint_distance(c, m_, tx, ty, tz) <= s.tolerance or iter >= budget then return iter end
    -- A weight of 0 pins an interior joint: the escape bends only the bones after it.
    for i = 1, m_ - 1 do
        if c.weight[i] == 0 then pinned = i end
    end
    if c.limited == 0 and pinned == 0 then
        local jx, jy, jz = joint_v3(c, 0)
        if v3_len(tx - jx, ty - jy, tz - jz) >= (chain.chain_reach_to(c, m_)) - s.tolerance then
            fabrik.fabrik_straighten(c, tx, ty, tz, m_)
            return iter + 1
        end
    end
    copy_joints(c, b, m_)
    local progress = progress_start(the_progress, c, tx, ty, tz, m_)
    -- A single bone has no constraint to relax: the mapping points it at the target.
    if m_ == 1 then
        take_points(c, b, tx, ty, tz, m_)
        return iter
    end
    while true do
        relax_pass(c, b, tx, ty, tz, m_)
        take_points(c, b, tx, ty, tz, m_)
        iter = iter + 1
        local distance = joint_distance(c, m_, tx, ty, tz)
        if distance <= s.tolerance or iter >= budget then break end
        local next = progress_next(c, progress, distance)
        if next == STOP then return iter end
        if next == CRAWL then
            -- Creeping without limits: joint-space steps, the pinned joints kept, then
            -- passes again if they leave anything.
            iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, pinned, true)
            if joint_distance(c, m_, tx, ty, tz) <= s.tolerance or iter >= budget then return iter end
            copy_joints(c, b, m_)
        elseif next ~= GO_ON then -- a kick
            chain.chain_settle(c)
            if c.limited ~= 0 then
                -- Joint-space steps first; what they leave, the CCD sweeps.
                iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, pinned, true)
                return iter + escape.escape_finish(c, tx, ty, tz, m_, budget - iter, pinned)
            end
            escape.escape_kick(c, tx, ty, tz, progress, pinned)
            copy_joints(c, b, m_)
        end
    end
    return iter
end

-- The iterations.
function M.relax(c, tx, ty, tz, m_)
    local iter, pinned = 0, 0
    for i = 1, m_ - 1 do
        if c.weight[i] == 0 then pinned = i end
    end
    -- Tracking a goal with limits: joint-space steps first, the pinned joints kept.
    local met, used = joint_space.joint_track(c, tx, ty, tz, m_, pinned, true)
    iter = used
    if met then return iter end
    iter = relax_run(c, tx, ty, tz, m_, iter)
    -- The point behind an oriented tip bone reached: its parent turned so the tip bone's
    -- limit lets it take its goal, the pinned joints kept.
    local budget = iteration_budget(c.settings.iterations)
    if c.limited ~= 0 and joint_space.limits_oriented(c, m_) and iter < budget then
        iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, pinned, true)
    end
    return iter
end

return M
