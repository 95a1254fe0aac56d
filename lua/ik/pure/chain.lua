-- ik.pure.chain: src/chain.c in plain Lua (with what src/ik.h and src/chain.h define for
-- it), function for function, in the same order and with the same arithmetic.
--
-- A chain is a table with the fields of struct ik_chain. Small vectors are flattened with
-- suffixes (base_x, base_y, base_z; base_rot_w .. base_rot_z); the arrays are flat and
-- 0-based with the C's index formula (joint[i * dim + k], turn[2 * i], rot[4 * i] .. + 3 as
-- w, x, y, z), every one made and filled at creation, so later calls allocate nothing. The
-- C's int flags are booleans here (pose_behind, has_target ...); counts, indices and
-- versions are integers; every coordinate is a float. A status is an integer (OK = 0),
-- returned first, with the values a C function writes through its out pointers after it.
-- Vectors passed in or out are multiple values (ik.pure.math).

local m = require("ik.pure.math")

local abs, max, atan2 = math.abs, math.max, math.atan2 or math.atan
local v2_add, v2_sub, v2_scale, v2_rotate, v2_unrotate = m.v2_add, m.v2_sub, m.v2_scale, m.v2_rotate, m.v2_unrotate
local v2_renorm, v2_normalize_or, v2_turn, v2_len, wrap_angle = m.v2_renorm, m.v2_normalize_or, m.v2_turn, m.v2_len, m.wrap_angle
local v3_add, v3_sub, v3_scale, v3_dot, v3_len = m.v3_add, m.v3_sub, m.v3_scale, m.v3_dot, m.v3_len
local v3_normalize_or, v3_any_perpendicular = m.v3_normalize_or, m.v3_any_perpendicular
local q_mul, q_normalize, q_rotate, q_x_axis, q_from_to = m.q_mul, m.q_normalize, m.q_rotate, m.q_x_axis, m.q_from_to
local q_turn = m.q_turn

local M = {}

-- ---- from ik.h ----

M.VERSION = "0.2.0"
M.MAX_COORD = 1e300
M.MAX_BONES = 16777216 -- 2^24
M.MAX_ITERATIONS = 16384
M.STALL_ITERATIONS = 8
-- chain.h: a goal within this fraction of the reach from the tip is tracked.
M.TRACK_NEAR = 0.15
local MAX_COORD, MAX_BONES = M.MAX_COORD, M.MAX_BONES

-- The statuses in ik.h's order (M.OK = 0, M.ERR_COUNT = 1, ...) and ik_status_string's
-- messages.
local statuses = {
    { "OK", "ok" },
    { "ERR_COUNT", "at least one bone expected" },
    { "ERR_TOO_LARGE", "too many bones" },
    { "ERR_NO_MEMORY", "not enough memory" },
    { "ERR_NOT_FINITE", "number has no finite value" },
    { "ERR_NEGATIVE", "must not be negative" },
    { "ERR_INDEX", "index out of range" },
    { "ERR_ITERATIONS", "iterations must be an integer >= 1" },
    { "ERR_TOLERANCE", "tolerance must be a finite number >= 0" },
    { "ERR_GREED", "greed must be in (0, 1]" },
    { "ERR_BEND", "bend must be 1 or -1" },
    { "ERR_SOLVER", "solver must be 'fabrik', 'ccd', 'relax', 'two_bone' or 'aim'" },
    { "ERR_NOT_TWO_BONE", "the two-bone solver needs a chain of 2 bones (3 with an orientation goal)" },
    { "ERR_DIMENSION", "wrong dimension for this chain" },
    { "ERR_ZERO_ROTATION", "quaternion has zero length" },
    { "ERR_POLE", "pole must be a nonzero finite direction, on a 3D chain" },
    { "ERR_MIX", "mix must be in [0, 1]" },
    { "ERR_SOFTNESS", "softness must be a finite number >= 0" },
    { "ERR_LIMIT_RANGE", "limits must satisfy -pi <= min <= max <= pi" },
    { "ERR_AXIS", "axis must be a nonzero finite direction" },
    { "ERR_CONE", "half angle must be in [0, pi]" },
    { "ERR_RANGE", "number out of range (magnitude above 1e300)" },
    { "ERR_ANGLE_TOLERANCE", "angle_tolerance must be a finite number >= 0" },
    { "ERR_MAX_TURN", "max_turn must be a number > 0 (math.huge: no limit)" },
    { "ERR_EFFECTOR_WEIGHT", "effector_weight must be a finite number >= 0" },
    { "ERR_NO_TARGET", "no target: give one, or set_target first" },
    { "ERR_ATTACHED", "the chain is attached to a parent (detach it first)" },
    { "ERR_CYCLE", "attaching would make the chain its own ancestor" },
    { "ERR_NOT_A_TREE", "the chains do not form one tree" },
    { "ERR_RIG_CHANGED", "the rig's chains were attached or detached since it was made" },
    { "ERR_RIG_SOLVER", "a rig's solver must be 'fabrik' or 'relax'" },
    { "ERR_GRAVITY", "gravity must have finite components of magnitude at most 1e300" },
    { "ERR_STIFFNESS", "stiffness must be a finite number >= 0" },
    { "ERR_DAMPING", "damping must be a finite number >= 0" },
    { "ERR_TIME_STEP", "dt must be a finite number > 0" },
    { "ERR_STRIDE", "stride must be a finite number > 0" },
    { "ERR_STEP_TIME", "step_time must be a finite number > 0" },
    { "ERR_LIFT", "lift must be a finite number >= 0" },
    { "ERR_LEAD", "lead must be a finite number >= 0" },
    { "ERR_GROUPS", "groups must hold every leg exactly once, each group a leg or more" },
    { "ERR_MAX_GROUPS", "max_groups must be an integer >= 1" },
    { "ERR_GROUND", "ground must return a finite number (the height there)" },
    { "ERR_UP", "up must be 1 or -1" },
    { "ERR_HELD", "the tip is held (attach_tip): its goal is the held point (detach_tip first)" },
    { "ERR_TIP_HELD", "the tip is held already (detach_tip first)" },
    { "ERR_SELF", "a chain cannot hold its own tip" },
}
local status_strings = {}
for k, s in ipairs(statuses) do
    M[s[1]] = k - 1
    status_strings[k - 1] = s[2]
