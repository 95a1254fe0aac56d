-- ik.pure.solve: src/solve.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's conventions): what every solve does around its solver. The order of a
-- solve: check everything (a rejected call changes nothing) and keep the target as the
-- chain's goal; if the goal is already met, stop there. Otherwise remember the pose when
-- mix, max_turn or 3D twist need it; with an orientation goal the solver reaches for the
-- point behind the tip bone with the other bones; stretch or else soften the target; run
-- the solver; pose the tip bone to its orientation goal; bring every bone within its
-- limits; blend with the remembered pose (mix) and hold each bone's turn to max_turn;
-- report the distance to the real goal. The goal's measures and the finish are goal.lua's;
-- each solver is a row of the table below.
--
-- A solve in progress (struct solve) and a result (ik_result: reached, distance,
-- angle_error, iterations) are tables with the C's fields, filled in place: the few a solve
-- needs are made once, here or by the caller, so a solve makes no garbage.
--
-- Ported: all of solve.c, with the rows of every solver (fabrik.lua, ccd.lua, relax.lua,
-- two_bone.lua, aim.lua). ik_solve_many solves chain by chain: its batch (batch.c) ends every
-- chain bit for bit as the chain's own solve leaves it, and a chain waits for the chains it
-- depends on, so the order of the array is the order of the solves (see solve_many).

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local goal = require("ik.pure.goal")
local two_bone = require("ik.pure.two_bone")
local aim = require("ik.pure.aim")
local fabrik = require("ik.pure.fabrik")
local ccd = require("ik.pure.ccd")
local relax = require("ik.pure.relax")
local limits_oriented = require("ik.pure.joint_space").limits_oriented

local exp, sqrt, floor = math.exp, math.sqrt, math.floor
local v3_add, v3_sub, v3_scale, v3_dot, v3_len, v3_normalize_or = m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot, m.v3_len, m.v3_normalize_or
local q_mul, q_normalize, q_from_to, q_x_axis, fmax = m.q_mul, m.q_normalize, m.q_from_to, m.q_x_axis, m.fmax
local joint_v3, dir_v3, chain_settle, chain_fk = chain.joint_v3, chain.dir_v3, chain.chain_settle, chain.chain_fk
local pose_bone, limit_rotation = limits.pose_bone, limits.limit_rotation
local tip_distance, orientation_error = goal.tip_distance, goal.orientation_error

local OK = chain.OK
local INFINITY = math.huge
local DBL_MAX = 1.7976931348623157e308
local NAN = 0 / 0

local M = {}

-- ---- the way in ----

-- The distance d eased towards reach over the last `softness` of it: never beyond reach.
local function soft_distance(d, reach, softness)
    -- The ease begins at reach - softness (or at the base, for a softness beyond reach).
    local start, span = reach - softness, softness
    if not (softness > 0) then return d end -- off
    if start < 0 then start, span = 0.0, reach end
    if not (span > 0) then -- no reach to ease into: never beyond it
        if d < reach then return d end
        return reach
    end
    if not (d > start) then return d end
    -- Written from the reach down, so rounding can never put the result beyond it.
    return reach - span * exp(-(d - start) / span)
end
M.soft_distance = soft_distance

-- ---- the solvers ----

-- What a solve needs to know of its solver (solver_desc): run (c, aim x, y, z, m, the
-- distance and the aim error so far) returns its iterations, the tip's distance from the aim
-- when known (else NaN) and an aim's angle left; the flags as in the C; lean (c, aim x, y,
-- z, out), the whole solve in one pass for a plain 3D chain of lean_bones bones.

local function run_fabrik(c, ax, ay, az, m_, distance, aim_error)
    local iterations, left = fabrik.fabrik(c, ax, ay, az, m_, distance)
    return iterations, left, aim_error
end

local function run_ccd(c, ax, ay, az, m_, distance, aim_error)
    return ccd.ccd(c, ax, ay, az, m_), distance, aim_error
end

local function run_relax(c, ax, ay, az, m_, distance, aim_error)
    return relax.relax(c, ax, ay, az, m_), distance, aim_error
end

local function run_two_bone(c, ax, ay, az, m_, distance, aim_error)
    return two_bone.two_bone_chain(c, ax, ay, az), distance, aim_error
end

local function run_aim(c, ax, ay, az, m_, distance, aim_error)
    local iterations, error = aim.aim(c, c.target_x, c.target_y, c.target_z)
    return iterations, distance, error
