-- ik.pure.rig_joint: src/rig_joint.c in plain Lua, in the same order and with the same
-- arithmetic (rig_tree.lua's conventions): the stages of a rig solve after the passes, on
-- the bones' rotations: the tree sweeps (CCD over the whole tree) and the joint-space stage
-- (damped least squares on every bone at once). One bone's part of a step is
-- joint_space.lua's (ik_joint_axes, ik_joint_blocked, ik_joint_turn, ik_joint_has_bounds,
-- ik_joint_bound_angle, ik_solve_spd), as for single chains. See src/rig_joint.c for the
-- why of each step and the measurements.
--
-- A column of J (dls_column) and the axes and turns of one bone are tables made once here
-- and filled in place: a solve allocates nothing.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local escape = require("ik.pure.escape")
local js = require("ik.pure.joint_space")
local tree = require("ik.pure.rig_tree")

local sqrt, abs, cos, sin = math.sqrt, math.abs, math.cos, math.sin
local atan2 = math.atan2 or math.atan
local PI = m.PI
local v2_rotate, wrap_angle, clamp = m.v2_rotate, m.wrap_angle, m.clamp
local v3_add, v3_sub, v3_scale, v3_dot = m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot
local v3_cross, v3_len = m.v3_cross, m.v3_len
local v3_normalize_or = m.v3_normalize_or
local q_mul, q_normalize, q_rotate = m.q_mul, m.q_normalize, m.q_rotate
local q_x_axis, q_axis_angle = m.q_x_axis, m.q_axis_angle
local joint_at, turns, beyond_end, moves_hold = tree.joint_at, tree.turns, tree.beyond_end, tree.moves_hold
local turn_angle, chain_set_turn_angle = chain.turn_angle, chain.chain_set_turn_angle
local chain_mark_stale = chain.chain_mark_stale
local parent_wrot = chain.parent_wrot
local limit_angle, limit_rotation, has = limits.limit_angle, limits.limit_rotation, limits.has
local progress_plain, progress_next, STOP = escape.progress_plain, escape.progress_next, escape.STOP

local HINGE = chain.LIMIT_HINGE
local INFINITY = math.huge
local DLS_ROWS = tree.DLS_ROWS

local M = {}

local joint_axes, has_bounds, joint_bound_angle = js.joint_axes, js.joint_has_bounds, js.joint_bound_angle
local joint_blocked, joint_turn, solve_spd = js.joint_blocked, js.joint_turn, js.solve_spd

-- One bone's axes (3 numbers an axis) and its turns about them: filled in place.
local axis = { [0] = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0 }

-- ---- the tree sweeps ----

