-- The headless demo: `make demo`, or `lua5.4 demo/demo.lua [--readme]` from any directory.
--
-- Builds a few 2D chains, solves each towards a few targets (one out of reach) with every
-- solver, each solve starting from the same pose, prints a table of the results and draws
-- them as SVG: demo/out/<chain>.svg and demo/out/all.svg; with --readme also docs/demo.svg,
-- the picture the README shows. Plain Lua, no dependencies besides ik.

-- Find the repository root from this script's path, so the working tree's module is used.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
local root = here == "demo" and "." or here:match("^(.+)/demo$") or here .. "/.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/?.so;" .. package.cpath

local ik = require("ik")

local readme = false
for _, a in ipairs(arg or {}) do
    if a == "--readme" then
        readme = true
    else
        io.stderr:write("usage: lua5.4 demo/demo.lua [--readme]\n")
        os.exit(2)
    end
end

local function rep(value, n)
    local t = {}
    for i = 1, n do
        t[i] = value
    end
    return t
end

-- The chains, in a y-up world. `angles` is the starting pose (local angles, radians);
-- `weights` (joints 1..n+1) matter to the relaxation solver only.
local rope_weights = {}
for i = 1, 11 do
    rope_weights[i] = i / 11 -- light at the tip, heavy near the base
end
local chains = {
    {
        name = "arm",
        about = "2 bones",
        lengths = { 1.0, 0.8 },
        angles = { 0.5, 0.9 },
        targets = { { 1.2, 0.9 }, { -0.7, 1.1 }, { 2.4, -1.2 } },
        solvers = { "fabrik", "ccd", "relax", "two_bone" },
    },
    {
        name = "tentacle",
        about = "6 bones",
        lengths = rep(0.5, 6),
        angles = rep(0.3, 6),
        targets = { { 1.0, 2.0 }, { -1.5, 0.5 }, { 3.5, 2.5 } },
        solvers = { "fabrik", "ccd", "relax" },
    },
    {
        name = "rope",
        about = "10 bones, hanging, weights rising towards the tip",
        lengths = rep(0.3, 10),
        base_angle = -math.pi / 2,
        angles = rep(0.05, 10),
        weights = rope_weights,
        targets = { { 1.5, -1.8 }, { 1.8, 0.6 }, { -3.0, -2.5 } },
        solvers = { "fabrik", "ccd", "relax" },
    },
}

local colours = {
    fabrik = "#1f77b4",
    ccd = "#d62728",
    relax = "#2ca02c",
    two_bone = "#9467bd",
    start = "#9a9a9a",
}

-- A fresh chain in its starting pose, so that every solver starts from the same one.
local function build(spec)
    local chain = ik.chain2d(spec.lengths, 0, 0, spec.base_angle or 0)
    for i, a in ipairs(spec.angles) do
        chain:set_angle(i, a)
    end
    for i, w in ipairs(spec.weights or {}) do
        chain:set_weight(i, w)
    end
    return chain
end

local function total_length(spec)
    local sum = 0
    for _, l in ipairs(spec.lengths) do
        sum = sum + l
    end
    return sum
end

-- Solve everything and print the table.
print(("%s: every solve with the default settings, from the chain's start pose\n")
    :format(ik._VERSION))
local line = "%-9s %-9s %-16s %-8s %-9s %s"
print(line:format("chain", "solver", "target", "reached", "distance", "iterations"))
print(line:format("-----", "------", "------", "-------", "--------", "----------"))
local reached_count, solve_count = {}, {}
for _, spec in ipairs(chains) do
    spec.start = build(spec):positions()
    spec.results = {} -- [target index][solver] = { reached, distance, iterations, positions }
    for t, target in ipairs(spec.targets) do
        spec.results[t] = {}
        for _, solver in ipairs(spec.solvers) do
            local chain = build(spec)
            local solve = chain["solve_" .. solver]
            local reached, distance, iterations = solve(chain, target[1], target[2])
            assert(distance == distance and distance < math.huge, "a solve gave no finite distance")
            spec.results[t][solver] = {
                reached = reached,
                distance = distance,
                iterations = iterations,
                positions = chain:positions(),
            }
            local where = ("(%5.2f, %5.2f)"):format(target[1], target[2])
            print(line:format(spec.name, solver, where, reached and "yes" or "no",
                ("%.1e"):format(distance), iterations))
            reached_count[solver] = (reached_count[solver] or 0) + (reached and 1 or 0)
            solve_count[solver] = (solve_count[solver] or 0) + 1
        end
    end
