-- The test inside the real LÖVE runtime: `make test` runs `love spec/love` headless (see
-- conf.lua). It requires ik exactly as a game does: ik/core.so (the LuaJIT build) and
-- ik/init.lua, ik/love.lua, ik/pure/ sit in this game folder, copied there by make. It
-- checks that the module found is that copy, runs every solver in 2D and 3D, the stateless
-- solves and solve_many, rigs (a humanoid and a spider, 2D and 3D, reaching goals from a
-- straight start), the misuse checks (every error is a "bad argument" error and changes
-- nothing) and that solving, a rig's solve included, allocates nothing; that a game whose
-- ik.core cannot load (none, a .love, ik under lib/) gets the pure-Lua backend with a
-- fallback_reason; prints a line per test and then `N passed, N failed`, and quits with
-- exit status 0 only when every test passed.
--
-- make test-web runs the same file in a browser: love.js (LÖVE on PUC Lua 5.1 compiled to
-- WebAssembly, no C modules) with the Lua files and no core.so; there require("ik") must
-- give the pure backend, ik.pure, and every test runs on it but those that need a shell
-- (io.popen, which a browser has not): they are skipped, each with a `skip - ` line and
-- why; the skipped count is printed before the last line and counts neither way.

local passed, failed, skipped = 0, 0, 0

-- test(name, f): runs f; an error in it (from check or elsewhere) is a failure.
local function test(name, f)
    local ok, err = pcall(f)
    if ok then
        passed = passed + 1
        print("ok - " .. name)
    else
        failed = failed + 1
        print("FAIL - " .. name)
        print("    " .. tostring(err))
    end
end

-- skip(name, why): a test that cannot run here, said so.
local function skip(name, why)
    skipped = skipped + 1
    print("skip - " .. name .. " (" .. why .. ")")
end

-- test_if(why, name, f): test(name, f) when `why` is nil, skip(name, why) otherwise.
local function test_if(why, name, f)
    if why then skip(name, why) else test(name, f) end
end

local function check(condition, message, ...)
    if not condition then
        error(string.format(message, ...), 2)
    end
end

local function near(a, b, tol)
    return math.abs(a - b) <= tol
end

-- A deterministic pseudo-random sequence (Park-Miller), so every run tries the same poses.
local seed = 12345
local function random()
    seed = (48271 * seed) % 2147483647
    return seed / 2147483647
end

local ik

-- LÖVE without LuaJIT: love.js, in a browser (make test-web), where no C module loads.
local WEB = jit == nil

if WEB then
    test("require(\"ik\") in love.js (no C modules) gives the pure backend with a fallback_reason", function()
        ik = require("ik")
        check(type(ik) == "table" and type(ik.chain2d) == "function", "require(\"ik\") gave no module")
        check(ik.backend == "lua", "ik.backend is %s", tostring(ik.backend))
        check(ik == require("ik.pure"), "ik is not ik.pure")
        check(type(ik._VERSION) == "string" and ik._VERSION:match("^ik %d"), "ik._VERSION is %s",
            tostring(ik._VERSION))
        local major, minor = love.getVersion()
        local reason = tostring(ik.fallback_reason)
        check(reason:find(("ik: no C module loads in LÖVE %d.%d on Lua 5.1 without LuaJIT"):format(major, minor), 1, true)
            and reason:find("module 'ik.core' not found", 1, true), "ik.fallback_reason is %s", reason)
    end)
