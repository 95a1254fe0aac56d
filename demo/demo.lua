-- The headless demo: `make demo`, or `lua5.4 demo/demo.lua [--readme]` from any directory.
--
-- Builds a few 2D chains and two 3D ones, solves each towards a few targets (one out of reach)
-- with every solver, each solve starting from the same pose; then a figure built as a rig (a
-- spine with two arms, a neck and two legs attached to it) reaching goals for both hands,
-- both feet and the head at once, with both rig solvers. Prints a table of the results and
-- draws them as SVG: demo/out/<chain>.svg, demo/out/chain3d.svg, demo/out/rig.svg and
-- demo/out/all.svg; with --readme also docs/demo.svg, the picture the README shows. Plain
-- Lua, no dependencies besides ik.

-- Find the repository root from this script's path, so the working tree's module is used.
local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "."
local root = here == "demo" and "." or here:match("^(.+)/demo$") or here .. "/.."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/lua5.4/?.so;" .. package.cpath

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
        about = "2 bones, each solver from the start pose",
        lengths = { 1.0, 0.8 },
        angles = { 0.5, 0.9 },
        targets = { { 1.2, 0.9 }, { -0.7, 1.1 }, { 2.4, -1.2 } },
        solvers = { "fabrik", "ccd", "relax", "two_bone" },
    },
    {
        name = "tentacle",
        about = "6 bones, each solver from the start pose",
        lengths = rep(0.5, 6),
        angles = rep(0.3, 6),
        targets = { { 1.0, 2.0 }, { -1.5, 0.5 }, { 3.5, 2.5 } },
        solvers = { "fabrik", "ccd", "relax" },
    },
    {
        name = "rope",
        about = "10 bones, hanging, weights rising towards the tip, "
            .. "each solver from the start pose",
        lengths = rep(0.3, 10),
        base_angle = -math.pi / 2,
        angles = rep(0.05, 10),
        weights = rope_weights,
        targets = { { 1.5, -1.8 }, { 1.8, 0.6 }, { -3.0, -2.5 } },
        solvers = { "fabrik", "ccd", "relax" },
    },
}

-- The unit quaternion (w, x, y, z) of a turn by `angle` about the axis (x, y, z).
local function turn(angle, x, y, z)
    local s = math.sin(angle / 2) / math.sqrt(x * x + y * y + z * z)
    return { math.cos(angle / 2), x * s, y * s, z * s }
end