end
local OK, ERR_COUNT, ERR_TOO_LARGE, ERR_NOT_FINITE = M.OK, M.ERR_COUNT, M.ERR_TOO_LARGE, M.ERR_NOT_FINITE
local ERR_NEGATIVE, ERR_INDEX, ERR_DIMENSION, ERR_ZERO_ROTATION = M.ERR_NEGATIVE, M.ERR_INDEX, M.ERR_DIMENSION, M.ERR_ZERO_ROTATION
local ERR_RANGE, ERR_ATTACHED, ERR_CYCLE, ERR_HELD = M.ERR_RANGE, M.ERR_ATTACHED, M.ERR_CYCLE, M.ERR_HELD
local ERR_TIP_HELD, ERR_SELF, ERR_POLE = M.ERR_TIP_HELD, M.ERR_SELF, M.ERR_POLE

M.SOLVER_FABRIK, M.SOLVER_CCD, M.SOLVER_RELAX, M.SOLVER_TWO_BONE, M.SOLVER_AIM = 0, 1, 2, 3, 4

-- ---- from chain.h ----

M.LIMIT_RANGE, M.LIMIT_HINGE, M.LIMIT_CONE, M.LIMIT_TWIST = 1, 2, 4, 8

-- The marker of an angle that must be derived from its turn (tested as a == a).
local ANGLE_UNKNOWN = 0 / 0
M.ANGLE_UNKNOWN = ANGLE_UNKNOWN

local function isfinite(v) return v - v == 0 end

-- IK_CHECK_DIM (when dim is given) and IK_CHECK_BONE: the status.
function M.check_bone(c, bone, dim)
    if dim and c.dim ~= dim then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    return OK
end

-- Any joint as a 3D point (z = 0 in 2D).
local function joint_v3(c, i)
    local p, dim = c.joint, c.dim
    if dim == 3 then return p[3 * i], p[3 * i + 1], p[3 * i + 2] end
    return p[2 * i], p[2 * i + 1], 0.0
end
M.joint_v3 = joint_v3

-- Any bone's world direction as a 3D vector (z = 0 in 2D).
function M.dir_v3(c, i)
    local d = c.dir
    if c.dim == 3 then return d[3 * i], d[3 * i + 1], d[3 * i + 2] end
    return d[2 * i], d[2 * i + 1], 0.0
end

-- Bone i's local angle (2D), wrapped: the exact one set_angle was given, or atan2.
local function turn_angle(c, i)
    local a = c.angle[i]
    if a == a then return a end
    return atan2(c.turn[2 * i + 1], c.turn[2 * i])
end
M.turn_angle = turn_angle

-- Sets bone i's local angle (2D): the angle wrapped, and the turn of that same angle.
local function chain_set_turn_angle(c, i, angle)
    local a = wrap_angle(angle)
    c.angle[i] = a
    c.turn[2 * i], c.turn[2 * i + 1] = v2_turn(a)
end
M.chain_set_turn_angle = chain_set_turn_angle

-- Joint m's distance from target (a 2D chain's z ignored: the same bits as with z = 0).
function M.joint_distance(c, m_, tx, ty, tz)
    local p = c.joint
    if c.dim == 2 then return v2_len(tx - p[2 * m_], ty - p[2 * m_ + 1]) end
    return v3_len(tx - p[3 * m_], ty - p[3 * m_ + 1], tz - p[3 * m_ + 2])
end

-- count user numbers: finite (ERR_NOT_FINITE) and within MAX_COORD (ERR_RANGE); defined
-- below with chain.c's getters, as in the C.
local check_coords

local function chain_mark_stale(c, bone)
    if bone < c.stale_from then c.stale_from = bone end
end
M.chain_mark_stale = chain_mark_stale

-- Marks a change of the chain's world data, for its children.
local function chain_changed(c) c.version = c.version + 1 end
M.chain_changed = chain_changed
-- The same for a change that only moved the base (its own, or its parent's frame).
local function chain_base_moved(c)
    c.version = c.version + 1
    c.base_moves = c.base_moves + 1
end
-- Counts every change but the base's moves (tracking's prediction asks it).
function M.chain_pose_version(c) return c.version - c.base_moves end

-- The goal kept on c: coordinates already checked; -0 taken as +0.
local function chain_keep_target(c, x, y, z)
    c.target_x, c.target_y = x + 0.0, y + 0.0
    c.target_z = c.dim == 3 and z + 0.0 or 0.0
    c.has_target = true
end
M.chain_keep_target = chain_keep_target

-- The reach of bones 0..m-1, and their longest: the cached sums for the whole chain.
function M.chain_reach_to(c, m_)
    if m_ == c.n then return c.reach, c.longest end
    local total, most = 0.0, 0.0
    for i = 0, m_ - 1 do
        total = total + c.length[i]
        if c.length[i] > most then most = c.length[i] end
    end
    return total, most
end

-- The iterations a solve may do: the setting, at most MAX_ITERATIONS.
function M.iteration_budget(iterations)
    if iterations < M.MAX_ITERATIONS then return iterations end
    return M.MAX_ITERATIONS
end

-- The world rotation of bone i's parent frame (3D): bone i - 1's, or the base's.
local function parent_wrot(c, i)
    if i == 0 then return c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z end
    local r = c.wrot
    return r[4 * i - 4], r[4 * i - 3], r[4 * i - 2], r[4 * i - 1]
end
M.parent_wrot = parent_wrot

-- Bone i of a 3D chain, unlimited, turned onto unit direction u by the smallest turn from
-- its direction now (its twist kept), as pose_bone does with fewer roundings: the world
-- rotation normalised once and kept as the bone's, the local one derived from it and
-- pulled back to unit length to first order; the direction and joint i + 1 from the world
-- rotation. The bones before it must be current. For the lean solves (solve.lua).
function M.turn_bone3(c, i, ux, uy, uz)
    local d, r, rot, p = c.dir, c.wrot, c.rot, c.joint
    local pw, px, py, pz = parent_wrot(c, i)
    local tw, tx, ty, tz = q_turn(d[3 * i], d[3 * i + 1], d[3 * i + 2], ux, uy, uz)
    local w, x, y, z = q_normalize(q_mul(tw, tx, ty, tz, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]))
    local lw, lx, ly, lz = q_mul(pw, -px, -py, -pz, w, x, y, z)
    local k = (3 - (lw * lw + lx * lx + ly * ly + lz * lz)) / 2
    local dx, dy, dz = q_x_axis(w, x, y, z)
    rot[4 * i], rot[4 * i + 1], rot[4 * i + 2], rot[4 * i + 3] = lw * k, lx * k, ly * k, lz * k
    r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3] = w, x, y, z
    d[3 * i], d[3 * i + 1], d[3 * i + 2] = dx, dy, dz
    p[3 * i + 3], p[3 * i + 4], p[3 * i + 5] =
        v3_add(p[3 * i], p[3 * i + 1], p[3 * i + 2], v3_scale(dx, dy, dz, c.length[i] * c.scale))