else
    test("require(\"ik\") loads this game folder's LuaJIT build of ik/core.so", function()
        check(jit ~= nil, "not running under LuaJIT")
        -- LÖVE adds its own searchers to package.loaders, before Lua's; the one that finds
        -- ik.core first is the one require uses. It must be LÖVE's C searcher (it says "in LOVE
        -- paths" of a name it cannot find), not Lua's package.cpath one, which would find the
        -- Lua 5.4 build ./ik/core.so when make test runs this from the repository root.
        local searcher
        for _, search in ipairs(package.loaders) do
            if type(search("ik.core")) == "function" then
                searcher = search
                break
            end
        end
        check(searcher ~= nil, "no searcher finds ik.core")
        local missing = tostring(searcher("ik.no_such_module"))
        check(missing:find("in LOVE paths", 1, true), "ik.core is not found by LÖVE's C searcher: %s",
            missing)
        ik = require("ik")
        check(type(ik) == "table" and type(ik.chain2d) == "function", "require(\"ik\") gave no module")
        check(type(ik._VERSION) == "string" and ik._VERSION:match("^ik %d"), "ik._VERSION is %s",
            tostring(ik._VERSION))
        -- LÖVE's own C loader searches the game folder first; a copy elsewhere on package.cpath
        -- (such as the Lua 5.4 build in the repository root) must not be the one that loaded.
        local where = love.filesystem.getRealDirectory("ik/core.so")
        check(where == love.filesystem.getSource(), "ik/core.so found in %s, not in the game folder %s",
            tostring(where), love.filesystem.getSource())
        check(package.loaded["ik.core"] == ik, "ik is not ik.core")
        check(ik.backend == "c" and ik.fallback_reason == nil, "ik.backend %s, ik.fallback_reason %s",
            tostring(ik.backend), tostring(ik.fallback_reason))
    end)
end

if not ik then
    -- Nothing else can run without the module.
    print(string.format("%d skipped", skipped))
    print(string.format("%d passed, %d failed", passed, failed))
    function love.load()
        love.event.quit(1)
    end
    return
end

