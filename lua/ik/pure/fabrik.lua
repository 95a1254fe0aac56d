-- ik.pure.fabrik: src/fabrik.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's conventions): FABRIK's passes on the joints (2D without z), within limits,
-- the straight answer to a goal out of reach, and one solve in progress (ik_fab: start,
-- next, kick, finish) with the escape and the joint-space steps where the C takes them.
-- See src/fabrik.c for the algorithm and why each step is written as it is.
--
-- A solve in progress is a table with the fields of struct ik_fab (target and end as
-- target_x, target_y, target_z: the C's end holds the same numbers), made once here: a
-- solve is never nested, so a solve makes no garbage. Not ported: the batch (batch.c),
-- whose every chain ends bit for bit as its own solve leaves it (src/chain.h), so
-- solve.lua's ik_solve_many solves chain by chain instead.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local escape = require("ik.pure.escape")
local joint_space = require("ik.pure.joint_space")

local sqrt = math.sqrt
local v2_len, v2_normalize_or = m.v2_len, m.v2_normalize_or
local v3_sub, v3_scale, v3_len, v3_normalize_or = m.v3_sub, m.v3_scale, m.v3_len, m.v3_normalize_or
local joint_v3, dir_v3, joint_distance = chain.joint_v3, chain.dir_v3, chain.joint_distance
local chain_settle, iteration_budget = chain.chain_settle, chain.iteration_budget
local pose_bone, pose_points, limit_backward = limits.pose_bone, limits.pose_points, limits.limit_backward
local progress_from, progress_next = escape.progress_from, escape.progress_next
local GO_ON, KICK, STOP, CRAWL = escape.GO_ON, escape.KICK, escape.STOP, escape.CRAWL

local NAN = 0 / 0

local M = {}

-- What ik_fab_next says.
M.FAB_DONE, M.FAB_GO_ON, M.FAB_KICK = 0, 1, 2
local FAB_DONE, FAB_GO_ON, FAB_KICK = M.FAB_DONE, M.FAB_GO_ON, M.FAB_KICK

-- ---- FABRIK's step (chain.h) ----

-- w scaled to len, or the fallback (dir[k], dir[k + 1]) scaled to it when w has none: the
-- fast path only where no product overflows or underflows (ik_fab_fast), else normalised
-- first (ik_fab_step2_slow).
local function fab_step2(wx, wy, len, dir, k)
    local d = wx * wx + wy * wy
    if d > 1e-300 and d < 1e300 then
        local q = len / d
        if q >= 1e-150 and q <= 1e300 then
            local s = sqrt(d)
            return wx * q * s, wy * q * s
        end
    end
    local x, y = v2_normalize_or(wx, wy, dir[k], dir[k + 1])
    return x * len, y * len
end

local function fab_step3(wx, wy, wz, len, dir, k)
    local d = wx * wx + wy * wy + wz * wz
    if d > 1e-300 and d < 1e300 then
        local q = len / d
        if q >= 1e-150 and q <= 1e300 then
            local s = sqrt(d)
            return wx * q * s, wy * q * s, wz * q * s
        end
    end
    local x, y, z = v3_normalize_or(wx, wy, wz, dir[k], dir[k + 1], dir[k + 2])
    return x * len, y * len, z * len
end

-- ---- the passes without limits ----

-- Backward over bones hi-1..lo, joint hi already placed; forward over bones lo..hi-1 from
-- joint lo. The same in both dimensions, but 2D carries no z.
-- In the 2D passes fab_step2's fast path is written out, calling it only where that path
-- does not hold (speed: under PUC Lua the call and its two results cost about as much as
-- the step itself; the same operations in the same order).
local function backward2(joint, length, dir, lo, hi)
    -- The bounds in registers (speed: PUC Lua loads a float constant before each comparison).
    local tiny, small, huge = 1e-300, 1e-150, 1e300
    local nx, ny = joint[2 * hi], joint[2 * hi + 1]
    for i = hi - 1, lo, -1 do
        local k = 2 * i
        local wx, wy, len = nx - joint[k], ny - joint[k + 1], length[i]
        local d = wx * wx + wy * wy
        local q = len / d
        if not (d > tiny and d < huge and q >= small and q <= huge) then
            local sx, sy = fab_step2(wx, wy, len, dir, k)
            nx = nx - sx
            ny = ny - sy
        else
            local s = sqrt(d)
            nx = nx - wx * q * s
            ny = ny - wy * q * s
        end
        joint[k] = nx
        joint[k + 1] = ny
    end
end

local function forward2(joint, length, dir, lo, hi)
    -- The bounds in registers (speed: PUC Lua loads a float constant before each comparison).
    local tiny, small, huge = 1e-300, 1e-150, 1e300
    local fx, fy = joint[2 * lo], joint[2 * lo + 1]
    for i = lo, hi - 1 do
        local k = 2 * i + 2
        local wx, wy, len = joint[k] - fx, joint[k + 1] - fy, length[i]
        local d = wx * wx + wy * wy
        local q = len / d
        if not (d > tiny and d < huge and q >= small and q <= huge) then
            local sx, sy = fab_step2(wx, wy, len, dir, 2 * i)
            fx = fx + sx
            fy = fy + sy
        else
            local s = sqrt(d)
            fx = fx + wx * q * s
            fy = fy + wy * q * s
        end
        joint[k] = fx
        joint[k + 1] = fy
    end
end

local function backward3(joint, length, dir, lo, hi)
    local nx, ny, nz = joint[3 * hi], joint[3 * hi + 1], joint[3 * hi + 2]
    for i = hi - 1, lo, -1 do
        local k = 3 * i
        local sx, sy, sz = fab_step3(nx - joint[k], ny - joint[k + 1], nz - joint[k + 2], length[i], dir, k)
        nx, ny, nz = nx - sx, ny - sy, nz - sz
        joint[k], joint[k + 1], joint[k + 2] = nx, ny, nz
    end
end

local function forward3(joint, length, dir, lo, hi)
    local fx, fy, fz = joint[3 * lo], joint[3 * lo + 1], joint[3 * lo + 2]
    for i = lo, hi - 1 do
        local k = 3 * i + 3
        local sx, sy, sz = fab_step3(joint[k] - fx, joint[k + 1] - fy, joint[k + 2] - fz, length[i], dir, 3 * i)
        fx, fy, fz = fx + sx, fy + sy, fz + sz
        joint[k], joint[k + 1], joint[k + 2] = fx, fy, fz
    end
end

local function backward_limited(c, lo, hi)
    local cx, cy, cz = 0.0, 0.0, 0.0
    local p, dim, length = c.joint, c.dim, c.length
    for i = hi - 1, lo, -1 do
        local nx, ny, nz = joint_v3(c, i + 1)
        local jx, jy, jz = joint_v3(c, i)
        local dx, dy, dz = v3_normalize_or(nx - jx, ny - jy, nz - jz, dir_v3(c, i))
        if i + 1 < hi and length[i + 1] > 0 then dx, dy, dz = limit_backward(c, i, dx, dy, dz, cx, cy, cz) end
        nx, ny, nz = v3_sub(nx, ny, nz, v3_scale(dx, dy, dz, length[i]))
        local k = dim * i
        p[k], p[k + 1] = nx, ny
        if dim == 3 then p[k + 2] = nz end
        if length[i] > 0 then cx, cy, cz = dx, dy, dz end
    end
end

-- Backward over bones hi-1 down to lo with joint hi placed at ex, ey[, ez] first.
local function fabrik_backward(c, lo, hi, ex, ey, ez)
    local p, k = c.joint, c.dim * hi
    p[k], p[k + 1] = ex, ey
    if c.dim == 3 then p[k + 2] = ez end
    if c.limited ~= 0 then
        backward_limited(c, lo, hi)
        return
    end
    c.pose_behind = true -- the joints are the truth from now on
    if c.dim == 2 then backward2(c.joint, c.length, c.dir, lo, hi) else backward3(c.joint, c.length, c.dir, lo, hi) end
end
M.fabrik_backward = fabrik_backward

local function fabrik_forward(c, lo, hi)
    if c.limited ~= 0 then
        -- The forward pass within limits: each bone posed as it goes (pose_points).
        pose_points(c, c.joint, lo, hi)
        return
    end
    if c.dim == 2 then forward2(c.joint, c.length, c.dir, lo, hi) else forward3(c.joint, c.length, c.dir, lo, hi) end
end
M.fabrik_forward = fabrik_forward

-- Joint 0 back on the base, which the backward pass moved.
local function fabrik_put_base(c)
    local p = c.joint
    p[0], p[1] = c.base_x, c.base_y
    if c.dim == 3 then p[2] = c.base_z end
end
M.fabrik_put_base = fabrik_put_base

-- Bones 0..m-1 along the line from joint 0 to the target (within limits).
local function fabrik_straighten(c, tx, ty, tz, m_)
    local jx, jy, jz = joint_v3(c, 0)
    local ux, uy, uz = v3_normalize_or(tx - jx, ty - jy, tz - jz, dir_v3(c, 0))
    if c.limited ~= 0 then
        for i = 0, m_ - 1 do
            if c.length[i] > 0 then pose_bone(c, i, ux, uy, uz) else pose_bone(c, i, dir_v3(c, i)) end
        end
        chain.chain_mark_stale(c, m_)
        return
    end
    c.pose_behind = true
    local p, dim, length = c.joint, c.dim, c.length
    for i = 0, m_ - 1 do
        local k = dim * i
        p[k + dim], p[k + dim + 1] = p[k] + ux * length[i], p[k + 1] + uy * length[i]
        if dim == 3 then p[k + 5] = p[k + 2] + uz * length[i] end
    end
end
M.fabrik_straighten = fabrik_straighten

-- ---- one solve in progress ----

local function new_fab()
    return { c = nil, target_x = 0.0, target_y = 0.0, target_z = 0.0, distance = 0.0, m = 0, iter = 0,
        crawl = false, progress = {} }
end
M.new_fab = new_fab

-- The C's ik_fab_start: the iterations it is done with, or -1 when it is to iterate.
local function fab_start(f, c, tx, ty, tz, m_, distance)
    local s = c.settings
    if distance ~= distance then distance = joint_distance(c, m_, tx, ty, tz) end
    f.distance = distance
    if distance <= s.tolerance then return 0 end
    -- A goal tracked frame by frame: joint-space steps first (joint_space.lua).
    local met, used, left = joint_space.joint_track(c, tx, ty, tz, m_, 0, true)
    if met then
        f.distance = left
        return used
    end
    if used > 0 then -- they fell short: the passes go on from where they left the chain
        distance = joint_distance(c, m_, tx, ty, tz)
        f.distance = NAN
        if used >= iteration_budget(s.iterations) then return used end
    end
    local from_base
    local p = c.joint
    if c.dim == 2 then
        from_base = v2_len(tx - p[0], ty - p[1])
    else
        from_base = v3_len(tx - p[0], ty - p[1], tz - p[2])
    end
    -- Out of reach, or within tolerance of full reach (where FABRIK crawls): straight. One
    -- bone: its first iteration points it at the target, and every later one would repeat it.
    if m_ == 1 or from_base >= (chain.chain_reach_to(c, m_)) - s.tolerance then
        fabrik_straighten(c, tx, ty, tz, m_)
        f.distance = NAN
        return used + 1
    end
    f.c = c
    f.target_x, f.target_y, f.target_z = tx, ty, tz
    f.m = m_
    f.iter = used
    f.crawl = false
    progress_from(f.progress, c, m_, distance, from_base)
    return -1
end
M.fab_start = fab_start

local function fab_next(f, distance)
    local s = f.c.settings
    f.iter = f.iter + 1
    f.distance = distance
    if distance <= s.tolerance or f.iter >= iteration_budget(s.iterations) then return FAB_DONE end
    local next = progress_next(f.c, f.progress, distance)
    if next == GO_ON then return FAB_GO_ON end
    if next == STOP then return FAB_DONE end
    if next == CRAWL then f.crawl = true end
    return FAB_KICK
end
M.fab_next = fab_next

-- FAB_GO_ON or FAB_DONE (the C's 1 or 0).
local function fab_kick(f)
    local c = f.c
    local s = c.settings
    local tx, ty, tz = f.target_x, f.target_y, f.target_z
    if f.crawl then
        -- Creeping without limits: joint-space steps, then passes again if they leave
        -- anything.
        local budget = iteration_budget(s.iterations)
        f.crawl = false
        f.iter = f.iter + joint_space.joint_finish(c, tx, ty, tz, f.m, budget - f.iter, 0, true)
        f.distance = joint_distance(c, f.m, tx, ty, tz)
        if f.distance > s.tolerance and f.iter < budget then return FAB_GO_ON end
        return FAB_DONE
    end
    chain_settle(c)
    if c.limited ~= 0 then
        -- Joint-space steps first; what they leave, the CCD sweeps.
        local budget = iteration_budget(s.iterations)
        f.iter = f.iter + joint_space.joint_finish(c, tx, ty, tz, f.m, budget - f.iter, 0, true)
        f.iter = f.iter + escape.escape_finish(c, tx, ty, tz, f.m, budget - f.iter, 0)
        f.distance = NAN
        return FAB_DONE
    end
    escape.escape_kick(c, tx, ty, tz, f.progress, 0)
    return FAB_GO_ON
end
M.fab_kick = fab_kick

local function fab_finish(f)
    local c = f.c
    local m_, next = f.m, FAB_GO_ON
    local tx, ty, tz = f.target_x, f.target_y, f.target_z
    repeat
        local distance
        if c.limited ~= 0 then
            fabrik_backward(c, 0, m_, tx, ty, tz)
            fabrik_put_base(c)
            fabrik_forward(c, 0, m_)
            distance = joint_distance(c, m_, tx, ty, tz)
        elseif c.dim == 2 then -- the passes themselves: a short chain feels every call
            local p = c.joint
            c.pose_behind = true
            p[2 * m_], p[2 * m_ + 1] = tx, ty
            backward2(p, c.length, c.dir, 0, m_)
            p[0], p[1] = c.base_x, c.base_y
            forward2(p, c.length, c.dir, 0, m_)
            distance = v2_len(tx - p[2 * m_], ty - p[2 * m_ + 1]) -- joint_distance's 2D way
        else
            local p = c.joint
            c.pose_behind = true
            p[3 * m_], p[3 * m_ + 1], p[3 * m_ + 2] = tx, ty, tz
            backward3(p, c.length, c.dir, 0, m_)
            p[0], p[1], p[2] = c.base_x, c.base_y, c.base_z
            forward3(p, c.length, c.dir, 0, m_)
            distance = joint_distance(c, m_, tx, ty, tz)
        end
        next = fab_next(f, distance)
        if next == FAB_KICK then next = fab_kick(f) end
    until next == FAB_DONE
end
M.fab_finish = fab_finish

local the_fab = new_fab()

-- The iterations, and the tip's distance from the target after (NaN when not known);
-- distance: before (NaN: to be measured).
function M.fabrik(c, tx, ty, tz, m_, distance)
    local f = the_fab
    local iter = fab_start(f, c, tx, ty, tz, m_, distance)
    distance = f.distance
    if iter < 0 then
        fab_finish(f)
        distance = f.distance
        iter = f.iter
    end
    f.c = nil -- kept only while the solve runs
    -- The point behind an oriented tip bone reached: its parent turned so the tip bone's
    -- limit lets it take its goal (joint_space.lua).
    if c.limited ~= 0 and joint_space.limits_oriented(c, m_) then
        local budget = iteration_budget(c.settings.iterations)
        if iter < budget then
            iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, 0, true)
            distance = NAN
        end
    end
    return iter, distance
end

return M
