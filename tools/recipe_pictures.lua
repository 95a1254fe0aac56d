-- The pictures of the README's recipes, docs/recipe-NAME.svg, drawn from the poses the
-- recipes' own code computes:
--   make && lua5.4 tools/recipe_pictures.lua        (from any directory)
--
-- For every image line `![...](docs/recipe-NAME.svg)` of README.md, the next code block
-- marked `<!-- test: lua -->` (a block make readme-check runs as a test) is run as written.
-- Its require("ik") gets the module as it is, but with the calls that move chains watched:
-- for each rig:solve, chain:solve (and solve_*), drag and simulate, the poses of the chains
-- the call moves are recorded before and after it, with the call's results; ik.gait's
-- `ground` is kept. The view of that NAME (below) picks from the records what to draw. The
-- watch replaces methods of the C module's metatables (through the debug library), which
-- LuaJIT's FFI path would go around: run it with Lua 5.4. Plain Lua, no dependencies
-- besides ik.

-- Find the repository root from this script's path, so the working tree's module is used.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
local root = here == "tools" and "." or here:match("^(.+)/tools$") or here .. "/.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/lua5.4/?.so;" .. package.cpath

if jit then error("run tools/recipe_pictures.lua with lua5.4 (LuaJIT's FFI path is not watched)") end
local ik = require("ik")

-- ---- The watch ----

local records, grounds -- the current recipe's: a list of calls, a list of ground functions

local function chains_of_rig(rig)
    local t = {}
    for k = 1, #rig do t[k] = rig:chain(k) end
    return t
end

local function chain_alone(chain) return { chain } end

local function snapshot(chain)
    return { dim = chain:dim(), points = chain:positions(), target = { chain:target() } }
end

