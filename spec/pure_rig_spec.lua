-- ik.pure against the C module: rigs (ik.rig and the rig methods count, chain_count, chain,
-- configure, settings, solve, __len, __tostring), made side by side on C chains and pure
-- chains: random rigs, 2D and 3D (humanoid-like trees, random trees, closed loops made with
-- attach_tip, several roots joined by holds, a root hanging on a chain outside the rig,
-- more goals than the joint-space stage takes), among random changes of what a rig solve
-- depends on: targets near and far, orientation goals, limits, effector weights, max_turn,
-- poses, bases, the rig's solver, iterations and tolerance; tracking over several frames;
-- detach and attach again (the rig changed, then as it was). Both must accept or refuse
-- alike, with the same message, return the same values (numbers the same bits and the same
-- subtype) and leave the same visible state on every chain after every call
-- (spec/pure_compare.lua). Misuse of ik.rig and of the methods gets the same messages. Then:
-- a rig solve makes no garbage.
--
-- Under LuaJIT the C module is ik.core itself (require("ik") there puts FFI fast paths in
-- front of some methods, whose errors name the function differently).

local C = type(jit) == "table" and require("ik.core") or require("ik")
local P = require("ik.pure")
local pc = require("spec.pure_compare")

local load = loadstring or load
local unpack = table.unpack or unpack
local pack = pc.pack

-- Seed s makes a rig of kind KINDS[s] (wrapping), in 2D for the first round and 3D the next.
local KINDS = { "humanoid", "tree", "loop", "roots", "outside", "many" }
local SEEDS = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = pc.calls(100, 10)
local TRACE = os.getenv("IK_PURE_TRACE")

-- One call site per method, shared by both backends, so that an error's position and the
-- function's name are the same for both.
local call = {}
for _, name in ipairs({ "solve", "configure", "settings", "count", "chain_count", "chain", "set_target",
    "set_target_angle", "set_target_rotation", "clear_target", "set_angle", "set_rotation", "set_base",
    "set_limit", "set_hinge", "set_cone", "set_twist", "clear_limit", "attach", "detach", "set_weight" }) do
    call[name] = load(("local pack = ... return function(o, ...) return pack(o:%s(...)) end"):format(name),
        "=calls")(pack)
end
local new_rig = load("local pack = ... return function(ik, ...) return pack(ik.rig(...)) end", "=calls")(pack)
local len_of = load("return function(o) return #o end", "=calls")()
local string_of = load("return function(o) return tostring(o) end", "=calls")()