end

-- ---- statuses and settings ----

function M.status_string(status) return status_strings[status] or "unknown status" end

local solver_names = { [0] = "fabrik", "ccd", "relax", "two_bone", "aim" }

local function solver_name(solver) return solver_names[solver] end
M.solver_name = solver_name

-- The solver of a name, or nil; the status second.
function M.solver_parse(name)
    for i = 0, M.SOLVER_AIM do
        if name == solver_names[i] then return OK, i end
    end
    return M.ERR_SOLVER
end

-- Fills s (a new table when nil) with the defaults. The pole and gravity are flattened
-- (pole_x ..); the C's int flags are booleans.
function M.default_settings(s)
    s = s or {}
    s.solver = M.SOLVER_FABRIK
    s.iterations = 64
    s.tolerance = 1e-3
    s.angle_tolerance = 1e-3
    s.greed = 0.5
    s.greed_ramp = true
    s.bend = 1
    s.use_pole = false
    s.pole_x, s.pole_y, s.pole_z = 0.0, 0.0, 0.0
    s.escape = true
    s.mix = 1.0
    s.softness = 0.0
    s.stretch = false
    s.max_turn = math.huge
    s.effector_weight = 1.0
    s.gravity_x, s.gravity_y, s.gravity_z = 0.0, 0.0, 0.0
    s.stiffness = 0.0
    s.damping = 0.5
    return s
end

-- Copies every field of settings from into to.
function M.copy_settings(to, from)
    for k, v in pairs(from) do to[k] = v end
    return to
end

local function finite_at_least_zero(v) return isfinite(v) and v >= 0 end

function M.settings_validate(s)
    if s.iterations < 1 then return M.ERR_ITERATIONS end
    if not finite_at_least_zero(s.tolerance) then return M.ERR_TOLERANCE end
    if not finite_at_least_zero(s.angle_tolerance) then return M.ERR_ANGLE_TOLERANCE end
    if not (isfinite(s.greed) and s.greed > 0 and s.greed <= 1) then return M.ERR_GREED end
    if s.bend ~= 1 and s.bend ~= -1 then return M.ERR_BEND end
    if solver_name(s.solver) == nil then return M.ERR_SOLVER end
    if not (isfinite(s.mix) and s.mix >= 0 and s.mix <= 1) then return M.ERR_MIX end
    if not finite_at_least_zero(s.softness) then return M.ERR_SOFTNESS end
    -- NaN fails too; infinity is "off"
    if s.max_turn ~= s.max_turn or not (s.max_turn > 0) then return M.ERR_MAX_TURN end
    if not finite_at_least_zero(s.effector_weight) then return M.ERR_EFFECTOR_WEIGHT end
    if check_coords(3, s.gravity_x, s.gravity_y, s.gravity_z) ~= OK then return M.ERR_GRAVITY end
    if not finite_at_least_zero(s.stiffness) then return M.ERR_STIFFNESS end
    if not finite_at_least_zero(s.damping) then return M.ERR_DAMPING end
    if s.use_pole then
        local x, y, z = s.pole_x, s.pole_y, s.pole_z
        if not isfinite(x) or not isfinite(y) or not isfinite(z) then return ERR_POLE end
        if x == 0 and y == 0 and z == 0 then return ERR_POLE end
    end
    return OK
end

-- ---- the block ----