end

local function desc(run, on_points, keeps_twist, aims, closed_form, measures, batches, bones, lean, lean_bones)
    return { run = run, on_points = on_points, keeps_twist = keeps_twist, aims = aims,
        closed_form = closed_form, measures = measures, batches = batches, bones = bones, lean = lean,
        lean_bones = lean_bones }
end

-- By solver: run, on_points, keeps_twist, aims, closed_form, measures, batches, bones,
-- lean, lean_bones.
local SOLVERS = {
    [chain.SOLVER_FABRIK] = desc(run_fabrik, true, true, false, false, true, true, 0, nil, 0),
    [chain.SOLVER_CCD] = desc(run_ccd, false, false, false, false, false, false, 0, nil, 0),
    [chain.SOLVER_RELAX] = desc(run_relax, true, true, false, false, false, false, 0, nil, 0),
    [chain.SOLVER_TWO_BONE] = desc(run_two_bone, false, true, false, true, false, false, 2,
        two_bone.two_bone_lean3, 2),
    [chain.SOLVER_AIM] = desc(run_aim, false, false, true, false, false, false, 0, aim.aim_lean3, 1),
}

-- One solve in progress (struct solve); aim is aim_x, aim_y, aim_z.
local function new_solve()
    return { solver = nil, m = 0, oriented = false, aim_x = 0.0, aim_y = 0.0, aim_z = 0.0, run = false,
        iterations = 0, aim_error = 0.0, met = 0.0, distance = 0.0, aim_is_goal = false }
end

-- The stretch factor that makes bones 0..m-1, straight, reach the point behind the tip
-- bone, whose own length stretches too (see src/solve.c): g the goal from the base, u the
-- tip bone's goal direction, L its length, R the others' reach. DBL_MAX when the factor
-- itself would overflow; 0: no such factor.
local function stretch_factor(gx, gy, gz, ux, uy, uz, L, R)
    local mx = L > R and L or R
    local len = v3_len(gx, gy, gz)
    if not (len > 0) or not (R > 0) then return 0.0 end
    local nx, ny, nz = v3_normalize_or(gx, gy, gz, ux, uy, uz)
    local gu = v3_dot(nx, ny, nz, ux, uy, uz)
    local l, r = L / mx, R / mx
    local below = l * gu + sqrt(fmax(l * l * gu * gu + (r * r - l * l), 0.0))
    if not (below > 0) then return 0.0 end
    local s = len / mx / below
    if s <= DBL_MAX then return s end
    return DBL_MAX
end

-- Every bone along the line to the point behind the tip bone, the tip bone along u.
local function straighten(c, s, ux, uy, uz)
    local n = c.n
    local bx, by, bz = v3_sub(c.target_x, c.target_y, c.target_z, v3_scale(ux, uy, uz, c.length[n - 1] * c.scale))
    if not s.oriented then bx, by, bz = c.target_x, c.target_y, c.target_z end
    local jx, jy, jz = joint_v3(c, 0)
    local fx, fy, fz = dir_v3(c, 0)
    local lx, ly, lz = v3_normalize_or(bx - jx, by - jy, bz - jz, fx, fy, fz)
    for i = 0, s.m - 1 do
        if c.length[i] > 0 then pose_bone(c, i, lx, ly, lz) else pose_bone(c, i, dir_v3(c, i)) end
    end
    if s.oriented then pose_bone(c, n - 1, ux, uy, uz) end
    c.stale_from = n
end

-- aim eased towards reach from the base (softness > 0): true and the new aim, or false
-- when it stays (on the base).
local function soften(c, ax, ay, az, reach)
    local bx, by, bz = joint_v3(c, 0)
    local vx, vy, vz = v3_sub(ax, ay, az, bx, by, bz)
    local d = v3_len(vx, vy, vz)
    if not (d > 0) then return false end
    return true, v3_add(bx, by, bz, v3_scale(vx, vy, vz, soft_distance(d, reach, c.settings.softness) / d))
end

