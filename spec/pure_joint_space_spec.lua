-- ik.pure's joint_space.lua, sweep.lua and escape.lua (the escape's kick and finish)
-- against the C core's own functions, called directly: under LuaJIT the C module's
-- internal symbols (ik_joint_finish, ik_joint_track, ik_ccd_sweep, ik_escape_finish,
-- ik_escape_kick, ik_joint_axes, ik_joint_blocked, ik_joint_turn, ik_joint_has_bounds,
-- ik_joint_bound_angle, ik_limits_oriented, ik_solve_spd) are reached through the FFI on
-- the chain block behind a C chain's userdata, and the pure functions on the chain behind a
-- pure chain's handle. Random chains of both dimensions (1 to 6 bones, limits of every
-- kind, poses inside and beyond them, orientation goals, zero-length bones, bases, settings)
-- take random calls side by side: every returned value and every chain's visible state
-- must be the same bits (spec/pure_compare.lua). Without the FFI (Lua 5.1 to 5.4) only the
-- garbage is counted: the pure calls make none, on every VM.
--
-- The C module is ik.core itself, found on package.cpath (busted --lua=luajit
-- --cpath='build/luajit/?.so'); the chain block's first fields (stale_from, pose_behind)
-- are read and written through their offsets in struct ik_chain (src/chain.h), as the C's
-- own callers of ik_joint_turn mark the chain stale.

local P = require("ik.pure")
local pc = require("spec.pure_compare")
local pchain = require("ik.pure.chain")
local js = require("ik.pure.joint_space")
local sweep = require("ik.pure.sweep")
local escape = require("ik.pure.escape")