local PI = math.pi
local rand = math.random
local function float(lo, hi) return lo + (hi - lo) * math.random() end
local function pick(t) return t[rand(#t)] end

-- A unit quaternion turning by angle about a random axis.
local function rotation(angle)
    local x, y, z = float(-1, 1), float(-1, 1), float(-1, 1)
    local len = math.sqrt(x * x + y * y + z * z)
    if len == 0 then x, y, z, len = 0, 0, 1, 1 end
    local s = math.sin(angle / 2)
    return math.cos(angle / 2), s * x / len, s * y / len, s * z / len
end

-- ---- the rigs: a description, then the same chains made on each side ----

local function lengths(bones)
    local t = {}
    for k = 1, bones do t[k] = float(0.3, 1.5) end
    return t
end

-- A chain of the description: its lengths and where it hangs (parent, joint, offset).
local function add(d, bones, parent, joint)
    local c = { lengths = lengths(bones), parent = parent, joint = joint }
    if parent then
        if d.dim == 2 then c.offset = { float(-1, 1) } else c.offset = { rotation(float(-1, 1)) } end
    end
    d.chains[#d.chains + 1] = c
    return #d.chains
end

local function hold(d, k, other, joint, offset)
    d.holds[#d.holds + 1] = { k, other, joint, offset }
end

-- A random structure: what it is, its chains, the holds, the chains of the rig (shuffled).
local function describe_rig(dim, kind)
    local d = { dim = dim, chains = {}, holds = {}, outside = {}, kind = kind }
    if kind == "humanoid" or kind == "loop" or kind == "outside" then
        local base
        if kind == "outside" then -- the rig's root hangs on a chain outside it
            base = add(d, 2)
            d.outside[base] = true
        end
        local spine = add(d, rand(2, 4), base, base and 3)
        local top = #d.chains[spine].lengths + 1
        local arm1, arm2 = add(d, rand(2, 3), spine, top), add(d, rand(2, 3), spine, top)
        add(d, rand(1, 2), spine, top) -- the head
        add(d, rand(2, 3), spine, 1)
        add(d, rand(2, 3), spine, 1)
        if kind == "loop" then -- a staff in both hands, or a hand on the other's forearm
            local offset = rand(4) > 1 and (dim == 2 and { float(-0.3, 0.3), float(-0.3, 0.3) }
                or { float(-0.3, 0.3), float(-0.3, 0.3), float(-0.3, 0.3) }) or nil
            hold(d, arm2, arm1, rand(2, #d.chains[arm1].lengths + 1), offset)
        end
    elseif kind == "tree" then
        add(d, rand(1, 4))
        for _ = 2, rand(2, 7) do
            local p = rand(#d.chains)
            add(d, rand(1, 4), p, rand(1, #d.chains[p].lengths + 1))
        end
        if rand(3) == 1 and #d.chains > 2 then -- a loop within the tree
            local a, b = rand(2, #d.chains), rand(#d.chains)
            if a ~= b then hold(d, a, b, rand(1, #d.chains[b].lengths + 1)) end
        end
    elseif kind == "roots" then -- two trees, joined by a hold
        local a = add(d, rand(2, 3))
        add(d, rand(2, 3), a, rand(2, #d.chains[a].lengths + 1))
        local b = add(d, rand(2, 4))
        hold(d, b, a, rand(1, #d.chains[a].lengths + 1))
    else -- more goals than the joint-space stage's rows: a body with many legs
        local body = add(d, 3)
        for _ = 1, dim == 2 and 25 or 17 do add(d, rand(2, 3), body, rand(1, 4)) end
    end
    d.rig = {}
    for k = 1, #d.chains do
        if not d.outside[k] then table.insert(d.rig, rand(#d.rig + 1), k) end
    end
    return d
end

-- The chains of description d made with the library ik, at the same base.
local function build(ik, d, base)
    local world = {}
    for k, c in ipairs(d.chains) do
        local ch = d.dim == 2 and ik.chain2d(c.lengths, unpack(base, 1, 3)) or ik.chain3d(c.lengths, unpack(base))
        world[k] = ch
        if c.parent then ch:attach(world[c.parent], c.joint, unpack(c.offset)) end
    end
    for _, h in ipairs(d.holds) do world[h[1]]:attach_tip(world[h[2]], h[3], unpack(h[4] or {})) end
    local chains = {}
    for k, i in ipairs(d.rig) do chains[k] = world[i] end
    return world, chains
end

-- ---- random calls ----

-- A target for chain k (read on the C side: both sides hold the same numbers): within the
-- reach from the rig's root, beyond it, near the tip (tracking), now and then a wrong one.
local function target_args(world_c, k, dim)
    local cc = world_c[k]
    local tip = { cc:effector() }
    local r = math.random()
    local t = {}
    if r < 0.05 then
        t = { 0 / 0, 1, 0 }
    elseif r < 0.4 then -- near the tip
        for i = 1, dim do t[i] = tip[i] + float(-0.3, 0.3) end
    elseif r < 0.5 then -- far
        for i = 1, dim do t[i] = float(-20, 20) end
    else -- around the chain's base, within about its reach and the parent's
        local base = { cc:joint(1) }
        local reach = cc:reach() * 1.5
        for i = 1, dim do t[i] = base[i] + float(-reach, reach) end
    end
    return t
end

local function limit_args(name, dim, n)
    local bone = rand(n)
    if name == "set_limit" then
        local a, b = pc.random_range()
        return { bone, a, b }
    elseif name == "set_hinge" then
        local a, b = pc.random_range()
        local w, x, y, z = rotation(1)
        return { bone, x, y, z, a, b }
    elseif name == "set_cone" then
        return { bone, float(0, PI) }
    elseif name == "set_twist" then
        local a, b = pc.random_range()
        return { bone, a, b }
    end
    return { bone }
end

local function rig_settings_args()
    local t = {}
    local r = rand(8)
    if r == 1 then t.solver = pick({ "fabrik", "relax", "ccd", "two_bone", 3 }) end
    if r == 2 then t.iterations = pick({ 1, 2, 5, 20, 64, 100, 0, 1.5 }) end
    if r == 3 then t.tolerance = pick({ 1e-3, 1e-6, 0, 0.1, -1, 0 / 0 }) end
    if r == 4 then t.angle_tolerance = pick({ 1e-3, 0.1, 0, -1 }) end
    if r == 5 then t.bogus = 1 end
    if r >= 6 then
        t.solver = pick({ "fabrik", "relax" })
        t.iterations = pick({ 5, 20, 64, 100 })
        t.tolerance = pick({ 1e-3, 1e-6, 1e-2 })
    end
    return t
end

local function run(seed)
    math.randomseed(seed)
    local calls = 0
    local dim = 2 + math.floor((seed - 1) / #KINDS) % 2
    local d = describe_rig(dim, KINDS[(seed - 1) % #KINDS + 1])
    local base = dim == 2 and { float(-2, 2), float(-2, 2), float(-1, 1) }
        or { float(-2, 2), float(-2, 2), float(-2, 2), rotation(0.5) }
    local world_c, chains_c = build(C, d, base)
    local world_p, chains_p = build(P, d, base)
    local index_c, index_p = {}, {}
    for k = 1, #world_c do index_c[world_c[k]], index_p[world_p[k]] = k, k end
    local what0 = ("seed %d (%dD %s, %d chains)"):format(seed, dim, d.kind, #world_c)

    local function check(what, ok_c, r_c, ok_p, r_p)
        calls = calls + 1
        if TRACE then print(what, ok_c, ok_c and "" or r_c) end
        pc.check(what, ok_c, r_c, ok_p, r_p, index_c, index_p)
    end

    local ok_c, r_c = pcall(new_rig, C, chains_c)
    local ok_p, r_p = pcall(new_rig, P, chains_p)
    check(what0 .. ": ik.rig", ok_c, ok_c and 0 or r_c, ok_p, ok_p and 0 or r_p)
    if not ok_c then return calls end
    local rig_c, rig_p = r_c[1], r_p[1]
    index_c[rig_c], index_p[rig_p] = "rig", "rig"
    local n_rig = #chains_c

    -- The same call on both sides; its returns and every chain's state compared.
    local function both(what, f, a_c, a_p, ...)
        local ok1, r1 = pcall(f, a_c, ...)
        local ok2, r2 = pcall(f, a_p, ...)
        check(what, ok1, r1, ok2, r2)
        pc.check_world(world_c, world_p, index_c, index_p, what)
        return ok1
    end
    local function chain_call(what, name, k, ...)
        return both(what, call[name], world_c[k], world_p[k], ...)
    end

    -- The rig's goals: most chains of the rig with a target (every one of the many legs).
    for _, k in ipairs(d.rig) do
        if (rand(4) > 1 or d.kind == "many") and not world_c[k]:tip_parent() then
            chain_call(what0 .. ": set_target", "set_target", k, unpack(target_args(world_c, k, dim)))
        end
    end
    both(what0 .. ": configure", call.configure, rig_c, rig_p, { iterations = 64 })

    local function held(k) return world_c[k]:tip_parent() ~= nil end
    local function rig_chain() return d.rig[rand(#d.rig)] end

    for step = 1, CALLS do
        local what = ("%s step %d"):format(what0, step)
        local r = rand(100)
        if r <= 30 then
            both(what .. ": solve", call.solve, rig_c, rig_p)
        elseif r <= 40 then -- tracking: the goals move a little each frame
            for frame = 1, rand(3, 8) do
                for _, k in ipairs(d.rig) do
                    local cc = world_c[k]
                    if cc:target() and not held(k) then
                        local t = { cc:target() }
                        for i = 1, dim do t[i] = t[i] + float(-0.05, 0.05) end
                        chain_call(what .. ": frame " .. frame .. " target", "set_target", k, unpack(t))
                    end
                end
                both(what .. ": frame " .. frame .. " solve", call.solve, rig_c, rig_p)
            end
        elseif r <= 52 then
            local k = rig_chain()
            if held(k) then
                chain_call(what .. ": set_target (held)", "set_target", k, 1, 1, 1)
            else
                chain_call(what .. ": set_target", "set_target", k, unpack(target_args(world_c, k, dim)))
            end
        elseif r <= 57 then
            local k = rig_chain()
            if dim == 2 then
                chain_call(what .. ": set_target_angle", "set_target_angle", k, float(-PI, PI))
            else
                chain_call(what .. ": set_target_rotation", "set_target_rotation", k, rotation(float(-PI, PI)))
            end
        elseif r <= 59 then
            chain_call(what .. ": clear_target", "clear_target", rig_chain())
        elseif r <= 67 then
            local k = rig_chain()
            local name = dim == 2 and pick({ "set_limit", "set_limit", "clear_limit" })
                or pick({ "set_hinge", "set_cone", "set_twist", "clear_limit" })
            chain_call(what .. ": " .. name, name, k, unpack(limit_args(name, dim, world_c[k]:count())))
        elseif r <= 72 then
            local k = rig_chain()
            local t = {}
            local s = rand(4)
            if s == 1 then t.effector_weight = pick({ 0, 0.5, 1, 2, 1e-250, 1e300 }) end
            if s == 2 then t.max_turn = pick({ 0.1, 0.5, math.huge }) end
            if s == 3 then t.stretch = pick({ true, false }) end
            if s == 4 then t.mix = pick({ 0.5, 1 }) end
            chain_call(what .. ": configure chain", "configure", k, t)
        elseif r <= 76 then
            local k = rig_chain()
            local bone = rand(world_c[k]:count())
            if dim == 2 then
                chain_call(what .. ": set_angle", "set_angle", k, bone, float(-PI, PI))
            else
                chain_call(what .. ": set_rotation", "set_rotation", k, bone, rotation(float(-PI, PI)))
            end
        elseif r <= 78 then
            local k = rig_chain()
            chain_call(what .. ": set_weight", "set_weight", k, rand(world_c[k]:count() + 1), pick({ 0, 0.5, 1, 3 }))
        elseif r <= 80 then
            local k = d.rig[1]
            while d.chains[k].parent and not d.outside[d.chains[k].parent] do k = d.chains[k].parent end
            if dim == 2 then
                chain_call(what .. ": set_base", "set_base", k, float(-2, 2), float(-2, 2), float(-1, 1))
            else
                chain_call(what .. ": set_base", "set_base", k, float(-2, 2), float(-2, 2), float(-2, 2), rotation(0.5))
            end
        elseif r <= 86 then
            both(what .. ": rig configure", call.configure, rig_c, rig_p, rig_settings_args())
        elseif r <= 88 then -- a chain detached: the rig changed; attached again as it was: the same tree
            local k = rig_chain()
            local c = d.chains[k]
            if c.parent then
                chain_call(what .. ": detach", "detach", k)
                both(what .. ": solve (changed)", call.solve, rig_c, rig_p)
                local ok1, r1 = pcall(call.attach, world_c[k], world_c[c.parent], c.joint, unpack(c.offset))
                local ok2, r2 = pcall(call.attach, world_p[k], world_p[c.parent], c.joint, unpack(c.offset))
                check(what .. ": attach again", ok1, r1, ok2, r2)
                pc.check_world(world_c, world_p, index_c, index_p, what .. ": attach again")
            end
        else -- reads and misuse
            local m = rand(9)
            if m == 1 then
                both(what .. ": settings", call.settings, rig_c, rig_p)
            elseif m == 2 then
                both(what .. ": count", call.count, rig_c, rig_p)
                both(what .. ": chain_count", call.chain_count, rig_c, rig_p)
            elseif m == 3 then
                local k = pick({ 0, 1, n_rig, n_rig + 1, 1.5, "1", rand(n_rig) })
                both(what .. ": chain", call.chain, rig_c, rig_p, k)
            elseif m == 4 then
                both(what .. ": solve(1)", call.solve, rig_c, rig_p, pick({ 1, {}, "x" }))
            elseif m == 5 then
                both(what .. ": #", len_of, rig_c, rig_p)
                both(what .. ": tostring", string_of, rig_c, rig_p)
            elseif m == 6 then
                both(what .. ": configure(bad)", call.configure, rig_c, rig_p, pick({ 1, "x", { [1] = 2 } }))
            elseif m == 7 then
                both(what .. ": settings(out)", call.settings, rig_c, rig_p, pick({ {}, 1 }))
            elseif m == 8 then -- a method on a chain, a chain method on the rig
                local ok1, r1 = pcall(call.solve, world_c[d.rig[1]], rig_c)
                local ok2, r2 = pcall(call.solve, world_p[d.rig[1]], rig_p)
                check(what .. ": chain:solve(rig)", ok1, r1, ok2, r2)
                ok1, r1 = pcall(C.chain2d({ 1 }).count, rig_c)
                ok2, r2 = pcall(P.chain2d({ 1 }).count, rig_p)
                check(what .. ": chain.count(rig)", ok1, r1, ok2, r2)
                ok1, r1 = pcall(rig_c.count, world_c[1])
                ok2, r2 = pcall(rig_p.count, world_p[1])
                check(what .. ": rig.count(chain)", ok1, r1, ok2, r2)
            else
                both(what .. ": solve", call.solve, rig_c, rig_p)
            end
        end
    end
    return calls
end

-- ik.rig's misuse: not a table, empty, not chains, mixed dimensions, a chain twice, chains
-- that are not one structure, a root carried below the rig by a chain outside it.
local function misuse()
    local calls = 0
    local function case(what, make)
        local a_c, a_p = make(C), make(P)
        local ok_c, r_c = pcall(new_rig, C, unpack(a_c, 1, a_c.n))
        local ok_p, r_p = pcall(new_rig, P, unpack(a_p, 1, a_p.n))
        -- a rig made: compared by what it says of itself
        if ok_c then r_c = { r_c[1]:count(), tostring(r_c[1]), #r_c[1] } end
        if ok_p then r_p = { r_p[1]:count(), tostring(r_p[1]), #r_p[1] } end
        pc.check(what, ok_c, r_c, ok_p, r_p, {}, {})
        calls = calls + 1
    end
    case("none", function() return pack() end)
    case("nil", function() return pack(nil) end)
    case("number", function() return pack(1) end)
    case("empty", function() return pack({}) end)
    case("a chain", function(ik) return pack(ik.chain2d({ 1 })) end)
    case("proxy", function(ik) return pack(setmetatable({}, { __index = { ik.chain2d({ 1 }) } })) end)
    case("not a chain", function(ik) return pack({ ik.chain2d({ 1 }), 5 }) end)
    case("one", function(ik) return pack({ ik.chain3d({ 1, 1 }) }) end)
    case("extra argument", function(ik) return pack({ ik.chain3d({ 1, 1 }) }, 1) end)
    case("mixed dimensions", function(ik)
        local a = ik.chain2d({ 1 })
        return pack({ a, ik.chain3d({ 1 }) })
    end)
    case("twice", function(ik)
        local a = ik.chain2d({ 1, 1 })
        local b = ik.chain2d({ 1 })
        b:attach(a, 2)
        return pack({ a, b, a })
    end)
    case("two trees", function(ik)
        return pack({ ik.chain2d({ 1 }), ik.chain2d({ 1 }) })
    end)
    case("two trees joined by a hold", function(ik)
        local a, b = ik.chain3d({ 1, 1 }), ik.chain3d({ 1 })
        b:attach_tip(a, 2)
        return pack({ a, b })
    end)
    case("a root carried by a chain outside", function(ik)
        local a, out, b = ik.chain2d({ 1, 1 }), ik.chain2d({ 1 }), ik.chain2d({ 1 })
        out:attach(a, 2)
        b:attach(out, 2)
        b:attach_tip(a, 1)
        return pack({ a, b })
    end)
    case("a hold on a chain outside", function(ik)
        local a, out, b = ik.chain2d({ 1, 1 }), ik.chain2d({ 1 }), ik.chain2d({ 1 })
        b:attach(a, 2)
        b:attach_tip(out, 2)
        return pack({ b, a })
    end)
    return calls
end

describe("ik.pure against the C module (rigs)", function()
    it("accepts, refuses, returns and leaves the same, bit for bit, in random rigs", function()
        pc.assert_same_bits(pc.run_seeds(", rigs", SEEDS, run))
    end)

    it("refuses the same rigs with the same messages", function()
        pc.assert_same_bits(pc.run_seeds(", ik.rig misuse", { 1 }, misuse))
    end)

    it("makes no garbage when solving a rig", function()
        for _, dim in ipairs({ 2, 3 }) do
            local function new(lengths) return dim == 2 and P.chain2d(lengths) or P.chain3d(lengths) end
            local spine, head = new({ 1, 1, 0.5 }), new({ 0.3, 0.2 })
            local arm1, arm2, leg1, leg2 = new({ 0.8, 0.7 }), new({ 0.8, 0.7, 0.2 }), new({ 1, 1 }), new({ 1, 1, 0.3 })
            for _, c in ipairs({ arm1, arm2, head }) do c:attach(spine, 4) end
            leg1:attach(spine, 1)
            leg2:attach(spine, 1)
            if dim == 2 then
                leg2:set_limit(2, 0, 2)
                arm2:set_target_angle(0.5)
            else
                leg2:set_hinge(2, 0, 0, 1, 0, 2)
                arm2:set_cone(2, 1)
                arm2:set_target_rotation(1, 0.2, 0.1, 0)
            end
            arm1:configure({ max_turn = 0.3 })
            local staff = new({ 0.7, 0.7 }) -- a second pair of arms holding a staff: a loop
            local staff2 = new({ 0.7, 0.7 })
            staff:attach(spine, 3)
            staff2:attach(spine, 3)
            staff2:attach_tip(staff, 3)
            local rig = P.rig({ spine, head, arm1, arm2, leg1, leg2, staff, staff2 })
            local fabrik, relax = { solver = "fabrik" }, { solver = "relax" }
            local function loop(count)
                for i = 1, count do
                    local s = math.sin(i * 0.05)
                    local z = dim == 3 and 0.3 * s or nil
                    head:set_target(0.2 * s, 2.8, z)
                    arm1:set_target(1 + s, 2, z)
                    arm2:set_target(-1, 2 + s, z)
                    leg1:set_target(0.5 + 0.3 * s, -1.8, z)
                    leg2:set_target(-0.5, -1.8 + 0.2 * s, z)
                    staff:set_target(1, 1 + s, z)
                    rig:configure(i % 3 == 0 and relax or fabrik)
                    rig:solve()
                end
            end
            local kb = pc.garbage_kb(loop, 400)
            assert.is_true(kb < 1, ("%dD: %.2f KB for 400 frames"):format(dim, kb))
        end
    end)
end)
