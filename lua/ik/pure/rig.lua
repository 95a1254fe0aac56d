-- ik.pure.rig: src/rig.c in plain Lua, in the same order and with the same arithmetic
-- (chain.lua's and rig_tree.lua's conventions): several chains attached as one tree, solved
-- together. This file keeps the tree (the rig, its checks, what each solve sets up) and runs
-- a solve in its order: the rig solver's passes on the tree's points (rig_fabrik.lua,
-- rig_relax.lua), the bones posed from them, the stages on the bones' rotations
-- (rig_joint.lua), then each limb's own finish. See src/rig.c for the why of each step.
--
-- Not as in the C: there is no block (ik_rig_size and the layout): a rig is a table made by
-- rig_init, with every array a solve uses. The C finds a chain among the rig's by sorting
-- them by address (the chains' order in memory); Lua has no addresses, so a table from each
-- chain to its lowest index does it: what is found is the same (the lowest index of a chain,
-- the later places of a chain given twice), only not how. A result (ik_result) is a table
-- filled in place, as solve.lua's.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local goal = require("ik.pure.goal")
local escape = require("ik.pure.escape")
local tree = require("ik.pure.rig_tree")

local sqrt, abs = math.sqrt, math.abs
local v2_rotate = m.v2_rotate
local v3_add, v3_sub, v3_scale, v3_len, v3_normalize_or = m.v3_add, m.v3_sub, m.v3_scale, m.v3_len, m.v3_normalize_or
local q_mul, q_rotate, q_from_to, q_x_axis = m.q_mul, m.q_rotate, m.q_from_to, m.q_x_axis
local joint_at, set_joint, pulls, is_limb = tree.joint_at, tree.set_joint, tree.pulls, tree.is_limb
local chain_fk, chain_changed, chain_take_base = chain.chain_fk, chain.chain_changed, chain.chain_take_base
local chain_follow_parent, chain_follow = chain.chain_follow_parent, chain.chain_follow
local chain_settle, chain_mark_stale = chain.chain_settle, chain.chain_mark_stale
local chain_reach_to, hold_point, chain_read_hold = chain.chain_reach_to, chain.hold_point, chain.chain_read_hold
local goal_direction, orient_tip = goal.goal_direction, goal.orient_tip
local hold_turns, save_pose = goal.hold_turns, goal.save_pose
local tip_distance, orientation_error = goal.tip_distance, goal.orientation_error
local chain_clamp_limits, pose_points = limits.chain_clamp_limits, limits.pose_points
local progress_plain, progress_next, STOP = escape.progress_plain, escape.progress_next, escape.STOP

local OK = chain.OK
local INFINITY = math.huge

-- The C keeps the chains a node hung on when the rig was made (its parent, its tip's
-- holder) as pointers, compared and never followed. Here they are values of a weak table:
-- a rig must not keep a chain outside it alive once its root is detached from it (the C
-- module's rig does not). A chain that is still some chain's parent is alive, so one that
-- was collected can only differ from what the chain holds now.
local WEAK_VALUES = { __mode = "v" }
local SOLVER_FABRIK, SOLVER_RELAX = chain.SOLVER_FABRIK, chain.SOLVER_RELAX

local M = {}

function M.rig_default_settings(s)
    s = s or {}
    s.solver = SOLVER_FABRIK
    s.iterations = 64
    s.tolerance = 1e-3
    s.angle_tolerance = 1e-3
    return s
end

-- ---- the rig ----

local function zeros(count)
    local t = {}
    for k = 0, count - 1 do t[k] = 0 end
    return t
end

local function zeros_real(count)
    local t = {}
    for k = 0, count - 1 do t[k] = 0.0 end
    return t
end

-- The heap sort of rig.c's sort_indices, on v[at .. at + count - 1], by parent joint,
-- highest first (equal joints: the lower index first). A total order: the C's result.
local function before(node, a, b)
    local ja, jb = node[a].parent_joint, node[b].parent_joint
    if ja ~= jb then return ja > jb end
    return a < b
end

local function sift_down(node, v, base, i, count)
    while true do
        local child = 2 * i + 1
        if child >= count then return end
        if child + 1 < count and before(node, v[base + child], v[base + child + 1]) then child = child + 1 end
        if not before(node, v[base + i], v[base + child]) then return end
        v[base + i], v[base + child] = v[base + child], v[base + i]
        i = child
    end
end

local function sort_indices(node, v, base, count)
    for k = math.floor(count / 2) - 1, 0, -1 do sift_down(node, v, base, k, count) end
    for k = count - 1, 1, -1 do
        v[base], v[base + k] = v[base + k], v[base]
        sift_down(node, v, base, 0, k)
    end
end

-- The node of chain c in the rig, or -1 (rig.c's node_of; see the top).
local function node_of(rig, c)
    local k = rig.index[c]
    if k == nil then return -1 end
    return k
end

-- Whether root node k hangs, through chains outside the rig, below a chain of the rig.
local function root_carried(rig, k)
    local x = rig.node[k].chain.parent
    while x do
        if node_of(rig, x) >= 0 then return true end
        x = x.parent
    end
    return false
end

-- The representative of k's set (union-find in set, paths halved on the way).
local function set_of(set, k)
    while set[k] ~= k do
        set[k] = set[set[k]]
        k = set[k]
    end
    return k
end

-- The tree's checks, in the chains' order, the first failure to blame: the status and the
-- culprit (-1: none). Sets each node's parent and hold.
local function check_tree(rig, chains, count)
    local index, node = rig.index, rig.node
    local roots = 0
    for k = count - 1, 0, -1 do index[chains[k]] = k end -- the lowest index of each chain
    for k = 0, count - 1 do
        local c = chains[k]
        if c.dim ~= chains[0].dim then return chain.ERR_DIMENSION, k end
        if index[c] ~= k then return chain.ERR_NOT_A_TREE, k end -- a chain's later places
        node[k].parent = c.parent and index[c.parent] or -1
        node[k].hold = c.tip_parent and index[c.tip_parent] or -1
        if node[k].parent < 0 then roots = roots + 1 end
    end
    if roots == 1 then return OK, -1 end
    local set = {}
    for k = 0, count - 1 do set[k] = k end
    for k = 0, count - 1 do
        local nd = node[k]
        if nd.parent >= 0 then set[set_of(set, k)] = set_of(set, nd.parent) end
        if nd.hold >= 0 then set[set_of(set, k)] = set_of(set, nd.hold) end
    end
    for k = 1, count - 1 do
        if set_of(set, k) ~= set_of(set, 0) then return chain.ERR_NOT_A_TREE, k end
    end
    for k = 0, count - 1 do node[k].chain = chains[k] end
    for k = 0, count - 1 do
        if node[k].parent < 0 and root_carried(rig, k) then return chain.ERR_NOT_A_TREE, k end
    end
    return OK, -1
end

local function new_node(c)
    local n = c.n
    return {
        chain = c, had_parent = false, parent_joint = 0, links = 0, parent = -1, first = 0, kids = 0,
        above = zeros(n + 1), pre = 0, size = 0, end_ = 0, top = 0, last = 0,
        goal_x = 0.0, goal_y = 0.0, goal_z = 0.0, weight = 0.0, subtree = 0.0,
        beyond = zeros_real(n + 1), relaxed = zeros_real(3 * (n + 1)),
        eff_x = 0.0, eff_y = 0.0, eff_z = 0.0, row = 0, saved = zeros_real(16 * (n + 1)), mode = zeros(n + 1),
        had_tip_parent = false, tip_joint = 0, holds = 0, hold = -1, moves = 0, reach = 0.0, inner = 0.0,
    }
end

-- chains: count chains, 0-based. The status, the rig (or nil) and the culprit (-1: none).
function M.rig_init(chains, count)
    if count < 1 then return chain.ERR_COUNT, nil, -1 end
    if count > chain.MAX_BONES then return chain.ERR_TOO_LARGE, nil, -1 end
    local rig = {
        count = count, dim = chains[0].dim, settings = M.rig_default_settings(), omega = 0.0, rest = false,
        node = {}, order = zeros(count), kid = zeros(count), dfs = zeros(count), goals = zeros(count),
        goal_at = zeros(count + 1), goal_count = 0, limited = 0, loops = zeros(count), loop_count = 0,
        index = {}, normal = zeros_real(tree.DLS_ROWS * tree.DLS_ROWS), error = zeros_real(tree.DLS_ROWS),
        y = zeros_real(tree.DLS_ROWS), progress = {}, progress_stage = {},
        push_normal = zeros_real(tree.DLS_ROWS * tree.DLS_ROWS), push = zeros_real(tree.DLS_ROWS),
        push_y = zeros_real(tree.DLS_ROWS), push_lambda2 = 0.0, pushing = false,
        made_on = setmetatable({}, WEAK_VALUES),
    }
    for k = 0, count - 1 do rig.node[k] = new_node(chains[k]) end
    local st, culprit = check_tree(rig, chains, count)
    if st ~= OK then return st, nil, culprit end
    local node, kid, order, dfs = rig.node, rig.kid, rig.order, rig.dfs
    for k = 0, count - 1 do
        local nd, c = node[k], chains[k]
        nd.chain = c
        nd.had_parent = c.parent ~= nil
        rig.made_on[2 * k] = c.parent
        nd.links = c.links
        nd.parent_joint = c.parent_joint
        nd.had_tip_parent = c.tip_parent ~= nil
        rig.made_on[2 * k + 1] = c.tip_parent
        nd.tip_joint = c.tip_joint
        nd.holds = c.holds
        if nd.hold >= 0 then
            rig.loops[rig.loop_count] = k
            rig.loop_count = rig.loop_count + 1
        end
        if nd.parent >= 0 then node[nd.parent].kids = node[nd.parent].kids + 1 end
    end
    -- Children grouped by parent (counted, then placed), each group by joint, highest first.
    local next_ = 0
    for k = 0, count - 1 do
        node[k].first = next_
        next_ = next_ + node[k].kids
        node[k].kids = 0
    end
    for k = 0, count - 1 do
        local parent = node[k].parent >= 0 and node[node[k].parent] or nil
        if parent then
            kid[parent.first + parent.kids] = k
            parent.kids = parent.kids + 1
        end
    end
    for k = 0, count - 1 do
        local nd = node[k]
        local at = 0
        sort_indices(node, kid, nd.first, nd.kids)
        for j = nd.chain.n, 0, -1 do
            while at < nd.kids and node[kid[nd.first + at]].parent_joint > j do at = at + 1 end
            nd.above[j] = at
        end
    end
    -- Parents before children: the roots, then each placed node's children, breadth first.
    next_ = 0
    for k = 0, count - 1 do
        if node[k].parent < 0 then
            order[next_] = k
            next_ = next_ + 1
        end
    end
    local done = 0
    while done < next_ do
        local nd = node[order[done]]
        for j = 0, nd.kids - 1 do
            order[next_] = kid[nd.first + j]
            next_ = next_ + 1
        end
        done = done + 1
    end
    -- Depth first, children in their order: subtree sizes from the leaves in, then places.
    for k = count - 1, 0, -1 do
        local nd = node[order[k]]
        nd.size = 1
        for j = 0, nd.kids - 1 do nd.size = nd.size + node[kid[nd.first + j]].size end
    end
    next_ = 0
    local k = 0
    while k < count and node[order[k]].parent < 0 do -- each root's run
        node[order[k]].pre = next_
        next_ = next_ + node[order[k]].size
        k = k + 1
    end
    for o = 0, count - 1 do
        local nd = node[order[o]]
        next_ = nd.pre + 1
        dfs[nd.pre] = order[o]
        for j = 0, nd.kids - 1 do
            node[kid[nd.first + j]].pre = next_
            next_ = next_ + node[kid[nd.first + j]].size
        end
    end
    return OK, rig, -1
end

function M.rig_chain_count(rig) return rig.count end

function M.rig_chain(rig, k)
    if k >= 0 and k < rig.count then return rig.node[k].chain end
    return nil
end

function M.rig_settings_of(rig) return rig.settings end

local function isfinite(v) return v - v == 0 end

function M.rig_configure(rig, s)
    if s.solver ~= SOLVER_FABRIK and s.solver ~= SOLVER_RELAX then return chain.ERR_RIG_SOLVER end
    if s.iterations < 1 then return chain.ERR_ITERATIONS end
    if not (isfinite(s.tolerance) and s.tolerance >= 0) then return chain.ERR_TOLERANCE end
    if not (isfinite(s.angle_tolerance) and s.angle_tolerance >= 0) then return chain.ERR_ANGLE_TOLERANCE end
    local to = rig.settings
    to.solver, to.iterations = s.solver, s.iterations
    to.tolerance = s.tolerance + 0.0
    to.angle_tolerance = s.angle_tolerance + 0.0
    return OK
end

-- ---- a solve's set-up ----

local goal_of

-- Each chain's goal, and which joints the passes move: children first, so each chain sees
-- its children's subtrees. Returns the number of goals.
local function set_up(rig)
    local node, order, kid = rig.node, rig.order, rig.kid
    local goals, largest = 0, 0.0
    for o = 0, rig.count - 1 do
        local nd = node[order[o]]
        if nd.chain.has_target then
            goals = goals + 1
            if nd.chain.settings.effector_weight > largest then largest = nd.chain.settings.effector_weight end
        end
    end
    for o = rig.count - 1, 0, -1 do
        local nd = node[order[o]]
        local c = nd.chain
        local oriented = c.has_target and c.has_orientation
        nd.moves = -1
        nd.last = oriented and c.n - 1 or c.n
        nd.end_ = c.has_target and nd.last or -1
        nd.top = nd.end_
        -- In units of the largest, so weights near 1e308, and their sums, stay finite.
        if not c.has_target then
            nd.weight = 0.0
        elseif largest > 0 then
            nd.weight = c.settings.effector_weight / largest
        else
            nd.weight = 1.0
        end
        if c.has_target then nd.goal_x, nd.goal_y, nd.goal_z = goal_of(nd) end
        local longest
        nd.reach, longest = chain_reach_to(c, nd.end_)
        nd.inner = 2 * longest - nd.reach
        nd.subtree = nd.weight
        -- From the tip down, the children's goals summed as their joints are passed.
        local k, kids = 0, 0.0
        for j = c.n, 0, -1 do
            while k < nd.kids and node[kid[nd.first + k]].parent_joint > j do
                local kd = kid[nd.first + k]
                local at = node[kd].parent_joint
                if pulls(rig, nd, kd) then
                    if at > nd.top then nd.top = at end
                    kids = kids + node[kd].subtree
                    nd.subtree = nd.subtree + node[kd].subtree
                end
                k = k + 1
            end
            nd.beyond[j] = (nd.end_ > j and nd.weight or 0.0) + kids
        end
        while k < nd.kids do -- those on joint 0: beyond no joint
            local kd = kid[nd.first + k]
            if pulls(rig, nd, kd) then
                if nd.top < 0 then nd.top = 0 end
                nd.subtree = nd.subtree + node[kd].subtree
            end
            k = k + 1
        end
    end
    -- What the joint-space stage turns: a loop's held point bends its chain up to it, and
    -- every chain on the way to a root (children first, so a parent sees its children's).
    for o = 0, rig.loop_count - 1 do
        local nd = node[rig.loops[o]]
        local held = node[nd.hold]
        if nd.chain.tip_joint > held.moves then held.moves = nd.chain.tip_joint end
    end
    for o = rig.count - 1, 0, -1 do
        local nd = node[order[o]]
        if nd.top > nd.moves then nd.moves = nd.top end
        if nd.moves >= 0 and nd.parent >= 0 and nd.parent_joint > node[nd.parent].moves then
            node[nd.parent].moves = nd.parent_joint
        end
    end
    return goals
end

-- Where node nd's goal puts joint end: the target, or behind it with an orientation goal.
function goal_of(nd)
    local c = nd.chain
    if nd.last < c.n then
        local dx, dy, dz = goal_direction(c)
        return v3_sub(c.target_x, c.target_y, c.target_z, v3_scale(dx, dy, dz, c.length[c.n - 1]))
    end
    return c.target_x, c.target_y, c.target_z
end

-- The point held at joint j of c as the passes' points put it (see rig.c).
local function held_on_points(c, j, ox, oy, oz)
    local ax, ay, az = joint_at(c, j)
    if (ox == 0 and oy == 0 and oz == 0) or j == 0 then return hold_point(c, j, ox, oy, oz) end
    local px, py, pz = joint_at(c, j - 1)
    local dx, dy, dz = v3_sub(ax, ay, az, px, py, pz)
    if c.dim == 2 then
        local size = sqrt(dx * dx + dy * dy)
        local ux, uy
        if size > 0 then
            ux, uy = dx / size, dy / size
        else
            ux, uy = c.dir[2 * (j - 1)], c.dir[2 * (j - 1) + 1]
        end
        local vx, vy = v2_rotate(ox, oy, ux, uy)
        return ax + vx, ay + vy, 0.0
    end
    local r, i = c.wrot, 4 * (j - 1)
    local w, x, y, z = r[i], r[i + 1], r[i + 2], r[i + 3]
    local xx, xy, xz = q_x_axis(w, x, y, z)
    local ux, uy, uz = v3_normalize_or(dx, dy, dz, xx, xy, xz)
    local tw, tx, ty, tz = q_from_to(xx, xy, xz, ux, uy, uz)
    tw, tx, ty, tz = q_mul(tw, tx, ty, tz, w, x, y, z)
    return v3_add(ax, ay, az, q_rotate(tw, tx, ty, tz, ox, oy, oz))
end

-- The loops' goals where their held points are: posed (points false), or as the passes'
-- points put them (true).
local function rig_read_loops(rig, points)
    local node = rig.node
    for k = 0, rig.loop_count - 1 do
        local nd = node[rig.loops[k]]
        local c = nd.chain
        local held = node[nd.hold].chain
        local read = points and held_on_points or hold_point
        c.target_x, c.target_y, c.target_z = read(held, c.tip_joint, c.tip_offset_x, c.tip_offset_y, c.tip_offset_z)
        if nd.end_ >= 0 then nd.goal_x, nd.goal_y, nd.goal_z = goal_of(nd) end
    end
end
tree.rig_read_loops = rig_read_loops

-- After a forward pass: an oriented chain's tip along its goal's direction.
local function rig_place_tip(nd)
    local c = nd.chain
    if nd.last < c.n and nd.end_ >= 0 then
        local x, y, z = joint_at(c, c.n - 1)
        local dx, dy, dz = goal_direction(c)
        set_joint(c, c.n, v3_add(x, y, z, v3_scale(dx, dy, dz, c.length[c.n - 1])))
    end
end
tree.rig_place_tip = rig_place_tip

-- The largest distance of a goal's joint from its goal now.
local function rig_worst(rig)
    local largest = 0.0
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        if nd.end_ >= 0 then
            local c = nd.chain
            local x, y, z = joint_at(c, c.n)
            local d = v3_len(v3_sub(c.target_x, c.target_y, c.target_z, x, y, z))
            if d > largest then largest = d end
        end
    end
    return largest
end
tree.rig_worst = rig_worst

-- ---- the way out ----

local function goal_distance(nd)
    local x, y, z = joint_at(nd.chain, nd.end_)
    return v3_len(v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, x, y, z))
end

-- The last word on chain nd's pose: its orientation goal, max_turn, then every bone's limits.
local function rig_finish_chain(nd)
    local c = nd.chain
    if nd.end_ >= 0 and c.has_orientation then orient_tip(c) end
    if c.settings.max_turn < INFINITY then hold_turns(c, c.settings.max_turn) end
    chain_clamp_limits(c)
    chain_fk(c)
end
tree.rig_finish_chain = rig_finish_chain

-- Chain nd posed from its joints (bones 0..hi-1), then finished.
local function pose_chain(nd)
    local c = nd.chain
    local hi = nd.top < nd.last and nd.top or nd.last
    c.pose_behind = false -- the joints were working points: the pose comes from them now
    if hi > 0 then pose_points(c, c.joint, 0, hi) else c.stale_from = 0 end
    chain_fk(c)
    rig_finish_chain(nd)
end

-- Poses every chain from the rig's joints, parents first (see rig.c).
local function pose_all(rig)
    local tolerance = rig.settings.tolerance
    for o = 0, rig.count - 1 do
        local nd = rig.node[rig.order[o]]
        local c = nd.chain
        local wx, wy, wz = joint_at(c, 0)
        local moved = false
        if nd.parent >= 0 then
            chain_take_base(c)
            local x, y, z = joint_at(c, 0)
            moved = x ~= wx or y ~= wy or z ~= wz
        end
        pose_chain(nd)
        if moved and is_limb(nd) and goal_distance(nd) > tolerance then
            tree.rig_limb_forward(rig, nd)
            pose_chain(nd)
        end
        chain_changed(c)
        if nd.parent >= 0 then c.parent_seen = c.parent.version end
    end
    rig_read_loops(rig, false)
end

-- Keeps (back false) or puts back (true) the local pose of bones 0..bones-1 of node nd, in
-- place `which` (0 to 3) of nd.saved.
local function rig_keep_pose(nd, bones, back, which)
    local c = nd.chain
    local v = nd.saved
    local at = which * 4 * (c.n + 1)
    for i = 0, bones - 1 do
        if c.dim == 2 then
            if back then
                c.turn[2 * i], c.turn[2 * i + 1], c.angle[i] = v[at], v[at + 1], v[at + 2]
            else
                v[at], v[at + 1], v[at + 2] = c.turn[2 * i], c.turn[2 * i + 1], c.angle[i]
            end
        else
            local r = c.rot
            if back then
                r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3] = v[at], v[at + 1], v[at + 2], v[at + 3]
            else
                v[at], v[at + 1], v[at + 2], v[at + 3] = r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]
            end
        end
        at = at + 4
    end
    if back and bones > 0 then chain_mark_stale(c, 0) end
end
tree.rig_keep_pose = rig_keep_pose

-- Limbs with limits that the passes left short of their goals: each one's own sweeps within
-- its limits (ik_escape_finish); a limb the sweeps left farther from its goal keeps its pose
-- from before them (rig.c). Returns the most sweeps a limb took.
local function finish_limbs(rig, iterations)
    local most = 0
    for o = 0, rig.count - 1 do
        local nd = rig.node[rig.order[o]]
        local c = nd.chain
        if is_limb(nd) and c.limited ~= 0 and goal_distance(nd) > rig.settings.tolerance then
            local before = goal_distance(nd)
            rig_keep_pose(nd, c.n, false, 0)
            local sweeps = escape.escape_finish(c, nd.goal_x, nd.goal_y, nd.goal_z, nd.end_, iterations, 0)
            if sweeps > most then most = sweeps end
            rig_finish_chain(nd)
            if not (goal_distance(nd) < before) then -- farther: the pose before (finished) stands
                rig_keep_pose(nd, c.n, true, 0)
                chain_fk(c)
            end
            chain_changed(c)
        end
    end
    return most
end

-- ---- the goals, and the chains brought up to date ----

-- Lists the nodes with a goal in dfs order (after set_up).
local function index_goals(rig)
    local node, dfs, goals, goal_at = rig.node, rig.dfs, rig.goals, rig.goal_at
    local count = 0
    for p = 0, rig.count - 1 do
        goal_at[p] = count
        if node[dfs[p]].end_ >= 0 then
            goals[count] = dfs[p]
            count = count + 1
        end
    end
    goal_at[rig.count] = count
    rig.goal_count = count
end

-- Every chain's world data from its local pose, parents first.
local function rig_fk(rig)
    for o = 0, rig.count - 1 do
        local nd = rig.node[rig.order[o]]
        local c = nd.chain
        chain_follow_parent(c)
        chain_fk(c)
        chain_changed(c)
        if nd.end_ >= 0 then nd.eff_x, nd.eff_y, nd.eff_z = joint_at(c, nd.end_) end
    end
    rig_read_loops(rig, false)
end
tree.rig_fk = rig_fk

-- Every chain finished (orientation goals, max_turn, limits), parents first.
local function rig_finish_all(rig)
    for o = 0, rig.count - 1 do
        local nd = rig.node[rig.order[o]]
        chain_follow_parent(nd.chain)
        rig_finish_chain(nd)
        chain_changed(nd.chain)
    end
    rig_read_loops(rig, false)
end
tree.rig_finish_all = rig_finish_all

-- ---- the solve ----

-- How a solve shares its iterations between the passes and the joint-space stage (rig.c).
local DLS_CREEP = 0.9
local DLS_NEAR = 1.0

-- Whether every goal lies within the reach of the bones from the root's base to it.
local function within_reach(rig)
    local node = rig.node
    for k = 0, rig.count - 1 do
        local nd = node[k]
        if nd.end_ >= 0 then
            local reach = nd.reach
            local x = k
            while node[x].parent >= 0 do
                reach = reach + (chain_reach_to(node[node[x].parent].chain, node[x].parent_joint))
                x = node[x].parent
            end
            local c = node[x].chain
            if not (v3_len(v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, c.base_x, c.base_y, c.base_z)) <= reach) then
                return false
            end
        end
    end
    return true
