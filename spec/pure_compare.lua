-- What the differential specs of ik.pure (spec/pure_*_spec.lua) share: the comparison of a
-- C-side value with a pure-side value (numbers the same bits and the same subtype, tables
-- field by field, chains by their place in the world), everything a user can read of a
-- chain, the figures, and the count of the garbage a loop makes.
--
-- Required from the specs as `require("spec.pure_compare")` (busted runs from the
-- repository root).

local M = {}

local mtype = math.type or function() return nil end

-- Whether the C core and ik.pure use the same math library here (glibc on Linux: ik.pure's
-- hypot is glibc's, ported), so every number must be the same bits; elsewhere (Windows'
-- C library) the last bits may differ, and numbers must be equal to 1e-9 of their size.
M.SAME_LIBM = (type(jit) == "table" and jit.os == "Linux")
    or (type(jit) ~= "table" and package.config:sub(1, 1) == "/" and io.open("/proc/version") ~= nil)

-- What differs beyond 1e-9 (or a flag that flips) where the libraries differ: counted and
-- reported, not raised. On Windows (mingw's math library under the C core) the random
-- calls' magnitudes near 1e300 take hypot's slow path, whose last bits differ by library and
-- grow through cancellation, and a result on a tolerance's edge can flip: ../shared/API.md
-- promises the same bits only on the same library. Acceptance and messages stay strict.
local function differs(why)
    if M.SAME_LIBM then error(why, 0) end
    M.stats.beyond = (M.stats.beyond or 0) + 1
    M.stats.first_beyond = M.stats.first_beyond or why
end
M.differs = differs

-- The differing numbers a run may have: none where the libraries agree.
function M.assert_same_bits(stats)
    if M.SAME_LIBM then assert(stats.differing == 0, stats.differing .. " numbers differ") end
end

-- The random calls a differential spec makes per seed or round: IK_PURE_CALLS when set, else
-- its default (quick: with IK_SPEC_QUICK=1, under valgrind), times IK_PURE_SCALE (default 1;
-- tools/differential.sh raises it to make a million calls per VM).
M.SCALE = tonumber(os.getenv("IK_PURE_SCALE") or "") or 1

function M.calls(default, quick)
    local n = tonumber(os.getenv("IK_PURE_CALLS") or "") or (os.getenv("IK_SPEC_QUICK") == "1" and quick or default)
    return math.floor(n * M.SCALE)
end

function M.pack(...) return { n = select("#", ...), ... } end
local pack = M.pack

-- The counts of the comparisons since the last reset: numbers compared, the same bits,
-- differing (within 1e-9 of their size), the largest such difference (relative), and calls
-- refused alike (the spec counts those).
function M.reset()
    M.stats = { numbers = 0, identical = 0, differing = 0, largest = 0, errors = 0 }
    return M.stats
end

local function same_number(a, b)
    if a ~= a then return b ~= b end
    return a == b and (a ~= 0 or 1 / a == 1 / b)
end

-- Compares a C-side value with a pure-side value; chains compare by their place in the world
-- (index_c, index_p). Returns nil or what differs.
local function compare(a, b, index_c, index_p, where)
    local stats = M.stats
    if type(a) == "number" and type(b) == "number" then
        stats.numbers = stats.numbers + 1
        if mtype(a) ~= mtype(b) then return where .. ": " .. tostring(mtype(a)) .. " vs " .. tostring(mtype(b)) end
        if same_number(a, b) then
            stats.identical = stats.identical + 1
            return nil
        end
        local d = math.abs(a - b) / math.max(1, math.abs(a), math.abs(b))
        if d ~= d or d > stats.largest then stats.largest = d end
        stats.differing = stats.differing + 1
        if not (d <= 1e-9) then return where .. (": %.17g vs %.17g"):format(a, b) end
        return nil
    end
    if index_c[a] ~= nil or index_p[b] ~= nil then
        if index_c[a] ~= index_p[b] then return where .. ": chain " .. tostring(index_c[a]) .. " vs " .. tostring(index_p[b]) end
        return nil
    end
    if type(a) ~= type(b) then return where .. ": " .. type(a) .. " vs " .. type(b) end
    if type(a) == "table" then
        for k, v in pairs(a) do
            local why = compare(v, b[k], index_c, index_p, where .. "." .. tostring(k))
            if why then return why end
        end
        for k in pairs(b) do
            if a[k] == nil then return where .. "." .. tostring(k) .. ": only in ik.pure" end
        end
        return nil
    end
    if a ~= b then return where .. ": " .. tostring(a) .. " vs " .. tostring(b) end
    return nil
end
M.compare = compare

-- Checks the outcomes of one call on each side (pcall's ok and the packed results or the
-- message): accepted or refused alike, with the same message (or ones that neutral, when
-- given, makes the same), the same results. Raises what differs; counts the refusals.
function M.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p, neutral)
    if ok_c ~= ok_p then
        error(("%s: the C module %s, ik.pure %s"):format(what, ok_c and "accepted" or ("refused: " .. tostring(r_c)),
            ok_p and "accepted" or ("refused: " .. tostring(r_p))), 0)
    end
    if not ok_c then
        M.stats.errors = M.stats.errors + 1
        if r_c ~= r_p and not (neutral and neutral(r_c) == neutral(r_p)) then
            error(("%s: messages differ:\n  C:    %s\n  pure: %s"):format(what, tostring(r_c), tostring(r_p)), 0)
        end
        return
    end
    local why = compare(r_c, r_p, index_c, index_p, what)
    if why then differs(why) end