end
local totals = {}
for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
    totals[#totals + 1] = ("%s %d/%d"):format(solver, reached_count[solver], solve_count[solver])
end
print("\nreached (one target per chain is out of reach): " .. table.concat(totals, ", "))

---------------------------------------------------------------------------------------------
-- SVG. Each chain is a row of panels, one per target, all drawn at the chain's scale.

local PANEL, GAP, MARGIN, LEGEND, TITLE = 250, 14, 16, 34, 24

-- Appends one SVG element; %s arguments that are numbers are written with one decimal.
local function emit(out, template, ...)
    local args = table.pack(...)
    for i = 1, args.n do
        if math.type(args[i]) == "float" then
            args[i] = ("%.1f"):format(args[i])
        end
    end
    out[#out + 1] = template:format(table.unpack(args, 1, args.n))
end

local function cross(out, x, y, r)
    emit(out, '<path d="M%s %sL%s %sM%s %sL%s %s" stroke="#000000" stroke-width="2"/>',
        x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r)
end

-- The world bounds of everything drawn for a chain, as a square with some room around it.
local function bounds(spec)
    local x0, y0, x1, y1 = math.huge, math.huge, -math.huge, -math.huge
    local function add(p)
        for i = 1, #p, 2 do
            x0, x1 = math.min(x0, p[i]), math.max(x1, p[i])
            y0, y1 = math.min(y0, p[i + 1]), math.max(y1, p[i + 1])
        end
    end
    add(spec.start)
    for t, target in ipairs(spec.targets) do
        add(target)
        for _, result in pairs(spec.results[t]) do
            add(result.positions)
        end
    end
    local size = math.max(x1 - x0, y1 - y0) * 1.15
    return (x0 + x1 - size) / 2, (y0 + y1 - size) / 2, size
end

-- A panel: the reach, the start pose, each solver's pose and the target.
local function panel(out, spec, t, left, top)
    local wx0, wy0, size = bounds(spec)
    local scale = PANEL / size
    -- World (y up) to SVG (y down).
    local function sx(x) return left + (x - wx0) * scale end
    local function sy(y) return top + PANEL - (y - wy0) * scale end
    local function pose(p, colour, width, dashed)
        local points = {}
        for i = 1, #p, 2 do
            points[#points + 1] = ("%.1f,%.1f"):format(sx(p[i]), sy(p[i + 1]))
        end
        emit(out, '<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" '
            .. 'stroke-linejoin="round" stroke-linecap="round"%s/>', table.concat(points, " "),
            colour, width, dashed and ' stroke-dasharray="4 3"' or "")
        for i = 1, #p, 2 do
            emit(out, '<circle cx="%s" cy="%s" r="%s" fill="%s"/>', sx(p[i]), sy(p[i + 1]),
                dashed and 2.0 or width * 0.5 + 1, colour)
        end
    end

    local target = spec.targets[t]
    local reach = total_length(spec)
    local id = ("%s-%d"):format(spec.name, t)
    emit(out, '<clipPath id="%s"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>',
        id, left, top, PANEL, PANEL)
    emit(out, '<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfbfb" stroke="#dddddd"/>',
        left, top, PANEL, PANEL)
    emit(out, '<g clip-path="url(#%s)">', id)
    emit(out, '<circle cx="%s" cy="%s" r="%s" fill="none" stroke="#e4e4e4"/>', sx(0), sy(0),
        reach * scale)
    emit(out, '<text x="%d" y="%d" font-size="11" fill="#555555">target (%.1f, %.1f)%s</text>',
        left + 6, top + 15, target[1], target[2],
        math.sqrt(target[1] ^ 2 + target[2] ^ 2) <= reach and "" or ", out of reach")
    pose(spec.start, colours.start, 1.2, true)
    -- The first solver widest, so that poses which coincide show as nested stripes.
    local width = 2 + 2.5 * (#spec.solvers - 1)
    for _, solver in ipairs(spec.solvers) do
        pose(spec.results[t][solver].positions, colours[solver], width, false)
        width = width - 2.5
    end
    emit(out, '<rect x="%s" y="%s" width="8" height="8" fill="#333333"/>', sx(0) - 4, sy(0) - 4)
    cross(out, sx(target[1]), sy(target[2]), 6)
    emit(out, "</g>")
end

-- A whole picture: the legend, then one row per chain.
local function render(specs)
    local columns, used = 0, {}
    for _, spec in ipairs(specs) do
        columns = math.max(columns, #spec.targets)
        for _, solver in ipairs(spec.solvers) do
            used[solver] = true
        end
    end
    local width = 2 * MARGIN + columns * PANEL + (columns - 1) * GAP
    local height = 2 * MARGIN + LEGEND + #specs * (TITLE + PANEL) + (#specs - 1) * GAP
    local out = {}
    emit(out, '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
        .. 'viewBox="0 0 %d %d" font-family="sans-serif">', width, height, width, height)
    emit(out, '<rect width="%d" height="%d" fill="#ffffff"/>', width, height)

    -- Legend: a swatch per solver used, the start pose, the target.
    local x, y = MARGIN, MARGIN + 12
    local function label(text)
        emit(out, '<text x="%d" y="%d" font-size="13">%s</text>', x + 28, y + 4, text)
        x = x + 40 + 8 * #text
    end
    for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
        if used[solver] then
            emit(out, '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="4"/>',
                x, y, x + 22, y, colours[solver])
            label(solver)
        end
    end
    emit(out, '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.2" '
        .. 'stroke-dasharray="4 3"/>', x, y, x + 22, y, colours.start)
    label("start pose")
    cross(out, x + 11, y, 6)
    label("target")
    emit(out, '<text x="%d" y="%d" font-size="12" fill="#777777">'
        .. '(poses that coincide nest as stripes)</text>', x, y + 4)

    local top = MARGIN + LEGEND
    for _, spec in ipairs(specs) do
        emit(out, '<text x="%d" y="%d" font-size="14"><tspan font-weight="bold">%s</tspan>: '
            .. '%s, each solver from the start pose</text>',
            MARGIN, top + 15, spec.name, spec.about)
        for t = 1, #spec.targets do
            panel(out, spec, t, MARGIN + (t - 1) * (PANEL + GAP), top + TITLE)
        end
        top = top + TITLE + PANEL + GAP
    end
    emit(out, "</svg>\n")
    return table.concat(out, "\n")
end

local function write(path, text)
    local dir = path:match("^(.*)/[^/]*$")
    os.execute(('mkdir -p "%s"'):format(dir))
    local file = assert(io.open(path, "w"))
    file:write(text)
    file:close()
    print("wrote " .. path)
end

print()
for _, spec in ipairs(chains) do
    write(("%s/demo/out/%s.svg"):format(root, spec.name), render({ spec }))
end
local all = render(chains)
write(root .. "/demo/out/all.svg", all)
if readme then
    write(root .. "/docs/demo.svg", all)
end
