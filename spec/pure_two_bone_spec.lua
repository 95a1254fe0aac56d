-- ik.pure against the C module: the stateless solves (ik.two_bone, two_bone_joint,
-- two_bone_middle, two_bone_joint3, two_bone_middle3, soft_distance) called side by side
-- with random arguments, valid and not. Both must accept or refuse alike, with the same
-- message, and return the same values: numbers the same bits (the sign of zero too) and the
-- same subtype, `reached` the same boolean. The arguments reach for the edges: lengths and
-- coordinates near 1e-300 and 1e300 (and the largest double), zero lengths, targets on the
-- root and on the edges of the reachable ring, poles along the target line, zero, of unit
-- length already, or tiny.
--
-- Under LuaJIT the C module is ik.core itself (require("ik") there puts an FFI fast path in
-- front of ik.two_bone, which names the function by its own name).

-- ik.core in every VM, too, as require("ik") is ik.pure under IK_BACKEND=lua (spec/backend.lua).
local C = require("ik.core")
local P = require("ik.pure")
local pc = require("spec.pure_compare")

local load = loadstring or load
local unpack = table.unpack or unpack
local mtype = math.type or function() return nil end

local function pack(...) return { n = select("#", ...), ... } end

local SEEDS = { 1, 2, 3, 4, 5 }
-- Per seed; with IK_SPEC_QUICK=1 (make test-valgrind, 50 times slower) a tenth.
local CALLS = pc.calls(10000, 1000)