-- A chain of n bones, or nil when n < 1 or n > MAX_BONES (the C's chain_size is then 0).
function M.chain_size_ok(n) return n >= 1 and n <= MAX_BONES end

local function zeros(count)
    local t = {}
    for k = 0, count - 1 do t[k] = 0.0 end
    return t
end

-- The C's memset of the block to zero and its layout: every field, every array of the
-- dimension (the other dimension's are nil, as the C's pointers are NULL).
local function layout(dim, n)
    local c = {
        magic = 0, n = n, dim = dim, stale_from = 0, pose_behind = false, limited = 0,
        kicked = false, batched = false, settings = nil, scale = 0.0, reach = 0.0, longest = 0.0,
        base_x = 0.0, base_y = 0.0, base_z = 0.0, base_angle = 0.0, base_turn_x = 0.0, base_turn_y = 0.0,
        base_rot_w = 0.0, base_rot_x = 0.0, base_rot_y = 0.0, base_rot_z = 0.0,
        parent = nil, parent_joint = 0, offset_angle = 0.0, offset_turn_x = 0.0, offset_turn_y = 0.0,
        offset_rot_w = 0.0, offset_rot_x = 0.0, offset_rot_y = 0.0, offset_rot_z = 0.0,
        version = 0, parent_seen = 0, links = 0, down = nil, base_moves = 0,
        track_recorded = false, track_have = false, track_seen = 0,
        tip_parent = nil, tip_joint = 0, tip_offset_x = 0.0, tip_offset_y = 0.0, tip_offset_z = 0.0,
        holds = 0, has_target = false, has_orientation = false,
        target_x = 0.0, target_y = 0.0, target_z = 0.0, target_angle = 0.0,
        target_turn_x = 0.0, target_turn_y = 0.0,
        target_rot_w = 0.0, target_rot_x = 0.0, target_rot_y = 0.0, target_rot_z = 0.0,
        sim_live = false, sim_scale = 0.0, sim_base_x = 0.0, sim_base_y = 0.0, sim_base_z = 0.0,
        sim_base_before_x = 0.0, sim_base_before_y = 0.0, sim_base_before_z = 0.0, sim_time = 0.0,
        sim_base_angle = 0.0, sim_base_rot_w = 0.0, sim_base_rot_x = 0.0, sim_base_rot_y = 0.0,
        sim_base_rot_z = 0.0,
    }
    c.limit = {}
    for i = 0, n - 1 do
        c.limit[i] = { flags = 0, min = 0.0, max = 0.0, axis_x = 0.0, axis_y = 0.0, axis_z = 0.0,
            cone = 0.0, twist_min = 0.0, twist_max = 0.0 }
    end
    c.length = zeros(n)
    c.weight = zeros(n + 1)
    c.joint = zeros(dim * (n + 1))
    c.dir = zeros(dim * n)
    c.work = zeros(dim * (n + 1))
    c.sim = zeros(2 * dim * (n + 1))
    c.sim_scratch = zeros((dim + 2) * n)
    if dim == 2 then
        c.turn, c.prev_turn, c.rest_turn, c.sim_turn = zeros(2 * n), zeros(2 * n), zeros(2 * n), zeros(2 * n)
        c.best_turn, c.track_turn = zeros(2 * n), zeros(2 * n)
        c.angle, c.prev_angle, c.best_angle = zeros(n), zeros(n), zeros(n)
    else
        c.rot, c.wrot, c.prev_rot, c.points_rot = zeros(4 * n), zeros(4 * n), zeros(4 * n), zeros(4 * n)
        c.rest_rot, c.sim_rot, c.best_rot = zeros(4 * n), zeros(4 * n), zeros(4 * n)
        c.track_rot = zeros(4 * n)
    end
    return c
end

-- lengths: n numbers, 0-based.
local function check_lengths(n, lengths)
    if n < 1 then return ERR_COUNT end
    if not M.chain_size_ok(n) then return ERR_TOO_LARGE end
    for i = 0, n - 1 do
        if not isfinite(lengths[i]) then return ERR_NOT_FINITE end
        if lengths[i] < 0 then return ERR_NEGATIVE end
        if lengths[i] > MAX_COORD then return ERR_RANGE end
    end
    return OK
end

local chain_lengths_changed, chain_fk

-- The C's chain_init and chain_create in one (Lua allocates): the status, then the chain.
local function chain_create(dim, n, lengths)
    local st = check_lengths(n, lengths)
    if st ~= OK then return st end
    local c = layout(dim, n)
    c.settings = M.default_settings()
    c.base_turn_x, c.base_turn_y = 1.0, 0.0
    c.base_rot_w = 1.0
    c.offset_turn_x = 1.0
    c.offset_rot_w = 1.0
    c.target_turn_x = 1.0
    c.target_rot_w = 1.0
    c.scale = 1.0
    for i = 0, n - 1 do
        c.length[i] = lengths[i] + 0.0 -- + 0.0 turns -0 into +0
        if dim == 2 then
            chain_set_turn_angle(c, i, 0.0)
            c.rest_turn[2 * i] = 1.0
        else
            c.rot[4 * i], c.rest_rot[4 * i] = 1.0, 1.0
        end
    end
    for i = 0, n do c.weight[i] = 1.0 end
    chain_lengths_changed(c)
    c.stale_from = 0
    chain_fk(c)
    return OK, c
end

function M.chain2d_create(n, lengths) return chain_create(2, n, lengths) end
function M.chain3d_create(n, lengths) return chain_create(3, n, lengths) end

local function copy_array(a)
    if a == nil then return nil end
    local t = {}
    for k, v in pairs(a) do t[k] = v end
    return t
end

-- Everything of from (its parent link and tip hold too): a chain that behaves exactly as
-- from does. Children of from stay on from.
function M.chain_copy(from)
    local c = {}
    for k, v in pairs(from) do c[k] = v end
    c.settings = M.copy_settings({}, from.settings)
    c.limit = {}
    for i = 0, from.n - 1 do c.limit[i] = copy_array(from.limit[i]) end
    for _, k in ipairs({ "length", "weight", "joint", "dir", "work", "sim", "sim_scratch", "turn",
        "prev_turn", "rest_turn", "sim_turn", "angle", "prev_angle", "rot", "wrot", "prev_rot",
        "points_rot", "rest_rot", "sim_rot", "best_turn", "best_angle", "best_rot", "track_turn",
        "track_rot" }) do
        c[k] = copy_array(from[k])
    end
    return OK, c
end

function M.chain_bone_count(c) return c.n end
function M.chain_dim(c) return c.dim end
function M.chain_reach(c) return c.reach end

function chain_lengths_changed(c)
    local total, longest = 0.0, 0.0
    for i = 0, c.n - 1 do
        total = total + c.length[i]
        if c.length[i] > longest then longest = c.length[i] end
    end
    c.reach = total
    c.longest = longest
    c.sim_live = false -- simulate's joints were at the old lengths
    -- A stretched bone stays within ik.h's range, so no joint can overflow.
    if longest * c.scale > MAX_COORD then
        c.scale = MAX_COORD / longest
        chain_mark_stale(c, 0)
    end
end
M.chain_lengths_changed = chain_lengths_changed

-- The side a chain prefers to bend to, seen along the unit line (base to target). Unit.
function M.chain_bend_side(c, lx, ly, lz)
    local s = c.settings
    if c.dim == 2 then return v3_scale(ly, -lx, 0.0, s.bend) end
    if not s.use_pole then return v3_any_perpendicular(lx, ly, lz) end
    local k = v3_dot(s.pole_x, s.pole_y, s.pole_z, lx, ly, lz)
    local x, y, z = v3_sub(s.pole_x, s.pole_y, s.pole_z, lx * k, ly * k, lz * k)
    local fx, fy, fz = v3_any_perpendicular(lx, ly, lz)
    return v3_normalize_or(x, y, z, fx, fy, fz)
end

-- ---- forward kinematics ----

-- World data of bone i and joint i + 1 from bone i - 1's (or the base's): the parent's
-- turn or rotation times the local one, pulled back to unit length to first order,
-- (3 - |w|^2) / 2 (rounding would grow along a long chain).
local function chain_fk_bone(c, i)
    local step = c.length[i] * c.scale
    local joint, dir = c.joint, c.dir
    if c.dim == 2 then
        local px, py
        if i == 0 then px, py = c.base_turn_x, c.base_turn_y else px, py = dir[2 * i - 2], dir[2 * i - 1] end
        local wx, wy = v2_renorm(v2_rotate(c.turn[2 * i], c.turn[2 * i + 1], px, py))
        local jx, jy = joint[2 * i], joint[2 * i + 1]
        dir[2 * i], dir[2 * i + 1] = wx, wy
        joint[2 * i + 2], joint[2 * i + 3] = v2_add(jx, jy, v2_scale(wx, wy, step))
    else
        local rot, wrot = c.rot, c.wrot
        local pw, px, py, pz = parent_wrot(c, i)
        local w, x, y, z = q_mul(pw, px, py, pz, rot[4 * i], rot[4 * i + 1], rot[4 * i + 2], rot[4 * i + 3])
        local k = (3 - (w * w + x * x + y * y + z * z)) / 2
        w, x, y, z = w * k, x * k, y * k, z * k
        wrot[4 * i], wrot[4 * i + 1], wrot[4 * i + 2], wrot[4 * i + 3] = w, x, y, z
        local dx, dy, dz = q_x_axis(w, x, y, z)
        dir[3 * i], dir[3 * i + 1], dir[3 * i + 2] = dx, dy, dz
        joint[3 * i + 3], joint[3 * i + 4], joint[3 * i + 5] =
            v3_add(joint[3 * i], joint[3 * i + 1], joint[3 * i + 2], v3_scale(dx, dy, dz, step))
    end