end

-- Everything a user can read of a chain (the reads bring caches up to date, alike on both
-- sides).
function M.state(ch)
    local s = { ch:count(), ch:dim(), ch:reach(), ch:stretch_factor(), tostring(ch), #ch }
    local n, dim = ch:count(), ch:dim()
    s.positions = ch:positions()
    s.settings = ch:settings()
    s.base = pack(ch:base())
    s.target = pack(ch:target())
    s.parent = pack(ch:parent())
    s.tip_parent = pack(ch:tip_parent())
    s.bones = {}
    for i = 1, n do
        local b = { ch:length(i), ch:weight(i) }
        if dim == 2 then
            b.angle, b.world = ch:angle(i), ch:world_angle(i)
        else
            b.rotation, b.world = pack(ch:rotation(i)), pack(ch:world_rotation(i))
        end
        s.bones[i] = b
    end
    s.limits = {}
    for i = 1, n do s.limits[i] = pack(ch:limit(i)) end
    s.goal_error = pack(ch:goal_error())
    s.tip_weight = ch:weight(n + 1)
    if dim == 2 then s.target_angle = pack(ch:target_angle()) else s.target_rotation = pack(ch:target_rotation()) end
    return s
end

-- Compares the state of every chain of the two worlds (arrays of chains, side by side);
-- raises what differs, after what.
function M.check_world(world_c, world_p, index_c, index_p, what)
    for j = 1, #world_c do
        local why = compare(M.state(world_c[j]), M.state(world_p[j]), index_c, index_p, what .. ", then chain " .. j)
        if why then differs(why) end
    end
end

-- The figures of a run: what, its calls, and the counts since the last reset.
function M.report(what, calls)
    local stats = M.stats
    print(("\nik.pure vs ik.core (%s)%s: %d calls (%d refused alike), %d numbers compared, %d the same bits (%.4f%%), %d differing (largest difference %g)")
        :format(_VERSION .. (type(jit) == "table" and " " .. jit.version or ""), what, calls, stats.errors,
            stats.numbers, stats.identical, 100 * stats.identical / stats.numbers, stats.differing, stats.largest))
    if stats.beyond then
        print(("  (a different math library: %d comparisons beyond 1e-9, the first: %s)"):format(stats.beyond, stats.first_beyond))
    end
end

-- A random valid range of a limit, [min, max] within [-pi, pi]: now and then a narrow
-- one, or a single angle.
function M.random_range()
    local pi, random = math.pi, math.random
    local a, b = -pi + 2 * pi * random(), -pi + 2 * pi * random()
    if random() < 0.3 then b = a + 0.3 * random() end -- a narrow one
    if random() < 0.05 then b = a end
    if a > b then a, b = b, a end
    return a, math.min(b, pi)
end

-- One call site per method named in names, shared by both backends, so that an error's
-- position and the function's name ("method", "local", a pcall's '?') are the same for
-- both: method_call[name](o, ...) is pack(o:name(...)).
function M.method_calls(names)
    local load = loadstring or load
    local calls = {}
    for _, name in ipairs(names) do
        calls[name] = load(("local pack = ... return function(o, ...) return pack(o:%s(...)) end"):format(name),
            "=calls")(pack)
    end
    return calls
