-- ik: inverse kinematics for bone chains and rigs. The C core ik.core does all the work;
-- this file is what require("ik") finds.
--
-- Where ik.core cannot load (none on package.cpath, a build for another Lua or another
-- release of ik, a host with no C modules at all: love.js in a browser, iOS), require("ik")
-- returns the pure-Lua backend, ik.pure, in its place: the same API, ik.backend "lua", and
-- ik.fallback_reason the explanation of what stopped ik.core (nil with the C core, whose
-- ik.backend is "c"). require("ik.pure") gives the pure backend whatever is installed.
--
-- Under LuaJIT with its compiler on (LÖVE, for one), the calls a game makes every frame
-- (the solves, reading joints and angles, setting a target) go to the same C functions
-- through the FFI: from compiled Lua such a call costs a few nanoseconds, where the Lua C
-- API costs about a hundred. Each fast path checks its arguments in Lua and hands
-- anything it does not take (a misuse, an unusual argument) to the C API function of the
-- same name, so both paths accept, refuse and compute exactly the same, bit for bit.

-- The build of ik.core this host needs, and how to make it (a sentence for the error below).
local function needed_build()
    if type(jit) == "table" then
        local host = tostring(jit.version)
        if type(love) == "table" and type(love.getVersion) == "function" then
            -- getVersion returns major, minor, revision, codename: name the two wanted, as
            -- the format given the call would take only the first.
            local major, minor = love.getVersion()
            host = ("LÖVE %s.%s, %s"):format(tostring(major), tostring(minor), host)
        end
        if jit.os == "Windows" then
            return host, "the LuaJIT build for Windows: `make windows` (build/windows/ik/core.dll)"
        end
        return host, "the LuaJIT build: `make luajit` (build/luajit/ik/core.so)"
    end
    local version = tostring(_VERSION)
    local minor = version:match("^Lua 5%.([1-5])$")
    if minor == "4" then
        return version, "the Lua 5.4 build: `make` (build/lua5.4/ik/core.so)"
    elseif minor then
        return version, ("the Lua 5.%s build: `make lua5.%s` (build/lua5.%s/ik/core.so)"):format(
            minor, minor, minor)
    end
    return version, "a build ik does not have: it builds for Lua 5.1 to 5.5 and LuaJIT 2.1"
end