-- Turns node nd's bone i, about joint p, by the world turn that the goals beyond it ask for.
local function sweep_bone(rig, nd, i)
    local c = nd.chain
    local node, goals = rig.node, rig.goals
    local px, py, pz = joint_at(c, i)
    local tx, ty, tz, dot = 0.0, 0.0, 0.0, 0.0
    local from, to = nd.end_ > i and nd.pre or nd.pre + 1, beyond_end(rig, nd, i)
    local k = rig.goal_at[from]
    while k < rig.goal_count and node[goals[k]].pre < to do -- dfs[pre] is nd itself
        local g = node[goals[k]]
        local w_ = g.weight
        local rx, ry, rz = v3_sub(g.eff_x, g.eff_y, g.eff_z, px, py, pz)
        local gx, gy, gz = v3_sub(g.goal_x, g.goal_y, g.goal_z, px, py, pz)
        local cx, cy, cz = v3_cross(rx, ry, rz, gx, gy, gz)
        tx, ty, tz = v3_add(tx, ty, tz, v3_scale(cx, cy, cz, w_))
        dot = dot + w_ * v3_dot(rx, ry, rz, gx, gy, gz)
        k = k + 1
    end
    if c.dim == 2 then
        local turn = atan2(tz, dot)
        if turn == 0 then return end
        local angle = turn_angle(c, i)
        local held = c.limit[i].flags ~= 0 and limit_angle(c.limit[i], wrap_angle(angle + turn)) or angle + turn
        turn = wrap_angle(held - angle)
        if turn == 0 then return end
        chain_set_turn_angle(c, i, held)
        local ux, uy = cos(turn), sin(turn)
        k = rig.goal_at[from]
        while k < rig.goal_count and node[goals[k]].pre < to do
            local g = node[goals[k]]
            local vx, vy = v2_rotate(g.eff_x - px, g.eff_y - py, ux, uy)
            if g.end_ >= 0 then g.eff_x, g.eff_y, g.eff_z = px + vx, py + vy, 0.0 end
            k = k + 1
        end
    else
        local size = v3_len(tx, ty, tz)
        local angle = atan2(size, dot)
        local ux, uy, uz = v3_normalize_or(tx, ty, tz, 0.0, 0.0, 0.0)
        if not (size > 0) or angle == 0 or v3_dot(ux, uy, uz, ux, uy, uz) == 0 then return end
        local rw, rx, ry, rz = q_axis_angle(ux, uy, uz, angle)
        -- As in sweep.c: the world turn r as a change of the local rotation, within limits.
        local pw, px_, py_, pz_ = parent_wrot(c, i)
        local rot, b = c.rot, 4 * i
        local lw, lx, ly, lz = q_mul(pw, -px_, -py_, -pz_, rw, rx, ry, rz)
        lw, lx, ly, lz = q_mul(lw, lx, ly, lz, pw, px_, py_, pz_)
        lw, lx, ly, lz = q_normalize(q_mul(lw, lx, ly, lz, rot[b], rot[b + 1], rot[b + 2], rot[b + 3]))
        if c.limit[i].flags ~= 0 then
            lw, lx, ly, lz = limit_rotation(c.limit[i], lw, lx, ly, lz)
            local aw, ax, ay, az = q_mul(pw, px_, py_, pz_, lw, lx, ly, lz)
            local bw, bx, by, bz = q_mul(pw, px_, py_, pz_, rot[b], rot[b + 1], rot[b + 2], rot[b + 3])
            rw, rx, ry, rz = q_normalize(q_mul(aw, ax, ay, az, bw, -bx, -by, -bz))
        end
        rot[b], rot[b + 1], rot[b + 2], rot[b + 3] = lw, lx, ly, lz
        k = rig.goal_at[from]
        while k < rig.goal_count and node[goals[k]].pre < to do
            local g = node[goals[k]]
            local vx, vy, vz = q_rotate(rw, rx, ry, rz, v3_sub(g.eff_x, g.eff_y, g.eff_z, px, py, pz))
            g.eff_x, g.eff_y, g.eff_z = v3_add(px, py, pz, vx, vy, vz)
            k = k + 1
        end
    end
    chain_mark_stale(c, i)
end

-- The largest distance of a goal's joint from its goal, as the sweeps have carried it.
local function sweep_distance(rig)
    local largest = 0.0
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        if nd.end_ >= 0 then
            local d = v3_len(v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, nd.eff_x, nd.eff_y, nd.eff_z))
            if d > largest then largest = d end
        end
    end
    return largest
end

-- Tree sweeps while the goals are missed and they gain, at most `iterations`; then every
-- chain finished. Returns the sweeps made.
function M.rig_tree_sweeps(rig, iterations, reach)
    local sweeps = 0
    tree.rig_fk(rig)
    local distance = sweep_distance(rig)
    local progress = progress_plain(rig.progress_stage, distance, reach)
    while distance > rig.settings.tolerance and sweeps < iterations do
        for o = rig.count - 1, 0, -1 do
            local nd = rig.node[rig.order[o]]
            local hi = nd.top < nd.last and nd.top or nd.last
            for i = hi - 1, 0, -1 do sweep_bone(rig, nd, i) end
        end
        tree.rig_fk(rig)
        sweeps = sweeps + 1
        distance = sweep_distance(rig)
        if progress_next(rig.node[0].chain, progress, distance) == STOP then break end
    end
    tree.rig_finish_all(rig)
    return sweeps
end

-- ---- the joint-space stage ----

-- A goal weighed less than this, in units of the largest, has no pull here.
local DLS_LEAST = 1e-200

local function dls_weight(nd)
    if nd.weight >= DLS_LEAST then return nd.weight end
    return 0.0