end

-- A random unit direction in dim dimensions (z = 0 in 2D).
function M.direction(dim)
    local random = math.random
    local x, y, z = -1 + 2 * random(), -1 + 2 * random(), dim == 3 and -1 + 2 * random() or 0
    local len = math.sqrt(x * x + y * y + z * z)
    if len == 0 then return 1, 0, 0 end
    return x / len, y / len, z / len
end

-- A name of names drawn by its weight in weights (tenths of a percent; default when the
-- weights come short of 1000).
function M.weighted(names, weights, default)
    local r = math.random(1000)
    for _, name in ipairs(names) do
        r = r - (weights[name] or 0)
        if r <= 0 then return name end
    end
    return default
end

local function float(lo, hi) return lo + (hi - lo) * math.random() end
M.float = float
function M.pick(t) return t[math.random(#t)] end

-- The arguments after self of the limit setters and attach (name) on a chain of n bones in
-- a world of size chains (a chain is { chain = k }); nil for another name.
function M.limit_args(name, n, size)
    local rand = math.random
    if name == "set_limit" or name == "set_twist" then return { rand(n), M.random_range() } end
    if name == "set_hinge" then
        local lo, hi = M.random_range()
        return { rand(n), float(-1, 1), float(-1, 1), float(-1, 1), lo, hi }
    end
    if name == "set_cone" then return { rand(n), float(0, rand() < 0.2 and math.pi or 1.5) } end
    if name == "clear_limit" then return { rand(n) } end
    if name == "attach" or name == "attach_tip" then return { { chain = rand(size) }, rand(4) } end
    return nil
end

-- A new chain's arguments: a count of bones from counts, lengths at one scale (now and then
-- a zero one), a base.
function M.chain_args(dim, counts)
    local random = math.random
    local n = counts[random(#counts)]
    local scales = { 1, 1, 1, 1, 1, 1e-150, 1e-5, 1e5, 1e150 }
    local scale = scales[random(#scales)]
    local lengths = {}
    for k = 1, n do lengths[k] = random() < 0.08 and 0 or scale * float(0.2, 2) end
    local a = { lengths, scale * float(-2, 2), scale * float(-2, 2) }
    if dim == 3 then a[4] = scale * float(-2, 2) elseif random() < 0.5 then a[4] = float(-4, 4) end
    return a
end

-- With IK_PURE_TRACE set, prints what and the arguments a (a.n of them).
function M.trace(what, a)
    if not os.getenv("IK_PURE_TRACE") then return end
    local t = {}
    for j = 1, a.n do t[j] = type(a[j]) == "number" and ("%.17g"):format(a[j]) or tostring(a[j]) end
    print(what, table.concat(t, ", "))
end

-- A point at the range's edges (1e300, 1e150, -0 ...).
function M.edge_point()
    local pick = M.pick
    return pick({ 1e300, -1e300, 1e150, 0, -0.0 }), pick({ 1e300, 3, -0.0 }), pick({ 1e-300, 1e300, 0 })
end

-- The arguments of a point x, y[, z] in dim dimensions (a.n of them): now and then one too
-- many (nil, or a number) or one too few.
function M.point_args(dim, x, y, z)
    if dim == 2 then z = nil end
    local a = { x, y, z, n = dim }
    if math.random() < 0.03 then a.n = dim + 1 end
    if math.random() < 0.03 then a[a.n] = 5 end
    if math.random() < 0.03 then a.n = a.n - 1 end
    return a
end

-- A table of 1 to 3 entries: keys drawn from names, each value made by makers[key]().
function M.random_table(makers, names)
    local t = {}
    for _ = 1, math.random(3) do
        local key = names[math.random(#names)]
        t[key] = makers[key]()
    end
    return t
end

-- A chain of dim dimensions made from the arguments a on each backend (ik_c, ik_p).
function M.chain_pair(ik_c, ik_p, dim, a)
    local unpack = table.unpack or unpack
    if dim == 2 then return ik_c.chain2d(unpack(a)), ik_p.chain2d(unpack(a)) end
    return ik_c.chain3d(unpack(a)), ik_p.chain3d(unpack(a))
end

-- Two worlds of chains side by side (C and pure: c, p), each chain indexed by its place k
-- (index_c, index_p, for compare).
function M.new_world() return { c = {}, p = {}, index_c = {}, index_p = {}, retired = 0 } end

-- The chains cc and pch in place k; the old ones are named alike on both sides ("retired
-- n": a child may hang on them).
function M.world_set(w, k, cc, pch)
    if w.c[k] then
        w.retired = w.retired + 1
        w.index_c[w.c[k]], w.index_p[w.p[k]] = "retired " .. w.retired, "retired " .. w.retired
    end
    w.c[k], w.p[k] = cc, pch
    w.index_c[cc], w.index_p[pch] = k, k
end

-- The arguments a (a.n of them) with each { chain = k } replaced by chain k of world (an
-- array of chains).
function M.resolve(a, world)
    local r = { n = a.n }
    for k = 1, a.n do
        local v = a[k]
        if type(v) == "table" and v.chain then v = world[v.chain] end
        r[k] = v
    end
    return r
end

-- Runs run(seed) for each seed (each returns its calls) with the counts reset first, and
-- reports the figures: the counts and the calls.
function M.run_seeds(what, seeds, run)
    local stats, calls = M.reset(), 0
    for _, seed in ipairs(seeds) do calls = calls + run(seed) end
    M.report(what, calls)
    return stats, calls
end

-- The garbage (KB) loop(rounds) makes, as spec/alloc_spec.lua counts it: the collector
-- stopped, the loop run first (LuaJIT compiles its traces), and a count that found
-- anything counted again (a trace made once can fall in one count; garbage made per call
-- falls in both).
function M.garbage_kb(loop, rounds)
    local function count()
        collectgarbage("collect")
        collectgarbage("stop")
        loop(64)
        local before = collectgarbage("count")
        loop(rounds)
        local kb = collectgarbage("count") - before
        collectgarbage("restart")
        return kb
    end
    -- Under LuaJIT, interpreted: the side traces of these loops, compiled (or aborted,
    -- "register coalescing too complex"), leave the compiler's own garbage (70 KB once under
    -- the Windows LuaJIT); what the calls make is what the interpreter counts.
    if jit then
        jit.off()
        jit.flush()
    end
    loop(rounds / 2)
    loop(rounds / 2)
    local kb = count()
    if kb > 0 then kb = math.min(kb, count()) end
    if jit then jit.on() end
    return kb
end

-- Raises when loop(rounds) makes garbage (1 KB or more, counted as garbage_kb does).
function M.assert_no_garbage(loop, rounds)
    local kb = M.garbage_kb(loop, rounds)
    if not (kb < 1) then error(("%.2f KB for %d rounds"):format(kb, rounds), 2) end
end

return M
