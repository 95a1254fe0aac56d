-- ik.pure.rig_relax: src/rig_relax.c in plain Lua, in the same order and with the same
-- arithmetic (rig_tree.lua's conventions): Juckett's constraint relaxation on the rig's tree
-- of points, each sub-base taking the weighted centroid of what its branches ask for, as
-- FABRIK's does (rig_fabrik.lua's rig_merge). See src/rig_relax.c.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")
local tree = require("ik.pure.rig_tree")

local v3_add, v3_sub, v3_scale, v3_len, v3_normalize_or = m.v3_add, m.v3_sub, m.v3_scale, m.v3_len, m.v3_normalize_or
local joint_at, set_joint = tree.joint_at, tree.set_joint
local dir_v3 = chain.dir_v3
local LIMB_PASSES = tree.LIMB_PASSES

local M = {}

-- ---- relaxation ----

-- Joint j of node nd's relaxed points takes what asks for it there (see merge).
local function merge_point(rig, nd, j, continues)
    local b = nd.relaxed
    set_joint(nd.chain, j, b[3 * j], b[3 * j + 1], b[3 * j + 2])
    tree.rig_merge(rig, nd, j, continues, b)
    b[3 * j], b[3 * j + 1], b[3 * j + 2] = joint_at(nd.chain, j)
end

-- Node nd's constraints relaxed from its top down, as relax.c does for one chain (see
-- rig_relax.c).
local function relax_chain(rig, nd, root)
    local c = nd.chain
    local len, weight = c.length, c.weight
    local b = nd.relaxed
    local top = nd.top
    merge_point(rig, nd, top, false)
    if top >= 1 then
        local t, u = 3 * top, 3 * (top - 1)
        local ux, uy, uz = v3_normalize_or(b[t] - b[u], b[t + 1] - b[u + 1], b[t + 2] - b[u + 2], 0.0, 0.0, 0.0)
        b[u], b[u + 1], b[u + 2] = v3_sub(b[t], b[t + 1], b[t + 2], v3_scale(ux, uy, uz, len[top - 1]))
    end
    for i = top - 2, 0, -1 do
        local larger = weight[i] > weight[i + 1] and weight[i] or weight[i + 1]
        merge_point(rig, nd, i + 1, true)
        if root and i == 0 then break end -- the pinned base: its bone is pulled back afterwards
        local p, q = 3 * i, 3 * (i + 1)
        local vx, vy, vz = b[q] - b[p], b[q + 1] - b[p + 1], b[q + 2] - b[p + 2]
        local ux, uy, uz = v3_normalize_or(vx, vy, vz, 0.0, 0.0, 0.0)
        if (ux ~= 0 or uy ~= 0 or uz ~= 0) and larger > 0 then
            -- Each end by its weight's share, as in relax.c (only the ratio matters).
            local share, share_next = weight[i] / larger, weight[i + 1] / larger
            local total = share + share_next
            local fx, fy, fz = v3_scale(ux, uy, uz, len[i] - v3_len(vx, vy, vz))
            b[p], b[p + 1], b[p + 2] = v3_sub(b[p], b[p + 1], b[p + 2], v3_scale(fx, fy, fz, share / total))
            b[q], b[q + 1], b[q + 2] = v3_add(b[q], b[q + 1], b[q + 2], v3_scale(fx, fy, fz, share_next / total))
        end
    end
    if not root then merge_point(rig, nd, 0, true) end
end

-- Node nd's first relaxed point pulled back to its length from its base (the article).
local function pull_first(nd, hi)
    local b = nd.relaxed
    if hi >= 1 then
        local ux, uy, uz = v3_normalize_or(b[3] - b[0], b[4] - b[1], b[5] - b[2], 0.0, 0.0, 0.0)
        if ux ~= 0 or uy ~= 0 or uz ~= 0 then
            b[3], b[4], b[5] = v3_add(b[0], b[1], b[2], v3_scale(ux, uy, uz, nd.chain.length[0]))
        end
    end
end

-- One relaxation iteration (see rig_relax.c).
function M.rig_relax_iteration(rig)
    local node, order = rig.node, rig.order
    for o = rig.count - 1, 0, -1 do
        local nd = node[order[o]]
        if nd.top >= 0 then relax_chain(rig, nd, nd.parent < 0) end
    end
    for o = 0, rig.count - 1 do
        local nd = node[order[o]]
        local c = nd.chain
        local b = nd.relaxed
        local hi = nd.top < nd.last and nd.top or nd.last
        if nd.top >= 0 then
            -- A sub-base is one point of two chains: where the parent's bones really put it.
            if nd.parent >= 0 then
                chain.chain_take_base(c)
                local r, j = node[nd.parent].relaxed, 3 * nd.chain.parent_joint
                r[j], r[j + 1], r[j + 2] = joint_at(c, 0)
            end
            if nd.parent >= 0 then
                b[0], b[1], b[2] = joint_at(c, 0)
            else
                b[0], b[1], b[2] = c.base_x, c.base_y, c.base_z
            end
            pull_first(nd, hi)
            if nd.kids == 0 and nd.end_ >= 2 and nd.end_ == nd.top then
                -- A limb: from where it hangs now, a few passes of its own, as for one chain.
                for _ = 1, LIMB_PASSES - 1 do
                    relax_chain(rig, nd, true)
                    pull_first(nd, hi)
                end
            end
            if nd.parent < 0 then set_joint(c, 0, c.base_x, c.base_y, c.base_z) end
            local jx, jy, jz = joint_at(c, 0)
            local rx, ry, rz = b[0], b[1], b[2]
            for i = 0, hi - 1 do
                local ux, uy, uz
                if i + 1 == nd.end_ then
                    ux, uy, uz = v3_sub(nd.goal_x, nd.goal_y, nd.goal_z, jx, jy, jz)
                else
                    ux, uy, uz = v3_sub(b[3 * i + 3], b[3 * i + 4], b[3 * i + 5], rx, ry, rz)
                end
                rx, ry, rz = b[3 * i + 3], b[3 * i + 4], b[3 * i + 5]
                local fx, fy, fz = dir_v3(c, i)
                ux, uy, uz = v3_normalize_or(ux, uy, uz, fx, fy, fz)
                jx, jy, jz = v3_add(jx, jy, jz, v3_scale(ux, uy, uz, c.length[i]))
                set_joint(c, i + 1, jx, jy, jz)
            end
            tree.rig_place_tip(nd)
        end
    end
end

-- Relaxation's points where the joints are, before its passes.
function M.rig_relax_start(rig)
    for k = 0, rig.count - 1 do
        local nd = rig.node[k]
        local b = nd.relaxed
        for j = 0, nd.chain.n do b[3 * j], b[3 * j + 1], b[3 * j + 2] = joint_at(nd.chain, j) end
    end
end

-- Over-relaxing at sub-bases stops once it no longer pays.
function M.rig_relax_omega(omega, before, distance)
    if distance > before then return 1.0 end
    return omega
end

return M
