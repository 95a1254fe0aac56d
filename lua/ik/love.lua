-- ik.love: debug drawing of ik chains and rigs in LÖVE 11, one call per chain or rig.
--
--   local ik = require("ik")
--   local ikdraw = require("ik.love")
--
--   local arm = ik.chain2d({ 120, 90 }, 400, 300)     -- lengths in pixels, base at (400, 300)
--   local reached
--   function love.update()
--       reached = arm:solve(love.mouse.getPosition())
--   end
--   function love.draw()
--       ikdraw.draw(arm, love.mouse.getX(), love.mouse.getY(), reached)
--   end
--
-- Chains and rigs of either backend are drawn alike: the C module's (userdata) and ik.pure's
-- (tables), through their methods only.
--
-- ikdraw.draw(chain [, tx, ty [, reached [, style]]])
--   Draws a 2D or 3D chain: its bones as lines, its joints as circles (the base filled), the
--   target (tx, ty), if given, as a cross (none given and the tip held, chain:attach_tip: a
--   ring round the held point), and each joint's limit as an arc (2D chains with
--   limits: see ikdraw.limits). The bones and the cross take the colour of `reached`,
--   the first result of the solve: style.reached (true), style.missed (false) or style.idle
--   (nil: not known). A 3D chain is drawn in an orthographic projection onto its x-y plane
--   (z is dropped); pass the target's x and y. Leaves LÖVE's colour and line width as it
--   found them. Returns nothing.
-- ikdraw.rig(rig [, style])
--   Draws every chain of an ik.rig as ikdraw.draw does (bones, joints, limit arcs), each in
--   the colour of its own goal: style.reached when its tip is within the rig's tolerance of
--   the goal (and, with an orientation goal, its tip bone within the rig's angle_tolerance
--   of it: what rig:solve counts as reached), style.missed when not, style.idle for a chain
--   without a goal (carried, or bent only for the chains below it). Then, on top, each goal
--   as a cross in its chain's colour (a held tip's, a closed loop: a ring round the held
--   point, joining the two chains), and each orientation goal (set_target_angle,
--   set_target_rotation) as a tick from the goal point along the direction the tip bone
--   should point, style.tick pixels long (3D: that direction projected onto x-y, so shorter
--   when it leans out of the plane). Reads the goals and tolerances from the rig and its
--   chains at every call. Returns the number of goals met and the number of goals.
-- ikdraw.target(x, y [, reached [, style]])
--   Only the cross, in the same colours.
-- ikdraw.limits(chain [, style])
--   Only the limit arcs: for each bone i of a 2D chain for which chain:limit(i) returns
--   min, max, an arc around joint i from the parent bone's world angle + min to + max. A
--   no-op for objects without a `limit` method, for 3D chains, and with style.limits == false.
-- ikdraw.positions(chain)
--   The chain's joint positions, {x1, y1, [z1,] x2, ...}, in a table kept for that chain
--   and refilled on every call (so do not keep it across frames expecting it to stay put).
-- ikdraw.style
--   The defaults. A style passed to a call may set any of these fields; the ones it leaves
--   out come from here. Change ikdraw.style itself to restyle everything.
--     x, y      where the chain's point (0, 0) lands on screen (default 0, 0)
--     scale     screen pixels per chain unit (default 1: the chain is in pixels)
--     flip_y    true for a y-up chain: screen y = y - chain y * scale (default false)
--     width     bone line width in pixels (2); radius: joint circle radius in pixels (4)
--     cross     half the size of the target cross in pixels (7)
--     ring      radius of the ring round a held tip in pixels (9)
--     tick      length of a rig's orientation-goal tick in pixels (16)
--     limits    false skips the limit arcs (default true)
--     reached, missed, idle, joint, limit   colours {r, g, b [, a]}, components 0..1
--
-- Coordinates: with the default style the chain is drawn in screen coordinates, y down. A
-- chain's angles are counter-clockwise in a y-up frame, so on LÖVE's y-down screen a positive
-- angle turns clockwise. With flip_y, a chain in a y-up world is drawn the right way up.
--
-- Nothing is allocated per frame: each chain's positions table, and each rig's settings and
-- per-chain states, are made once and kept in weak-keyed caches (they go when the chain or
-- rig does), and no closure or string is built in a draw. LÖVE is looked up at call time,
-- so this file can be required before love.graphics exists (or outside LÖVE, by tests that
-- provide their own `love`).

local M = {}