end

-- The scale the stage works at (see rig_joint.c).
local DLS_RANGE = 1e100

local function rig_dls_in_range(rig, reach)
    if not (reach <= DLS_RANGE and reach >= 1 / DLS_RANGE) then return false end
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        local p = nd.chain.joint
        if nd.end_ >= 0 and not (abs(nd.goal_x) <= DLS_RANGE and abs(nd.goal_y) <= DLS_RANGE
                and abs(nd.goal_z) <= DLS_RANGE) then
            return false
        end
        for j = 0, (nd.chain.n + 1) * rig.dim - 1 do
            if not (abs(p[j]) <= DLS_RANGE) then return false end
        end
    end
    return true
end
M.rig_dls_in_range = rig_dls_in_range

-- The goals' rows (nd.row); 0 when they need more than DLS_ROWS, or are out of range.
function M.rig_dls_rows(rig, reach)
    local m_ = 0
    if not rig_dls_in_range(rig, reach) then return 0 end
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        nd.row = -1
        if nd.end_ >= 0 then
            if m_ + rig.dim > DLS_ROWS then return 0 end
            nd.row = m_
            m_ = m_ + rig.dim
        end
    end
    return m_
end

-- One column of J: how the goals beyond bone i of nd move as it turns about an axis.
local col = { count = 0, row = {}, value = {} }
for k = 0, 2 * DLS_ROWS - 1 do col.row[k], col.value[k] = 0, 0.0 end

local function column_add(rig, row, vx, vy, vz)
    local rows, values, n = col.row, col.value, col.count
    for d = 0, rig.dim - 1 do
        rows[n] = row + d
        values[n] = d == 0 and vx or (d == 1 and vy or vz)
        n = n + 1
    end
    col.count = n
end

-- A loop's residual is its held point less its tip, so a bone that moves the held point
-- counts in its rows with the opposite sign (see rig_joint.c).
local function dls_column_of(rig, nd, i, ax, ay, az)
    local node, goals = rig.node, rig.goals
    local px, py, pz = joint_at(nd.chain, i)
    local to = beyond_end(rig, nd, i)
    col.count = 0
    -- The goals' columns with dls_weight, v3_cross, v3_scale and column_add written out
    -- (speed: this runs for every axis of every bone, twice a step; the same operations).
    local rows, values, n, dim = col.row, col.value, 0, rig.dim
    local k, count = rig.goal_at[nd.end_ > i and nd.pre or nd.pre + 1], rig.goal_count
    while k < count and node[goals[k]].pre < to do
        local g = node[goals[k]]
        local w_ = g.weight
        if not (w_ >= DLS_LEAST) then w_ = 0.0 end
        if not (g.end_ < 0 or w_ == 0) then
            local rx, ry, rz = g.eff_x - px, g.eff_y - py, g.eff_z - pz
            local s, r = sqrt(w_), g.row
            rows[n], values[n] = r, (ay * rz - az * ry) * s
            rows[n + 1], values[n + 1] = r + 1, (az * rx - ax * rz) * s
            if dim == 3 then
                rows[n + 2], values[n + 2] = r + 2, (ax * ry - ay * rx) * s
                n = n + 3
            else
                n = n + 2
            end
        end
        k = k + 1
    end
    col.count = n
    for l = 0, rig.loop_count - 1 do
        local g = node[rig.loops[l]]
        if not (g.row < 0 or dls_weight(g) == 0 or not moves_hold(rig, nd, i, node[g.hold], g.chain.tip_joint)) then
            local c = g.chain
            local cx, cy, cz = v3_cross(ax, ay, az, v3_sub(c.target_x, c.target_y, c.target_z, px, py, pz))
            column_add(rig, g.row, v3_scale(cx, cy, cz, -sqrt(dls_weight(g))))
        end
    end
end

-- The weighted squared error, and the largest distance of a goal's joint.
local function dls_cost(rig)
    local cost, largest = 0.0, 0.0
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        if nd.end_ >= 0 then
            local d = v3_len(v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, nd.eff_x, nd.eff_y, nd.eff_z))
            if d > largest then largest = d end
            cost = cost + dls_weight(nd) * d * d
        end
    end
    return cost, largest