end
M.chain_fk_bone = chain_fk_bone

-- World data up to date with the local pose (nothing while pose_behind: the joints are the
-- truth). Does not follow the parent.
function chain_fk(c)
    local i, n = c.stale_from, c.n
    if c.pose_behind or i >= n then return end
    if i == 0 then
        local p = c.joint
        p[0], p[1] = c.base_x, c.base_y
        if c.dim == 3 then p[2] = c.base_z end
    end
    if c.dim == 2 then
        -- chain_fk_bone's 2D arithmetic inlined, the parent's direction carried in locals:
        -- a call and its field reads per bone cost as much as the arithmetic (speed only,
        -- the same operations in the same order).
        local joint, dir, turn, length, scale = c.joint, c.dir, c.turn, c.length, c.scale
        -- Joint b carried in locals too, and k = 2b (an index costs what the arithmetic does).
        local px, py
        if i == 0 then px, py = c.base_turn_x, c.base_turn_y else px, py = dir[2 * i - 2], dir[2 * i - 1] end
        local k = 2 * i
        local jx, jy = joint[k], joint[k + 1]
        for b = i, n - 1 do
            local step = length[b] * scale
            local ax, ay = turn[k], turn[k + 1]
            local x, y = px * ax - py * ay, py * ax + px * ay -- v2_rotate(turn, parent)
            local r = (3 - (x * x + y * y)) / 2 -- v2_renorm
            px, py = x * r, y * r
            dir[k], dir[k + 1] = px, py
            jx, jy = jx + px * step, jy + py * step
            joint[k + 2], joint[k + 3] = jx, jy
            k = k + 2
        end
    else
        for b = i, n - 1 do chain_fk_bone(c, b) end
    end
    c.stale_from = n
end
M.chain_fk = chain_fk

-- ---- the pose derived from the joints ----

local function chain_derive_dir2(c, i)
    local d, p = c.dir, c.joint
    local bx, by = d[2 * i], d[2 * i + 1]
    if not (c.length[i] > 0) then return bx, by end
    local x, y = v2_sub(p[2 * i + 2], p[2 * i + 3], p[2 * i], p[2 * i + 1])
    return v2_normalize_or(x, y, bx, by)
end
M.chain_derive_dir2 = chain_derive_dir2

local function derive_dir3(c, i)
    local d, p = c.dir, c.joint
    local bx, by, bz = d[3 * i], d[3 * i + 1], d[3 * i + 2]
    if not (c.length[i] > 0) then return bx, by, bz end
    local x, y, z = v3_sub(p[3 * i + 3], p[3 * i + 4], p[3 * i + 5], p[3 * i], p[3 * i + 1], p[3 * i + 2])
    return v3_normalize_or(x, y, z, bx, by, bz)
end

local function chain_derive_turn(c, i)
    local px, py
    if i == 0 then px, py = c.base_turn_x, c.base_turn_y else px, py = chain_derive_dir2(c, i - 1) end
    local dx, dy = chain_derive_dir2(c, i)
    return v2_renorm(v2_unrotate(dx, dy, px, py))
end
M.chain_derive_turn = chain_derive_turn

local function chain_derive_wrot(c, i)
    local d, r = c.dir, c.wrot
    local ux, uy, uz = derive_dir3(c, i)
    local tw, tx, ty, tz = q_from_to(d[3 * i], d[3 * i + 1], d[3 * i + 2], ux, uy, uz)
    return q_normalize(q_mul(tw, tx, ty, tz, r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]))
end
M.chain_derive_wrot = chain_derive_wrot

function M.chain_local_angle(c, i)
    if not c.pose_behind then return turn_angle(c, i) end
    local x, y = chain_derive_turn(c, i)
    return atan2(y, x)
end

function M.chain_world_angle_of(c, i)
    local x, y
    if c.pose_behind then x, y = chain_derive_dir2(c, i) else x, y = c.dir[2 * i], c.dir[2 * i + 1] end
    return atan2(y, x)
end

local function chain_world_rot(c, i)
    if c.pose_behind then return chain_derive_wrot(c, i) end
    local r = c.wrot
    return r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]
end
M.chain_world_rot = chain_world_rot

function M.chain_local_rot(c, i)
    if not c.pose_behind then
        local r = c.rot
        return r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]
    end
    local pw, px, py, pz
    if i == 0 then
        pw, px, py, pz = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
    else
        pw, px, py, pz = chain_derive_wrot(c, i - 1)
    end
    local w, x, y, z = chain_derive_wrot(c, i)
    return q_normalize(q_mul(pw, -px, -py, -pz, w, x, y, z))
end

-- Makes the local pose the truth again (and the world directions current), keeping the
-- joints as the solve left them. Nothing when the pose is not behind.
local function chain_settle(c)
    if not c.pose_behind then return end
    local n = c.n
    if c.dim == 2 then
        local turn, angle, dir = c.turn, c.angle, c.dir
        -- Every turn first: they read the directions before, which are then replaced.
        for i = 0, n - 1 do
            turn[2 * i], turn[2 * i + 1] = chain_derive_turn(c, i)
            angle[i] = ANGLE_UNKNOWN
        end
        for i = n - 1, 0, -1 do dir[2 * i], dir[2 * i + 1] = chain_derive_dir2(c, i) end
    else
        local rot, wrot, dir = c.rot, c.wrot, c.dir
        local pw, px, py, pz = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
        for i = 0, n - 1 do
            -- derive_wrot(i) reads bone i's arrays only, so bone i - 1's may be replaced.
            local w, x, y, z = chain_derive_wrot(c, i)
            rot[4 * i], rot[4 * i + 1], rot[4 * i + 2], rot[4 * i + 3] = q_normalize(q_mul(pw, -px, -py, -pz, w, x, y, z))
            wrot[4 * i], wrot[4 * i + 1], wrot[4 * i + 2], wrot[4 * i + 3] = w, x, y, z
            dir[3 * i], dir[3 * i + 1], dir[3 * i + 2] = q_x_axis(w, x, y, z)
            pw, px, py, pz = w, x, y, z
        end
    end
    c.pose_behind = false
    c.stale_from = n