M.style = {
    x = 0,
    y = 0,
    scale = 1,
    flip_y = false,
    width = 2,
    radius = 4,
    cross = 7,
    ring = 9,
    tick = 16,
    limits = true,
    reached = { 0.30, 0.85, 0.40, 1 }, -- green
    missed = { 0.95, 0.55, 0.20, 1 },  -- orange
    idle = { 0.75, 0.75, 0.80, 1 },    -- grey: the result is not known
    joint = { 0.92, 0.92, 0.95, 1 },
    limit = { 0.45, 0.65, 1.00, 0.8 }, -- blue
}

local DEFAULT = M.style
local TWO_PI = 2 * math.pi

-- chain -> its positions table. Weak keys: the cache never keeps a chain alive.
local cache = setmetatable({}, { __mode = "k" })

function M.positions(chain)
    local t = cache[chain]
    if t == nil then
        t = {}
        cache[chain] = t
    end
    return chain:positions(t)
end

-- A style field, or the default's when the style leaves it out. Written out in each caller
-- would be noise; a function call allocates nothing.
local function get(style, key)
    local v = style[key]
    if v == nil then
        return DEFAULT[key]
    end
    return v
end

local function set_colour(c)
    love.graphics.setColor(c[1], c[2], c[3], c[4] or 1)
end

local function state_colour(style, reached)
    if reached == true then
        return get(style, "reached")
    elseif reached == false then
        return get(style, "missed")
    end
    return get(style, "idle")
end

-- Chain coordinates to screen coordinates.
local function to_screen(style, x, y)
    local scale = get(style, "scale")
    if get(style, "flip_y") then
        return get(style, "x") + x * scale, get(style, "y") - y * scale
    end
    return get(style, "x") + x * scale, get(style, "y") + y * scale
end

-- The cross, in the current colour and line width.
local function cross(style, x, y)
    local sx, sy = to_screen(style, x, y)
    local h = get(style, "cross")
    love.graphics.line(sx - h, sy - h, sx + h, sy + h)
    love.graphics.line(sx - h, sy + h, sx + h, sy - h)
end

-- A tip hold (chain:attach_tip): a ring round the held point, joining the two chains; in
-- the current colour and line width.
local function ring(style, x, y)
    local sx, sy = to_screen(style, x, y)
    love.graphics.circle("line", sx, sy, get(style, "ring"))
end

function M.target(x, y, reached, style)
    style = style or DEFAULT
    local lg = love.graphics
    local r, g, b, a = lg.getColor()
    local width = lg.getLineWidth()
    lg.setLineWidth(get(style, "width"))
    set_colour(state_colour(style, reached))
    cross(style, x, y)
    lg.setColor(r, g, b, a)
    lg.setLineWidth(width)
end

-- The arcs, in the current line width; sets the colour itself. p: the chain's positions,
-- already filled this frame.
local function limit_arcs(chain, style, p)
    if not get(style, "limits") or chain.limit == nil or chain:dim() ~= 2 then
        return
    end
    local lg = love.graphics
    local flip = get(style, "flip_y")
    local scale = get(style, "scale")
    set_colour(get(style, "limit"))
    for i = 1, chain:count() do
        local lo, hi = chain:limit(i)
        -- A limit spanning the whole turn limits nothing: no arc.
        if lo ~= nil and hi ~= nil and hi - lo < TWO_PI - 1e-9 then
            local parent
            if i == 1 then
                local _, _, base_angle = chain:base()
                parent = base_angle
            else
                parent = chain:world_angle(i - 1)
            end
            local a1, a2 = parent + lo, parent + hi
            if flip then
                -- Mirrored in y: angles change sign, so the arc runs the other way.
                a1, a2 = -a2, -a1
            end
            -- Half the bone, so neighbouring arcs rarely overlap; at least a joint's size.
            local radius = math.max(0.5 * chain:length(i) * scale, 2 * get(style, "radius"))
            local sx, sy = to_screen(style, p[2 * i - 1], p[2 * i])
            lg.arc("line", "open", sx, sy, radius, a1, a2)
        end
    end
end

function M.limits(chain, style)
    style = style or DEFAULT
    local lg = love.graphics
    local r, g, b, a = lg.getColor()
    local width = lg.getLineWidth()
    lg.setLineWidth(1)
    limit_arcs(chain, style, M.positions(chain))
    lg.setColor(r, g, b, a)
    lg.setLineWidth(width)
end