-- The arguments of each function, by kind, in order.
local SIGNATURES = {
    two_bone = { "length", "length", "x", "y", "bend" },
    two_bone_middle = { "length", "length", "x", "y", "bend" },
    two_bone_joint = { "x", "y", "length", "length", "bend" },
    two_bone_middle3 = { "length", "length", "x", "y", "z", "pole", "pole", "pole" },
    two_bone_joint3 = { "x", "y", "z", "length", "length", "pole", "pole", "pole" },
    soft_distance = { "length", "length", "length" },
}
local NAMES = {}
for name in pairs(SIGNATURES) do NAMES[#NAMES + 1] = name end
table.sort(NAMES)

-- One call site per function and style, shared by both backends, so that an error names
-- the function alike: a field ("two_bone") or a local ("f").
local field_call, local_call = {}, {}
for _, name in ipairs(NAMES) do
    field_call[name] = load(("local pack = ... return function(ik, ...) return pack(ik.%s(...)) end"):format(name),
        "=calls")(pack)
    local_call[name] = load(("local pack = ... return function(ik, ...) local f = ik.%s return pack(f(...)) end")
        :format(name), "=calls")(pack)
end

-- ---- random arguments ----

local rand = math.random
local function pick(t) return t[rand(#t)] end
local function float(lo, hi) return lo + (hi - lo) * math.random() end

local HUGE = 1.7976931348623157e308
local SCALES = { 1e-308, 1e-300, 1e-200, 1e-162, 1e-160, 1e-155, 1e-150, 1e-100, 1, 1, 1, 1, 1, 1,
    1e100, 1e150, 1e155, 1e160, 1e200, 1e300, 1e307 }

-- A valid call's numbers: lengths at one scale, the target at the same or another, placed
-- at random, within the ring, on its edges or on the root; the pole anywhere, along the
-- target line, zero, of unit length, tiny or huge.
local function valid_args(sig)
    local s = pick(SCALES)
    local l1 = math.random() < 0.1 and 0 or s * float(0, 2)
    local l2 = math.random() < 0.1 and 0 or s * float(0, 2)
    if math.random() < 0.1 then l2 = l1 end
    local dim = #sig == 8 and 3 or 2
    local d
    local r = math.random()
    if r < 0.3 then
        d = pick(SCALES) * float(0, 3) -- anywhere
    elseif r < 0.6 then
        d = math.abs(l1 - l2) + (l1 + l2 - math.abs(l1 - l2)) * math.random() -- reachable
    elseif r < 0.8 then
        d = pick({ l1 + l2, math.abs(l1 - l2), (l1 + l2) * (1 + 1e-13), (l1 + l2) * (1 - 1e-13),
            math.abs(l1 - l2) * (1 - 1e-13), math.abs(l1 - l2) * (1 + 1e-13) })
    elseif r < 0.9 then
        d = 0 -- on the root
    else
        d = pick({ HUGE, 1e-320, 5e-324, 1e-300 })
    end
    local t = {}
    local a, b = float(-math.pi, math.pi), float(-math.pi / 2, math.pi / 2)
    if math.random() < 0.2 then a, b = pick({ 0, math.pi / 2, -math.pi / 2, math.pi }), 0 end
    if dim == 2 then
        t[1], t[2] = d * math.cos(a), d * math.sin(a)
    else
        t[1], t[2], t[3] = d * math.cos(a) * math.cos(b), d * math.sin(b), d * math.sin(a) * math.cos(b)
    end
    if d == 0 and math.random() < 0.5 then
        for k = 1, dim do t[k] = pick({ 0, -0.0, 0.0 }) end
    end
    local pole = {}
    r = math.random()
    if r < 0.4 then
        pole = { float(-2, 2), float(-2, 2), float(-2, 2) }
    elseif r < 0.55 then
        pole = { 0, 0, 0 }
    elseif r < 0.75 then -- along the target line, or nearly
        local k = pick({ 1, -1, 3, 1e-200, -1e200 }) / (d > 0 and d or 1)
        pole = { t[1] * k, t[2] * k, (t[3] or 0) * k }
        if math.random() < 0.5 then pole[rand(3)] = pole[rand(3)] + pick({ 1e-10, 1e-7, 1e-17 }) end
    elseif r < 0.9 then
        pole = pick({ { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, -1 }, { 0.6, 0.8, 0 } })
    else
        local ps = pick({ 1e-300, 1e300, 5e-324, 1e-160 })
        pole = { ps * float(-1, 1), ps * float(-1, 1), ps * float(-1, 1) }
    end
    local v = { n = #sig }
    local lengths, target, poles = { l1, l2 }, t, pole
    if sig[1] == "length" and #sig == 3 then -- soft_distance: d, reach, softness
        local reach = math.random() < 0.1 and 0 or s * float(0, 4)
        local softness = pick({ 0, reach * math.random(), reach * float(1, 3), s * float(0, 4), 1e-300, HUGE })
        local dist = pick({ reach * float(0, 2), reach - softness, reach, 0, s * float(0, 10), HUGE, 5e-324 })
        lengths = { math.abs(dist), reach, softness }
    end
    local li, ti, pn = 0, 0, 0
    for k, kind in ipairs(sig) do
        if kind == "length" then
            li = li + 1
            v[k] = lengths[li]
        elseif kind == "bend" then
            if math.random() < 0.7 then v[k] = pick({ 1, -1, 1.0, -1.0 }) end
        elseif kind == "pole" then
            pn = pn + 1
            v[k] = poles[pn]
        else
            ti = ti + 1
            v[k] = target[ti]
        end
    end
    if v[#sig] == nil and sig[#sig] == "bend" and math.random() < 0.5 then v.n = #sig - 1 end
    return v
end

local JUNK = { 0 / 0, 1 / 0, -1 / 0, -1, -1e-300, -5e-324, "1", true, {}, print, 0, 2, 1.5, -2 }

-- Now and then a wrong value, fewer arguments, or more.
local function args_for(name)
    local sig = SIGNATURES[name]
    local v = valid_args(sig)
    if math.random() < 0.25 then
        local k = rand(#sig)
        v[k] = pick(JUNK)
        if math.random() < 0.1 then v[k] = nil end
        if k > v.n then v.n = k end
    end
    if math.random() < 0.05 then v.n = rand(#sig + 1) - 1 end
    if math.random() < 0.05 then
        v.n = v.n + 1
        v[v.n] = pick(JUNK)
    end
    return v
end

-- ---- comparison ----

local function same_number(a, b)
    if a ~= a then return b ~= b end
    return a == b and (a ~= 0 or 1 / a == 1 / b)
end

local function show(v)
    local t = {}
    for k = 1, v.n do t[k] = type(v[k]) == "number" and ("%.17g"):format(v[k]) or tostring(v[k]) end
    return table.concat(t, ", ")
end

describe("ik.pure against the C module (stateless solves)", function()
    it("accepts, refuses and returns the same, bit for bit, in random calls", function()
        local stats = { calls = 0, errors = 0, numbers = 0, identical = 0, differing = 0, largest = 0 }
        for _, seed in ipairs(SEEDS) do
            math.randomseed(seed)
            for step = 1, CALLS do
                local name = pick(NAMES)
                local v = args_for(name)
                local call = math.random() < 0.8 and field_call[name] or local_call[name]
                local ok_c, r_c = pcall(call, C, unpack(v, 1, v.n))
                local ok_p, r_p = pcall(call, P, unpack(v, 1, v.n))
                local what = ("seed %d step %d: %s(%s)"):format(seed, step, name, show(v))
                stats.calls = stats.calls + 1
                assert(ok_c == ok_p, ("%s: the C module %s, ik.pure %s"):format(what,
                    ok_c and "accepted" or "refused: " .. tostring(r_c), ok_p and "accepted" or "refused: " .. tostring(r_p)))
                if not ok_c then
                    stats.errors = stats.errors + 1
                    assert(r_c == r_p, ("%s: messages differ:\n  C:    %s\n  pure: %s"):format(what, r_c, r_p))
                else
                    assert(r_c.n == r_p.n, what .. ": " .. r_c.n .. " values vs " .. r_p.n)
                    for k = 1, r_c.n do
                        local a, b = r_c[k], r_p[k]
                        if type(a) == "number" and type(b) == "number" then
                            stats.numbers = stats.numbers + 1
                            assert(mtype(a) == mtype(b), what .. ": a subtype differs")
                            if same_number(a, b) then
                                stats.identical = stats.identical + 1
                            else
                                local d = math.abs(a - b) / math.max(1, math.abs(a), math.abs(b))
                                stats.differing = stats.differing + 1
                                if not (d <= stats.largest) then stats.largest = d end
                                if not (d <= 1e-9) then
                                    local why = ("%s: value %d: %.17g vs %.17g"):format(what, k, a, b)
                                    assert(not pc.SAME_LIBM, why)
                                    stats.beyond = (stats.beyond or 0) + 1
                                end
                            end
                        else
                            assert(a == b, ("%s: value %d: %s vs %s"):format(what, k, tostring(a), tostring(b)))
                        end
                    end
                end
            end
        end
        print(("\nik.pure vs ik.core (%s), stateless solves: %d calls (%d refused alike), %d numbers compared, %d the same bits (%.4f%%), %d differing (largest difference %g)")
            :format(_VERSION .. (type(jit) == "table" and " " .. jit.version or ""), stats.calls, stats.errors,
                stats.numbers, stats.identical, 100 * stats.identical / stats.numbers, stats.differing, stats.largest))
        pc.assert_same_bits(stats)
        assert.is_true(stats.errors > stats.calls / 20)
    end)
end)