end
M.chain_settle = chain_settle

-- ---- attachment ----

local function chain_frame2(c, j)
    if j == 0 then return c.base_turn_x, c.base_turn_y end
    if c.pose_behind then return chain_derive_dir2(c, j - 1) end
    return c.dir[2 * j - 2], c.dir[2 * j - 1]
end
M.chain_frame2 = chain_frame2

local function chain_frame3(c, j)
    if j == 0 then return c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z end
    return chain_world_rot(c, j - 1)
end
M.chain_frame3 = chain_frame3

-- Where c's base belongs on its parent as the parent is now: the joint, then the frame
-- (2D: a turn, 2 numbers; 3D: a rotation, 4).
local function parent_frame(c)
    local p, j = c.parent, c.parent_joint
    local ax, ay, az = joint_v3(p, j)
    if c.dim == 2 then
        local fx, fy = chain_frame2(p, j)
        return ax, ay, az, v2_renorm(v2_rotate(c.offset_turn_x, c.offset_turn_y, fx, fy))
    end
    local fw, fx, fy, fz = chain_frame3(p, j)
    return ax, ay, az, q_normalize(q_mul(fw, fx, fy, fz, c.offset_rot_w, c.offset_rot_x, c.offset_rot_y, c.offset_rot_z))
end

-- The same bits (the C compares with memcmp: -0 is not +0).
local function same(a, b) return a == b and (a ~= 0 or 1 / a == 1 / b) end

-- Puts c's base where its parent's joint now is. When it moved, the local pose is made the
-- truth first (against the old base), so the chain is carried rigidly.
local function rebase(c)
    chain_fk(c.parent)
    local ax, ay, az, f1, f2, f3, f4 = parent_frame(c)
    local moved = not (same(ax, c.base_x) and same(ay, c.base_y) and same(az, c.base_z))
    if c.dim == 2 then
        moved = moved or not (same(f1, c.base_turn_x) and same(f2, c.base_turn_y))
    else
        moved = moved or not (same(f1, c.base_rot_w) and same(f2, c.base_rot_x) and same(f3, c.base_rot_y)
            and same(f4, c.base_rot_z))
    end
    if moved then
        chain_settle(c)
        c.base_x, c.base_y, c.base_z = ax, ay, az
        if c.dim == 2 then
            c.base_turn_x, c.base_turn_y = f1, f2
        else
            c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z = f1, f2, f3, f4
        end
        c.stale_from = 0
        chain_base_moved(c)
    end
    c.parent_seen = c.parent.version
end

-- For the rig: c's base (and joint 0) put on its parent's joint as the parent is now.
function M.chain_take_base(c)
    local ax, ay, az, f1, f2, f3, f4 = parent_frame(c)
    c.base_x, c.base_y, c.base_z = ax, ay, az
    if c.dim == 2 then
        c.base_turn_x, c.base_turn_y = f1, f2
    else
        c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z = f1, f2, f3, f4
    end
    local p = c.joint
    p[0], p[1] = c.base_x, c.base_y
    if c.dim == 3 then p[2] = c.base_z end
end

local function chain_follow_parent(c)
    if c.parent and c.parent.version ~= c.parent_seen then rebase(c) end
end
M.chain_follow_parent = chain_follow_parent

-- Brings the bases up to date from the root of c's tree down: a first walk up finds the
-- highest chain whose parent changed, a second leaves each chain on the way its child
-- towards c (down), and the walk down rebases each after its parent. O(depth), no recursion.
local function chain_follow(c)
    local top = nil
    local x = c
    while x.parent do
        if x.parent.version ~= x.parent_seen then top = x end
        x = x.parent
    end
    if top == nil then return end
    x = c
    while x ~= top do
        x.parent.down = x
        x = x.parent
    end
    x = top
    while true do
        chain_follow_parent(x)
        if x == c then return end
        -- Cleared on the way (the C leaves a stale pointer): a reference here would keep a
        -- child that is detached and dropped alive as long as its old parent lives.
        local down = x.down
        x.down = nil
        x = down
    end
end
M.chain_follow = chain_follow

local function chain_update(c)
    chain_follow(c)
    chain_fk(c)
end
M.chain_update = chain_update

local function attach(child, parent, joint)
    if child.dim ~= parent.dim then return ERR_DIMENSION end
    if joint < 0 or joint > parent.n then return ERR_INDEX end
    if child.parent then return ERR_ATTACHED end
    local x = parent
    while x do
        if x == child then return ERR_CYCLE end
        x = x.parent
    end
    return OK
end

local function link(child, parent, joint)
    chain_follow(parent)
    child.parent = parent
    child.parent_joint = joint
    child.links = child.links + 1
    rebase(child)
    chain_changed(child) -- its base is no longer its own
end

function M.chain2d_attach(child, parent, joint, angle)
    local st = child.dim ~= 2 and ERR_DIMENSION or attach(child, parent, joint)
    if st ~= OK then return st end
    if not isfinite(angle) then return ERR_NOT_FINITE end
    child.offset_angle = wrap_angle(angle)
    child.offset_turn_x, child.offset_turn_y = v2_turn(child.offset_angle)
    link(child, parent, joint)
    return OK
end

local quat_in

