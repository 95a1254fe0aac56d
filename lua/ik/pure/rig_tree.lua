-- ik.pure.rig_tree: src/rig_tree.h in plain Lua: what the files of the rig solve share, the
-- tree as the solve sees it, and the calls between rig.lua, rig_fabrik.lua, rig_relax.lua
-- and rig_joint.lua (chain.lua's conventions: vectors are multiple values).
--
-- A rig is a table with the fields of struct ik_rig, its node an array (0-based) of tables
-- with the fields of struct rig_node; a node's ik_vec3 fields are flattened (goal_x, goal_y,
-- goal_z; eff_x ..), its arrays flat and 0-based (relaxed[3 * j] .. + 2, saved[4 * i] ..),
-- every one made when the rig is, so a solve allocates nothing. The C's pointers between
-- nodes (nd->chain, the kids and order arrays) are the same tables and indices here.
--
-- The functions the header declares for the other files are fields of this table, set by
-- the file that defines them when it loads (rig.lua loads the others), so the files can
-- call each other as the C files do: rig_tree.rig_place_tip(nd) and so on.
-- FOR_GOALS is written out where it is used (for k = goal_at[from] ...).

local M = {}

-- The most goal coordinates the joint-space stage takes (16 goals in 3D, 24 in 2D).
M.DLS_ROWS = 48

-- A limb's own passes (see rig_fabrik.lua's limb_forward).
M.LIMB_PASSES = 4

-- How rig_joint_space runs: a solve's stage, tracking's, or a tracked frame's calm retry.
M.RIG_SOLVE, M.RIG_TRACK, M.RIG_CALM = 0, 1, 2

-- Any joint as a 3D point (z = 0 in 2D): chain.lua's joint_v3.
M.joint_at = require("ik.pure.chain").joint_v3

function M.set_joint(c, j, x, y, z)
    local p = c.joint
    if c.dim == 3 then
        p[3 * j], p[3 * j + 1], p[3 * j + 2] = x, y, z
    else
        p[2 * j], p[2 * j + 1] = x, y
    end
end

-- Whether node nd's child kid takes part: it has a goal below it, and a chain with an
-- orientation goal holds its tip, so a child there cannot pull on it.
function M.pulls(rig, nd, kid)
    local child = rig.node[kid]
    return child.top >= 0 and not (nd.end_ >= 0 and nd.last < nd.chain.n and child.parent_joint == nd.chain.n)
end

-- Node nd's children hanging on joint j: kid[from .. to - 1].
function M.kid_range(nd, j)
    local above = nd.above
    return nd.first + above[j], nd.first + (j > 0 and above[j - 1] or nd.kids)
end

-- A limb: a chain with a goal and nothing that pulls hanging on it.
function M.is_limb(nd)
    return nd.kids == 0 and nd.end_ >= 1 and nd.end_ == nd.top
end

-- The first place in rig.dfs past the chains hanging beyond joint j of node nd.
local function beyond_end(rig, nd, j)
    if nd.above[j] < nd.kids then return rig.node[rig.kid[nd.first + nd.above[j]]].pre end
    return nd.pre + nd.size
end
M.beyond_end = beyond_end

-- The bones node nd's goals and children bend: 0..hi-1.
function M.bends(nd) return nd.top < nd.last and nd.top or nd.last end

-- The bones the joint-space stage turns: those, and those that move a loop's held point.
function M.turns(nd) return nd.moves < nd.last and nd.moves or nd.last end

-- Whether the point held at joint j of node held moves when bone i of node nd turns.
function M.moves_hold(rig, nd, i, held, j)
    if held == nd then return j > i end
    return held.pre > nd.pre and held.pre < beyond_end(rig, nd, i)
end

return M
