-- ik.pure.gait: src/gait.c in plain Lua, function for function, in the same order and with
-- the same arithmetic: a stepping controller, feet planted on the ground that step, in
-- groups that take turns, to keep under a moving body. It moves no bone itself: each update
-- sets every leg's goal to its foot, and the caller solves the legs.
--
-- A gait is a table with the fields of struct ik_gait; its options are a table with the
-- fields of ik_gait_options (ground a function ground(user, x, z) returning true and the
-- height, or false: the update then fails with ERR_GROUND). A leg is a table with the
-- fields of ik_gait_leg, its vectors flattened (home_x ..; home_local as local_x ..), the
-- C's int stepping a boolean; leg, next, far, since and room are 0-based arrays made by
-- gait_create, so no update allocates. Not ported: what only the C's memory needs
-- (ik_gait_size, ik_gait_init on a caller's block, ik_gait_check, ik_gait_destroy): Lua
-- allocates, so gait_create is the C's init and create in one.

local m = require("ik.pure.math")
local chain = require("ik.pure.chain")

local abs = math.abs
local hypot, v2_rotate, v2_unrotate = m.hypot, m.v2_rotate, m.v2_unrotate
local v3_add, v3_sub, v3_scale, v3_normalize_or, q_rotate = m.v3_add, m.v3_sub, m.v3_scale, m.v3_normalize_or, m.q_rotate
local chain_follow, chain_update, joint_v3 = chain.chain_follow, chain.chain_update, chain.joint_v3
local chain_set_target = chain.chain_set_target

local OK, MAX_COORD = chain.OK, chain.MAX_COORD

local M = {}

M.DEFAULT_STEP_TIME = 0.25
M.DEFAULT_LIFT = 0.25
M.DEFAULT_LEAD = 0.5

local function isfinite(v) return v - v == 0 end

-- glibc's fmin on x86-64 (minsd): a when a < b or b is NaN, else b.
local function fmin(a, b)
    if a < b or b ~= b then return a end
    return b
end

function M.gait_default_options(stride)
    return {
        stride = stride, step_time = M.DEFAULT_STEP_TIME, lift = M.DEFAULT_LIFT * stride,
        lead = M.DEFAULT_LEAD, max_groups = 1, up = 1, ground = nil, user = nil,
    }
end

local function in_range(v) return isfinite(v) and abs(v) <= MAX_COORD end

function M.gait_validate(o)
    if not (in_range(o.stride) and o.stride > 0) then return chain.ERR_STRIDE end
    if not (in_range(o.step_time) and o.step_time > 0) then return chain.ERR_STEP_TIME end
    if not (in_range(o.lift) and o.lift >= 0) then return chain.ERR_LIFT end
    if not (isfinite(o.lead) and o.lead >= 0 and o.lead * o.stride <= MAX_COORD) then return chain.ERR_LEAD end
    if o.max_groups < 1 then return chain.ERR_MAX_GROUPS end
    if o.up ~= 1 and o.up ~= -1 then return chain.ERR_UP end
    return OK
end

-- The leg's base frame applied to a local point, and undone.
local function to_world(c, px, py, pz)
    if c.dim == 2 then
        local rx, ry = v2_rotate(px, py, c.base_turn_x, c.base_turn_y)
        return c.base_x + rx, c.base_y + ry, 0.0
    end
    return v3_add(c.base_x, c.base_y, c.base_z, q_rotate(c.base_rot_w, c.base_rot_x, c.base_rot_y, c.base_rot_z, px, py, pz))
end

local function to_local(c, px, py, pz)
    local dx, dy, dz = v3_sub(px, py, pz, c.base_x, c.base_y, c.base_z)
    if c.dim == 2 then
        local rx, ry = v2_unrotate(dx, dy, c.base_turn_x, c.base_turn_y)
        return rx, ry, 0.0
    end
    return q_rotate(c.base_rot_w, -c.base_rot_x, -c.base_rot_y, -c.base_rot_z, dx, dy, dz)
end

-- The leg's home in the world now (its base brought up to date with its parents).
local function home_now(leg)
    chain_follow(leg.chain)
    return to_world(leg.chain, leg.local_x, leg.local_y, leg.local_z)
end

local function new_leg()
    return {
        chain = nil, local_x = 0.0, local_y = 0.0, local_z = 0.0, home_x = 0.0, home_y = 0.0, home_z = 0.0,
        foot_x = 0.0, foot_y = 0.0, foot_z = 0.0, from_x = 0.0, from_y = 0.0, from_z = 0.0,
        to_x = 0.0, to_y = 0.0, to_z = 0.0, progress = 0.0, stepping = false, group = 0,
    }
end

-- The C's memcpy of one leg.
local function copy_leg(to, from)
    to.chain, to.group, to.progress, to.stepping = from.chain, from.group, from.progress, from.stepping
    to.local_x, to.local_y, to.local_z = from.local_x, from.local_y, from.local_z
    to.home_x, to.home_y, to.home_z = from.home_x, from.home_y, from.home_z
    to.foot_x, to.foot_y, to.foot_z = from.foot_x, from.foot_y, from.foot_z
    to.from_x, to.from_y, to.from_z = from.from_x, from.from_y, from.from_z
    to.to_x, to.to_y, to.to_z = from.to_x, from.to_y, from.to_z
end

local gait_reset

-- legs: count chains, 0-based; groups: leg k's group (0-based), or nil. The status, then
-- the gait.
function M.gait_create(legs, count, groups, options)
    local most = -1
    if count < 1 then return chain.ERR_COUNT end
    local st = M.gait_validate(options)
    if st ~= OK then return st end
    for k = 0, count - 1 do
        if legs[k].dim ~= legs[0].dim then return chain.ERR_DIMENSION end
        for j = 0, k - 1 do
            if legs[j] == legs[k] then return chain.ERR_GROUPS end -- a leg twice
        end
        if groups then
            if groups[k] < 0 or groups[k] >= count then return chain.ERR_GROUPS end
            if groups[k] > most then most = groups[k] end
        end
    end
    if groups then -- every group from 0 to the last has a leg
        for j = 0, most do
            local k = 0
            while k < count and groups[k] ~= j do k = k + 1 end
            if k == count then return chain.ERR_GROUPS end
        end
    end

    local g = {
        count = count, groups = groups and most + 1 or count, dim = legs[0].dim,
        options = {}, leg = {}, next = {}, far = {}, since = {}, room = {},
    }
    for key, v in pairs(options) do g.options[key] = v end
    for k = 0, count - 1 do
        g.leg[k], g.next[k] = new_leg(), new_leg()
        g.far[k], g.since[k], g.room[k] = 0.0, 0.0, 0.0
    end
    for k = 0, count - 1 do
        local leg, c = g.leg[k], legs[k]
        leg.chain = c
        leg.group = groups and groups[k] or k
        chain_update(c)
        leg.local_x, leg.local_y, leg.local_z = to_local(c, joint_v3(c, c.n))
    end
    gait_reset(g)
    return OK, g
end

function M.gait_count(g) return g.count end

function M.gait_set_ground(g, ground, user)
    g.options.ground = ground
    g.options.user = user
end

function gait_reset(g)
    for k = 0, g.count - 1 do
        local leg = g.leg[k]
        local x, y, z = home_now(leg)
        leg.home_x, leg.home_y, leg.home_z = x, y, z
        leg.foot_x, leg.foot_y, leg.foot_z = x, y, z
        leg.from_x, leg.from_y, leg.from_z = x, y, z
        leg.to_x, leg.to_y, leg.to_z = x, y, z
        leg.progress = 0.0
        leg.stepping = false
    end
end
M.gait_reset = gait_reset

-- The distance across the ground (x in 2D; x and z in 3D) from a to b.
local function across(g, ax, az, bx, bz)
    local dx, dz = bx - ax, g.dim == 3 and bz - az or 0.0
    if g.dim == 3 then return hypot(dx, dz) end
    return abs(dx)
end

-- Where a step lands with the home at `at`: lead * stride past it along the home's motion
-- across the ground since the last update (from before to home), at the ground's height.
-- Sets leg.to; false when the ground has no height there.
local function landing(g, leg, atx, aty, atz, hx, hz, bx, bz)
    local o = g.options
    local mx, mz = hx - bx, g.dim == 3 and hz - bz or 0.0
    local ux, uy, uz = v3_normalize_or(mx, 0.0, mz, 0.0, 0.0, 0.0)
    local tx, ty, tz = v3_add(atx, aty, atz, v3_scale(ux, uy, uz, o.lead * o.stride))
    if o.ground then
        local ok, y = o.ground(o.user, tx, g.dim == 3 and tz or 0.0)
        if not ok or not in_range(y) then return false end
        ty = y + 0.0
    end
    leg.to_x, leg.to_y, leg.to_z = tx, ty, tz
    return true
end

-- The foot through a step: along the line from lift-off to landing, raised lift at the
-- middle (a parabola). Sets leg.foot.
local function on_arc(g, leg)
    local s = leg.progress
    local dx, dy, dz = v3_sub(leg.to_x, leg.to_y, leg.to_z, leg.from_x, leg.from_y, leg.from_z)
    local px, py, pz = v3_add(leg.from_x, leg.from_y, leg.from_z, v3_scale(dx, dy, dz, s))
    py = py + g.options.up * g.options.lift * 4 * s * (1 - s)
    leg.foot_x, leg.foot_y, leg.foot_z = px, py, pz
end

local function within(g, x, y, z)
    return in_range(x) and in_range(y) and (g.dim == 2 or in_range(z))
end

-- Events between two updates happen at their own time, not at the update's: a foot that
-- lands early in the frame frees its place in the air then, and a group that steps starts
-- from when its foot passed stride or its place came free, whichever is later. So the walk
-- is the same at 30 Hz as at 144.
function M.gait_update(g, dt)
    local o, next, far, since, room = g.options, g.next, g.far, g.since, g.room
    local count, groups = g.count, g.groups
    local in_air, rooms = 0, 0
    if dt ~= dt or not (dt > 0) or not isfinite(dt) then return chain.ERR_TIME_STEP end
    for k = 0, count - 1 do -- a held tip's goal is its hold: no foot to set
        if g.leg[k].chain.tip_parent then return chain.ERR_HELD end
    end
    local advance = dt / o.step_time
    for k = 0, count - 1 do copy_leg(next[k], g.leg[k]) end

    -- Places in the air free for the whole update.
    for j = 0, groups - 1 do far[j] = 0.0 end
    for k = 0, count - 1 do
        if next[k].stepping then far[next[k].group] = -1.0 end
    end
    for j = 0, groups - 1 do
        if far[j] < 0 then in_air = in_air + 1 end
    end
    while rooms < o.max_groups - in_air and rooms < count do
        room[rooms] = dt
        rooms = rooms + 1
    end

    -- The feet in the air move on; those at the end of their step land, freeing a place.
    for j = 0, groups - 1 do since[j] = -1.0 end -- a group's landing time, once
    for k = 0, count - 1 do
        local leg = next[k]
        local bx, by, bz = leg.home_x, leg.home_y, leg.home_z
        local hx, hy, hz = home_now(leg)
        leg.home_x, leg.home_y, leg.home_z = hx, hy, hz
        if not within(g, hx, hy, hz) then return chain.ERR_RANGE end
        if leg.stepping then
            leg.progress = leg.progress + advance
            if leg.progress >= 1 then -- down `ago` seconds ago, where the home was then
                local ago = fmin((leg.progress - 1) * o.step_time, dt)
                local dx, dy, dz = v3_sub(hx, hy, hz, bx, by, bz)
                local tx, ty, tz = v3_sub(hx, hy, hz, v3_scale(dx, dy, dz, ago / dt))
                if not landing(g, leg, tx, ty, tz, hx, hz, bx, bz) then return chain.ERR_GROUND end
                leg.foot_x, leg.foot_y, leg.foot_z = leg.to_x, leg.to_y, leg.to_z
                leg.progress = 0.0
                leg.stepping = false
                if since[leg.group] < 0 then since[leg.group] = ago end
            else
                if not landing(g, leg, hx, hy, hz, hx, hz, bx, bz) then return chain.ERR_GROUND end
                on_arc(g, leg)
            end
        end
    end
    for j = 0, groups - 1 do
        if since[j] >= 0 and rooms < count then
            room[rooms] = since[j]
            rooms = rooms + 1
        end
    end

    -- How far each group on the ground is from home, and since when past stride.
    for j = 0, groups - 1 do far[j], since[j] = 0.0, 0.0 end
    for k = 0, count - 1 do
        local leg = next[k]
        local d = across(g, leg.foot_x, leg.foot_z, leg.home_x, leg.home_z)
        local group = leg.group
        if leg.stepping then
            far[group] = -1.0
        elseif far[group] >= 0 and d > far[group] then
            local was = g.leg[k]
            local speed = across(g, was.home_x, was.home_z, leg.home_x, leg.home_z) / dt
            far[group] = d
            since[group] = speed > 0 and fmin((d - o.stride) / speed, dt) or dt
        end
    end

    -- While a place is free, the group whose foot is farthest past stride steps, from the
    -- later of when it passed stride and when the place (the longest free) came free.
    while rooms > 0 do
        local best, oldest = -1, 0
        -- (farther by more than rounding: feet as far as each other go in the groups'
        -- order, the same at every frame rate)
        for j = 0, groups - 1 do
            if far[j] > o.stride and (best < 0 or far[j] > far[best] + 1e-9 * o.stride) then best = j end
        end
        if best < 0 then break end
        for j = 1, rooms - 1 do
            if room[j] > room[oldest] then oldest = j end
        end
        local credit = fmin(since[best], room[oldest])
        rooms = rooms - 1
        room[oldest] = room[rooms]
        for k = 0, count - 1 do
            local leg = next[k]
            if leg.group == best then
                local was = g.leg[k]
                leg.stepping = true
                leg.progress = fmin(credit / o.step_time, 1.0)
                leg.from_x, leg.from_y, leg.from_z = leg.foot_x, leg.foot_y, leg.foot_z
                local hx, hy, hz = leg.home_x, leg.home_y, leg.home_z
                if not landing(g, leg, hx, hy, hz, hx, hz, was.home_x, was.home_z) then return chain.ERR_GROUND end
                if leg.progress >= 1 then -- a step shorter than the time since: it is down
                    leg.foot_x, leg.foot_y, leg.foot_z = leg.to_x, leg.to_y, leg.to_z
                    leg.progress = 0.0
                    leg.stepping = false
                else
                    on_arc(g, leg)
                end
            end
        end
        far[best] = -1.0
    end
    for k = 0, count - 1 do
        local leg = next[k]
        if not within(g, leg.foot_x, leg.foot_y, leg.foot_z) or not within(g, leg.to_x, leg.to_y, leg.to_z) then
            return chain.ERR_RANGE
        end
    end

    -- All of it is good: kept, and every leg's goal is its foot.
    for k = 0, count - 1 do copy_leg(g.leg[k], next[k]) end
    for k = 0, count - 1 do
        local leg = g.leg[k]
        chain_set_target(leg.chain, leg.foot_x, leg.foot_y, leg.foot_z)
    end
    return OK
end

-- Foot k: the status, its point (x, y, z; z = 0 in 2D), whether it is stepping, and how far
-- through its step (0 when planted).
function M.gait_foot(g, k)
    if k < 0 or k >= g.count then return chain.ERR_INDEX end
    local leg = g.leg[k]
    return OK, leg.foot_x, leg.foot_y, g.dim == 3 and leg.foot_z or 0.0, leg.stepping,
        leg.stepping and leg.progress or 0.0
end

function M.gait_leg_chain(g, k)
    if k >= 0 and k < g.count then return g.leg[k].chain end
    return nil
end

return M