-- rw nil: no rotation (the C's NULL).
function M.chain3d_attach(child, parent, joint, rw, rx, ry, rz)
    local qw, qx, qy, qz = 1.0, 0.0, 0.0, 0.0
    local st = child.dim ~= 3 and ERR_DIMENSION or attach(child, parent, joint)
    if st ~= OK then return st end
    if rw ~= nil then
        st, qw, qx, qy, qz = quat_in(rw, rx, ry, rz)
        if st ~= OK then return st end
    end
    child.offset_rot_w, child.offset_rot_x, child.offset_rot_y, child.offset_rot_z = qw, qx, qy, qz
    link(child, parent, joint)
    return OK
end

function M.chain_detach(c)
    if c.parent == nil then return end
    chain_follow(c)
    c.parent = nil
    c.parent_joint = 0 -- a root's joint is 0
    c.links = c.links + 1
    if c.dim == 2 then c.base_angle = atan2(c.base_turn_y, c.base_turn_x) end
    chain_changed(c)
end

-- The parent (nil for none) and the joint.
function M.chain_parent(c)
    return c.parent, c.parent and c.parent_joint or 0
end

-- ---- the tip hold (closed loops) ----

-- The point held at joint j of c, moved by offset in the frame there; c's world data current.
local function hold_point(c, j, ox, oy, oz)
    local ax, ay, az = joint_v3(c, j)
    if ox == 0 and oy == 0 and oz == 0 then return ax, ay, az end
    if c.dim == 2 then
        local fx, fy = chain_frame2(c, j)
        local vx, vy = v2_rotate(ox, oy, fx, fy)
        return ax + vx, ay + vy, 0.0
    end
    local fw, fx, fy, fz = chain_frame3(c, j)
    local vx, vy, vz = q_rotate(fw, fx, fy, fz, ox, oy, oz)
    return v3_add(ax, ay, az, vx, vy, vz)
end
M.hold_point = hold_point

-- A held chain's goal read where the held point is now. Nothing for a chain not held.
local function chain_read_hold(c)
    local p = c.tip_parent
    if p == nil then return end
    chain_update(p)
    c.target_x, c.target_y, c.target_z = hold_point(p, c.tip_joint, c.tip_offset_x, c.tip_offset_y, c.tip_offset_z)
    c.has_target = true
end
M.chain_read_hold = chain_read_hold

-- ox nil: no offset (the C's NULL).
function M.chain_attach_tip(c, other, joint, ox, oy, oz)
    local vx, vy, vz = 0.0, 0.0, 0.0
    if other.dim ~= c.dim then return ERR_DIMENSION end
    if other == c then return ERR_SELF end
    if joint < 0 or joint > other.n then return ERR_INDEX end
    if c.tip_parent then return ERR_TIP_HELD end
    if ox ~= nil then
        local st = check_coords(c.dim, ox, oy, oz)
        if st ~= OK then return st end
        vx, vy = ox + 0.0, oy + 0.0
        vz = c.dim == 3 and oz + 0.0 or 0.0
    end
    c.tip_parent = other
    c.tip_joint = joint
    c.tip_offset_x, c.tip_offset_y, c.tip_offset_z = vx, vy, vz
    c.holds = c.holds + 1
    chain_read_hold(c)
    return OK
end

local function chain_detach_tip(c)
    if c.tip_parent == nil then return end
    c.tip_parent = nil
    c.tip_joint = 0
    c.tip_offset_x, c.tip_offset_y, c.tip_offset_z = 0.0, 0.0, 0.0
    c.holds = c.holds + 1
    c.has_target = false
end
M.chain_detach_tip = chain_detach_tip

-- The chain holding the tip (nil for none), its joint, and the offset (dim numbers).
function M.chain_tip_parent(c)
    local joint = c.tip_parent and c.tip_joint or 0
    if c.dim == 3 then return c.tip_parent, joint, c.tip_offset_x, c.tip_offset_y, c.tip_offset_z end
    return c.tip_parent, joint, c.tip_offset_x, c.tip_offset_y
end

-- ---- getters and setters ----

-- The joints, up to date: dim numbers each, 0-based.
function M.chain_positions(c)
    chain_update(c)
    return c.joint
end

-- count (2 or 3) user numbers: finite (ERR_NOT_FINITE) and within MAX_COORD (ERR_RANGE).
-- One comparison each: NaN and the infinities fail it too.
function check_coords(count, x, y, z)
    if abs(x) <= MAX_COORD and abs(y) <= MAX_COORD and (count == 2 or abs(z) <= MAX_COORD) then
        return OK
    end
    if isfinite(x) and isfinite(y) and (count == 2 or isfinite(z)) then return ERR_RANGE end
    return ERR_NOT_FINITE
end
M.check_coords = check_coords

-- The C's ik_check_coords over an array: count numbers from v[0] on.
function M.check_coord_array(v, count)
    for i = 0, count - 1 do
        if not (abs(v[i]) <= MAX_COORD) then
            for k = 0, count - 1 do
                if not isfinite(v[k]) then return ERR_NOT_FINITE end
            end
            return ERR_RANGE
        end
    end
    return OK
end

-- A change of bone `bone` onwards: the pose becomes the truth, and the world data after it
-- goes stale.
local function pose_changes(c, bone)
    chain_follow(c)
    chain_settle(c)
    chain_mark_stale(c, bone)
    chain_changed(c)
end

-- A move of the base: the same, but the local pose stays as it was (a base move).
local function base_changes(c)
    pose_changes(c, 0)
    c.base_moves = c.base_moves + 1
end

function M.chain_length(c, bone)
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    return OK, c.length[bone]
end

function M.chain_set_length(c, bone, length)
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    if not isfinite(length) then return ERR_NOT_FINITE end
    if length < 0 then return ERR_NEGATIVE end
    if length > MAX_COORD then return ERR_RANGE end
    pose_changes(c, bone)
    c.length[bone] = length + 0.0
    chain_lengths_changed(c)
    return OK
end

function M.chain_weight(c, joint)
    if joint < 0 or joint > c.n then return ERR_INDEX end
    return OK, c.weight[joint]
end

function M.chain_set_weight(c, joint, weight)
    if joint < 0 or joint > c.n then return ERR_INDEX end
    if not isfinite(weight) then return ERR_NOT_FINITE end
    if weight < 0 then return ERR_NEGATIVE end
    c.weight[joint] = weight + 0.0
    return OK
end

function M.chain2d_base(c)
    if c.dim ~= 2 then return ERR_DIMENSION end
    chain_follow(c)
    local angle = c.base_angle
    if c.parent then angle = atan2(c.base_turn_y, c.base_turn_x) end
    return OK, c.base_x, c.base_y, angle
end

function M.chain2d_set_base(c, x, y, angle)
    if c.dim ~= 2 then return ERR_DIMENSION end
    local st = check_coords(2, x, y)
    if st ~= OK then return st end
    if not isfinite(angle) then return ERR_NOT_FINITE end
    if c.parent then return ERR_ATTACHED end
    base_changes(c)
    c.base_x, c.base_y, c.base_z = x + 0.0, y + 0.0, 0.0
    c.base_angle = wrap_angle(angle)
    c.base_turn_x, c.base_turn_y = v2_turn(c.base_angle)
    return OK
end

function M.chain2d_angle(c, bone)
    if c.dim ~= 2 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    chain_follow(c)
    return OK, M.chain_local_angle(c, bone)
end

function M.chain2d_set_angle(c, bone, angle)
    if c.dim ~= 2 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    if not isfinite(angle) then return ERR_NOT_FINITE end
    pose_changes(c, bone)
    chain_set_turn_angle(c, bone, angle)
    return OK
end

function M.chain2d_world_angle(c, bone)
    if c.dim ~= 2 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    chain_update(c)
    return OK, M.chain_world_angle_of(c, bone)
end

-- A unit quaternion from 4 user numbers: finite and of nonzero length; the status first.
-- Scaled first, so huge or tiny (but nonzero) inputs normalise without overflow.
function quat_in(w, x, y, z)
    if not (isfinite(w) and isfinite(x) and isfinite(y) and isfinite(z)) then return ERR_NOT_FINITE end
    local len = max(max(abs(w), abs(x)), max(abs(y), abs(z)))
    if len == 0 then return ERR_ZERO_ROTATION end
    return OK, q_normalize(w / len, x / len, y / len, z / len)
end
M.quat_in = quat_in

function M.chain3d_base(c)
    if c.dim ~= 3 then return ERR_DIMENSION end
    chain_follow(c)
    return OK, c.base_x, c.base_y, c.base_z, c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
end

-- rw nil keeps the current rotation (the C's NULL).
function M.chain3d_set_base(c, x, y, z, rw, rx, ry, rz)
    local qw, qx, qy, qz = c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z
    if c.dim ~= 3 then return ERR_DIMENSION end
    local st = check_coords(3, x, y, z)
    if st ~= OK then return st end
    if rw ~= nil then
        st, qw, qx, qy, qz = quat_in(rw, rx, ry, rz)
        if st ~= OK then return st end
    end
    if c.parent then return ERR_ATTACHED end
    base_changes(c)
    c.base_x, c.base_y, c.base_z = x + 0.0, y + 0.0, z + 0.0
    c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z = qw, qx, qy, qz
    return OK
end

function M.chain3d_rotation(c, bone)
    if c.dim ~= 3 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    chain_follow(c)
    return OK, M.chain_local_rot(c, bone)
end

function M.chain3d_set_rotation(c, bone, w, x, y, z)
    if c.dim ~= 3 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    local st, qw, qx, qy, qz = quat_in(w, x, y, z)
    if st ~= OK then return st end
    pose_changes(c, bone)
    local r = c.rot
    r[4 * bone], r[4 * bone + 1], r[4 * bone + 2], r[4 * bone + 3] = qw, qx, qy, qz
    return OK
end

function M.chain3d_world_rotation(c, bone)
    if c.dim ~= 3 then return ERR_DIMENSION end
    if bone < 0 or bone >= c.n then return ERR_INDEX end
    chain_update(c)
    return OK, chain_world_rot(c, bone)
end

-- ---- settings ----

function M.chain_settings(c) return c.settings end
function M.chain_stretch_factor(c) return c.scale end

-- Validates every field (and the solver against the chain), then copies.
function M.chain_configure(c, s)
    local st = M.settings_validate(s)
    if st ~= OK then return st end
    if s.solver == M.SOLVER_TWO_BONE and c.n ~= 2 and c.n ~= 3 then return M.ERR_NOT_TWO_BONE end
    if s.use_pole and c.dim ~= 3 then return ERR_POLE end
    local t = M.copy_settings(c.settings, s)
    t.tolerance = s.tolerance + 0.0 -- -0 is kept as +0
    t.angle_tolerance = s.angle_tolerance + 0.0
    t.softness = s.softness + 0.0
    t.mix = s.mix + 0.0
    t.effector_weight = s.effector_weight + 0.0
    t.stiffness = s.stiffness + 0.0
    t.damping = s.damping + 0.0
    t.gravity_x, t.gravity_y = s.gravity_x + 0.0, s.gravity_y + 0.0
    t.gravity_z = c.dim == 3 and s.gravity_z + 0.0 or 0.0
    if t.use_pole then
        -- Normalised once, so no solve multiplies a pole near 1e308.
        t.pole_x, t.pole_y, t.pole_z = v3_normalize_or(s.pole_x, s.pole_y, s.pole_z, 0.0, 1.0, 0.0)
    end
    return OK
end

-- ---- goals ----

function M.chain_set_target(c, x, y, z)
    local st = c.tip_parent and ERR_HELD or check_coords(c.dim, x, y, z)
    if st ~= OK then return st end
    chain_keep_target(c, x, y, z)
    return OK
end

-- The status, whether there is a target, and its dim numbers.
function M.chain_target(c)
    chain_read_hold(c)
    if not c.has_target then return OK, false end
    if c.dim == 3 then return OK, true, c.target_x, c.target_y, c.target_z end
    return OK, true, c.target_x, c.target_y
end

function M.chain2d_set_target_angle(c, angle)
    if c.dim ~= 2 then return ERR_DIMENSION end
    if not isfinite(angle) then return ERR_NOT_FINITE end
    c.target_angle = wrap_angle(angle)
    c.target_turn_x, c.target_turn_y = v2_turn(c.target_angle)
    c.has_orientation = true
    return OK
end

function M.chain2d_target_angle(c)
    if c.dim ~= 2 then return ERR_DIMENSION end
    if not c.has_orientation then return OK, false end
    return OK, true, c.target_angle
end

function M.chain3d_set_target_rotation(c, w, x, y, z)
    if c.dim ~= 3 then return ERR_DIMENSION end
    local st, qw, qx, qy, qz = quat_in(w, x, y, z)
    if st ~= OK then return st end
    c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z = qw, qx, qy, qz
    c.has_orientation = true
    return OK
end

function M.chain3d_target_rotation(c)
    if c.dim ~= 3 then return ERR_DIMENSION end
    if not c.has_orientation then return OK, false end
    return OK, true, c.target_rot_w, c.target_rot_x, c.target_rot_y, c.target_rot_z
end

-- Removes both goals, and a tip hold.
function M.chain_clear_target(c)
    chain_detach_tip(c)
    c.has_target = false
    c.has_orientation = false
end

return M