-- The chain's limit arcs, bones (in `colour`) and joints, in screen coordinates; sets the
-- colour and line width itself and restores neither.
local function chain_body(chain, style, colour)
    local lg = love.graphics
    local p = M.positions(chain)
    local stride = chain:dim() -- 3D: x, y, z per joint; the projection keeps x and y
    local joints = chain:count() + 1

    lg.setLineWidth(1)
    limit_arcs(chain, style, p)

    set_colour(colour)
    lg.setLineWidth(get(style, "width"))
    local px, py = to_screen(style, p[1], p[2])
    for j = 2, joints do
        local k = (j - 1) * stride
        local qx, qy = to_screen(style, p[k + 1], p[k + 2])
        lg.line(px, py, qx, qy)
        px, py = qx, qy
    end

    -- The joints on top of the bones: the base, which never moves, filled.
    set_colour(get(style, "joint"))
    lg.setLineWidth(1)
    local radius = get(style, "radius")
    for j = 1, joints do
        local k = (j - 1) * stride
        local sx, sy = to_screen(style, p[k + 1], p[k + 2])
        lg.circle(j == 1 and "fill" or "line", sx, sy, radius)
    end
end

function M.draw(chain, tx, ty, reached, style)
    style = style or DEFAULT
    local lg = love.graphics
    local r, g, b, a = lg.getColor()
    local width = lg.getLineWidth()

    local colour = state_colour(style, reached)
    chain_body(chain, style, colour)
    if tx == nil and chain:tip_parent() then
        -- a held tip: the ring where it is held
        set_colour(colour)
        lg.setLineWidth(get(style, "width"))
        ring(style, chain:target())
    elseif tx ~= nil and ty ~= nil then
        -- The target on top, in the colour of the result.
        set_colour(colour)
        lg.setLineWidth(get(style, "width"))
        cross(style, tx, ty)
    end

    lg.setColor(r, g, b, a)
    lg.setLineWidth(width)
end

-- ---------------------------------------------------------------------------------------
-- Rigs.

-- rig -> what ikdraw.rig keeps for it: its settings (refilled by rig:settings on every
-- call) and each chain's state this frame (true, false; nil: the chain has no goal).
-- Weak keys, as for the chains.
local rig_cache = setmetatable({}, { __mode = "k" })

local function rig_scratch(rig)
    local t = rig_cache[rig]
    if t == nil then
        t = { settings = {}, state = {} }
        rig_cache[rig] = t
    end
    return t
end

-- A chain's goal met as rig:solve counts it (chain:goal_error, the core's own measure):
-- the tip within `tolerance` of the position goal and the tip bone within `angle_tolerance`
-- of its orientation goal. nil when the chain has no goal.
local function goal_met(chain, tolerance, angle_tolerance)
    local distance, angle_error = chain:goal_error()
    if distance == nil then
        return nil
    end
    return distance <= tolerance and angle_error <= angle_tolerance
end

-- The orientation goal's tick: from the goal point along the goal's direction (the tip
-- bone's +x), `tick` pixels long on screen, in the current colour and line width.
local function orientation_tick(chain, style)
    local dx, dy
    if chain:dim() == 2 then
        local a = chain:target_angle()
        if a == nil then
            return
        end
        dx, dy = math.cos(a), math.sin(a)
    else
        local w, x, y, z = chain:target_rotation()
        if w == nil then
            return
        end
        -- The rotated +x axis, projected onto x-y (shorter when it leans out of the plane).
        dx, dy = 1 - 2 * (y * y + z * z), 2 * (x * y + w * z)
    end
    local tx, ty = chain:target()
    local sx, sy = to_screen(style, tx, ty)
    local length = get(style, "tick")
    if get(style, "flip_y") then
        dy = -dy
    end
    love.graphics.line(sx, sy, sx + length * dx, sy + length * dy)
end

function M.rig(rig, style)
    style = style or DEFAULT
    local lg = love.graphics
    local r, g, b, a = lg.getColor()
    local width = lg.getLineWidth()

    local scratch = rig_scratch(rig)
    local settings = rig:settings(scratch.settings)
    local tolerance, angle_tolerance = settings.tolerance, settings.angle_tolerance
    local state = scratch.state
    local count = rig:count()
    local met, goals = 0, 0

    -- Every chain, coloured by its own goal; then the goals on top of them all.
    for k = 1, count do
        local chain = rig:chain(k)
        local s = goal_met(chain, tolerance, angle_tolerance)
        state[k] = s
        if s ~= nil then
            goals = goals + 1
            if s then
                met = met + 1
            end
        end
        chain_body(chain, style, state_colour(style, s))
    end
    lg.setLineWidth(get(style, "width"))
    for k = 1, count do
        local s = state[k]
        if s ~= nil then
            local chain = rig:chain(k)
            set_colour(state_colour(style, s))
            if chain:tip_parent() then ring(style, chain:target()) else cross(style, chain:target()) end
            orientation_tick(chain, style)
        end
    end

    lg.setColor(r, g, b, a)
    lg.setLineWidth(width)
    return met, goals
end

return M