-- Prepares a solve of the kept goal with solver: the pose made the truth where the solver
-- or the way out needs it, the goal checked for being met, stretch done, the solver's aim
-- point set. The chain has followed its parent.
local function way_in(c, solver, s)
    local set = c.settings
    local d = SOLVERS[solver]
    local aims = d.aims
    local ux, uy, uz = 0.0, 0.0, 0.0
    local measured = false
    s.solver = d
    s.oriented = c.has_orientation and not aims
    s.m = s.oriented and c.n - 1 or c.n
    s.run = false
    s.iterations = 0
    s.aim_error = 0.0
    s.met = 0.0
    s.distance = NAN
    s.aim_is_goal = false
    c.kicked = false
    -- Only FABRIK and relaxation on a 2D chain without limits work on the joints alone.
    if c.limited ~= 0 or c.dim == 3 or not d.on_points or set.mix < 1 or set.max_turn < INFINITY
        or s.oriented or c.scale ~= 1 or set.stretch then
        chain_settle(c)
    end
    chain_fk(c)

    -- The goal met already: nothing moves (limits still have their word on the way out).
    if aims then
        s.aim_error = aim.aim_error(c, c.target_x, c.target_y, c.target_z)
        if s.aim_error <= set.angle_tolerance and c.limited == 0 then return end
    elseif not d.closed_form and c.scale == 1 and c.limited == 0 then
        s.met = tip_distance(c)
        measured = true
        if s.met <= set.tolerance and (not s.oriented or orientation_error(c) <= set.angle_tolerance) then return end
    end
    if c.dim == 3 or set.mix < 1 or set.max_turn < INFINITY then goal.save_pose(c) end
    if aims then
        s.run = true
        return
    end

    local bx, by, bz = joint_v3(c, 0)
    local reach = chain.chain_reach_to(c, s.m)
    if s.oriented then ux, uy, uz = goal.goal_direction(c) end
    if set.stretch then
        local gx, gy, gz = v3_sub(c.target_x, c.target_y, c.target_z, bx, by, bz)
        local factor = stretch_factor(gx, gy, gz, ux, uy, uz, s.oriented and c.length[c.n - 1] or 0.0, reach)
        if factor > 1 then
            -- A stretched bone stays within the range of ik.h (see chain.c).
            local most = c.longest > 0 and chain.MAX_COORD / c.longest or DBL_MAX
            if not (factor <= most) then factor = most <= DBL_MAX and most or DBL_MAX end
            c.scale = factor
            straighten(c, s, ux, uy, uz)
            s.iterations = 1
            return
        end
    end
    if c.scale ~= 1 then -- back to the bones' own lengths
        c.scale = 1.0
        c.stale_from = 0
        chain_fk(c)
    end
    if s.oriented then
        s.aim_x, s.aim_y, s.aim_z = v3_sub(c.target_x, c.target_y, c.target_z, v3_scale(ux, uy, uz, c.length[c.n - 1]))
    else
        s.aim_x, s.aim_y, s.aim_z = c.target_x, c.target_y, c.target_z
    end
    s.aim_is_goal = not s.oriented
    if not set.stretch and set.softness > 0 then
        local softened, ax, ay, az = soften(c, s.aim_x, s.aim_y, s.aim_z, reach)
        if softened then
            s.aim_x, s.aim_y, s.aim_z = ax, ay, az
            s.aim_is_goal = false
        end
    end
    if measured and s.aim_is_goal then s.distance = s.met end -- at scale 1, as the solver starts
    s.run = true
end

local function run_solver(c, s)
    s.iterations, s.distance, s.aim_error = s.solver.run(c, s.aim_x, s.aim_y, s.aim_z, s.m, s.distance, s.aim_error)
end

-- ---- the way out ----

-- After an escape's bend, the rotations of bones 0..m-1 rebuilt from the remembered pose
-- by the smallest turn of each bone's direction (within the limits, which win): the twist
-- 3D position-based solves promise (see src/solve.c).
local function restore_twist(c, m_)
    local rot, prev = c.rot, c.prev_rot
    local bw, bx, by, bz = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
    local pw, px, py, pz = bw, bx, by, bz
    chain_settle(c)
    chain_fk(c)
    for i = 0, m_ - 1 do
        local k = 4 * i
        local ew, ex, ey, ez = q_mul(bw, bx, by, bz, prev[k], prev[k + 1], prev[k + 2], prev[k + 3])
        local ax, ay, az = q_x_axis(ew, ex, ey, ez)
        local tw, tx, ty, tz = q_from_to(ax, ay, az, dir_v3(c, i))
        local ww, wx, wy, wz = q_mul(tw, tx, ty, tz, ew, ex, ey, ez)
        rot[k], rot[k + 1], rot[k + 2], rot[k + 3] =
            limit_rotation(c.limit[i], q_normalize(q_mul(pw, -px, -py, -pz, ww, wx, wy, wz)))
        pw, px, py, pz = q_normalize(q_mul(pw, px, py, pz, rot[k], rot[k + 1], rot[k + 2], rot[k + 3]))
        bw, bx, by, bz = ew, ex, ey, ez
    end
    c.stale_from = 0