-- The release these Lua files belong to: the FFI declarations below are its C API's, so a
-- core.so of another release is not used (chain2d_spec checks this is src/ik.h's).
local VERSION = "ik 0.2.0"

-- The name require gave this file: "ik", or "lib.ik" for a game that keeps the folder ik/
-- under lib/; then the prefix "lib.", under which ik.pure is found too.
local here = ...
local prefix = type(here) == "string" and here:match("^(.+%.)ik$") or nil

-- The pure backend in ik.core's place, with the reason. ik.pure's own table: chains made
-- through require("ik") and require("ik.pure") are one backend's. ik.pure's files require
-- each other as ik.pure.*: under a prefix, a searcher (the last, so it finds only what no
-- other does) sends those names to the prefixed ones.
local function fall_back(reason)
    if prefix then
        local searchers = package.searchers or package.loaders
        searchers[#searchers + 1] = function(name)
            if name == "ik.pure" or name:sub(1, 8) == "ik.pure." then
                return function() return require(prefix .. name) end
            end
            return nil
        end
    end
    local ok, pure = pcall(require, "ik.pure")
    if not ok then
        error(reason .. "\nThe pure-Lua backend ik.pure did not load either (it is the folder "
            .. "ik/pure/ beside ik/init.lua):\n" .. tostring(pure), 0)
    end
    pure.fallback_reason = reason
    return pure
end

-- A C module built for another Lua fails in the loader ("undefined symbol: ...") or in
-- luaopen_ik_core's own version check; either way, say which build this host needs and
-- keep what the loader said.
local loaded, core = pcall(require, "ik.core")
if not loaded and jit == nil and type(love) == "table" and type(love.getVersion) == "function" then
    -- LÖVE on plain Lua 5.1 is love.js, in a browser: no C module loads there at all.
    local major, minor = love.getVersion()
    return fall_back(("ik: no C module loads in LÖVE %s.%s on %s without LuaJIT (love.js, in a "
        .. "browser), so ik is the pure-Lua backend. The loader said:\n%s"):format(
        tostring(major), tostring(minor), tostring(_VERSION), tostring(core)))
end
if not loaded then
    local host, build = needed_build()
    return fall_back(("ik: the C module ik.core did not load in %s, which needs %s in the ik "
        .. "sources, where package.cpath finds it (or `luarocks make` of the rockspec for this "
        .. "Lua). The loader said:\n%s"):format(host, build, tostring(core)))
end
if type(core) ~= "table" or core._VERSION ~= VERSION then
    local host, build = needed_build()
    return fall_back(("ik: the C module ik.core is %s but these Lua files are %s: in %s, "
        .. "use %s of the same sources"):format(
        type(core) == "table" and tostring(core._VERSION) or "not a module table", VERSION,
        host, build))
end

local ffi_ok, ffi = false, nil
if jit and jit.status and jit.status() and core._ffi then
    ffi_ok, ffi = pcall(require, "ffi")
end
if not ffi_ok then return core end

ffi.cdef([[
typedef struct ik_ffi_chain ik_ffi_chain;
typedef struct ik_ffi_rig ik_ffi_rig;
typedef struct { int reached; double distance; double angle_error; int iterations; } ik_ffi_result;
typedef struct {
    int (*solve)(ik_ffi_chain *, const double *, ik_ffi_result *);
    int (*solve_fabrik)(ik_ffi_chain *, const double *, ik_ffi_result *);
    int (*solve_ccd)(ik_ffi_chain *, const double *, ik_ffi_result *);
    int (*solve_relax)(ik_ffi_chain *, const double *, ik_ffi_result *);
    int (*solve_two_bone)(ik_ffi_chain *, const double *, ik_ffi_result *);
    int (*solve_aim)(ik_ffi_chain *, const double *, ik_ffi_result *);
    const double *(*positions)(ik_ffi_chain *);
    int (*angle)(ik_ffi_chain *, int, double *);
    int (*world_angle)(ik_ffi_chain *, int, double *);
    int (*set_angle)(ik_ffi_chain *, int, double);
    int (*rotation)(ik_ffi_chain *, int, double *);
    int (*world_rotation)(ik_ffi_chain *, int, double *);
    int (*set_target)(ik_ffi_chain *, const double *);
    int (*count)(const ik_ffi_chain *);
    int (*dim)(const ik_ffi_chain *);
    int (*rig_solve)(ik_ffi_rig *, ik_ffi_result *);
    int (*two_bone)(double, double, double, double, int, double *, double *, int *);
    int (*solve_many)(ik_ffi_chain *const *, int, const double *, int *, ik_ffi_result *, int *);
    void (*update)(ik_ffi_chain *);
} ik_ffi_api;
typedef struct { union { ik_ffi_chain *chain; ik_ffi_rig *rig; }; unsigned tag; } ik_ffi_box;
]])

local api_ptr, methods, rig_methods = core._ffi()
local api = ffi.cast("const ik_ffi_api *", api_ptr)
-- Every entry point read once into a local: reading a function pointer out of the struct
-- makes a new cdata each time, 24 bytes of garbage a call when the code runs interpreted
-- (jit.off(), or a trace that aborts); the JIT would sink it, the interpreter cannot.
local api_count, api_dim, api_update, api_positions = api.count, api.dim, api.update, api.positions
local api_set_angle, api_set_target, api_rig_solve = api.set_angle, api.set_target, api.rig_solve
local api_two_bone, api_solve_many = api.two_bone, api.solve_many
local floor = math.floor
local MAX = 1e300 -- IK_MAX_COORD: abs(x) <= MAX is false for NaN and the infinities too

-- The chains and rigs made through this module, with their core pointers and shapes:
-- only these take the fast paths (a foreign userdata never does). Weak keys.
local chain_of = setmetatable({}, { __mode = "k" })
local dim_of = setmetatable({}, { __mode = "k" })
-- The joint array (it never moves), kept: api.positions would make a new pointer cdata on
-- every call, garbage in the interpreter; the reads bring it up to date with api.update.
local joints_of = setmetatable({}, { __mode = "k" })
local rig_of = setmetatable({}, { __mode = "k" })

-- The slow path: the C API function itself, under pcall, so that an argument error it raises
-- reads as the user's call would have had it, had it gone to the C function directly
-- (luaL_argerror numbers a method's arguments from the first after self, and names the
-- function as the call site does; called from here, it could not know either).
local getinfo = debug and debug.getinfo

local function fix(name, message)
    local k, why = tostring(message):match("^bad argument #(%d+) to '[^']*' %((.*)%)$")
    local info = k and getinfo and getinfo(3, "n") -- the fast path, as its caller called it
    if not k then return message end
    k = tonumber(k)
    if info and info.namewhat == "method" then
        k = k - 1
        if k == 0 then return ("calling '%s' on bad self (%s)"):format(name, why) end
    end
    return ("bad argument #%d to '%s' (%s)"):format(k, name, why)
end

local function rethrow(name, ok, a, b, c, d)
    if not ok then error(fix(name, a), 3) end
    return a, b, c, d
end

local function register(ud)
    chain_of[ud] = ffi.cast("ik_ffi_box *", ud).chain
    dim_of[ud] = api_dim(chain_of[ud])
    joints_of[ud] = api_positions(chain_of[ud])
    return ud
end

for _, name in ipairs({ "chain2d", "chain3d", "chain2d_points", "chain3d_points" }) do
    local make = core[name]
    core[name] = function(...) return register((rethrow(name, pcall(make, ...)))) end
end
local clone = methods.clone
methods.clone = function(self, ...) return register((rethrow("clone", pcall(clone, self, ...)))) end
local make_rig = core.rig
core.rig = function(...)
    local rig = rethrow("rig", pcall(make_rig, ...))
    rig_of[rig] = ffi.cast("ik_ffi_box *", rig).rig
    return rig
end

-- Scratch the fast paths fill and the core reads: no garbage per call.
local target = ffi.new("double[3]")
local result = ffi.new("ik_ffi_result")
local out = ffi.new("double[4]")
local out2 = ffi.new("double[1]")
local flag = ffi.new("int[1]")

local function is_coord(v) return type(v) == "number" and v <= MAX and v >= -MAX end

-- chain:solve*(x, y[, z]), or () for the kept goal.
local function solve_path(name)
    local entry, slow = api[name], methods[name]
    methods[name] = function(self, x, y, z, extra, ...)
        local p = chain_of[self]
        if p ~= nil and extra == nil and select("#", ...) == 0 then
            local status
            if x == nil and y == nil and z == nil then
                status = entry(p, nil, result)
            elseif is_coord(x) and is_coord(y) then
                target[0], target[1] = x + 0.0, y + 0.0 -- -0 is +0, as in the C API
                if dim_of[self] == 2 then
                    if z == nil then status = entry(p, target, result) end
                elseif is_coord(z) then
                    target[2] = z + 0.0
                    status = entry(p, target, result)
                end
            end
            if status == 0 then return result.reached ~= 0, result.distance, result.iterations end
        end
        local a, b, c = rethrow(name, pcall(slow, self, x, y, z, extra, ...)) -- the same, or its error
        return a, b, c
    end
end
for _, name in ipairs({ "solve", "solve_fabrik", "solve_ccd", "solve_relax", "solve_two_bone", "solve_aim" }) do
    solve_path(name)
end

-- Index i in 1..count (whole), as the C API checks it; nil when it is not one.
local function index(i, count)
    if type(i) == "number" and i >= 1 and i <= count and i == floor(i) then return i - 1 end
end

do
    local slow = methods.joint
    methods.joint = function(self, i, ...)
        local p = chain_of[self]
        if p ~= nil then
            local k = index(i, api_count(p) + 1)
            if k then
                local pos, d = joints_of[self], dim_of[self]
                api_update(p)
                k = k * d
                if d == 2 then return pos[k], pos[k + 1] end
                return pos[k], pos[k + 1], pos[k + 2]
            end
        end
        local a, b, c = rethrow("joint", pcall(slow, self, i, ...))
        return a, b, c
    end
end

do
    local slow = methods.effector
    methods.effector = function(self, ...)
        local p = chain_of[self]
        if p ~= nil then
            local pos, d = joints_of[self], dim_of[self]
            local k = api_count(p) * d
            api_update(p)
            if d == 2 then return pos[k], pos[k + 1] end
            return pos[k], pos[k + 1], pos[k + 2]
        end
        local a, b, c = rethrow("effector", pcall(slow, self, ...))
        return a, b, c
    end
end

do
    local slow = methods.positions
    methods.positions = function(self, t, ...)
        local p = chain_of[self]
        if p ~= nil and (t == nil or type(t) == "table") then
            local m = (api_count(p) + 1) * dim_of[self]
            local pos = joints_of[self]
            api_update(p)
            t = t or {}
            for k = 1, m do rawset(t, k, pos[k - 1]) end
            local k = m + 1
            while rawget(t, k) ~= nil do -- a table reused from a longer chain keeps no tail
                rawset(t, k, nil)
                k = k + 1
            end
            return t
        end
        local a = rethrow("positions", pcall(slow, self, t, ...))
        return a
    end
end

-- 2D angle(i) and world_angle(i).
local function angle_path(name)
    local entry, slow = api[name], methods[name]
    methods[name] = function(self, i, ...)
        local p = chain_of[self]
        if p ~= nil and dim_of[self] == 2 then
            local k = index(i, api_count(p))
            if k and entry(p, k, out2) == 0 then return out2[0] end
        end
        local a = rethrow(name, pcall(slow, self, i, ...))
        return a
    end
end
angle_path("angle")
angle_path("world_angle")

do
    local slow = methods.set_angle
    methods.set_angle = function(self, i, a, ...)
        local p = chain_of[self]
        if p ~= nil and dim_of[self] == 2 and type(a) == "number" and a - a == 0 then
            local k = index(i, api_count(p))
            if k and api_set_angle(p, k, a + 0.0) == 0 then return end
        end
        rethrow("set_angle", pcall(slow, self, i, a, ...))
    end
end

-- 3D rotation(i) and world_rotation(i).
local function rotation_path(name)
    local entry, slow = api[name], methods[name]
    methods[name] = function(self, i, ...)
        local p = chain_of[self]
        if p ~= nil and dim_of[self] == 3 then
            local k = index(i, api_count(p))
            if k and entry(p, k, out) == 0 then return out[0], out[1], out[2], out[3] end
        end
        local a, b, c, d = rethrow(name, pcall(slow, self, i, ...))
        return a, b, c, d
    end
end
rotation_path("rotation")
rotation_path("world_rotation")

do
    local slow = methods.set_target
    methods.set_target = function(self, x, y, z, extra, ...)
        local p = chain_of[self]
        if p ~= nil and extra == nil and select("#", ...) == 0 and is_coord(x) and is_coord(y) then
            target[0], target[1] = x + 0.0, y + 0.0
            if dim_of[self] == 2 then
                if z == nil and api_set_target(p, target) == 0 then return end
            elseif is_coord(z) then
                target[2] = z + 0.0
                if api_set_target(p, target) == 0 then return end
            end
        end
        rethrow("set_target", pcall(slow, self, x, y, z, extra, ...))
    end
end

do
    local slow = rig_methods.solve
    rig_methods.solve = function(self, extra, ...)
        local r = rig_of[self]
        if r ~= nil and extra == nil and select("#", ...) == 0 and api_rig_solve(r, result) == 0 then
            return result.reached ~= 0, result.distance, result.iterations
        end
        local a, b, c = rethrow("solve", pcall(slow, self, extra, ...))
        return a, b, c
    end
end

-- ik.solve_many(chains, targets [, reached [, distances [, iterations]]]): the chains'
-- pointers and the targets gathered into arrays kept between calls (they grow, once, to the
-- largest count seen), then one call: the core checks everything before it changes anything.
do
    local slow = core.solve_many
    local cap, chains_at, targets_at, results_at = 0, nil, nil, nil
    local count_at, failed_at = ffi.new("int[1]"), ffi.new("int[1]")
    -- The results read through int and double views of their array, by index: in the
    -- interpreter results_at[k - 1] would make a struct reference cdata per chain.
    local ints_at, doubles_at
    local INTS, DOUBLES = ffi.sizeof("ik_ffi_result") / 4, ffi.sizeof("ik_ffi_result") / 8
    local REACHED = ffi.offsetof("ik_ffi_result", "reached") / 4
    local DISTANCE = ffi.offsetof("ik_ffi_result", "distance") / 8
    local ITERATIONS = ffi.offsetof("ik_ffi_result", "iterations") / 4
    local function plain(t) return type(t) == "table" and getmetatable(t) == nil end
    local function fillable(t) return t == nil or type(t) == "table" end
    core.solve_many = function(chains, targets, reached, distances, iterations, ...)
        if plain(chains) and (targets == nil or plain(targets)) and fillable(reached) and fillable(distances)
            and fillable(iterations) and select("#", ...) == 0 then
            local n, dim, ok = #chains, 2, true
            if n > cap then
                cap = math.max(n, 2 * cap, 64)
                chains_at = ffi.new("ik_ffi_chain *[?]", cap)
                targets_at = ffi.new("double[?]", 3 * cap)
                results_at = ffi.new("ik_ffi_result[?]", cap)
                ints_at, doubles_at = ffi.cast("int *", results_at), ffi.cast("double *", results_at)
            end
            for k = 1, n do
                local c = chains[k]
                local p = chain_of[c]
                if p == nil or (k > 1 and dim_of[c] ~= dim) then
                    ok = false
                    break
                end
                dim = dim_of[c]
                chains_at[k - 1] = p
            end
            if ok and targets then
                for k = 1, n * dim do
                    local v = targets[k]
                    if not is_coord(v) then
                        ok = false
                        break
                    end
                    targets_at[k - 1] = v + 0.0
                end
            end
            if ok and api_solve_many(chains_at, n, targets and targets_at or nil, count_at, results_at, failed_at) == 0 then
                for k = 1, n do
                    if reached then rawset(reached, k, ints_at[(k - 1) * INTS + REACHED] ~= 0) end
                    if distances then rawset(distances, k, doubles_at[(k - 1) * DOUBLES + DISTANCE]) end
                    if iterations then rawset(iterations, k, ints_at[(k - 1) * INTS + ITERATIONS]) end
                end
                return count_at[0]
            end
        end
        local a = rethrow("solve_many", pcall(slow, chains, targets, reached, distances, iterations, ...))
        return a
    end
end

do
    local slow = core.two_bone
    core.two_bone = function(l1, l2, x, y, bend, ...)
        if type(l1) == "number" and type(l2) == "number" and type(x) == "number" and type(y) == "number"
            and (bend == nil or bend == 1 or bend == -1)
            and api_two_bone(l1 + 0.0, l2 + 0.0, x + 0.0, y + 0.0, bend or 1, out, out2, flag) == 0 then
            return out[0], out2[0], flag[0] ~= 0
        end
        local a, b, c = rethrow("two_bone", pcall(slow, l1, l2, x, y, bend, ...))
        return a, b, c
    end
end

return core