local pack, compare = pc.pack, pc.compare
local unpack = table.unpack or unpack
local rand = math.random
local PI = math.pi
local function pick(t) return t[rand(#t)] end
local function float(lo, hi) return lo + (hi - lo) * math.random() end

local QUICK = os.getenv("IK_SPEC_QUICK") == "1"
local SEEDS = { 11, 12, 13, 14, 15 }
local CALLS = pc.calls(300, 30)

-- ---- the C side, through the FFI ----

local ffi_ok, ffi = false, nil
if type(jit) == "table" then ffi_ok, ffi = pcall(require, "ffi") end
local C, lib
if ffi_ok then
    C = require("ik.core")
    local path = package.searchpath and package.searchpath("ik.core", package.cpath)
    lib = path and ffi.load(path)
    if not pcall(ffi.typeof, "ik_js_vec3") then
        ffi.cdef([[
typedef struct { double x, y, z; } ik_js_vec3;
typedef struct ik_js_chain ik_js_chain;
typedef struct { unsigned magic; int n, dim, stale_from, pose_behind, limited, kicked, batched; } ik_js_head;
typedef struct { ik_js_chain *chain; unsigned tag; } ik_js_box;
typedef struct {
    double last, reach, least, mark, middle, stall;
    int kicks, since, reachable, limited;
    double floor, slow;
    int crawl, m;
} ik_js_progress;
int ik_joint_finish(ik_js_chain *, ik_js_vec3, int, int, int, int);
int ik_joint_track(ik_js_chain *, ik_js_vec3, int, int, int, int *, double *);
void ik_ccd_sweep(ik_js_chain *, ik_js_vec3, int, double, int);
int ik_escape_finish(ik_js_chain *, ik_js_vec3, int, int, int);
void ik_escape_kick(ik_js_chain *, ik_js_vec3, ik_js_progress *, int);
ik_js_progress ik_progress_start(const ik_js_chain *, ik_js_vec3, int);
int ik_joint_axes(const ik_js_chain *, int, int, ik_js_vec3 *);
int ik_joint_blocked(const ik_js_chain *, int, ik_js_vec3);
void ik_joint_turn(ik_js_chain *, int, ik_js_vec3);
int ik_joint_has_bounds(const ik_js_chain *, int);
double ik_joint_bound_angle(const ik_js_chain *, int);
int ik_limits_oriented(const ik_js_chain *, int);
int ik_solve_spd(double *, int, int, const double *, double *);
void ik_chain_fk(ik_js_chain *);
void ik_chain_settle(ik_js_chain *);
]])
    end
end

local function c_block(cc) return ffi.cast("ik_js_box *", cc).chain end
local function c_head(cc) return ffi.cast("ik_js_head *", c_block(cc)) end

-- The chain behind a pure handle: its one key that is not an index.
local function p_core(h)
    for k, v in next, h do
        if type(k) == "table" then return v end
    end
end

-- ---- random chains ----

-- The same chain on both sides: dim, 1 to 6 bones, limits, a pose, goals, settings.
local function chain_pair(dim)
    local n = pick({ 1, 2, 2, 3, 3, 3, 4, 4, 5, 6 })
    local lengths = {}
    -- lengths and base at one scale, now and then far from 1 (the slow paths of lengths)
    local scale = pick({ 1, 1, 1, 1, 1, 1, 1, 1e-150, 1e-5, 1e5, 1e150 })
    for k = 1, n do lengths[k] = rand() < 0.06 and 0 or scale * float(0.2, 2) end
    local make = dim == 2 and "chain2d" or "chain3d"
    -- now and then straight along +x from the origin (a target behind on that line: the
    -- sweeps' opposite directions), or without limits (the steps' closed forms, and the
    -- world rotations kept for a solver on points)
    local straight, free = rand() < 0.1, rand() < 0.25
    local base = { scale * float(-2, 2), scale * float(-2, 2), dim == 3 and scale * float(-2, 2) or float(-4, 4) }
    if straight then base = {} end
    local cc, pp = C[make](lengths, unpack(base)), P[make](lengths, unpack(base))
    local function both(name, ...)
        local ok_c, r_c = pcall(cc[name], cc, ...)
        local ok_p, r_p = pcall(pp[name], pp, ...)
        assert(ok_c == ok_p, name .. ": accepted on one side only")
    end
    for i = 1, n do
        local r = free and 1 or rand()
        if dim == 2 then
            if r < 0.6 then both("set_limit", i, pc.random_range()) end
            if not straight then both("set_angle", i, rand() < 0.5 and float(-PI, PI) or float(-0.5, 0.5)) end
        else
            if r < 0.3 then
                local lo, hi = pc.random_range()
                local axis = pick({ { 0, 0, 1 }, { 0, 1, 0 }, { float(-1, 1), float(-1, 1), float(-1, 1) } })
                both("set_hinge", i, axis[1], axis[2], axis[3], lo, hi)
            elseif r < 0.6 then
                both("set_cone", i, float(0, rand() < 0.2 and PI or 1.5))
                if rand() < 0.5 then both("set_twist", i, pc.random_range()) end
            elseif r < 0.7 then
                both("set_twist", i, pc.random_range())
            end
            local w, x, y, z = float(-1, 1), float(-1, 1), float(-1, 1), float(-1, 1)
            if rand() < 0.5 then w = 4 end -- near the rest pose
            if not straight then both("set_rotation", i, w, x, y, z) end
        end
    end
    if rand() < 0.4 then
        if dim == 2 then both("set_target_angle", float(-4, 4)) else
            both("set_target_rotation", float(-1, 1), float(-1, 1), float(-1, 1), float(-1, 1))
        end
    end
    both("configure", {
        tolerance = pick({ 0, 1e-6, 1e-3, 1e-3, 0.05 }) * scale,
        angle_tolerance = pick({ 0, 1e-6, 1e-3, 0.1 }),
        iterations = pick({ 1, 5, 64, 64, 300 }),
        escape = rand() < 0.85,
        bend = pick({ 1, -1 }),
        pole = dim == 3 and pick({ false, { float(-1, 1), float(-1, 1), float(-1, 1) }, { 0, 1, 0 } }) or nil,
    })
    return cc, pp
end

-- A target for the chain pair: within reach, near the tip (tracked), beyond reach, on the
-- base, on the tip, far beyond any range the steps take.
local function target_for(cc)
    local dim, reach = cc:dim(), cc:reach()
    local b, t = pack(cc:joint(1)), pack(cc:effector())
    local x, y, z = float(-1, 1), float(-1, 1), dim == 3 and float(-1, 1) or 0
    local len = math.sqrt(x * x + y * y + z * z)
    x, y, z = x / len, y / len, z / len
    local r, px, py, pz = rand()
    if r < 0.05 then -- on the line of a chain straight along +x from the origin, behind it
        px, py, pz = -reach * float(0.1, 2), 0, 0
    elseif r < 0.4 then
        local d = reach * float(0, 1)
        px, py, pz = b[1] + x * d, b[2] + y * d, (b[3] or 0) + z * d
    elseif r < 0.7 then
        local d = reach * pick({ 1e-9, 1e-4, 0.01, 0.04, 0.1 })
        px, py, pz = t[1] + x * d, t[2] + y * d, (t[3] or 0) + z * d
    elseif r < 0.85 then
        local d = reach * float(1, 3)
        px, py, pz = b[1] + x * d, b[2] + y * d, (b[3] or 0) + z * d
    elseif r < 0.9 then
        px, py, pz = b[1], b[2], b[3] or 0
    elseif r < 0.95 then
        px, py, pz = t[1], t[2], t[3] or 0
    else
        px, py, pz = 1e200, -3, 0
    end
    if dim == 2 then pz = 0 end
    return px + 0.0, py + 0.0, pz + 0.0
end

-- ---- the calls ----

local vec = ffi_ok and ffi.new("ik_js_vec3") or nil
local function v3(x, y, z)
    vec.x, vec.y, vec.z = x, y, z
    return vec
end

-- Both chains settled and current, as the callers of these functions leave them.
local function settle(cc, pp)
    local blk, core = c_block(cc), p_core(pp)
    lib.ik_chain_settle(blk)
    lib.ik_chain_fk(blk)
    pchain.chain_settle(core)
    pchain.chain_fk(core)
end

local PROGRESS_FIELDS = { "last", "reach", "least", "mark", "middle", "stall", "kicks", "since", "floor", "slow", "m" }
local PROGRESS_FLAGS = { "reachable", "crawl" }

local function progress_values(e, from_c)
    local t = {}
    for _, k in ipairs(PROGRESS_FIELDS) do t[k] = tonumber(e[k]) end
    for _, k in ipairs(PROGRESS_FLAGS) do
        if from_c then t[k] = e[k] ~= 0 else t[k] = e[k] end
    end
    t.limited = tonumber(e.limited) -- a count on both sides
    return t
end

local c_axes = ffi_ok and ffi.new("ik_js_vec3[3]") or nil
local p_axes = {}
local c_track_used = ffi_ok and ffi.new("int[1]") or nil
local c_track_distance = ffi_ok and ffi.new("double[1]") or nil
local c_a, c_e, c_y = ffi_ok and ffi.new("double[36]"), ffi_ok and ffi.new("double[6]"), ffi_ok and ffi.new("double[6]")

local OPS = { "finish", "finish", "finish", "track", "track", "sweep", "escape_finish", "kick", "bone", "bone", "spd" }

-- One random call on both sides: what it is, and the C's and the pure results (tables).
local function call(cc, pp, counts)
    local op = pick(OPS)
    local blk, core = c_block(cc), p_core(pp)
    local n, dim = cc:count(), cc:dim()
    local oriented = (dim == 2 and cc:target_angle() or dim == 3 and cc:target_rotation()) ~= nil
    local m = (oriented and n > 1 and rand() < 0.7) and n - 1 or n
    local first = rand() < 0.7 and 0 or rand(m) - 1
    local tx, ty, tz = target_for(cc)
    -- The world data current (target_for's reads made the C chain's so): a chain that is
    -- pose_behind stays so (its joints are the truth), as the solvers on points leave it.
    lib.ik_chain_fk(blk)
    pchain.chain_fk(core)
    counts[op] = (counts[op] or 0) + 1
    local rc, rp
    if op == "finish" then
        -- pose_behind left as a solver on points leaves it, now and then
        if rand() < 0.7 then settle(cc, pp) end
        local iterations, points = pick({ 1, 3, 64, 200 }), rand() < 0.5
        rc = { lib.ik_joint_finish(blk, v3(tx, ty, tz), m, iterations, first, points and 1 or 0) }
        rp = { js.joint_finish(core, tx, ty, tz, m, iterations, first, points) }
    elseif op == "track" then
        if rand() < 0.7 then settle(cc, pp) end
        local points = rand() < 0.5
        c_track_used[0], c_track_distance[0] = -1, 42
        local met = lib.ik_joint_track(blk, v3(tx, ty, tz), m, first, points and 1 or 0, c_track_used,
            c_track_distance)
        rc = { met ~= 0, c_track_used[0], c_track_distance[0] }
        rp = { js.joint_track(core, tx, ty, tz, m, first, points, 42) }
    elseif op == "sweep" then
        settle(cc, pp)
        local greed = pick({ 1, 0.5, float(0.01, 1) })
        lib.ik_ccd_sweep(blk, v3(tx, ty, tz), m, greed, first)
        sweep.ccd_sweep(core, tx, ty, tz, m, greed, first)
        rc, rp = {}, {}
    elseif op == "escape_finish" then
        settle(cc, pp)
        local iterations = pick({ 1, 5, 64, 300 })
        rc = { lib.ik_escape_finish(blk, v3(tx, ty, tz), m, iterations, first) }
        rp = { escape.escape_finish(core, tx, ty, tz, m, iterations, first) }
    elseif op == "kick" then
        settle(cc, pp)
        local ec = ffi.new("ik_js_progress[1]")
        ec[0] = lib.ik_progress_start(blk, v3(tx, ty, tz), m)
        local ep = escape.progress_start({}, core, tx, ty, tz, m)
        local kicks = rand(6) - 1
        ec[0].kicks, ep.kicks = kicks, kicks
        lib.ik_escape_kick(blk, v3(tx, ty, tz), ec, first)
        escape.escape_kick(core, tx, ty, tz, ep, first)
        rc, rp = { progress_values(ec[0], true), core_kicked = c_head(cc).kicked ~= 0 },
            { progress_values(ep, false), core_kicked = core.kicked }
    elseif op == "bone" then
        settle(cc, pp)
        local j = rand(n) - 1
        local mode = rand(4) - 1
        local ux, uy, uz = float(-1, 1), float(-1, 1), dim == 3 and float(-1, 1) or 0
        local s = pick({ 1e-3, 0.1, 1, 3 })
        ux, uy, uz = ux * s, uy * s, uz * s
        local na = lib.ik_joint_axes(blk, j, mode, c_axes)
        local axes_c = { na }
        for i = 0, na - 1 do axes_c[#axes_c + 1] = { c_axes[i].x, c_axes[i].y, c_axes[i].z } end
        local np = js.joint_axes(core, j, mode, p_axes)
        local axes_p = { np }
        for i = 0, np - 1 do axes_p[#axes_p + 1] = { p_axes[3 * i], p_axes[3 * i + 1], p_axes[3 * i + 2] } end
        rc = { lib.ik_joint_has_bounds(blk, j) ~= 0, lib.ik_joint_bound_angle(blk, j),
            lib.ik_limits_oriented(blk, m) ~= 0,
            axes_c, lib.ik_joint_blocked(blk, j, v3(ux, uy, uz)) }
        rp = { js.joint_has_bounds(core, j), js.joint_bound_angle(core, j), js.limits_oriented(core, m), axes_p,
            js.joint_blocked(core, j, ux, uy, uz) }
        lib.ik_joint_turn(blk, j, v3(ux, uy, uz))
        js.joint_turn(core, j, ux, uy, uz)
        -- as the C's callers do: the chain marked stale from the bone, and brought up to date
        local head = c_head(cc)
        if j < head.stale_from then head.stale_from = j end
        lib.ik_chain_fk(blk)
        pchain.chain_mark_stale(core, j)
        pchain.chain_fk(core)
    else -- spd: a random system, positive definite or not
        local k = rand(6)
        local a, e, y = {}, {}, {}
        local b = {}
        for i = 0, 35 do b[i] = float(-1, 1) end
        local lambda = pick({ 0, 1e-12, 1e-3, 1 })
        for i = 0, k - 1 do
            for l = 0, k - 1 do
                local sum = i == l and lambda or 0
                for q = 0, k - 1 do sum = sum + b[6 * i + q] * b[6 * l + q] end
                if rand() < 0.05 then sum = float(-1, 1) end -- not symmetric positive definite
                a[6 * i + l] = sum
            end
            e[i] = float(-1, 1)
        end
        for i = 0, 35 do
            if a[i] == nil then a[i] = 0.0 end
            c_a[i] = a[i]
        end
        for i = 0, 5 do
            e[i] = e[i] or 0.0
            y[i] = 0.0
            c_e[i], c_y[i] = e[i], 0.0
        end
        local ok_c = lib.ik_solve_spd(c_a, 6, k, c_e, c_y) ~= 0
        local ok_p = js.solve_spd(a, 6, k, e, y)
        local ac, yc = {}, {}
        for i = 0, 35 do ac[i + 1] = c_a[i] end
        for i = 0, 5 do yc[i + 1] = c_y[i] end
        local ap, yp = {}, {}
        for i = 0, 35 do ap[i + 1] = a[i] end
        for i = 0, 5 do yp[i + 1] = y[i] end
        rc, rp = { ok_c, ac, yc }, { ok_p, ap, yp }
    end
    return op, rc, rp
end

-- ---- the specs ----

describe("ik.pure joint_space, sweep and escape against the C core's own functions", function()
    local it_ffi = ffi_ok and it or pending
    it_ffi("return the same values and leave every chain the same bits, on random chains (LuaJIT, FFI)", function()
        assert(lib, "the C module ik.core was not found on package.cpath")
        local counts = {}
        pc.run_seeds("joint_space, sweep, escape", SEEDS, function(seed)
            math.randomseed(seed)
            local calls = 0
            for k = 1, CALLS do
                local dim = rand() < 0.5 and 2 or 3
                local cc, pp = chain_pair(dim)
                -- a few calls on one pair: each starts where the last left the chains
                for step = 1, pick({ 1, 2, 4 }) do
                    calls = calls + 1
                    local op, rc, rp = call(cc, pp, counts)
                    local what = ("seed %d call %d.%d (%dD, %d bones): %s"):format(seed, k, step, dim, cc:count(), op)
                    local why = compare(rc, rp, {}, {}, what)
                    if why then pc.differs(why) end
                    why = compare(pc.state(cc), pc.state(pp), {}, {}, what .. ", then the chain")
                    if why then pc.differs(why) end
                end
            end
            return calls
        end)
        local list = {}
        for op, count in pairs(counts) do list[#list + 1] = op .. " " .. count end
        table.sort(list)
        print("  calls by kind: " .. table.concat(list, ", "))
        pc.assert_same_bits(pc.stats)
    end)
end)

describe("ik.pure joint_space, sweep and escape", function()
    it("make no garbage", function()
        local chains = {}
        for _, dim in ipairs({ 2, 3 }) do
            for _, limited in ipairs({ false, true }) do
                local make = dim == 2 and P.chain2d or P.chain3d
                local h = make({ 1, 0.8, 0.6, 0.4 })
                if limited then
                    if dim == 2 then
                        h:set_limit(2, -1, 1)
                        h:set_limit(4, -0.5, 0.5)
                        h:set_target_angle(0.3)
                    else
                        h:set_hinge(2, 0, 0, 1, -1, 1)
                        h:set_cone(3, 0.6)
                        h:set_twist(3, -0.3, 0.3)
                        h:set_cone(4, 0.4)
                        h:set_target_rotation(1, 0.2, 0.1, 0)
                    end
                end
                chains[#chains + 1] = p_core(h)
            end
        end
        local e = {}
        local function loop(rounds)
            for r = 1, rounds do
                for _, c in ipairs(chains) do
                    local tx, ty, tz = 1.2 + 0.001 * (r % 7), 0.9, c.dim == 3 and 0.4 or 0.0
                    pchain.chain_settle(c)
                    pchain.chain_fk(c)
                    js.joint_finish(c, tx, ty, tz, c.n - 1, 20, 0, true)
                    js.joint_track(c, tx, ty, tz, c.n, 0, false, 0.0)
                    pchain.chain_settle(c)
                    pchain.chain_fk(c)
                    sweep.ccd_sweep(c, -tx, ty, tz, c.n, 0.5, 0)
                    escape.escape_finish(c, tx, -ty, tz, c.n, 8, 1)
                    escape.progress_start(e, c, tx, ty, tz, c.n)
                    escape.escape_kick(c, tx, ty, tz, e, 0)
                end
            end
        end
        local kb = pc.garbage_kb(loop, QUICK and 10 or 60)
        assert.are.equal(0, kb)
    end)
end)