end

-- Whether the tip's distance FABRIK ended on is the result's: the aim was the goal, and the
-- way out moved no joint (no limits, mix, max_turn, nor a 3D escape's twist rebuilt).
local function tip_known(c, s)
    local set = c.settings
    return s.solver.measures and s.aim_is_goal and s.distance == s.distance and c.limited == 0
        and set.mix == 1 and set.max_turn == INFINITY and not (c.kicked and c.dim == 3)
end

local function way_out(c, s, out)
    local set = c.settings
    local moved = s.run or s.iterations > 0
    if moved and c.kicked and c.dim == 3 and s.solver.keeps_twist then restore_twist(c, s.m) end
    if moved and s.oriented then goal.orient_tip(c) end
    if c.limited ~= 0 then
        chain_settle(c)
        limits.chain_clamp_limits(c)
    end
    if moved and (set.mix < 1 or set.max_turn < INFINITY) then
        chain_settle(c)
        if set.mix < 1 then goal.mix_pose(c, set.mix) end
        if set.max_turn < INFINITY then goal.hold_turns(c, set.max_turn) end
        -- The pose before may have been beyond the limits: they win over both.
        limits.chain_clamp_limits(c)
    end
    chain_fk(c)
    if moved then chain.chain_changed(c) end
    -- What tracking's prediction reads at the next solve (joint_space.lua).
    c.track_have = c.track_recorded
    c.track_recorded = false
    c.track_seen = chain.chain_pose_version(c)

    out.iterations = s.iterations
    if s.solver.aims then
        if moved then
            out.angle_error = aim.aim_error(c, c.target_x, c.target_y, c.target_z)
        else
            out.angle_error = s.aim_error
        end
        out.distance = out.angle_error
        out.reached = out.angle_error <= set.angle_tolerance
        return
    end
    if not moved then
        out.distance = s.met
    elseif tip_known(c, s) then
        out.distance = s.distance
    else
        out.distance = tip_distance(c)
    end
    out.angle_error = s.oriented and orientation_error(c) or 0.0
    out.reached = out.distance <= set.tolerance and (not s.oriented or out.angle_error <= set.angle_tolerance)
end

-- ---- other tries ----

-- With limits, an iterative solve that ends short with iterations to spare tries again
-- from fixed poses within the limits, each with what is left of the budget, and keeps the
-- best pose of all (see src/solve.c for when, and the bench's figures).
local TRIES = 3
local TRY_AT = { [0] = { [0] = 0.5, 0.7, 0.5 }, { [0] = 0.15, 0.7, 0.15 }, { [0] = 0.85, 0.7, 0.85 } }
local TRACK_NEAR, iteration_budget = chain.TRACK_NEAR, chain.iteration_budget

-- How far a pose is from its goal: a radian weighs an eighth of the reach, as in the
-- joint-space steps.
local function miss_of(c, distance, angle_error) return distance + angle_error * c.reach / 8 end

local function miss(c, r) return miss_of(c, r.distance, r.angle_error) end

-- Whether a solve of c with solver may try again at all (what the pose does not decide).
local function may_try(c, solver)
    local set = c.settings
    local d = SOLVERS[solver]
    return c.limited ~= 0 and set.escape and not d.closed_form and not d.aims and set.mix == 1
        and set.max_turn == INFINITY
end

-- The miss before a solve that may try again (may_try), and whether it tracks.
local function miss_before(c)
    chain_settle(c)
    chain_fk(c)
    local distance = tip_distance(c)
    local tracking = distance < TRACK_NEAR * c.reach
    return miss_of(c, distance, c.has_orientation and orientation_error(c) or 0.0), tracking
end

-- Whether a solve that may try again (may_try) tries: it fell short with iterations left.
local function tries_wanted(c, out, before, tracking)
    return not out.reached and out.iterations > 0
        and out.iterations < iteration_budget(c.settings.iterations) and c.scale == 1
        and (not tracking or miss(c, out) >= before)
end

-- A tip bone with an orientation goal and a limit: a solve that may try again (may_try),
-- not tracking, gives its first start a quarter of the budget (see the C).
local FIRST_SHARE = 4

local function first_budget(c, tracking)
    if tracking or not limits_oriented(c, c.n - 1) then return c.settings.iterations end
    local share = floor(iteration_budget(c.settings.iterations) / FIRST_SHARE)
    return share > 0 and share or 1
end

-- The local pose kept as the best so far, and put back from it.
local function keep_best(c)
    local n = c.n
    if c.dim == 2 then
        local turn, angle, best_turn, best_angle = c.turn, c.angle, c.best_turn, c.best_angle
        for k = 0, 2 * n - 1 do best_turn[k] = turn[k] end
        for k = 0, n - 1 do best_angle[k] = angle[k] end
    else
        local rot, best_rot = c.rot, c.best_rot
        for k = 0, 4 * n - 1 do best_rot[k] = rot[k] end
    end
end

local function put_back_best(c)
    local n = c.n
    if c.dim == 2 then
        local turn, angle, best_turn, best_angle = c.turn, c.angle, c.best_turn, c.best_angle
        for k = 0, 2 * n - 1 do turn[k] = best_turn[k] end
        for k = 0, n - 1 do angle[k] = best_angle[k] end
    else
        local rot, best_rot = c.rot, c.best_rot
        for k = 0, 4 * n - 1 do rot[k] = best_rot[k] end
    end
    chain.chain_mark_stale(c, 0)
    chain_fk(c)
    chain.chain_changed(c)
end

local function try_pose(c, k)
    local u = TRY_AT[k]
    for i = 0, c.n - 1 do
        if c.dim == 2 then
            chain.chain_set_turn_angle(c, i, limits.limit_sample_angle(c.limit[i], u[0]))
        else
            local r = c.rot
            r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3] = limits.limit_sample_rotation(c.limit[i], u[0], u[1], u[2])
        end
    end
    chain.chain_mark_stale(c, 0)
    chain_fk(c)
    c.track_have = false -- a jump, not a motion: nothing to carry on (joint_space.lua, predict)
end

local function copy_result(to, from)
    to.reached, to.distance, to.angle_error, to.iterations = from.reached, from.distance, from.angle_error, from.iterations
end

-- A try's solve, its result and the best result so far: made once (a solve is never nested).
local try_solve, try_result, best_result = new_solve(), {}, {}

-- The other tries, after the first ended in out: each within the budget that is left,
-- which the solvers read from the settings (set for the try, then put back).
local function try_again(c, solver, out)
    local iterations = c.settings.iterations
    local budget, used, best_is_last = iteration_budget(iterations), out.iterations, true
    local best, r, s = best_result, try_result, try_solve
    copy_result(best, out)
    keep_best(c)
    local k = 0
    while k < TRIES and used < budget and not best.reached do
        try_pose(c, k)
        c.settings.iterations = budget - used
        way_in(c, solver, s)
        if s.run then run_solver(c, s) end
        way_out(c, s, r)
        c.settings.iterations = iterations
        used = used + r.iterations
        best_is_last = r.reached or miss(c, r) < 0.5 * miss(c, best)
        if best_is_last then
            copy_result(best, r)
            keep_best(c)
        end
        k = k + 1
    end
    if not best_is_last then put_back_best(c) end
    c.track_have = false -- the pose came from a try: its start is no motion to carry on
    copy_result(out, best)
    out.iterations = used
end

-- ---- the entry points ----

-- Whether solver can solve chain c with its goals as they are: the status.
local function check_solver(c, solver)
    local bones = SOLVERS[solver].bones
    if bones > 0 and c.n ~= bones + (c.has_orientation and 1 or 0) then return chain.ERR_NOT_TWO_BONE end
    return OK
end

-- The checks of a solve of c towards x, y, z (x nil: the kept goal); nothing changes.
local function check_solve(c, solver, x, y, z)
    if x ~= nil then
        local st = c.tip_parent and chain.ERR_HELD or chain.check_coords(c.dim, x, y, z)
        if st ~= OK then return st end
    elseif not c.has_target then
        return chain.ERR_NO_TARGET
    end
    return check_solver(c, solver)
end

-- Whether the lean solve of solver d takes c: a 3D chain of its bones with nothing around
-- the solver (no limits, no orientation goal, mix 1, no max_turn, no stretch) at its own
-- lengths.
local function lean(c, d)
    local s = c.settings
    return d.lean ~= nil and c.dim == 3 and c.n == d.lean_bones and c.limited == 0 and not c.has_orientation
        and s.mix == 1 and s.max_turn == INFINITY and not s.stretch and c.scale == 1
end

local function solve_lean(c, d, out)
    local ax, ay, az = c.target_x, c.target_y, c.target_z
    chain_settle(c)
    chain_fk(c)
    c.kicked = false
    c.track_have = false -- not a tracked solve (joint_space.lua, predict)
    if not d.aims and c.settings.softness > 0 then
        local softened, sx, sy, sz = soften(c, ax, ay, az, (chain.chain_reach_to(c, c.n)))
        if softened then ax, ay, az = sx, sy, sz end
    end
    if d.lean(c, ax, ay, az, out) then chain.chain_changed(c) end
end

local the_solve = new_solve()

-- The status; out filled. x nil: towards the kept goal.
local function solve_with(c, solver, x, y, z, out)
    local st = check_solve(c, solver, x, y, z)
    if st ~= OK then return st end
    if x ~= nil then chain.chain_keep_target(c, x, y, z) else chain.chain_read_hold(c) end -- checked above
    chain.chain_follow(c)
    local d = SOLVERS[solver]
    if lean(c, d) then
        solve_lean(c, d, out)
        return OK
    end
    local s = the_solve
    -- Whether other tries may follow, asked once: the three steps of the tries (the miss
    -- before, the first start's budget, whether to try again) are taken only then.
    local may = may_try(c, solver)
    local before, tracking = 0.0, false
    if may then before, tracking = miss_before(c) end
    local iterations = c.settings.iterations
    if may then c.settings.iterations = first_budget(c, tracking) end -- read back by the solvers
    way_in(c, solver, s)
    if s.run then run_solver(c, s) end
    way_out(c, s, out)
    c.settings.iterations = iterations
    if may and tries_wanted(c, out, before, tracking) then try_again(c, solver, out) end
    return OK
end

function M.chain_solve(c, x, y, z, out) return solve_with(c, c.settings.solver, x, y, z, out) end
function M.chain_solve_fabrik(c, x, y, z, out) return solve_with(c, chain.SOLVER_FABRIK, x, y, z, out) end
function M.chain_solve_ccd(c, x, y, z, out) return solve_with(c, chain.SOLVER_CCD, x, y, z, out) end
function M.chain_solve_relax(c, x, y, z, out) return solve_with(c, chain.SOLVER_RELAX, x, y, z, out) end
function M.chain_solve_two_bone(c, x, y, z, out) return solve_with(c, chain.SOLVER_TWO_BONE, x, y, z, out) end
function M.chain_solve_aim(c, x, y, z, out) return solve_with(c, chain.SOLVER_AIM, x, y, z, out) end

-- ---- many chains ----

-- The C's ik_solve_many: count chains (chains[0..count-1]) of one dimension, each towards
-- its target (targets: dim numbers a chain, 0-based; nil: the kept goals), results[k] filled.
-- Everything is checked first (a rejected call solves nothing): the status, the chains
-- reached and the failed chain's index. The C gathers the FABRIK chains without limits in
-- a batch and solves them side by side; each ends bit for bit as its own solve leaves it
-- (src/chain.h, ik_fabrik_batch), and a chain waits for its parents and the chain holding
-- its tip in the batch (depends), so solving chain after chain in the array's order gives
-- the same results and the same states.
function M.solve_many(chains, count, targets, results)
    local dim = count > 0 and chains[0].dim or 2
    for k = 0, count - 1 do
        local c = chains[k]
        local st
        if c.dim ~= dim then
            st = chain.ERR_DIMENSION
        elseif targets then
            local j = k * dim
            st = check_solve(c, c.settings.solver, targets[j], targets[j + 1], dim == 3 and targets[j + 2] or 0.0)
        else
            st = check_solve(c, c.settings.solver)
        end
        if st ~= OK then return st, 0, k end
    end
    local reached = 0
    for k = 0, count - 1 do
        local c, r = chains[k], results[k]
        if targets then
            local j = k * dim
            solve_with(c, c.settings.solver, targets[j], targets[j + 1], dim == 3 and targets[j + 2] or 0.0, r)
        else
            solve_with(c, c.settings.solver, nil, nil, nil, r)
        end
        if r.reached then reached = reached + 1 end
    end
    return OK, reached
end

return M
