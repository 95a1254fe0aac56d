-- ik.pure.ccd: src/ccd.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's conventions): cyclic coordinate descent with greed, one sweep (sweep.lua)
-- an iteration, the escape and the joint-space steps where the C takes them. See src/ccd.c
-- for why. The progress of a solve is a table made once here (a solve is never nested).

local chain = require("ik.pure.chain")
local escape = require("ik.pure.escape")
local sweep = require("ik.pure.sweep")
local joint_space = require("ik.pure.joint_space")

local joint_distance, iteration_budget = chain.joint_distance, chain.iteration_budget
local progress_start, progress_next = escape.progress_start, escape.progress_next
local KICK, STOP, CRAWL = escape.KICK, escape.STOP, escape.CRAWL

local M = {}

-- Whether the sweeps come to turn fully (greed 1, or a ramp to it): only then do they hand
-- over to joint-space steps. A fixed greed below 1 is a slow approach asked for.
local function ramps_to_full(s) return s.greed == 1 or s.greed_ramp end

local function greed_at(s, iter)
    if not s.greed_ramp or s.iterations < 2 then return s.greed end
    return s.greed + (1 - s.greed) * iter / (s.iterations - 1)
end

local the_progress = {}

local function ccd_run(c, tx, ty, tz, m_, iter)
    local s = c.settings
    local progress = progress_start(the_progress, c, tx, ty, tz, m_)
    local budget = iteration_budget(s.iterations)
    if joint_distance(c, m_, tx, ty, tz) <= s.tolerance or iter >= budget then return iter end
    while true do
        sweep.ccd_sweep(c, tx, ty, tz, m_, greed_at(s, iter), 0)
        iter = iter + 1
        local distance = joint_distance(c, m_, tx, ty, tz)
        if distance <= s.tolerance or iter >= budget then break end
        local next = progress_next(c, progress, distance)
        if next == STOP then break end
        if next == CRAWL and ramps_to_full(s) then
            -- Sweeps creep without limits: joint-space steps, then sweeps again if they
            -- leave anything.
            iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, 0, false)
            if joint_distance(c, m_, tx, ty, tz) <= s.tolerance or iter >= budget then break end
        elseif next == KICK and c.limited ~= 0 then
            -- Sweeps crawl against limits: joint-space steps, then sweeps again.
            iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, 0, false)
            return iter + escape.escape_finish(c, tx, ty, tz, m_, budget - iter, 0)
        elseif next == KICK then
            escape.escape_kick(c, tx, ty, tz, progress, 0)
        end
    end
    return iter
end

-- The iterations.
function M.ccd(c, tx, ty, tz, m_)
    local iter = 0
    -- Tracking a goal with limits: joint-space steps first (joint_space.lua).
    if ramps_to_full(c.settings) then
        local met, used = joint_space.joint_track(c, tx, ty, tz, m_, 0, false)
        iter = used
        if met then return iter end
    end
    iter = ccd_run(c, tx, ty, tz, m_, iter)
    -- The point behind an oriented tip bone reached: its parent turned so the tip bone's
    -- limit lets it take its goal (joint_space.lua).
    local budget = iteration_budget(c.settings.iterations)
    if c.limited ~= 0 and joint_space.limits_oriented(c, m_) and iter < budget then
        iter = iter + joint_space.joint_finish(c, tx, ty, tz, m_, budget - iter, 0, false)
    end
    return iter
end

return M