end

-- The largest turn of one bone in one step (radians): the linear model holds near it.
local DLS_MAX_TURN = 0.5

-- Bone i's turn in the step (the convention of ik_joint_turn) from its turns about its axes.
local delta = { [0] = 0.0, 0.0, 0.0 }
local function dls_turn(nd, i, axes)
    if nd.chain.dim == 2 or has(nd.chain.limit[i].flags, HINGE) then return delta[0], 0.0, 0.0 end
    local vx, vy, vz = 0.0, 0.0, 0.0
    for a = 0, axes - 1 do
        vx, vy, vz = v3_add(vx, vy, vz, v3_scale(axis[3 * a], axis[3 * a + 1], axis[3 * a + 2], delta[a]))
    end
    return vx, vy, vz
end

-- Keeps (back false) or puts back (true) the local pose of every chain that bends: in the
-- first place (which = 0: before a step) or the second (1: the best before a kick).
local function dls_pose(rig, back, which)
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        tree.rig_keep_pose(nd, turns(nd), back, which)
    end
end

-- The turns J^T y of bone i of nd about its axes (delta); returns how many axes.
local function dls_delta(rig, nd, i)
    local y = rig.y
    local axes = joint_axes(nd.chain, i, nd.mode[i], axis)
    for o = 0, axes - 1 do
        dls_column_of(rig, nd, i, axis[3 * o], axis[3 * o + 1], axis[3 * o + 2])
        local rows, values, sum = col.row, col.value, 0.0
        for a = 0, col.count - 1 do sum = sum + values[a] * y[rows[a]] end
        delta[o] = sum
    end
    return axes
end

-- The push off the bounds while tracking (see rig_joint.c).
local REST_MARGIN = 0.3
local REST_PUSH = 0.1

-- A free 2D joint of a chain with a goal, but its first, kept off straight and folded the
-- same way, its push taken out of the goals' rows with a damping of its own (see rig_joint.c).
local SINGULAR_MARGIN = 0.5
local SINGULAR_PUSH = 0.05
local SINGULAR_DAMPING = 1e-6

local function off_singular(c, i)
    local angle = turn_angle(c, i)
    local size = abs(angle)
    local side = angle > 0 and 1.0 or angle < 0 and -1.0 or c.settings.bend >= 0 and 1.0 or -1.0
    if size > PI - SINGULAR_MARGIN then return -side * SINGULAR_PUSH * (size - (PI - SINGULAR_MARGIN)) / SINGULAR_MARGIN end
    if size < SINGULAR_MARGIN then return side * SINGULAR_PUSH * (SINGULAR_MARGIN - size) / SINGULAR_MARGIN end
    return 0.0
end

-- Whether bone i of c is pushed off straight and folded (off_singular), not off bounds.
local function singular_push(c, i) return c.dim == 2 and c.limit[i].flags == 0 end

local function off_bounds(c, i)
    local l = c.limit[i]
    if c.dim == 2 and l.flags == 0 then
        if i > 0 and c.has_target then return off_singular(c, i) end
        return 0.0
    end
    if not has_bounds(c, i) or l.max - l.min < 4 * REST_MARGIN then return 0.0 end
    local angle = joint_bound_angle(c, i)
    if angle - l.min < REST_MARGIN then return REST_PUSH * (REST_MARGIN - (angle - l.min)) / REST_MARGIN end
    if l.max - angle < REST_MARGIN then return -REST_PUSH * (REST_MARGIN - (l.max - angle)) / REST_MARGIN end
    return 0.0
end

local function isfinite(v) return v - v == 0 end

-- The normal equations of the bones not pinned, solved into rig.y. false: no solution. The
-- pushes come out of the goals' rows: the bounds' from the error, the free joints' alone
-- with SINGULAR_DAMPING, while the step's damping is at most PUSH_MOST_DAMPING times that
-- (see rig_joint.c).
local PUSH_MOST_DAMPING = 1e12