-- Replaces index[name] by a function that calls it and records the poses of chains_of(self)
-- before and after.
local function watch(index, name, chains_of, with_settings)
    local original = assert(index[name], name)
    index[name] = function(self, ...)
        local before = {}
        if records then
            for k, c in ipairs(chains_of(self)) do before[k] = snapshot(c) end
        end
        local results = table.pack(original(self, ...))
        if records then
            local r = { call = name, self = self, results = results, before = before, chains = {} }
            for k, c in ipairs(chains_of(self)) do r.chains[k] = snapshot(c) end
            if with_settings then r.settings = self:settings() end
            records[#records + 1] = r
        end
        return table.unpack(results, 1, results.n)
    end
end

local sample = ik.chain2d({ 1 })
local chain_index = debug.getmetatable(sample).__index
local rig_index = debug.getmetatable(ik.rig({ sample })).__index
for _, name in ipairs({ "solve", "solve_fabrik", "solve_ccd", "solve_relax", "solve_two_bone",
    "solve_aim" }) do
    watch(chain_index, name, chain_alone, true)
end
watch(chain_index, "drag", chain_alone, false)
watch(chain_index, "simulate", chain_alone, false)
watch(rig_index, "solve", chains_of_rig, false)

-- What the recipes' require("ik") returns: ik, with ik.gait keeping its ground.
local watched = setmetatable({
    gait = function(legs, options)
        grounds[#grounds + 1] = type(options) == "table" and options.ground or nil
        return ik.gait(legs, options)
    end,
}, { __index = ik })

-- Runs a recipe's code; returns its records and grounds.
local function run(name, code)
    local env = setmetatable({
        require = function(module) return module == "ik" and watched or require(module) end,
        print = function() end,
    }, { __index = _G })
    local chunk = assert(load(code, "=README recipe " .. name, "t", env))
    records, grounds = {}, {}
    chunk()
    local r, g = records, grounds
    records, grounds = nil, nil
    return r, g
end

-- ---- Drawing ----

local COLOURS = {
    held = "#1f77b4", free = "#d62728", missed = "#ff7f0e", reached = "#2ca02c",
    ground = "#8c6d31", path = "#999999", line = "#bbbbbb", text = "#333333",
}

local function f(v) return ("%.1f"):format(v) end

-- A panel: a title and items in world units (u right, v up) after projection:
--   { "chain", pts, colour [, width [, opacity]] }  bones, joints, the base as a square
--   { "line", pts, colour [, width [, opacity [, dash]]] }
--   { "cross", u, v [, colour] }
--   { "arrow", u, v, du, dv, colour }
--   { "text", u, v, text }                          small grey text starting at (u, v)
-- A picture: panels side by side at one scale (pixels per unit), each at least `least`
-- pixels wide; a title may break into lines at "\n".
local MARGIN, TITLE, GAP, PAD = 12, 22, 14, 0.15

local function bounds(items)
    local u0, v0, u1, v1 = math.huge, math.huge, -math.huge, -math.huge
    local function add(u, v)
        u0, v0, u1, v1 = math.min(u0, u), math.min(v0, v), math.max(u1, u), math.max(v1, v)
    end
    for _, item in ipairs(items) do
        if item[1] == "chain" or item[1] == "line" then
            for i = 1, #item[2], 2 do add(item[2][i], item[2][i + 1]) end
        elseif item[1] == "cross" or item[1] == "text" then
            add(item[2], item[3])
        elseif item[1] == "arrow" then
            add(item[2], item[3])
            add(item[2] + item[4], item[3] + item[5])
        end
    end
    return u0 - PAD, v0 - PAD, u1 + PAD, v1 + PAD
end

local function picture(panels, scale, least)
    local boxes, width, height = {}, MARGIN, 0
    for k, panel in ipairs(panels) do
        local u0, v0, u1, v1 = bounds(panel.items)
        local w = math.max((u1 - u0) * scale, least or 0)
        local middle = (u0 + u1) / 2
        u0 = middle - w / scale / 2
        boxes[k] = { left = width, u0 = u0, v1 = v1, w = w, h = (v1 - v0) * scale }
        width = width + w + GAP
        height = math.max(height, boxes[k].h)
    end
    width = width - GAP + MARGIN
    local rows = 1 -- the most lines a title takes
    for _, panel in ipairs(panels) do
        local _, breaks = panel.title:gsub("\n", "")
        rows = math.max(rows, breaks + 1)
    end
    local title = TITLE + 16 * (rows - 1)
    height = height + title + 2 * MARGIN
    local out = {}
    local function emit(fmt, ...) out[#out + 1] = fmt:format(...) end
    emit('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
        .. 'font-family="sans-serif">', math.ceil(width), math.ceil(height), math.ceil(width),
        math.ceil(height))
    emit('<rect width="%d" height="%d" fill="#ffffff"/>', math.ceil(width), math.ceil(height))
    for k, panel in ipairs(panels) do
        local box = boxes[k]
        local top = MARGIN + title
        local function x(u) return box.left + (u - box.u0) * scale end
        local function y(v) return top + (box.v1 - v) * scale end
        local function points(p)
            local t = {}
            for i = 1, #p, 2 do t[#t + 1] = f(x(p[i])) .. "," .. f(y(p[i + 1])) end
            return table.concat(t, " ")
        end
        local row = 0
        for text in (panel.title .. "\n"):gmatch("(.-)\n") do
            emit('<text x="%s" y="%d" font-size="13" fill="%s">%s</text>', f(box.left),
                MARGIN + 13 + 16 * row, COLOURS.text, text)
            row = row + 1
        end
        emit('<rect x="%s" y="%d" width="%s" height="%s" fill="#fbfbfb" stroke="#e4e4e4"/>',
            f(box.left), top, f(box.w), f(box.h))
        for _, item in ipairs(panel.items) do
            local kind = item[1]
            if kind == "chain" or kind == "line" then
                local colour, w, opacity = item[3], item[4] or 2.5, item[5] or 1
                emit('<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" '
                    .. 'stroke-opacity="%s" stroke-linejoin="round" stroke-linecap="round"%s/>',
                    points(item[2]), colour, w, opacity,
                    item[6] and (' stroke-dasharray="%s"'):format(item[6]) or "")
                if kind == "chain" then
                    local p = item[2]
                    emit('<rect x="%s" y="%s" width="7" height="7" fill="#333333" '
                        .. 'fill-opacity="%s"/>', f(x(p[1]) - 3.5), f(y(p[2]) - 3.5), opacity)
                    for i = 3, #p, 2 do
                        emit('<circle cx="%s" cy="%s" r="%s" fill="%s" fill-opacity="%s"/>',
                            f(x(p[i])), f(y(p[i + 1])), w * 0.8, colour, opacity)
                    end
                end
            elseif kind == "cross" then
                local cx, cy, c = x(item[2]), y(item[3]), item[4] or "#000000"
                emit('<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="1.5"/>',
                    f(cx - 5), f(cy - 5), f(cx + 5), f(cy + 5), f(cx - 5), f(cy + 5), f(cx + 5),
                    f(cy - 5), c)
            elseif kind == "text" then
                emit('<text x="%s" y="%s" font-size="11" fill="#777777">%s</text>', f(x(item[2])),
                    f(y(item[3])), item[4])
            elseif kind == "arrow" then
                local ax, ay = x(item[2]), y(item[3])
                local bx, by = x(item[2] + item[4]), y(item[3] + item[5])
                local dx, dy = bx - ax, by - ay
                local l = math.sqrt(dx * dx + dy * dy)
                dx, dy = dx / l, dy / l
                emit('<path d="M%s %sL%s %sM%s %sL%s %sL%s %s" fill="none" stroke="%s" '
                    .. 'stroke-width="1.5"/>', f(ax), f(ay), f(bx), f(by),
                    f(bx - 7 * dx - 4 * dy), f(by - 7 * dy + 4 * dx), f(bx), f(by),
                    f(bx - 7 * dx + 4 * dy), f(by - 7 * dy - 4 * dx), item[6])
            end
        end
    end
    emit("</svg>\n")
    return table.concat(out, "\n")
end

-- A snapshot's joints, projected to (u, v): 2D as they are, 3D by project(x, y, z).
local function flat(snap, project)
    if snap.dim == 2 then return snap.points end
    local p, t = snap.points, {}
    for i = 1, #p, 3 do
        local u, v = project(p[i], p[i + 1], p[i + 2])
        t[#t + 1], t[#t + 2] = u, v
    end
    return t
end

local function tip(snap, project)
    local p = flat(snap, project)
    return p[#p - 1], p[#p]
end

-- ---- The views, one per recipe ----

local views = {}

-- The walker: standing with the pelvis free and held, then the walk with the pelvis held.
function views.walker(calls, ground)
    local panels = {}
    for k, case in ipairs({ { "free pelvis", COLOURS.free }, { "held pelvis", COLOURS.held } }) do
        local call, items = calls[k], {}
        local p = call.chains[1].points
        for c, snap in ipairs(call.chains) do
            items[#items + 1] = { "chain", snap.points, case[2], c == 1 and 5 or 2.5 }
            if snap.target[1] then items[#items + 1] = { "cross", snap.target[1], snap.target[2] } end
        end
        panels[k] = { title = ("%s:\n%.3f rad"):format(case[1], math.atan(p[4] - p[2], p[3] - p[1])),
            items = items }
    end
    local walk, items = {}, {}
    for i = 3, #calls do walk[#walk + 1] = calls[i] end
    local line = {}
    for x = -0.6, 6.6, 0.05 do line[#line + 1], line[#line + 2] = x, ground[1](x) end
    items[1] = { "line", line, COLOURS.ground, 1.5 }
    for leg = 2, 3 do
        local path = {}
        for _, call in ipairs(walk) do
            path[#path + 1], path[#path + 2] = tip(call.chains[leg])
        end
        items[#items + 1] = { "line", path, COLOURS.path, 1 }
    end
    for i = 60, #walk, 60 do
        for c, snap in ipairs(walk[i].chains) do
            items[#items + 1] = { "chain", snap.points, COLOURS.held, c == 1 and 5 or 2.5,
                0.35 + 0.65 * i / #walk }
        end
    end
    panels[3] = { title = ("walking, pelvis held:\neach second of %d s"):format(#walk // 60),
        items = items }
    return picture(panels, 80, 150)
end

-- The arm, seen from its right side: forwards (+z) to the right, up (+y) up; the rest pose
-- each solve starts from, dashed; the line from the shoulder to the goal, finely dashed; the
-- pole as an arrow from its middle.
function views.arm(calls)
    local function side(_, y, z) return z, y end
    local panels = {}
    for k, call in ipairs(calls) do
        local snap, s = call.chains[1], call.settings
        local p = flat(snap, side)
        local gu, gv = side(table.unpack(snap.target))
        local reached = call.results[1]
        local pole = s.pole and (s.pole[3] < 0 and "backwards" or "forwards") or "false"
        local items = {
            { "line", flat(call.before[1], side), COLOURS.path, 1.5, 1, "4 3" },
            { "line", { p[1], p[2], gu, gv }, COLOURS.line, 1, 1, "3 3" },
            { "chain", p, reached and COLOURS.reached or COLOURS.missed },
            { "cross", gu, gv },
            { "text", p[1] + 0.02, p[2] + 0.02, "shoulder" },
        }
        if s.pole then
            local mu, mv = (p[1] + gu) / 2, (p[2] + gv) / 2
            local du, dv = side(s.pole[1], s.pole[2], s.pole[3])
            items[#items + 1] = { "arrow", mu, mv, 0.15 * du, 0.15 * dv, "#9467bd" }
        end
        panels[k] = { title = ("%s, pole %s:\n%s"):format(s.solver, pole,
            reached and "reached" or "missed"), items = items }
    end
    return picture(panels, 300, 150)
end

-- The rope: falling and swinging behind the hook, at rest, then dragged by its end.
function views.rope(calls)
    local hanging, dragged = {}, {}
    for _, call in ipairs(calls) do
        local list = call.call == "simulate" and hanging or dragged
        list[#list + 1] = call
    end
    local items = {}
    for _, frame in ipairs({ 12, 24, 36, 60, 80, 100, 120, 150, 180 }) do
        items[#items + 1] = { "chain", hanging[frame].chains[1].points, COLOURS.held, 2,
            0.2 + 0.5 * frame / 180 }
    end
    items[#items + 1] = { "chain", hanging[#hanging].chains[1].points, COLOURS.held, 3 }
    local path, items2 = {}, {}
    for _, call in ipairs(dragged) do
        path[#path + 1], path[#path + 2] = tip(call.chains[1])
    end
    items2[1] = { "line", path, COLOURS.path, 1, 1, "3 3" }
    for _, k in ipairs({ 40, 80, 120 }) do
        items2[#items2 + 1] = { "chain", dragged[k].chains[1].points, COLOURS.held, 2.5,
            0.35 + 0.65 * k / 120 }
    end
    return picture({
        { title = "hanging: 0.2 to 3 s (light to dark),\nand at rest at 10 s", items = items },
        { title = "dragged by its end:\nafter 40, 80 and 120 calls", items = items2 },
    }, 110, 150)
end

-- The spider, seen from the front left and above (x to the right, z going away), at two
-- moments, with its feet's paths and the ground along a few lines of z.
function views.spider(calls, ground)
    local yaw, pitch = math.rad(-8), math.rad(35)
    local function view(x, y, z)
        local u, d = x * math.cos(yaw) + z * math.sin(yaw), z * math.cos(yaw) - x * math.sin(yaw)
        return u, y * math.cos(pitch) + d * math.sin(pitch)
    end
    local items = {}
    for z = 2, -2, -0.5 do
        local line = {}
        for x = -2, 10, 0.1 do
            line[#line + 1], line[#line + 2] = view(x, ground[1](x, z), z)
        end
        items[#items + 1] = { "line", line, COLOURS.ground, 1, 0.35 }
    end
    local group = { [1] = 1, [3] = 1, [6] = 1, [8] = 1 }
    for leg = 2, #calls[1].chains do
        local path = {}
        for _, call in ipairs(calls) do
            path[#path + 1], path[#path + 2] = tip(call.chains[leg], view)
        end
        items[#items + 1] = { "line", path, group[leg - 1] and "#9467bd" or "#d62728", 1.2 }
    end
    for _, frame in ipairs({ 90, 390 }) do
        local chains = {}
        for k, snap in ipairs(calls[frame].chains) do
            chains[k] = { snap = snap, body = k == 1, z = snap.points[#snap.points] }
        end
        table.sort(chains, function(a, b) return a.z > b.z end) -- far legs first
        for _, c in ipairs(chains) do
            items[#items + 1] = { "chain", flat(c.snap, view), c.body and "#333333" or COLOURS.held,
                c.body and 4 or 2 }
        end
    end
    return picture({ { title = ("walking %d s at 60 Hz, at 1.5 s and 6.5 s; each foot's steps "
        .. "(the two groups in two colours)"):format(#calls // 60), items = items } }, 60, 150)
end

-- The body with two arms: the pose it starts from, dashed, and the pose the rig solve gives.
function views.body(calls)
    local call, items = calls[1], {}
    for _, snap in ipairs(call.before) do
        items[#items + 1] = { "line", snap.points, COLOURS.path, 1.5, 1, "4 3" }
    end
    for _, snap in ipairs(call.chains) do
        items[#items + 1] = { "chain", snap.points, call.results[1] and COLOURS.reached
            or COLOURS.missed }
        if snap.target[1] then items[#items + 1] = { "cross", snap.target[1], snap.target[2] } end
    end
    return picture({ { title = ("one rig:solve(): %s in %d iteration%s"):format(
        call.results[1] and "reached" or "missed", call.results[3],
        call.results[3] == 1 and "" or "s"), items = items } }, 90, 150)
end

-- ---- The README ----

local function read(path)
    local file = assert(io.open(path, "r"))
    local text = file:read("a")
    file:close()
    return text
end

local lines = {}
for line in (read(root .. "/README.md") .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end

local made = 0
for i, line in ipairs(lines) do
    local name = line:match("^!%[.-%]%(docs/recipe%-([%w_-]+)%.svg%)")
    if name then
        local view = views[name] or error("no view for docs/recipe-" .. name .. ".svg")
        local j = i + 1
        while lines[j] and lines[j] ~= "<!-- test: lua -->" do j = j + 1 end
        assert(lines[j] and lines[j + 1]:match("^```"), "no test block after the picture " .. name)
        local code = {}
        j = j + 2
        while lines[j] ~= "```" do
            code[#code + 1] = lines[j]
            j = j + 1
        end
        local calls, ground = run(name, table.concat(code, "\n"))
        local path = ("%s/docs/recipe-%s.svg"):format(root, name)
        local file = assert(io.open(path, "w"))
        file:write(view(calls, ground))
        file:close()
        print(("wrote docs/recipe-%s.svg (%d calls recorded)"):format(name, #calls))
        made = made + 1
    end
end
assert(made > 0, "README.md shows no picture docs/recipe-NAME.svg")