-- The 3D chains, drawn side by side in one row. `rotations` is the starting pose (local
-- quaternions); `poles`, if given, are tried in turn with each solver (configure{pole = ...})
-- and the picture names them by `pole_names`. `floor`: the plane y = floor the shadows fall on.
local chains3d = {
    {
        name = "tentacle 3D",
        about = "7 bones from a gentle curl; faint: the shadows on y = 0",
        lengths = rep(0.5, 7),
        rotations = rep(turn(0.25, 0.3, 0.6, 1), 7),
        targets = { { 1.5, 2.0, 1.0 }, { -1.0, 0.5, 1.5 }, { 3.0, 1.5, 2.5 } },
        floor = 0,
        solvers = { "fabrik", "ccd", "relax" },
    },
    {
        name = "leg 3D",
        about = "2 bones, 2 poles",
        lengths = { 1.0, 0.9 },
        rotations = { turn(-1.3, 0, 0, 1), turn(-0.4, 0, 0, 1) },
        targets = { { 0.5, -1.4, 0.3 } },
        poles = { { 0, 0, 1 }, { 0, 0, -1 } },
        pole_names = { "+z", "-z" },
        solvers = { "two_bone" },
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
    if spec.rotations then
        local chain = ik.chain3d(spec.lengths)
        for i, q in ipairs(spec.rotations) do
            chain:set_rotation(i, table.unpack(q))
        end
        return chain
    end
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

-- 3D points are drawn in an orthographic view from a little to the right and above: x to the
-- right, y up, z towards the viewer. `flat` turns a flat list of 2D or 3D points into 2D ones;
-- given a `floor`, it draws the 3D points' shadows on the plane y = floor instead.
local YAW, PITCH = 0.5, 0.35
local function flat(p, dim, floor)
    if dim == 2 then
        return p
    end
    local out = {}
    for i = 1, #p, 3 do
        local x, y, z = p[i], floor or p[i + 1], p[i + 2]
        local depth = x * math.sin(YAW) + z * math.cos(YAW)
        out[#out + 1] = x * math.cos(YAW) - z * math.sin(YAW)
        out[#out + 1] = y * math.cos(PITCH) - depth * math.sin(PITCH)
    end
    return out
end

-- Solves each chain towards each target with each solver (and each pole), every solve from the
-- chain's start pose, and prints a line per solve (3D lines have a pole column).
local function solve_all(specs, line, note)
    local reached_count, solve_count = {}, {}
    for _, spec in ipairs(specs) do
        local dim = #spec.targets[1]
        spec.start = flat(build(spec):positions(), dim)
        spec.results = {} -- [target index] = { { solver, pole, reached, ..., positions }, ... }
        for t, target in ipairs(spec.targets) do
            spec.results[t] = { target = flat(target, dim), drop = flat(target, dim, spec.floor) }
            for _, solver in ipairs(spec.solvers) do
                for k, pole in ipairs(spec.poles or { false }) do
                    local chain = build(spec)
                    if pole then
                        chain:configure({ pole = pole })
                    end
                    local solve = chain["solve_" .. solver]
                    local reached, distance, iterations = solve(chain, table.unpack(target))
                    assert(distance == distance and distance < math.huge,
                        "a solve gave no finite distance")
                    local positions = chain:positions()
                    table.insert(spec.results[t], {
                        solver = solver,
                        pole_name = pole and spec.pole_names[k],
                        reached = reached,
                        distance = distance,
                        iterations = iterations,
                        positions = flat(positions, dim),
                        shadow = flat(positions, dim, spec.floor),
                    })
                    local where = ("(%5.2f" .. (", %5.2f"):rep(dim - 1) .. ")")
                        :format(table.unpack(target))
                    local cells = { spec.name, solver, where, reached and "yes" or "no",
                        ("%.1e"):format(distance), iterations }
                    if dim == 3 then
                        table.insert(cells, 4,
                            pole and ("(%g, %g, %g)"):format(table.unpack(pole)) or "-")
                    end
                    print(line:format(table.unpack(cells)))
                    reached_count[solver] = (reached_count[solver] or 0) + (reached and 1 or 0)
                    solve_count[solver] = (solve_count[solver] or 0) + 1
                end
            end
        end
    end
    local totals = {}
    for _, solver in ipairs({ "fabrik", "ccd", "relax", "two_bone" }) do
        if solve_count[solver] then
            totals[#totals + 1] = ("%s %d/%d")
                :format(solver, reached_count[solver], solve_count[solver])
        end
    end
    print(("\nreached (%s): %s"):format(note, table.concat(totals, ", ")))
end

-- Solve everything and print the table.
print(("%s: every solve with the default settings, from the chain's start pose\n")
    :format(ik._VERSION))
local line = "%-9s %-9s %-16s %-8s %-9s %s"
print(line:format("chain", "solver", "target", "reached", "distance", "iterations"))
print(line:format("-----", "------", "------", "-------", "--------", "----------"))
solve_all(chains, line, "one target per chain is out of reach")
print()
line = "%-12s %-9s %-22s %-11s %-8s %-9s %s"
print(line:format("3D chain", "solver", "target", "pole", "reached", "distance", "iterations"))
print(line:format("--------", "------", "------", "----", "-------", "--------", "----------"))
solve_all(chains3d, line, "the tentacle's last target is out of reach")

-- The rig: a figure 8 units tall, standing on its hips (the spine's base, which the rig
-- holds still). Its limbs hang on the spine: the arms and the neck on its top, the legs on
-- its base. Every pose starts straight (each limb along its offset); the goals are for the
-- hands, the feet and the head.
local figure = {
    spine = { 1.2, 1.2, 1.2 },
    limbs = {
        { name = "left arm", lengths = { 1.5, 1.4 }, joint = 4, offset = 1.2 },
        { name = "right arm", lengths = { 1.5, 1.4 }, joint = 4, offset = -1.2 },
        { name = "neck", lengths = { 0.5, 0.6 }, joint = 4, offset = 0 },
        { name = "left leg", lengths = { 2.2, 2.1 }, joint = 1, offset = math.pi - 0.25 },
        { name = "right leg", lengths = { 2.2, 2.1 }, joint = 1, offset = -math.pi + 0.25 },
    },
    -- goals per panel: left hand, right hand, head, left foot, right foot
    goal_sets = {
        { about = "hands far right: the body bends",
          { 3.4, 2.6 }, { 3.6, 1.0 }, { 1.3, 4.0 }, { -1.0, -4.0 }, { 1.5, -3.9 } },
        { about = "hands up high, head lowered",
          { -0.8, 6.0 }, { 0.9, 6.1 }, { 0.2, 3.2 }, { -1.2, -4.0 }, { 1.2, -4.0 } },
        { about = "a hand out of reach",
          { -7.0, 3.0 }, { 2.0, 1.5 }, { -0.5, 4.2 }, { -1.6, -3.6 }, { 1.6, -3.6 } },
    },
}

local function build_figure()
    local spine = ik.chain2d(figure.spine, 0, 0, math.pi / 2)
    local chains = { spine }
    for _, limb in ipairs(figure.limbs) do
        local c = ik.chain2d(limb.lengths)
        c:attach(spine, limb.joint, limb.offset)
        chains[#chains + 1] = c
    end
    return chains
end

local function all_positions(chains)
    local p = {}
    for k, c in ipairs(chains) do p[k] = c:positions() end
    return p
end

print()
line = "%-5s %-8s %-10s %-8s %-12s %s"
print(line:format("rig", "solver", "goals", "reached", "worst miss", "iterations"))
print(line:format("---", "------", "-----", "-------", "----------", "----------"))
figure.start = all_positions(build_figure())
figure.results = {}
for g, goals in ipairs(figure.goal_sets) do
    figure.results[g] = {}
    for _, solver in ipairs({ "fabrik", "relax" }) do
        local chains = build_figure()
        for k = 2, #chains do chains[k]:set_target(table.unpack(goals[k - 1])) end
        local rig = ik.rig(chains):configure({ solver = solver, iterations = 200 })
        local reached, worst, iterations = rig:solve()
        assert(worst == worst and worst < math.huge, "a rig solve gave no finite distance")
        print(line:format("figure", solver, "set " .. g, reached and "yes" or "no",
            ("%.1e"):format(worst), iterations))
        table.insert(figure.results[g], { solver = solver, positions = all_positions(chains) })
    end
end

---------------------------------------------------------------------------------------------
-- SVG. Each chain is a row of panels, one per target, all drawn at the chain's scale; the
-- 3D chains share one row.

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

-- The ends of the x, y and z axes a 3D panel draws (a third of the chain's length), drawn
-- `stretch` times as long.
local function axes(spec, stretch)
    local l = total_length(spec) / 3 * stretch
    return flat({ l, 0, 0, 0, l, 0, 0, 0, l }, 3)
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
    for _, results in ipairs(spec.results) do
        add(results.target)
        add(results.drop)
        for _, result in ipairs(results) do
            add(result.positions)
            add(result.shadow)
        end
    end
    if #spec.targets[1] == 3 then -- the axes, and room at the top for the label
        add(axes(spec, 1.2)) -- where their names go
        y1 = y1 + (y1 - y0) * 0.1
    end
    local size = math.max(x1 - x0, y1 - y0) * 1.15
    return (x0 + x1 - size) / 2, (y0 + y1 - size) / 2, size
end

-- A panel: the reach (in 3D the outline of the sphere), in 3D the axes, the start pose, each
-- solver's pose (in 3D with its pole) and the target.
local function panel(out, spec, t, left, top, side)
    local wx0, wy0, size = bounds(spec)
    local scale = side / size
    -- World (y up) to SVG (y down).
    local function sx(x) return left + (x - wx0) * scale end
    local function sy(y) return top + side - (y - wy0) * scale end
    local function points(p)
        local list = {}
        for i = 1, #p, 2 do
            list[#list + 1] = ("%.1f,%.1f"):format(sx(p[i]), sy(p[i + 1]))
        end
        return table.concat(list, " ")
    end
    local function pose(p, colour, width, dashed)
        emit(out, '<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" '
            .. 'stroke-linejoin="round" stroke-linecap="round"%s/>', points(p),
            colour, width, dashed and ' stroke-dasharray="4 3"' or "")
        for i = 1, #p, 2 do
            emit(out, '<circle cx="%s" cy="%s" r="%s" fill="%s"/>', sx(p[i]), sy(p[i + 1]),
                dashed and 2.0 or width * 0.5 + 1, colour)
        end
    end

    local target, results = spec.targets[t], spec.results[t]
    local reach = total_length(spec)
    local id = ("%s-%d"):format(spec.name:gsub("%W", "-"), t)
    emit(out, '<clipPath id="%s"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath>',
        id, left, top, side, side)
    emit(out, '<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfbfb" stroke="#dddddd"/>',
        left, top, side, side)
    emit(out, '<g clip-path="url(#%s)">', id)
    emit(out, '<circle cx="%s" cy="%s" r="%s" fill="none" stroke="#e4e4e4"/>', sx(0), sy(0),
        reach * scale)
    if #target == 3 then
        local ends, names = axes(spec, 1), axes(spec, 1.2)
        for i, name in ipairs({ "x", "y", "z" }) do
            emit(out, '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#c8c8c8"/>', sx(0), sy(0),
                sx(ends[2 * i - 1]), sy(ends[2 * i]))
            emit(out, '<text x="%s" y="%s" font-size="11" fill="#999999" text-anchor="middle">'
                .. '%s</text>', sx(names[2 * i - 1]), sy(names[2 * i]) + 4, name)
        end
    end
    local squares = 0
    for _, c in ipairs(target) do
        squares = squares + c * c
    end
    local text = ("target (%.1f" .. (", %.1f"):rep(#target - 1) .. ")"):format(table.unpack(target))
    local far = math.sqrt(squares) > reach
    local wrap = far and #text > side / 10 -- "out of reach" on a line of its own
    emit(out, '<text x="%d" y="%d" font-size="11" fill="#555555">%s%s</text>', left + 6, top + 15,
        text, far and not wrap and ", out of reach" or "")
    if wrap then
        emit(out, '<text x="%d" y="%d" font-size="11" fill="#555555">out of reach</text>',
            left + 6, top + 29)
    end
    if spec.floor then -- the shadows on the floor, and the target's drop onto it
        for _, result in ipairs(results) do
            emit(out, '<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5" '
                .. 'stroke-opacity="0.35"/>', points(result.shadow), colours[result.solver])
        end
        emit(out, '<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000" stroke-width="0.8" '
            .. 'stroke-dasharray="2 2"/>', sx(results.target[1]), sy(results.target[2]),
            sx(results.drop[1]), sy(results.drop[2]))
        emit(out, '<circle cx="%s" cy="%s" r="2" fill="#000000"/>', sx(results.drop[1]),
            sy(results.drop[2]))
    end
    pose(spec.start, colours.start, 1.2, true)
    -- The first solve widest, so that poses which coincide show as nested stripes.
    local width = 2 + 2.5 * (#results - 1)
    for _, result in ipairs(results) do
        local p = result.positions
        pose(p, colours[result.solver], width, false)
        width = width - 2.5
        if result.pole_name then -- labelled at the middle joint, on the side away from the target
            local right = p[3] > results.target[1]
            emit(out, '<text x="%s" y="%s" font-size="11" fill="%s" text-anchor="%s">'
                .. 'pole %s</text>', sx(p[3]) + (right and 8 or -8), sy(p[4]) + 4,
                colours[result.solver], right and "start" or "end", result.pole_name)
        end
    end
    emit(out, '<rect x="%s" y="%s" width="8" height="8" fill="#333333"/>', sx(0) - 4, sy(0) - 4)
    cross(out, sx(results.target[1]), sy(results.target[2]), 6)
    emit(out, "</g>")
end

-- A whole picture: the legend, then the rows, each a list of chains drawn side by side. The
-- picture is as wide as the chain with the most targets needs; a row with more panels than
-- that has smaller ones.
local function render(rows)
    local columns, used, sides = 0, {}, {}
    for _, row in ipairs(rows) do
        for _, spec in ipairs(row) do
            columns = math.max(columns, #spec.targets)
            for _, solver in ipairs(spec.solvers) do
                used[solver] = true
            end
        end
    end
    local width = 2 * MARGIN + columns * PANEL + (columns - 1) * GAP
    local height = 2 * MARGIN + LEGEND - GAP
    for r, row in ipairs(rows) do
        local panels = 0
        for _, spec in ipairs(row) do
            panels = panels + #spec.targets
        end
        sides[r] = math.min(PANEL, (width - 2 * MARGIN - (panels - 1) * GAP) // panels)
        height = height + TITLE + sides[r] + GAP
    end
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
    for r, row in ipairs(rows) do
        local left = MARGIN
        for _, spec in ipairs(row) do
            emit(out, '<text x="%d" y="%d" font-size="14"><tspan font-weight="bold">%s</tspan>: '
                .. '%s</text>', left, top + 15, spec.name, spec.about)
            for t = 1, #spec.targets do
                panel(out, spec, t, left, top + TITLE, sides[r])
                left = left + sides[r] + GAP
            end
        end
        top = top + TITLE + sides[r] + GAP
    end
    emit(out, "</svg>\n")
    return table.concat(out, "\n")
end

-- The rig: one panel per goal set, the start pose dashed, each solver's pose, the goals.
local function render_rig()
    local columns = #figure.goal_sets
    local width = 2 * MARGIN + columns * PANEL + (columns - 1) * GAP
    local height = 2 * MARGIN + LEGEND + TITLE + PANEL
    local x0, y0, size = -7.8, -5.2, 13.5 -- the world square every panel shows
    local out = {}
    emit(out, '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
        .. 'viewBox="0 0 %d %d" font-family="sans-serif">', width, height, width, height)
    emit(out, '<rect width="%d" height="%d" fill="#ffffff"/>', width, height)
    local x, y = MARGIN, MARGIN + 12
    for _, solver in ipairs({ "fabrik", "relax" }) do
        emit(out, '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="4"/>', x, y,
            x + 22, y, colours[solver])
        emit(out, '<text x="%d" y="%d" font-size="13">%s</text>', x + 28, y + 4, "rig, " .. solver)
        x = x + 110
    end
    emit(out, '<text x="%d" y="%d" font-size="13">%s</text>', x, y + 4,
        "a figure as a rig: spine, two arms, neck, two legs; goals for hands, head and feet")
    local top = MARGIN + LEGEND
    for g, goals in ipairs(figure.goal_sets) do
        local left = MARGIN + (g - 1) * (PANEL + GAP)
        local scale = PANEL / size
        local function sx(v) return left + (v - x0) * scale end
        local function sy(v) return top + TITLE + PANEL - (v - y0) * scale end
        local function pose(p, colour, w, dashed)
            local list = {}
            for i = 1, #p, 2 do list[#list + 1] = ("%.1f,%.1f"):format(sx(p[i]), sy(p[i + 1])) end
            emit(out, '<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" '
                .. 'stroke-linejoin="round" stroke-linecap="round"%s/>', table.concat(list, " "),
                colour, w, dashed and ' stroke-dasharray="4 3"' or "")
        end
        emit(out, '<text x="%d" y="%d" font-size="12" fill="#555555">%s</text>', left,
            top + 15, goals.about)
        emit(out, '<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfbfb" stroke="#dddddd"/>',
            left, top + TITLE, PANEL, PANEL)
        for _, p in ipairs(figure.start) do pose(p, colours.start, 1.2, true) end
        local w = 6
        for _, result in ipairs(figure.results[g]) do
            for _, p in ipairs(result.positions) do pose(p, colours[result.solver], w, false) end
            w = w - 3
        end
        for _, goal in ipairs(goals) do cross(out, sx(goal[1]), sy(goal[2]), 5) end
        emit(out, '<rect x="%s" y="%s" width="8" height="8" fill="#333333"/>', sx(0) - 4, sy(0) - 4)
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
local rows = {}
for _, spec in ipairs(chains) do
    write(("%s/demo/out/%s.svg"):format(root, spec.name), render({ { spec } }))
    rows[#rows + 1] = { spec }
end
write(root .. "/demo/out/chain3d.svg", render({ chains3d }))
rows[#rows + 1] = chains3d
write(root .. "/demo/out/rig.svg", render_rig())
local all = render(rows)
write(root .. "/demo/out/all.svg", all)
if readme then
    write(root .. "/docs/demo.svg", all)
end
