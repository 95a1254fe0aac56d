-- ik.pure.escape: src/escape.c in plain Lua, in the same order and with the same
-- arithmetic (chain.lua's conventions): the progress of an iterative solve and the stop
-- when an iteration no longer gains anything (ik_progress_start, ik_progress_from,
-- ik_progress_plain, ik_progress_next), the bend out of a lock-up (ik_escape_kick) and the
-- CCD sweeps a stuck solve on a chain with limits ends with (ik_escape_finish). See
-- src/escape.c for the thresholds and why. A progress is a table with the fields of struct
-- ik_progress, filled in place (the C returns the struct by value; a table made per solve
-- would be garbage). The whole file is ported.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local sweep = require("ik.pure.sweep")

local floor = math.floor
local v3_sub, v3_cross, v3_normalize_or, v3_any_perpendicular = m.v3_sub, m.v3_cross, m.v3_normalize_or, m.v3_any_perpendicular
local q_rotate, q_axis_angle = m.q_rotate, m.q_axis_angle
local joint_v3, dir_v3, joint_distance, chain_bend_side = chain.joint_v3, chain.dir_v3, chain.joint_distance, chain.chain_bend_side
local pose_bone, ccd_sweep = limits.pose_bone, sweep.ccd_sweep

local ESCAPE_ANGLE = 0.25
local ESCAPE_KICKS = 4
local STUCK_FREE = 1e-6
local STUCK_LIMITED = 0.1
local STALL_REACHABLE = 1e-3
local STALL_OUTSIDE = 1e-2
local STALL_ACCELERATING = 1.5
local STALL_ITERATIONS = chain.STALL_ITERATIONS
local STALL_HALF = math.floor(STALL_ITERATIONS / 2) -- the C's integer division

local M = {}

-- What ik_progress_next says (ik_next).
M.GO_ON, M.KICK, M.STOP, M.CRAWL = 0, 1, 2, 3
local GO_ON, KICK, STOP, CRAWL = M.GO_ON, M.KICK, M.STOP, M.CRAWL

-- e filled for joint m's distance from the target and the base's.
local function progress_from(e, c, m_, distance, d)
    local total, longest = chain.chain_reach_to(c, m_)
    e.m = m_
    e.reach = total
    e.last = distance
    -- Reach: the ring between the longest bone less the others, and the whole length.
    local inner = 2 * longest - total
    e.least = d > total and d - total or (d < inner and inner - d or 0.0)
    e.stall = e.least > 0 and STALL_OUTSIDE or STALL_REACHABLE
    e.mark = e.last
    e.middle = e.last
    e.kicks = 0
    e.since = 0
    -- A converged solve (tolerance 0, say) also stops improving: that is not a lock-up.
    e.floor = 1e-9 * total
    e.limited = c.limited
    e.slow = c.limited ~= 0 and STUCK_LIMITED or STUCK_FREE
    e.reachable = c.settings.escape and d <= total and d >= inner
    e.crawl = c.limited == 0
    return e
end
M.progress_from = progress_from

local function progress_start(e, c, tx, ty, tz, m_)
    local bx, by, bz = chain.joint_v3(c, 0)
    return progress_from(e, c, m_, chain.joint_distance(c, m_, tx, ty, tz), m.v3_len(tx - bx, ty - by, tz - bz))
end
M.progress_start = progress_start

-- Progress with no escape, for an error of the given scale (aiming: an angle, scale pi).
function M.progress_plain(e, error, scale)
    e.m = 0
    e.reach = scale
    e.last = error
    e.least = 0.0
    e.stall = STALL_REACHABLE
    e.mark = error
    e.middle = error
    e.kicks = 0
    e.since = 0
    e.floor = 0.0
    e.slow = 0.0
    e.limited = 0
    e.reachable = false
    e.crawl = false
    return e
end

-- distance: the tip's after this iteration (above tolerance, which the caller checks).
local function progress_next(c, e, distance)
    local last = e.last
    e.last = distance
    if e.crawl and e.reachable and distance > e.floor and distance >= last * (1 - STUCK_LIMITED) then
        e.crawl = false
        return CRAWL
    end
    if e.reachable and e.kicks < ESCAPE_KICKS and distance > e.floor and distance >= last * (1 - e.slow) then
        return KICK
    end
    if e.least > 0 and distance - e.least <= c.settings.tolerance then return STOP end
    e.since = e.since + 1
    if e.since == STALL_HALF then e.middle = distance end
    if e.since < STALL_ITERATIONS then return GO_ON end
    e.since = 0
    local from = e.mark
    e.mark = distance
    if distance - e.least < (1 - e.stall) * (from - e.least) then return GO_ON end
    if e.middle < from and e.middle - distance > STALL_ACCELERATING * (from - e.middle) then return GO_ON end
    if e.limited ~= 0 and e.reachable and e.kicks < ESCAPE_KICKS and distance > e.floor then return KICK end
    return STOP
end

M.progress_next = progress_next

-- Bends bones first..m-1 towards the bend side (2D) or the pole (3D); the chain must be
-- settled; its world data is current afterwards.
local function escape_kick(c, tx, ty, tz, e, first)
    local angle = ESCAPE_ANGLE * (1 + floor(e.kicks / 2)) -- the C's integer division
    local m_ = e.m
    if e.kicks % 2 == 1 then angle = -angle end -- every other bend tries the other side
    e.kicks = e.kicks + 1
    c.kicked = true

    local jx, jy, jz = joint_v3(c, first)
    local lx, ly, lz = v3_sub(tx, ty, tz, jx, jy, jz)
    lx, ly, lz = v3_normalize_or(lx, ly, lz, 1.0, 0.0, 0.0)
    local sx, sy, sz = chain_bend_side(c, lx, ly, lz)
    if c.limited ~= 0 then
        -- Limits: a curl. Each bone from `first` on turns (i - first + 1) times the angle
        -- about line x side, so every joint moves, and some limit has room for it.
        local cx, cy, cz = v3_cross(lx, ly, lz, sx, sy, sz)
        local fx, fy, fz = v3_any_perpendicular(lx, ly, lz)
        local ax, ay, az = v3_normalize_or(cx, cy, cz, fx, fy, fz)
        for i = first, m_ - 1 do
            local dx, dy, dz = dir_v3(c, i)
            local qw, qx, qy, qz = q_axis_angle(ax, ay, az, angle * (i - first + 1))
            pose_bone(c, i, q_rotate(qw, qx, qy, qz, dx, dy, dz))
        end
    else
        -- Bone `first` turns towards the side; the bones after it keep their directions.
        local dx, dy, dz = dir_v3(c, first)
        local cx, cy, cz = v3_cross(dx, dy, dz, sx, sy, sz)
        local fx, fy, fz = v3_any_perpendicular(dx, dy, dz)
        local ax, ay, az = v3_normalize_or(cx, cy, cz, fx, fy, fz)
        local qw, qx, qy, qz = q_axis_angle(ax, ay, az, angle)
        pose_bone(c, first, q_rotate(qw, qx, qy, qz, dx, dy, dz))
        for i = first + 1, m_ - 1 do pose_bone(c, i, dir_v3(c, i)) end
    end
    c.stale_from = m_
    chain.chain_fk(c)
    e.last = joint_distance(c, m_, tx, ty, tz)
    e.mark = e.last
    e.since = 0
end
M.escape_kick = escape_kick

-- escape_finish's progress (it is never nested).
local finish_progress = {}

-- A stuck position-based solve on a chain with limits spends the iterations it has left
-- on CCD sweeps (greed 1, joints first..m-1); returns the iterations used. The chain must
-- be settled and current.
function M.escape_finish(c, tx, ty, tz, m_, iterations, first)
    local e = progress_start(finish_progress, c, tx, ty, tz, m_)
    local iter = 0
    e.slow = STUCK_FREE -- only a real lock-up: slow sweeps are still the way out
    while iter < iterations do
        local distance = joint_distance(c, m_, tx, ty, tz)
        if distance <= c.settings.tolerance then break end
        ccd_sweep(c, tx, ty, tz, m_, 1.0, first)
        iter = iter + 1
        -- The sweeps have lock-ups of their own (a chain folded onto the target's line).
        local next = progress_next(c, e, joint_distance(c, m_, tx, ty, tz))
        if next == KICK then
            escape_kick(c, tx, ty, tz, e, first)
        elseif next == STOP then
            break
        end
    end
    return iter
end

return M