end

-- Whether a chain a node hangs on (slot 2k: its parent, 2k + 1: its tip's holder) is the one
-- it hung on when the rig was made (had: whether there was one).
local function same_as_made(rig, slot, had, now)
    if now == nil then return not had end
    return rig.made_on[slot] == now
end

-- The tree as it was made (see rig.c).
local function check_unchanged(rig)
    local roots = 0
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        local c = nd.chain
        if not same_as_made(rig, 2 * k, nd.had_parent, c.parent) or c.parent_joint ~= nd.parent_joint
            or (nd.parent < 0 and c.parent and c.links ~= nd.links) then
            return chain.ERR_RIG_CHANGED
        end
        if not same_as_made(rig, 2 * k + 1, nd.had_tip_parent, c.tip_parent) or c.tip_joint ~= nd.tip_joint
            or (nd.hold < 0 and c.tip_parent and c.holds ~= nd.holds) then
            return chain.ERR_RIG_CHANGED
        end
        if nd.parent < 0 then roots = roots + 1 end
    end
    -- Several roots: a chain outside may have been attached below the rig since.
    local k = 0
    while k < rig.count and roots > 1 do
        if rig.node[k].parent < 0 and root_carried(rig, k) then return chain.ERR_RIG_CHANGED end
        k = k + 1
    end
    return OK
end

-- A rig solver: its passes on the tree's points (an iteration), what they need first, and
-- how the over-relaxation at sub-bases follows an iteration's gain.
local fabrik = require("ik.pure.rig_fabrik")
local relax = require("ik.pure.rig_relax")
local joint = require("ik.pure.rig_joint")
local RIG_SOLVE, RIG_TRACK, RIG_CALM = tree.RIG_SOLVE, tree.RIG_TRACK, tree.RIG_CALM

local FABRIK = { start = nil, iteration = fabrik.rig_fabrik_iteration, omega = fabrik.rig_fabrik_omega }
local RELAX = { start = relax.rig_relax_start, iteration = relax.rig_relax_iteration, omega = relax.rig_relax_omega }

local function solver_of(rig)
    if rig.settings.solver == SOLVER_RELAX then return RELAX end
    return FABRIK
end

-- The solver's passes on the goals' points, at most `iterations`; with hand_over they stop
-- where they creep (DLS_CREEP). Returns the iterations used.
local function passes(rig, iterations, progress, hand_over)
    local solver = solver_of(rig)
    local distance = rig_worst(rig)
    local iter = 0
    if solver.start then solver.start(rig) end
    while distance > rig.settings.tolerance and iter < iterations do
        local before_ = distance
        solver.iteration(rig)
        iter = iter + 1
        rig_read_loops(rig, true)
        distance = rig_worst(rig)
        rig.omega = solver.omega(rig.omega, before_, distance)
        if progress_next(rig.node[0].chain, progress, distance) == STOP then break end
        -- Creeping: the passes have done what they do fast, joint space does the rest.
        if hand_over and distance > DLS_CREEP * before_ then break end
    end
    return iter
end

-- A tracked frame's calm retry (see rig.c): a frame whose answer turned a joint more than
-- TRACK_JUMP from where it began is tried again from there by the steps alone.
local TRACK_JUMP_COS = 0.98006657784124163      -- cos(TRACK_JUMP), TRACK_JUMP 0.2
local TRACK_JUMP_COS_HALF = 0.99500416527802582 -- cos(TRACK_JUMP / 2): a quaternion's w

-- Whether some bone turned more than TRACK_JUMP from the frame's start (place 2).
local function jumped(rig)
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        local c, v = nd.chain, nd.saved
        local at = 2 * 4 * (c.n + 1)
        for i = 0, c.n - 1 do
            if c.dim == 2 then
                if not (v[at] * c.turn[2 * i] + v[at + 1] * c.turn[2 * i + 1] >= TRACK_JUMP_COS) then return true end
            else
                local r, q = c.rot, 4 * i
                if not (abs(v[at] * r[q] + v[at + 1] * r[q + 1] + v[at + 2] * r[q + 2] + v[at + 3] * r[q + 3])
                        >= TRACK_JUMP_COS_HALF) then
                    return true
                end
            end
            at = at + 4
        end
    end
    return false
end

local function keep_all(rig, back, which)
    for k = 0, rig.count - 1 do rig_keep_pose(rig.node[k], rig.node[k].chain.n, back, which) end
    if back then rig_fk(rig) end
end

-- A solve's answer as it stands into out (distance, angle_error, reached; not iterations).
local function measure(rig, out)
    out.distance = 0.0
    out.angle_error = 0.0
    for k = 0, rig.count - 1 do
        local c = rig.node[k].chain
        if c.has_target then
            local distance = tip_distance(c)
            if distance > out.distance then out.distance = distance end
            if c.has_orientation then
                local e = orientation_error(c)
                if e > out.angle_error then out.angle_error = e end
            end
        end
    end
    out.reached = out.distance <= rig.settings.tolerance and out.angle_error <= rig.settings.angle_tolerance
end

-- The retry, with `iterations` left; returns the steps it took.
local retry_result = { distance = 0.0, angle_error = 0.0, reached = false } -- (no garbage a frame)
local function calm_retry(rig, iterations, reach, bones, m_)
    keep_all(rig, false, 3)
    keep_all(rig, true, 2)
    local steps = joint.rig_joint_space(rig, iterations, reach, bones, m_, RIG_CALM)
    measure(rig, retry_result)
    if not retry_result.reached or jumped(rig) then keep_all(rig, true, 3) end
    return steps
end

-- out: a table with the fields of ik_result, filled. Returns the status.
function M.rig_solve(rig, out)
    local s = rig.settings
    local node, order = rig.node, rig.order
    local reach, iter, goals, bones = 0.0, 0, 0, 0
    local budget = chain.iteration_budget(s.iterations)
    local st = check_unchanged(rig)
    if st ~= OK then return st end

    rig.limited = 0
    for o = 0, rig.count - 1 do
        if node[o].chain.has_target then goals = goals + 1 end
        if node[o].chain.limited > 0 then rig.limited = rig.limited + 1 end
    end
    -- Every chain current, its base where its parent (or the chain outside) puts it.
    for o = 0, rig.count - 1 do
        local c = node[order[o]].chain
        if node[order[o]].parent < 0 then chain_follow(c) else chain_follow_parent(c) end
        chain_settle(c)
        chain_fk(c)
        c.kicked = false
        if goals > 0 and c.scale ~= 1 then -- rigs do not stretch: back to the bones' own lengths
            c.scale = 1.0
            c.stale_from = 0
            chain_fk(c)
        end
        reach = reach + c.reach
        bones = bones + c.n
    end
    -- Each held tip's goal where its held point is now (a chain outside: a fixed goal).
    for o = 0, rig.count - 1 do chain_read_hold(node[o].chain) end
    out.iterations = 0
    out.angle_error = 0.0
    if set_up(rig) == 0 then
        out.reached = true
        out.distance = 0.0
        return OK
    end
    index_goals(rig)
    for o = 0, rig.count - 1 do
        if node[o].chain.settings.max_turn < INFINITY then save_pose(node[o].chain) end
    end

    for o = 0, rig.count - 1 do rig_place_tip(node[o]) end
    local distance = rig_worst(rig)
    local progress = progress_plain(rig.progress, distance, reach)
    rig.omega = 2.0
    local m_ = joint.rig_dls_rows(rig, reach)
    local near = m_ > 0 and distance > s.tolerance and distance < DLS_NEAR * reach / bones
    local hand_over = m_ > 0 and not near and distance > s.tolerance and within_reach(rig)
    if near then -- tracking: joint space from last frame's pose, which moves it smoothly
        keep_all(rig, false, 2)
        iter = joint.rig_joint_space(rig, budget, reach, bones, m_, RIG_TRACK)
    elseif rig.loop_count > 0 and hand_over then
        -- Loops, every goal within reach: joint space at once (see rig.c).
        iter = joint.rig_joint_space(rig, budget, reach, bones, m_, RIG_SOLVE)
    else
        iter = passes(rig, budget, progress, hand_over)
        pose_all(rig)
        -- Measured again: posing within the limits may have moved what the passes placed.
        if iter < budget and rig_worst(rig) > s.tolerance then
            if m_ > 0 then
                iter = iter + joint.rig_joint_space(rig, budget - iter, reach, bones, m_, RIG_SOLVE)
            elseif rig.limited ~= 0 and joint.rig_dls_in_range(rig, reach) then
                iter = iter + joint.rig_tree_sweeps(rig, budget - iter, reach)
            end
        end
    end
    if iter < budget and rig_worst(rig) > s.tolerance then iter = iter + finish_limbs(rig, budget - iter) end
    if near and iter < budget and jumped(rig) then iter = iter + calm_retry(rig, budget - iter, reach, bones, m_) end
    rig_read_loops(rig, false) -- where the last word left the held points

    out.iterations = iter
    measure(rig, out)
    return OK
end

return M