local function dls_solve(rig, m_, lambda2)
    local normal, error, push = rig.normal, rig.error, rig.push
    local pushed = false
    for k = 0, m_ * m_ - 1 do normal[k] = 0.0 end
    for k = 0, m_ - 1 do
        normal[k * m_ + k] = lambda2
        push[k] = 0.0
    end
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        if nd.row >= 0 then
            local ex, ey, ez = v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, nd.eff_x, nd.eff_y, nd.eff_z)
            ex, ey, ez = v3_scale(ex, ey, ez, sqrt(dls_weight(nd)))
            error[nd.row], error[nd.row + 1] = ex, ey
            if rig.dim == 3 then error[nd.row + 2] = ez end
        end
        for i = 0, turns(nd) - 1 do
            if nd.mode[i] >= 0 then
                local axes = joint_axes(nd.chain, i, nd.mode[i], axis)
                for o = 0, axes - 1 do
                    dls_column_of(rig, nd, i, axis[3 * o], axis[3 * o + 1], axis[3 * o + 2])
                    local rows, values, count = col.row, col.value, col.count
                    -- Only the lower half, the one solve_spd reads (speed: the other half
                    -- of the products; each entry sums the same terms in the same order).
                    for a = 0, count - 1 do
                        local ra, va = rows[a], values[a]
                        local at = ra * m_
                        for b = 0, count - 1 do
                            local rb = rows[b]
                            if rb <= ra then
                                local at_b = at + rb
                                normal[at_b] = normal[at_b] + va * values[b]
                            end
                        end
                    end
                end
            end
        end
    end
    if rig.rest then -- the pushes, in the null space of the goals' rows
        for k = 0, rig.count - 1 do
            local nd = rig.node[k]
            for i = 0, turns(nd) - 1 do
                local z = nd.mode[i] < 0 and 0.0 or off_bounds(nd.chain, i)
                local singular = singular_push(nd.chain, i)
                if z ~= 0 and (not singular or lambda2 <= PUSH_MOST_DAMPING * rig.push_lambda2) then
                    joint_axes(nd.chain, i, nd.mode[i], axis)
                    dls_column_of(rig, nd, i, axis[0], axis[1], axis[2])
                    if singular then
                        for a = 0, col.count - 1 do
                            push[col.row[a]] = push[col.row[a]] + col.value[a] * z
                        end
                        pushed = true
                    else
                        for a = 0, col.count - 1 do
                            error[col.row[a]] = error[col.row[a]] - col.value[a] * z
                        end
                    end
                end
            end
        end
    end
    rig.pushing = false
    if pushed then -- (a push that cannot be solved for is left out of the step)
        local push_normal, push_y = rig.push_normal, rig.push_y
        for k = 0, m_ * m_ - 1 do push_normal[k] = normal[k] end
        for k = 0, m_ - 1 do push_normal[k * m_ + k] = normal[k * m_ + k] - lambda2 + rig.push_lambda2 end
        rig.pushing = solve_spd(push_normal, m_, m_, push, push_y)
    end
    if not solve_spd(normal, m_, m_, error, rig.y) then return false end
    if rig.pushing then
        local y, push_y = rig.y, rig.push_y
        for k = 0, m_ - 1 do y[k] = y[k] - push_y[k] end
    end
    for k = 0, m_ - 1 do
        if not isfinite(rig.y[k]) then return false end -- out of the range the model holds in
    end
    return true
end

-- Whether a 2D bone or a 3D hinge would be held back by its bounds from more than half of
-- a turn (at most DLS_MAX_TURN).
local function held_back(c, i, turn)
    local l = c.limit[i]
    if not has_bounds(c, i) then return false end
    turn = clamp(turn, -DLS_MAX_TURN, DLS_MAX_TURN)
    local angle = joint_bound_angle(c, i)
    local to = limit_angle(l, wrap_angle(angle + turn))
    return abs(wrap_angle(to - angle)) < 0.5 * abs(turn)
end

-- a | b for the mode bits (0 to 3): Lua 5.1 has no bitwise operators.
local BOR = { [0] = 0, 1, 2, 3, 1, 1, 3, 3, 2, 3, 2, 3, 3, 3, 3, 3 }
local function bor(a, b) return BOR[4 * a + b] end

-- One step (see rig_joint.c). false: no step.
local DLS_PASSES = 3