test("require(\"ik.love\") loads the debug drawing", function()
    local ikdraw = require("ik.love")
    for _, name in ipairs({ "draw", "rig", "target", "limits", "positions" }) do
        check(type(ikdraw[name]) == "function", "ik.love.%s is missing", name)
    end
    local c = ik.chain2d({ 1, 2 })
    local p = ikdraw.positions(c)
    check(#p == 6 and p[5] == 3 and ikdraw.positions(c) == p, "ik.love.positions")
end)

-- ---------------------------------------------------------------------------------------
-- Solvers: from a random pose to the tip of another random pose (so the target is
-- reachable), every solver must reach it within the tolerance, keep every bone's length
-- and leave the base where it was.

local TRIALS = 50
local TOLERANCE = 1e-6

-- A unit quaternion (w, x, y, z) from random numbers.
local function random_rotation()
    local w, x, y, z = random() - 0.5, random() - 0.5, random() - 0.5, random() - 0.5
    local n = math.sqrt(w * w + x * x + y * y + z * z)
    return w / n, x / n, y / n, z / n
end

local function random_pose(c)
    for i = 1, #c do
        if c:dim() == 2 then
            c:set_angle(i, (2 * random() - 1) * math.pi)
        else
            c:set_rotation(i, random_rotation())
        end
    end
end

local function joint_distance(c, i)
    local a, b = { c:joint(i) }, { c:joint(i + 1) }
    local sum = 0
    for d = 1, #a do
        sum = sum + (a[d] - b[d]) ^ 2
    end
    return math.sqrt(sum)
end

-- Solves TRIALS times with `solve(c, target...)`; returns how many reached, after checking
-- the lengths, the base and the distance each time.
local function try_solver(c, solve)
    local reached_count = 0
    local dim = c:dim()
    local base = { c:joint(1) }
    for _ = 1, TRIALS do
        random_pose(c)
        local target = { c:effector() }
        random_pose(c)
        local reached, distance, iterations = solve(c, unpack(target))
        check(type(reached) == "boolean" and type(iterations) == "number", "bad results")
        local tip = { c:effector() }
        local d2 = 0
        for d = 1, dim do
            d2 = d2 + (tip[d] - target[d]) ^ 2
        end
        check(near(math.sqrt(d2), distance, 1e-9), "distance %g is not the tip's %g", distance,
            math.sqrt(d2))
        check(reached == (distance <= TOLERANCE), "reached disagrees with the distance")
        for i = 1, #c do
            check(near(joint_distance(c, i), c:length(i), 1e-9), "bone %d changed length", i)
        end
        local now = { c:joint(1) }
        for d = 1, dim do
            check(now[d] == base[d], "the base moved")
        end
        if reached then
            reached_count = reached_count + 1
        end
    end
    return reached_count
end

local SOLVERS = {
    -- name, bones, the share of trials that must reach
    { "fabrik", 5, 0.9 },
    { "ccd", 5, 0.9 },
    { "relax", 5, 0.9 },
    { "two_bone", 2, 1.0 },
}

for _, dim in ipairs({ 2, 3 }) do
    for _, s in ipairs(SOLVERS) do
        local name, bones, share = s[1], s[2], s[3]
        test(string.format("%dD %s: reaches reachable targets, keeps lengths and the base", dim, name), function()
            local lengths = {}
            for i = 1, bones do
                lengths[i] = 0.5 + random()
            end
            local c = dim == 2 and ik.chain2d(lengths, 1, 2, 0.3) or ik.chain3d(lengths, 1, 2, 3)
            c:configure({ iterations = 1000, tolerance = TOLERANCE })
            -- By name, then through chain:solve with the solver configured.
            local by_name = try_solver(c, c["solve_" .. name])
            c:configure({ solver = name })
            local by_solve = try_solver(c, c.solve)
            check(by_name >= share * TRIALS and by_solve >= share * TRIALS,
                "reached %d and %d of %d", by_name, by_solve, TRIALS)
        end)
    end
end

test("3D two_bone with a pole bends the middle joint to the pole's side", function()
    local leg = ik.chain3d({ 1, 1 })
    for _, pz in ipairs({ 1, -1 }) do
        leg:configure({ solver = "two_bone", pole = { 0, 0, pz } })
        local reached = leg:solve(1.2, -0.5, 0)
        local _, _, kz = leg:joint(2)
        check(reached and kz * pz > 0.1, "pole z %d: knee z %g", pz, kz)
    end
end)

test("the stateless two-bone solves agree with each other and reach", function()
    for _ = 1, 200 do
        local l1, l2 = 0.5 + random(), 0.5 + random()
        local a = (2 * random() - 1) * math.pi
        local r = math.abs(l1 - l2) + (l1 + l2 - math.abs(l1 - l2)) * random()
        local x, y = r * math.cos(a), r * math.sin(a)
        for _, bend in ipairs({ 1, -1 }) do
            local a1, a2, reached = ik.two_bone(l1, l2, x, y, bend)
            local jx, jy, reached2 = ik.two_bone_joint(x, y, l1, l2, bend)
            check(reached and reached2, "not reached")
            check(bend * a2 >= 0, "bend %d gave a2 = %g", bend, a2)
            check(near(jx, l1 * math.cos(a1), 1e-9) and near(jy, l1 * math.sin(a1), 1e-9),
                "the two forms disagree")
            local tx = jx + l2 * math.cos(a1 + a2)
            local ty = jy + l2 * math.sin(a1 + a2)
            check(near(tx, x, 1e-9) and near(ty, y, 1e-9), "the tip misses the target")
        end
    end
    local jx, jy, jz, reached = ik.two_bone_joint3(1.2, 0, 0, 1, 1, 0, 0, 1)
    check(reached and near(math.sqrt(jx * jx + jy * jy + jz * jz), 1, 1e-12) and jz > 0,
        "two_bone_joint3")
end)

test("ik.solve_many solves 2D and 3D chains each with its own solver", function()
    for _, dim in ipairs({ 2, 3 }) do
        local chains, targets = {}, {}
        for k, s in ipairs(SOLVERS) do
            local lengths = {}
            for i = 1, s[2] do
                lengths[i] = 1
            end
            local c = dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
            c:configure({ solver = s[1], iterations = 1000, tolerance = TOLERANCE })
            chains[k] = c
            random_pose(c)
            local tip = { c:effector() }
            random_pose(c)
            for d = 1, dim do
                targets[#targets + 1] = tip[d]
            end
        end
        local count = ik.solve_many(chains, targets)
        check(count >= #chains - 1, "%dD: %d of %d reached", dim, count, #chains)
    end
end)

-- ---------------------------------------------------------------------------------------
-- Rigs: a humanoid (a 3-bone spine, the root, with two arms and a neck on its top and two
-- legs at its base) and a spider (a 2-bone body with eight 3-bone legs on its joints), in
-- 2D and 3D. Goals taken from a random pose of the whole tree are solved from a straight
-- start by one rig:solve(); most must be reached, and every chain must stay sound.

local function new_chain(dim, lengths)
    return dim == 2 and ik.chain2d(lengths) or ik.chain3d(lengths)
end

-- A unit quaternion for a turn of `a` about the axis (x, y, z).
local function axis_angle(x, y, z, a)
    local n = math.sqrt(x * x + y * y + z * z)
    local s = math.sin(a / 2)
    return math.cos(a / 2), s * x / n, s * y / n, s * z / n
end

-- child:attach(parent, j, turn): in 3D the turn is about an axis that differs with k.
local function attach(child, parent, j, dim, turn, k)
    if dim == 2 then
        child:attach(parent, j, turn)
    else
        child:attach(parent, j, axis_angle(0, 0.3 * (k % 2) + 0.1, 1, turn))
    end
end

local function humanoid(dim)
    local spine = new_chain(dim, { 1.2, 1.2, 1.2 })
    if dim == 2 then
        spine:set_base(0, 0, math.pi / 2)
    else
        spine:set_base(0, 0, 0, axis_angle(0, 0, 1, math.pi / 2))
    end
    local chains = { spine }
    local limbs = { -- lengths, joint on the spine, turn
        { { 1.5, 1.4 }, 4, 1.2 }, { { 1.5, 1.4 }, 4, -1.2 },
        { { 2.2, 2.1 }, 1, 3.0 }, { { 2.2, 2.1 }, 1, -3.0 },
        { { 0.5, 0.6 }, 4, 0 },
    }
    for k, limb in ipairs(limbs) do
        local c = new_chain(dim, limb[1])
        attach(c, spine, limb[2], dim, limb[3], k)
        chains[k + 1] = c
    end
    return chains
end

local function spider(dim)
    local chains = { new_chain(dim, { 1, 1 }) }
    for k = 1, 8 do
        local leg = new_chain(dim, { 1.2, 1.5, 1.8 })
        attach(leg, chains[1], k <= 4 and 2 or 3, dim,
            (k % 2 == 1 and 1 or -1) * (0.5 + 0.3 * ((k - 1) % 4)), k)
        chains[k + 1] = leg
    end
    return chains
end

-- Every chain sound: finite joints, every bone its length, a child's base on its parent's
-- joint.
local function check_sound(chains)
    for k, c in ipairs(chains) do
        for i = 1, #c + 1 do
            for _, v in ipairs({ c:joint(i) }) do
                check(v == v and math.abs(v) < 1e300, "chain %d joint %d is not finite", k, i)
            end
        end
        for i = 1, #c do
            check(near(joint_distance(c, i), c:length(i), 1e-9), "chain %d bone %d changed length", k, i)
        end
        local parent, j = c:parent()
        if parent then
            local a, b = { c:joint(1) }, { parent:joint(j) }
            for d = 1, #a do
                check(a[d] == b[d], "chain %d is off its parent's joint %d", k, j)
            end
        end
    end
end

for _, dim in ipairs({ 2, 3 }) do
    for _, shape in ipairs({ { "humanoid", humanoid, 0.9 }, { "spider", spider, 0.8 } }) do
        local name, make, share = shape[1], shape[2], shape[3]
        test(string.format("%dD rig, a %s: goals from random poses reached from a straight start (>= %d%%), every chain sound", dim, name, share * 100), function()
            local chains = make(dim)
            local rig = ik.rig(chains):configure({ iterations = 100 })
            check(#rig == #chains and rig:chain(1) == chains[1], "#rig or rig:chain")
            local reached_count = 0
            for _ = 1, TRIALS do
                for _, c in ipairs(chains) do
                    random_pose(c)
                end
                for k = 2, #chains do
                    chains[k]:set_target(chains[k]:effector())
                end
                for _, c in ipairs(chains) do
                    for i = 1, #c do
                        if dim == 2 then c:set_angle(i, 0) else c:set_rotation(i, 1, 0, 0, 0) end
                    end
                end
                local base = { chains[1]:joint(1) }
                local reached, distance = rig:solve()
                local worst = 0
                for k = 2, #chains do
                    local t, e = { chains[k]:target() }, { chains[k]:effector() }
                    local d2 = 0
                    for d = 1, dim do
                        d2 = d2 + (t[d] - e[d]) ^ 2
                    end
                    worst = math.max(worst, math.sqrt(d2))
                end
                check(near(distance, worst, 1e-12), "distance %g is not the worst goal's %g", distance, worst)
                check(reached == (distance <= 1e-3), "reached disagrees with the distance")
                local now = { chains[1]:joint(1) }
                for d = 1, dim do
                    check(now[d] == base[d], "the root's base moved")
                end
                check_sound(chains)
                if reached then
                    reached_count = reached_count + 1
                end
            end
            check(reached_count >= share * TRIALS, "reached %d of %d", reached_count, TRIALS)
        end)
    end
end

-- ---------------------------------------------------------------------------------------
-- Misuse: every case must raise a "bad argument" error (luaL_argerror) and leave the chain
-- as it was.

-- Everything observable about a chain, as a string.
local function snapshot(c)
    local parts = {}
    local function add(...)
        for k = 1, select("#", ...) do
            parts[#parts + 1] = string.format("%.17g", (select(k, ...)))
        end
    end
    add(unpack(c:positions()))
    add(c:base())
    for i = 1, #c do
        add(c:length(i))
        if c:dim() == 2 then
            add(c:angle(i))
        else
            add(c:rotation(i))
        end
    end
    for i = 1, #c + 1 do
        add(c:weight(i))
    end
    local settings = c:settings()
    local keys = {}
    for key in pairs(settings) do
        keys[#keys + 1] = key
    end
    table.sort(keys)
    for _, key in ipairs(keys) do
        local v = settings[key]
        if type(v) == "table" then
            v = table.concat(v, ",")
        end
        parts[#parts + 1] = key .. "=" .. tostring(v)
    end
    return table.concat(parts, " ")
end

-- luaL_argerror's two forms: "bad argument #2 to 'set_angle' (...)", and for a method's
-- self (a chain of the wrong dimension) "calling 'set_angle' on bad self (...)".
local function is_argerror(err)
    err = tostring(err)
    return err:find("bad argument #%d+ to '[%w_]+' %(") ~= nil
        or err:find("calling '[%w_]+' on bad self %(") ~= nil
end

local nan = 0 / 0
local MISUSE = {
    -- 2D
    { 2, "set_angle(1, nan)", function(c) c:set_angle(1, nan) end },
    { 2, "set_angle(0, 1)", function(c) c:set_angle(0, 1) end },
    { 2, "set_angle(1.5, 1)", function(c) c:set_angle(1.5, 1) end },
    { 2, "joint(99)", function(c) c:joint(99) end },
    { 2, "set_length(1, -1)", function(c) c:set_length(1, -1) end },
    { 2, "set_weight(1, -1)", function(c) c:set_weight(1, -1) end },
    { 2, "set_base(nan, 0)", function(c) c:set_base(nan, 0) end },
    { 2, "configure{iterations = 0}", function(c) c:configure({ iterations = 0 }) end },
    { 2, "configure{greed = 2}", function(c) c:configure({ greed = 2 }) end },
    { 2, "configure{tolerance = -1}", function(c) c:configure({ tolerance = -1 }) end },
    { 2, "configure{bend = 0}", function(c) c:configure({ bend = 0 }) end },
    { 2, "configure{solver = \"nope\"}", function(c) c:configure({ solver = "nope" }) end },
    { 2, "configure{bogus = 1}", function(c) c:configure({ bogus = 1 }) end },
    { 2, "configure{iterations = 5, greed = 0} (half good)",
        function(c) c:configure({ iterations = 5, greed = 0 }) end },
    { 2, "solve_two_bone on 3 bones", function(c) c:solve_two_bone(1, 1) end },
    { 2, "solve(nan, 1)", function(c) c:solve(nan, 1) end },
    { 2, "solve_ccd(1)", function(c) c:solve_ccd(1) end },
    { 2, "set_rotation on a 2D chain", function(c) c:set_rotation(1, 1, 0, 0, 0) end },
    { 2, "ik.solve_many({c}, {1})", function(c) ik.solve_many({ c }, { 1 }) end },
    { 2, "ik.solve_many({c, 3D chain}, ...)",
        function(c) ik.solve_many({ c, ik.chain3d({ 1 }) }, { 1, 1, 1, 1, 1 }) end },
    -- 3D
    { 3, "set_rotation(1, 0, 0, 0, 0)", function(c) c:set_rotation(1, 0, 0, 0, 0) end },
    { 3, "set_rotation(1, nan, 0, 0, 0)", function(c) c:set_rotation(1, nan, 0, 0, 0) end },
    { 3, "set_angle on a 3D chain", function(c) c:set_angle(1, 1) end },
    { 3, "configure{pole = {0, 0, 0}}", function(c) c:configure({ pole = { 0, 0, 0 } }) end },
    { 3, "solve(1, 2) without z", function(c) c:solve(1, 2) end },
    { 3, "solve_fabrik(1, 2, nan)", function(c) c:solve_fabrik(1, 2, nan) end },
}

for _, case in ipairs(MISUSE) do
    local dim, name, misuse = case[1], case[2], case[3]
    test(string.format("misuse %dD: %s is a bad argument error and changes nothing", dim, name), function()
        local c = dim == 2 and ik.chain2d({ 1, 0.8, 0.5 }, 0.1, 0.2, 0.3)
            or ik.chain3d({ 1, 0.8, 0.5 }, 0.1, 0.2, 0.3)
        random_pose(c)
        c:configure({ iterations = 17, tolerance = 0.01 })
        local before = snapshot(c)
        local ok, err = pcall(misuse, c)
        check(not ok, "no error")
        check(is_argerror(err), "the error is not a bad argument error: %s", tostring(err))
        check(snapshot(c) == before, "the chain changed")
    end)
end

test("module-level misuse is a bad argument error", function()
    local cases = {
        function() ik.chain2d({}) end,
        function() ik.chain2d({ -1 }) end,
        function() ik.chain2d({ 1 }, nan) end,
        function() ik.chain3d({ 1, "x" }) end,
        function() ik.two_bone(1, 1, 1, 1, 0) end,
        function() ik.two_bone(-1, 1, 1, 1) end,
        function() ik.two_bone_joint(nan, 1, 1, 1) end,
        function() ik.two_bone_joint3(1, 0, 0, 1, 1, 0, 0) end,
    }
    for k, f in ipairs(cases) do
        local ok, err = pcall(f)
        check(not ok and is_argerror(err), "case %d: %s", k, tostring(err))
    end
end)

-- ---------------------------------------------------------------------------------------
-- When ik.core cannot load, in LÖVE itself: require must give the pure-Lua backend, with
-- ik's explanation (which LÖVE, which build it needs, what the loader said) as
-- fallback_reason. Three games a user could ship are made in a temporary directory, each run
-- by a child `love` (headless, this folder's conf.lua) from that directory, so no
-- package.cpath entry of the repository can find a build: a game folder without
-- ik/core.so; the same game zipped into a .love with the core.so in it (LÖVE loads no C
-- module from inside an archive); and a game that keeps ik in lib/ and requires "lib.ik"
-- (ik.core is then looked for as ik/core.so; ik.pure is found under lib/).

-- Why these tests cannot run here (no shell to start a child `love` from: a browser), or
-- nil.
local function no_shell()
    if WEB then return "love.js: no shell and no child LÖVE in a browser" end
    if type(io.popen) ~= "function" then return "no io.popen" end
    local ok, p = pcall(io.popen, "echo ok")
    local out = ok and p and p:read("*a")
    if p then p:close() end
    if out ~= "ok\n" then return "io.popen cannot run a shell here" end
    return nil
end
local NO_SHELL = no_shell()

local function quote(s)
    return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function write(path, text)
    local f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
end

-- sh(command): what it printed (both streams).
local function sh(command)
    local p = assert(io.popen(command .. " 2>&1"))
    local out = p:read("*a")
    p:close()
    return out
end

-- The files of this folder's ik/ (ik/pure/ too), as paths under it.
local function ik_files(with_core)
    local files = { "init.lua", "love.lua", with_core and "core.so" or nil }
    for _, name in ipairs(love.filesystem.getDirectoryItems("ik/pure")) do
        if name:match("%.lua$") then files[#files + 1] = "pure/" .. name end
    end
    return files
end

-- A game in dir requiring `module`: it prints its backend, whether a chain solves, and
-- the fallback reason on one line, or why require failed.
local function game(dir, module, with_core)
    local prefix = module == "lib.ik" and "lib/" or ""
    sh(("mkdir -p %s"):format(quote(dir .. "/" .. prefix .. "ik/pure")))
    write(dir .. "/conf.lua", assert(love.filesystem.read("conf.lua")))
    write(dir .. "/main.lua", ([[
local ok, ik = pcall(require, %q)
if ok then
    print("require: backend " .. tostring(ik.backend) .. ", solved "
        .. tostring((ik.chain2d({ 1, 1 }):solve_two_bone(1, 1))) .. ", reason: "
        .. (tostring(ik.fallback_reason):gsub("\n", " | ")))
else
    print("require failed: " .. tostring(ik))
end
function love.load() love.event.quit(0) end
]]):format(module))
    for _, name in ipairs(ik_files(with_core)) do
        write(dir .. "/" .. prefix .. "ik/" .. name, assert(love.filesystem.read("ik/" .. name)))
    end
end

test_if(NO_SHELL, "require(\"ik\") without a loadable ik.core gives the pure backend with a fallback_reason, in LÖVE: no core.so, a .love, lib/ik", function()
    local tmp = sh("mktemp -d"):match("^(%S+)")
    check(tmp and tmp:sub(1, 1) == "/", "mktemp -d failed")
    local major, minor = love.getVersion()
    local ok, err = pcall(function()
        game(tmp .. "/no_core", "ik", false)
        game(tmp .. "/zipped", "ik", true)
        sh(("cd %s && zip -q -r ../zipped.love ."):format(quote(tmp .. "/zipped")))
        game(tmp .. "/sub", "lib.ik", true)
        for _, case in ipairs({ "no_core", "zipped.love", "sub" }) do
            local out = sh(("cd %s && timeout 60 love %s"):format(quote(tmp), case))
            local message = out:match("require: backend lua, solved true, reason: ([^\n]*)")
            check(message, "%s: require did not give the pure backend, or it did not solve:\n%s", case, out)
            local host = ("in LÖVE %d.%d, LuaJIT"):format(major, minor)
            check(message:find("ik: the C module ik.core did not load " .. host, 1, true)
                and message:find("the LuaJIT build: `make luajit`", 1, true)
                and message:find("module 'ik.core' not found", 1, true),
                "%s: not ik's explanation: %s", case, message)
        end
    end)
    sh(("rm -rf %s"):format(quote(tmp)))
    check(ok, "%s", tostring(err))
end)

-- A .love as the README says to ship one: the game and ik's Lua files zipped, the folder
-- ik/ with its core.so beside the .love, and package.cpath pointed at that directory
-- (love.filesystem.getSourceBaseDirectory()) before require: ik loads and solves.
test_if(NO_SHELL or (not love.filesystem.getInfo("ik/core.so") and "no ik/core.so in this game folder"),
    "a .love with ik/core.so beside it and package.cpath from getSourceBaseDirectory loads ik", function()
    local tmp = sh("mktemp -d"):match("^(%S+)")
    check(tmp and tmp:sub(1, 1) == "/", "mktemp -d failed")
    local ok, err = pcall(function()
        local dir = tmp .. "/src"
        sh(("mkdir -p %s %s"):format(quote(dir .. "/ik"), quote(tmp .. "/ik")))
        write(dir .. "/conf.lua", assert(love.filesystem.read("conf.lua")))
        write(dir .. "/main.lua", [[
package.cpath = love.filesystem.getSourceBaseDirectory() .. "/?.so;" .. package.cpath
local ok, ik = pcall(require, "ik")
print(ok and ("require: loaded " .. ik.backend .. ", solved " .. tostring((ik.chain2d({ 1, 1 }):solve(1, 1))))
    or "require failed: " .. tostring(ik))
function love.load() love.event.quit(0) end
]])
        for _, name in ipairs({ "init.lua", "love.lua" }) do
            write(dir .. "/ik/" .. name, assert(love.filesystem.read("ik/" .. name)))
        end
        write(tmp .. "/ik/core.so", assert(love.filesystem.read("ik/core.so")))
        sh(("cd %s && zip -q -r ../game.love ."):format(quote(dir)))
        local out = sh(("cd %s && timeout 60 love game.love"):format(quote(tmp)))
        check(out:find("require: loaded c, solved true", 1, true), "the .love did not load ik's C core:\n%s", out)
    end)
    sh(("rm -rf %s"):format(quote(tmp)))
    check(ok, "%s", tostring(err))
end)

-- ---------------------------------------------------------------------------------------

test("solving every frame allocates nothing (10,000 solves of each solver, < 1 KB)", function()
    local chains = {}
    for k, s in ipairs(SOLVERS) do
        local lengths = {}
        for i = 1, s[2] do
            lengths[i] = 1
        end
        chains[k] = ik.chain2d(lengths)
        chains[k]:configure({ solver = s[1], iterations = 10 })
        chains[k + #SOLVERS] = ik.chain3d(lengths)
        chains[k + #SOLVERS]:configure({ solver = s[1], iterations = 10 })
    end
    local function loop(n)
        for i = 1, n do
            local t = i * 0.001
            for k = 1, #SOLVERS do
                chains[k]:solve(1 + math.cos(t), math.sin(t))
                chains[k + #SOLVERS]:solve(1 + math.cos(t), math.sin(t), 0.5)
            end
        end
    end
    collectgarbage("collect")
    collectgarbage("collect")
    collectgarbage("stop")
    -- First, with the collector stopped: LuaJIT compiles its traces, and the stack the
    -- collection shrank grows back (ik.pure calls deeper than the C module: in love.js a
    -- count right after the collection took 3.3 KB of regrown stack for garbage).
    loop(2000)
    local before = collectgarbage("count")
    loop(10000)
    local grown = collectgarbage("count") - before
    collectgarbage("restart")
    check(grown < 1, "%.2f KB allocated", grown)
end)

test("a rig's solve every frame allocates nothing (10,000 solves of a 2D and a 3D spider with moving goals, < 1 KB)", function()
    local rigs, legs = {}, {}
    for dim = 2, 3 do
        local chains = spider(dim)
        rigs[dim] = ik.rig(chains):configure({ iterations = 10 })
        legs[dim] = chains
    end
    local function loop(n)
        for i = 1, n do
            local t = i * 0.01
            for dim = 2, 3 do
                local chains = legs[dim]
                for k = 2, #chains do
                    local a = t + k
                    if dim == 2 then
                        chains[k]:set_target(1 + 2 * math.cos(a), -2 + math.sin(a))
                    else
                        chains[k]:set_target(1 + 2 * math.cos(a), -2 + math.sin(a), 0.5 * math.sin(2 * a))
                    end
                end
                rigs[dim]:solve()
            end
        end
    end
    collectgarbage("collect")
    collectgarbage("collect")
    collectgarbage("stop")
    -- First, with the collector stopped: LuaJIT compiles its traces, and the stack the
    -- collection shrank grows back (ik.pure calls deeper than the C module: in love.js a
    -- count right after the collection took 3.3 KB of regrown stack for garbage).
    loop(1000)
    local before = collectgarbage("count")
    loop(10000)
    local grown = collectgarbage("count") - before
    collectgarbage("restart")
    check(grown < 1, "%.2f KB allocated", grown)
end)

print(string.format("%d skipped", skipped))
print(string.format("%d passed, %d failed", passed, failed))

function love.load()
    love.event.quit((failed == 0 and passed > 0) and 0 or 1)
end
