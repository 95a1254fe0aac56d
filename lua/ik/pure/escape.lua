-- ik.pure.escape: the start of src/escape.c in plain Lua, in the same order and with the
-- same arithmetic (chain.lua's conventions): the progress of an iterative solve and the
-- stop when an iteration no longer gains anything (ik_progress_start, ik_progress_from,
-- ik_progress_plain, ik_progress_next). See src/escape.c for the thresholds and why.
-- A progress is a table with the fields of struct ik_progress, filled in place (the C
-- returns the struct by value; a table made per solve would be garbage).
-- Not yet: ik_escape_finish and ik_escape_kick, which come with the iterative solvers.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")

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

function M.progress_start(e, c, tx, ty, tz, m_)
    local bx, by, bz = chain.joint_v3(c, 0)
    return progress_from(e, c, m_, chain.joint_distance(c, m_, tx, ty, tz), m.v3_len(tx - bx, ty - by, tz - bz))
end

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
function M.progress_next(c, e, distance)
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

return M