local function dls_step(rig, m_, lambda2)
    for k = 0, rig.count - 1 do
        local mode = rig.node[k].mode
        for i = 0, rig.node[k].chain.n do mode[i] = 0 end
    end
    for pass = 0, DLS_PASSES - 1 do
        local more = false
        if not dls_solve(rig, m_, lambda2) then return false end
        if rig.limited == 0 or pass == DLS_PASSES - 1 then break end
        for k = 0, rig.count - 1 do
            local nd = rig.node[k]
            local c = nd.chain
            if c.limited ~= 0 then
                local mode = nd.mode
                for i = 0, turns(nd) - 1 do
                    if not (mode[i] < 0 or c.limit[i].flags == 0) then
                        local axes = dls_delta(rig, nd, i)
                        local blocked = joint_blocked(c, i, dls_turn(nd, i, axes))
                        if blocked == 0 and held_back(c, i, delta[0]) then blocked = -1 end
                        if blocked < 0 then
                            mode[i] = -1
                            more = true
                        elseif bor(blocked, mode[i]) ~= mode[i] then
                            mode[i] = bor(mode[i], blocked)
                            more = true
                        end
                    end
                end
            end
        end
        if not more then break end
    end
    -- Every column from the pose before the step: each chain's bones from its tip down.
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        local c = nd.chain
        for i = turns(nd) - 1, 0, -1 do
            if nd.mode[i] >= 0 then
                local axes = dls_delta(rig, nd, i)
                local tx, ty, tz = dls_turn(nd, i, axes)
                if rig.rest and (rig.pushing or not singular_push(c, i)) then tx = tx + off_bounds(c, i) end
                local size
                if c.dim == 2 or has(c.limit[i].flags, HINGE) then size = abs(tx) else size = v3_len(tx, ty, tz) end
                if size > 0 and isfinite(size) then
                    if size > DLS_MAX_TURN then tx, ty, tz = v3_scale(tx, ty, tz, DLS_MAX_TURN / size) end
                    joint_turn(c, i, tx, ty, tz)
                    chain_mark_stale(c, i)
                end
            end
        end
    end
    return true
end

-- A kick out of a minimum the limits make (see rig_joint.c); most: the largest turn of a
-- bone (radians).
local function dls_kick(rig, most)
    local node = rig.node
    for k = 0, rig.count - 1 do
        local nd = node[k]
        local missed = nd.end_ >= 0
            and v3_len(v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, nd.eff_x, nd.eff_y, nd.eff_z)) > rig.settings.tolerance
        if missed then
            -- a loop's way to the root, and its held point's
            for way = 0, nd.hold >= 0 and 1 or 0 do
                local x = way == 1 and nd.hold or k
                while x >= 0 do
                    local on = node[x]
                    local c = on.chain
                    if not (c.limited == 0 and most == INFINITY) then
                        for i = 0, turns(on) - 1 do
                            local l = c.limit[i]
                            local turned = true
                            if has_bounds(c, i) then
                                local now = joint_bound_angle(c, i)
                                local turn = clamp((l.min + l.max) / 2 - now, -most, most)
                                if c.dim == 2 then
                                    chain_set_turn_angle(c, i, now + turn)
                                else
                                    local r, b = c.rot, 4 * i
                                    r[b], r[b + 1], r[b + 2], r[b + 3] =
                                        limit_rotation(l, q_axis_angle(l.axis_x, l.axis_y, l.axis_z, now + turn))
                                end
                            elseif most < INFINITY then
                                -- A nudge while tracking (see rig_joint.c).
                                local lx, ly, lz = v3_normalize_or(nd.goal_x - c.base_x, nd.goal_y - c.base_y,
                                    nd.goal_z - c.base_z, 1.0, 0.0, 0.0)
                                local sx, sy, sz = chain.chain_bend_side(c, lx, ly, lz)
                                if c.dim == 2 then
                                    local now = turn_angle(c, i)
                                    if abs(now) >= most then
                                        turned = false
                                    else
                                        joint_turn(c, i, (c.settings.bend >= 0 and most or -most) - now, 0.0, 0.0)
                                    end
                                else
                                    local dx, dy, dz = chain.dir_v3(c, i)
                                    local px, py, pz = q_x_axis(parent_wrot(c, i))
                                    if v3_dot(px, py, pz, dx, dy, dz) < cos(most) then
                                        turned = false
                                    else
                                        local cx, cy, cz = v3_cross(dx, dy, dz, sx, sy, sz)
                                        cx, cy, cz = v3_normalize_or(cx, cy, cz, 0.0, 0.0, 0.0)
                                        joint_turn(c, i, v3_scale(cx, cy, cz, most))
                                    end
                                end
                            elseif l.flags ~= 0 then
                                local r, b = c.rot, 4 * i
                                r[b], r[b + 1], r[b + 2], r[b + 3] = limit_rotation(l, 1.0, 0.0, 0.0, 0.0)
                            else
                                turned = false
                            end
                            if turned then chain_mark_stale(c, i) end
                        end
                    end
                    x = node[x].parent
                end
            end
        end
    end
end

-- Kicks a stalled joint-space stage may make, and what stalls it (see rig_joint.c).
local DLS_KICKS = 2
local DLS_SLOW = 12
local DLS_NUDGE = 0.1

-- Steps while the goals are missed and they gain, at most `iterations`; then every chain
-- finished. m_: the rows (rig_dls_rows). Returns the steps tried.
function M.rig_joint_space(rig, iterations, reach, bones, m_, mode)
    local best, unit = INFINITY, reach / bones
    local lambda2 = 0.01 * unit * unit
    local steps, kicks, creeping, since = 0, 0, 0, 0
    local tracking, calm = mode ~= tree.RIG_SOLVE, mode == tree.RIG_CALM
    local kicks_allowed = calm and 0 or tracking and 1 or DLS_KICKS
    local limited = rig.limited ~= 0
    rig.rest = tracking and not calm
    rig.push_lambda2 = SINGULAR_DAMPING * unit * unit
    tree.rig_fk(rig)
    local cost, distance = dls_cost(rig)
    local halved = cost
    local progress = progress_plain(rig.progress_stage, distance, reach)
    while distance > rig.settings.tolerance and steps < iterations do
        dls_pose(rig, false, 0)
        local stalled = not dls_step(rig, m_, lambda2)
        if not stalled then
            steps = steps + 1
            tree.rig_fk(rig)
            local now, largest = dls_cost(rig)
            if now < cost then
                -- gains of less than a percent twice running: a minimum the limits made
                creeping = now > 0.99 * cost and creeping + 1 or 0
                stalled = creeping >= 2
                if now < 0.5 * halved then halved, since = now, 0 end
                cost, distance = now, largest
                lambda2 = lambda2 * 0.25
                if lambda2 < 1e-12 * unit * unit then lambda2 = 1e-12 * unit * unit end
            else
                dls_pose(rig, true, 0)
                tree.rig_fk(rig)
                lambda2 = lambda2 * 8
                stalled = not (lambda2 < 1e12 * unit * unit)
            end
            since = since + 1
            stalled = stalled or progress_next(rig.node[0].chain, progress, distance) == STOP
        end
        -- Tracking: three steps that did not halve the error are a stall worth a nudge;
        -- otherwise, with limits, DLS_SLOW such steps a stall worth a kick (see rig_joint.c).
        if stalled or (tracking and not calm and since >= 3 and (kicks < kicks_allowed or limited))
            or (not tracking and limited and since >= DLS_SLOW and kicks < kicks_allowed) then
            if (not limited and not tracking) or kicks == kicks_allowed then break end
            if cost < best then
                best = cost
                dls_pose(rig, false, 1)
            end
            dls_kick(rig, tracking and DLS_NUDGE or INFINITY)
            kicks = kicks + 1
            tree.rig_fk(rig)
            cost, distance = dls_cost(rig)
            progress = progress_plain(rig.progress_stage, distance, reach)
            lambda2 = 0.01 * unit * unit
            creeping = 0
            halved, since = cost, 0
        end
    end
    if best < cost then
        dls_pose(rig, true, 1)
        tree.rig_fk(rig)
    end
    tree.rig_finish_all(rig)
    return steps
end

return M
