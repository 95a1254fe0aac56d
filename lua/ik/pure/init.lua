-- ik.pure: the API of the C module ik.core in plain Lua (5.1 to 5.5, LuaJIT), for hosts that
-- cannot load a C module. This file is src/ik_lua.c's counterpart: the same argument checks
-- in the same order, the same messages, the same values returned (counts and indices
-- integers, coordinates floats); the work is done by the files beside it, which mirror
-- src/ file for file (math.lua is ik_math.h, chain.lua chain.c, limits.lua limits.c,
-- escape.lua escape.c, two_bone.lua two_bone.c, aim.lua aim.c, goal.lua goal.c, fabrik.lua
-- fabrik.c, ccd.lua ccd.c, relax.lua relax.c, sweep.lua sweep.c, joint_space.lua
-- joint_space.c, solve.lua solve.c; batch.c's lanes are not needed: see solve.lua; rig.lua
-- rig.c, with rig_tree.lua, rig_fabrik.lua, rig_relax.lua, rig_joint.lua; motion.lua
-- motion.c, gait.lua gait.c), so the results are the C core's, bit for bit where the VM
-- computes in IEEE doubles with the same libm.
--
-- Ported: all of ik_lua.c: ik.chain2d, ik.chain3d, ik.chain2d_points, ik.chain3d_points,
-- the stateless solves (two_bone, two_bone_joint, two_bone_middle, two_bone_joint3,
-- two_bone_middle3, soft_distance), ik.solve_many, ik.rig, ik.gait, _VERSION, backend
-- ("lua"); the chain methods count, dim, reach, joint, effector, positions, set_points,
-- length, set_length, weight, set_weight, base, set_base, angle, set_angle, world_angle,
-- angles, set_angles, rotation, set_rotation, world_rotation, rotations, set_rotations,
-- set_limit, limit, set_hinge, set_cone, set_twist, clear_limit, stretch_factor,
-- configure, settings, set_target, target, goal_error, clear_target, set_target_angle,
-- target_angle, set_target_rotation, target_rotation, attach, detach, parent, attach_tip,
-- detach_tip, tip_parent, clone, solve (every solver), solve_fabrik, solve_ccd,
-- solve_relax, solve_two_bone, solve_aim, drag, simulate, set_rest, __len, __tostring; the
-- rig methods count, chain_count, chain, configure, settings, solve, __len, __tostring; the
-- gait methods update, foot, reset, count, __len, __tostring. Not ported: ik._ffi (LuaJIT's
-- FFI fast paths of the C module: nothing to speed up here).
--
-- A chain is a handle: a table whose metatable is private (getmetatable gives "ik.chain",
-- as for the C module's userdata) and which holds the core's chain (chain.lua) under a
-- private key. The handle's array part holds n values so that #chain is n where __len is
-- not consulted for tables (Lua 5.1, LuaJIT). A C chain handed to this module is refused
-- as any other foreign value is ("ik chain expected, got userdata"), and a pure chain by
-- the C module ("got table").
--
-- Errors are raised as luaL_argerror raises them, the function named as the call site
-- names it (see arg_error). Every function of the API takes its arguments as `...`, so
-- that a missing argument ("no value") is told from a nil one, as the C API tells them,
-- and checks them one statement at a time, in the C's order. No function of the API ends
-- in a tail call that can raise an error: the error names the API function's frame.

local chain = require("ik.pure.chain")
local limits = require("ik.pure.limits")
local goal = require("ik.pure.goal")
local two_bone = require("ik.pure.two_bone")
local solve = require("ik.pure.solve")
local rig = require("ik.pure.rig")
local motion = require("ik.pure.motion")
local gait = require("ik.pure.gait")

local type, select, rawget, rawset, rawequal, next = type, select, rawget, rawset, rawequal, next
local pcall, tostring = pcall, tostring
local error, setmetatable, format = error, setmetatable, string.format
local floor, abs, sqrt = math.floor, math.abs, math.sqrt
local fmax = require("ik.pure.math").fmax
local rawlen = rawlen or function(t) return #t end -- 5.1, LuaJIT: # is raw on tables
local getinfo = debug and debug.getinfo
local getmetatable_raw = debug and debug.getmetatable or getmetatable

local status_string = chain.status_string
local OK, MAX_COORD, MAX_BONES = chain.OK, chain.MAX_COORD, chain.MAX_BONES

-- pi as a double, the default hinge range; the same value as math.pi.
local PI = 3.14159265358979323846

local MT = {}         -- the chains' metatable
local methods = {}    -- its __index
local CORE = {}       -- the key under which a handle holds its chain
local GAIT_MT = {}    -- the gaits' metatable
local gait_methods = {} -- its __index
local GAIT = {}       -- the key under which a gait's handle holds its gait
local api = {}        -- every function of the API: arg_error looks for its frame

local ik = {}

-- ---- arguments ----

-- Where luaL_argerror looks for a function's name when the call site gives none: Lua 5.1
-- and LuaJIT nowhere ("?"), 5.2 the global table, 5.3 and later the loaded modules (two
-- levels deep, "_G." dropped).
local version = _VERSION
local function findfield(obj, t, level)
    if level == 0 or type(t) ~= "table" then return nil end
    for k, v in next, t do
        if type(k) == "string" then
            if rawequal(v, obj) then return k end
            local name = findfield(obj, v, level - 1)
            if name then return k .. "." .. name end
        end
    end
    return nil
end

local function global_name(f)
    if version == "Lua 5.1" or type(jit) == "table" then return nil end
    if version == "Lua 5.2" then return findfield(f, _G, 2) end
    local name = package and findfield(f, package.loaded, 2)
    if name and name:sub(1, 3) == "_G." then name = name:sub(4) end
    return name
end

-- luaL_argerror: "bad argument #arg to 'name' (message)", with the position of the Lua code
-- that called the function of the API. As the C API does: a method call ("method" in the
-- debug information) does not count self, and a bad self reads "calling 'name' on bad
-- self"; with no name from the call site, global_name or "?". The frame of the API function
-- is found by looking for it, so helpers may call this at any depth.
-- The frame of the function of the API that is running: its level as the caller of
-- api_frame counts (1: the caller itself) and its debug information; nil when not found.
local function api_frame()
    if not getinfo then return nil end
    local level = 3
    local info = getinfo(level, "nf")
    while info and not api[info.func] do
        level = level + 1
        info = getinfo(level, "nf")
    end
    if info == nil then return nil end
    return level - 1, info
end

local function arg_error(arg, message)
    local level, info = api_frame()
    if info == nil then error(format("bad argument #%d (%s)", arg, message), 2) end
    local name = info.name
    if info.namewhat == "method" then
        arg = arg - 1
        if arg == 0 then error(format("calling '%s' on bad self (%s)", name, message), level + 1) end
    end
    if name == nil then name = global_name(info.func) or "?" end
    error(format("bad argument #%d to '%s' (%s)", arg, name, message), level + 1)
end

-- An error that is not an argument's: raised, as arg_error raises, at the position of the
-- Lua code that called the function of the API.
local function api_error(message)
    local level = api_frame()
    error(message, level and level + 1 or 2)
end

-- The chain of the handle v, or nil when v is not one.
local function to_chain(v)
    if type(v) ~= "table" then return nil end
    return rawget(v, CORE)
end

local to_rig
-- The gait of the handle v, or nil when v is not one.
local function to_gait(v)
    if type(v) ~= "table" then return nil end
    return rawget(v, GAIT)
end

-- A new handle of metatable mt holding o under key, with n values in its array part.
local function make_handle(mt, key, o, n)
    local h = { [key] = o }
    for k = 1, n do h[k] = true end
    return setmetatable(h, mt)
end

-- A value's type as the C module sees it: a chain, a rig or a gait is userdata, as the C
-- module's are (so one where a table is expected is refused, and named, alike).
local function typeof(v)
    if to_chain(v) or to_rig(v) or to_gait(v) then return "userdata" end
    return type(v)
end

-- luaL_typename of argument arg, given the number of arguments top.
local function typename(v, arg, top)
    if arg > top then return "no value" end
    return typeof(v)
end

local function type_error(arg, expected, v, top)
    arg_error(arg, expected .. " expected, got " .. typename(v, arg, top))
end

-- What the handle v holds (to: to_chain or to_gait), or the error "<expected> expected".
local function check_handle(to, expected, v, arg, top)
    local o = to(v)
    if o == nil then type_error(arg, expected, v, top) end
    return o
end

local function check_chain(v, arg, top) return check_handle(to_chain, "ik chain", v, arg, top) end

-- The 2D (3D) methods refuse a chain of the other dimension before reading arguments.
local function check_chain_dim(v, top, dim)
    local c = check_chain(v, 1, top)
    if c.dim ~= dim then
        arg_error(1, dim == 2 and "a 2D chain expected (this one is 3D)" or "a 3D chain expected (this one is 2D)")
    end
    return c
end

local function check_status(status, arg)
    if status ~= OK then arg_error(arg, status_string(status)) end
end

-- NaN and the infinities are not whole.
local function is_whole(v) return v - v == 0 and v == floor(v) end

-- A number, never a string that looks like one; -0 becomes +0.
local function check_number(v, arg, top)
    if type(v) ~= "number" then type_error(arg, "number", v, top) end
    return v + 0.0
end

local function check_real(v, arg, top)
    v = check_number(v, arg, top)
    if not (v - v == 0) then arg_error(arg, "number has no finite value") end
    return v
end

local function opt_real(v, arg, top, def)
    if v == nil then return def end
    return check_real(v, arg, top)
end

-- A base or target coordinate: finite and within MAX_COORD (the core's range).
local function check_coord(v, arg, top)
    v = check_real(v, arg, top)
    if v > MAX_COORD or v < -MAX_COORD then arg_error(arg, status_string(chain.ERR_RANGE)) end
    return v
end

local function opt_coord(v, arg, top)
    if v == nil then return 0.0 end
    return check_coord(v, arg, top)
end

-- A 1-based index in 1..count; returns it 0-based (an integer), for the core.
local function check_index(v, arg, top, count)
    v = check_number(v, arg, top)
    if not is_whole(v) then arg_error(arg, "number has no integer representation") end
    if v < 1 or v > count then arg_error(arg, "index out of range") end
    return floor(v) - 1
end

local function opt_bend(v, arg, top)
    if v == nil then return 1 end
    v = check_number(v, arg, top)
    if not is_whole(v) then arg_error(arg, "number has no integer representation") end
    if v ~= 1 and v ~= -1 then arg_error(arg, status_string(chain.ERR_BEND)) end
    return floor(v)
end

local function check_length(v, arg, top)
    v = check_real(v, arg, top)
    if v < 0 then arg_error(arg, status_string(chain.ERR_NEGATIVE)) end
    return v
end

-- Nothing at arg or after it (the arguments from 1 on are ...), as a call that takes fewer
-- arguments expects (nil is fine).
local function check_no_more(from, why, ...)
    for k = from, select("#", ...) do
        if select(k, ...) ~= nil then arg_error(k, why) end
    end
end

-- Whether an optional quaternion is given: any of its four values not nil. Given in part,
-- check_quat then names the first missing one.
local function quat_given(w, x, y, z) return w ~= nil or x ~= nil or y ~= nil or z ~= nil end

-- Four finite numbers from argument arg on: a quaternion w, x, y, z (the core normalises).
local function check_quat(arg, top, w, x, y, z)
    w = check_real(w, arg, top)
    x = check_real(x, arg + 1, top)
    y = check_real(y, arg + 2, top)
    z = check_real(z, arg + 3, top)
    return w, x, y, z
end

-- Whether the table t has an __index metamethod: read raw, it would look empty.
local function is_proxy(t)
    local mt = getmetatable_raw(t)
    return type(mt) == "table" and rawget(mt, "__index") ~= nil
end

-- A table to read (raw): one with an __index metamethod would read as empty, so no.
local function check_input_table(v, arg, top)
    if typeof(v) ~= "table" then type_error(arg, "table", v, top) end
    if is_proxy(v) then arg_error(arg, "a plain table expected (this one has an __index metamethod)") end
end

-- The table to fill, or a new one when v is nil.
local function out_table(v, arg, top)
    if v == nil then return {} end
    if typeof(v) ~= "table" then type_error(arg, "table or nil", v, top) end
    return v
end

-- Element k of the array t at arg (read raw) as a finite number; what names the element.
local function check_element(t, arg, k, what)
    local v = rawget(t, k)
    if type(v) ~= "number" then arg_error(arg, format("%s %d: number expected, got %s", what, k, typeof(v))) end
    v = v + 0.0
    if not (v - v == 0) then arg_error(arg, format("%s %d: number has no finite value", what, k)) end
    return v
end

-- Sets t[k] = nil for k = from, from + 1, ... while they are not nil (a reused table).
local function clear_tail(t, from)
    local k = from
    while rawget(t, k) ~= nil do
        rawset(t, k, nil)
        k = k + 1
    end
end

-- A C string of s, as lua_pushfstring's %s prints one: up to its first zero byte.
local function c_string(s)
    local z = s:find("\0", 1, true)
    if z then return s:sub(1, z - 1) end
    return s
end

-- ---- module: stateless solves ----

function ik.two_bone(...)
    local top = select("#", ...)
    local l1, l2, x, y, bend = ...
    l1 = check_length(l1, 1, top)
    l2 = check_length(l2, 2, top)
    x = check_real(x, 3, top)
    y = check_real(y, 4, top)
    bend = opt_bend(bend, 5, top)
    local st, a1, a2, reached = two_bone.two_bone(l1, l2, x, y, bend)
    check_status(st, 1)
    return a1, a2, reached
end

-- The vector forms: the middle joint. The two lengths are arguments l_at and l_at + 1, the
-- target the others of the first dim + 2 (ik.two_bone_middle: lengths first; the old
-- ik.two_bone_joint: target first); each is checked in the order given. Returns l1, l2
-- and the target's dim coordinates.
local function two_bone_args(dim, l_at, top, ...)
    local l1, l2, t1, t2, t3 = 0.0, 0.0, nil, nil, nil
    local t = 0
    for arg = 1, dim + 2 do
        local v = select(arg, ...)
        if arg == l_at then
            l1 = check_length(v, arg, top)
        elseif arg == l_at + 1 then
            l2 = check_length(v, arg, top)
        else
            t = t + 1
            v = check_real(v, arg, top)
            if t == 1 then t1 = v elseif t == 2 then t2 = v else t3 = v end
        end
    end
    return l1, l2, t1, t2, t3
end

local function two_bone_vector2(l_at, ...)
    local top = select("#", ...)
    local l1, l2, x, y = two_bone_args(2, l_at, top, ...)
    local bend = opt_bend((select(5, ...)), 5, top)
    local st, jx, jy, reached = two_bone.two_bone_middle(l1, l2, x, y, bend)
    check_status(st, 1)
    return jx, jy, reached
end

local function two_bone_vector3(l_at, ...)
    local top = select("#", ...)
    local l1, l2, x, y, z = two_bone_args(3, l_at, top, ...)
    local _, _, _, _, _, px, py, pz = ...
    px = check_real(px, 6, top)
    py = check_real(py, 7, top)
    pz = check_real(pz, 8, top)
    local st, jx, jy, jz, reached = two_bone.two_bone_middle3(l1, l2, x, y, z, px, py, pz)
    check_status(st, 1)
    return jx, jy, jz, reached
end

function ik.two_bone_middle(...)
    local jx, jy, reached = two_bone_vector2(1, ...)
    return jx, jy, reached
end

function ik.two_bone_middle3(...)
    local jx, jy, jz, reached = two_bone_vector3(1, ...)
    return jx, jy, jz, reached
end

function ik.two_bone_joint(...)
    local jx, jy, reached = two_bone_vector2(3, ...)
    return jx, jy, reached
end

function ik.two_bone_joint3(...)
    local jx, jy, jz, reached = two_bone_vector3(4, ...)
    return jx, jy, jz, reached
end

function ik.soft_distance(...)
    local top = select("#", ...)
    local d, reach, softness = ...
    d = check_length(d, 1, top)
    reach = check_length(reach, 2, top)
    softness = check_length(softness, 3, top)
    return (solve.soft_distance(d, reach, softness))
end

-- ---- construction ----

-- The handle of a new chain c.
local function new_handle(c)
    c.box = make_handle(MT, CORE, c, c.n)
    return c.box
end

-- Reads n = #t lengths from the table t at arg: the array (0-based) and n.
local function read_lengths(t, arg, top)
    check_input_table(t, arg, top)
    local n = rawlen(t)
    if n < 1 then arg_error(arg, status_string(chain.ERR_COUNT)) end
    if n > MAX_BONES then arg_error(arg, status_string(chain.ERR_TOO_LARGE)) end
    local lengths = {}
    for k = 1, n do
        local v = check_element(t, arg, k, "length")
        if v < 0 then arg_error(arg, format("length %d is negative", k)) end
        if v > MAX_COORD then arg_error(arg, format("length %d: %s", k, status_string(chain.ERR_RANGE))) end
        lengths[k - 1] = v
    end
    return lengths, n
end

-- ik.chain2d(lengths [, x, y [, angle]]) and ik.chain3d(lengths [, x, y, z [, w, qx, qy, qz]]).
local function new_chain(dim, ...)
    local top = select("#", ...)
    local t, x, y, z, w, qx, qy, qz = ...
    if dim == 2 then
        check_no_more(5, "no value expected (chain2d takes lengths, x, y, angle)", ...)
    else
        check_no_more(9, "no value expected (chain3d takes lengths, x, y, z, w, qx, qy, qz)", ...)
    end
    top = dim == 2 and 5 or 9 -- the C's lua_settop: the arguments up to there are nil, not none
    local lengths, n = read_lengths(t, 1, top)
    x = opt_coord(x, 2, top)
    y = opt_coord(y, 3, top)
    local rotated = false
    if dim == 2 then
        z = opt_real(z, 4, top, 0.0)
    else
        z = opt_coord(z, 4, top)
        rotated = quat_given(w, qx, qy, qz)
        if rotated then
            w, qx, qy, qz = check_quat(5, top, w, qx, qy, qz)
            if w == 0 and qx == 0 and qy == 0 and qz == 0 then arg_error(5, status_string(chain.ERR_ZERO_ROTATION)) end
        end
    end
    local st, c
    if dim == 2 then
        st, c = chain.chain2d_create(n, lengths)
        check_status(st, 1)
        check_status(chain.chain2d_set_base(c, x, y, z), 2)
    else
        st, c = chain.chain3d_create(n, lengths)
        check_status(st, 1)
        if rotated then
            check_status(chain.chain3d_set_base(c, x, y, z, w, qx, qy, qz), 2)
        else
            check_status(chain.chain3d_set_base(c, x, y, z), 2)
        end
    end
    return new_handle(c)
end

function ik.chain2d(...) return (new_chain(2, ...)) end
function ik.chain3d(...) return (new_chain(3, ...)) end

-- The points the core poses a chain along (0-based), reused from call to call.
local points_scratch = {}

-- Element k of the table t at arg as a coordinate: finite, and within MAX_COORD.
local function check_point(t, arg, k)
    local v = check_element(t, arg, k, "coordinate")
    if abs(v) > MAX_COORD then arg_error(arg, format("coordinate %d: %s", k, status_string(chain.ERR_RANGE))) end
    return v
end

-- ik.chain2d_points(points) and ik.chain3d_points(points): a chain through the joint
-- positions {x1, y1, [z1,] x2, ...}: its lengths the distances, its base on the first point
-- (2D: base angle 0; 3D: the identity), each bone along its segment.
local function new_chain_points(dim, t)
    local top = 1 -- the C's lua_settop(L, 1): what follows is not looked at
    check_input_table(t, 1, top)
    local count = rawlen(t)
    if count % dim ~= 0 then arg_error(1, format("%d numbers a point expected, got %d numbers", dim, count)) end
    if count < 2 * dim then arg_error(1, "at least two points expected") end
    if count / dim - 1 > MAX_BONES then arg_error(1, status_string(chain.ERR_TOO_LARGE)) end
    local n = floor(count / dim) - 1
    local points, lengths = {}, {}
    for k = 0, count - 1 do points[k] = check_point(t, 1, k + 1) end
    for k = 0, n - 1 do
        local sum, scale = 0.0, 0.0
        -- the distance, scaled first so coordinates near 1e300 do not overflow
        for d = 0, dim - 1 do scale = fmax(scale, abs(points[dim * (k + 1) + d] - points[dim * k + d])) end
        for d = 0, scale > 0 and dim - 1 or -1 do
            local v = (points[dim * (k + 1) + d] - points[dim * k + d]) / scale
            sum = sum + v * v
        end
        lengths[k] = scale * sqrt(sum)
        if not (lengths[k] <= MAX_COORD) then
            arg_error(1, format("segment %d: %s", k + 1, status_string(chain.ERR_RANGE)))
        end
    end
    local st, c
    if dim == 2 then st, c = chain.chain2d_create(n, lengths) else st, c = chain.chain3d_create(n, lengths) end
    check_status(st, 1)
    check_status(limits.chain_set_points(c, points), 1)
    return new_handle(c)
end

function ik.chain2d_points(...) return (new_chain_points(2, (...))) end
function ik.chain3d_points(...) return (new_chain_points(3, (...))) end

-- chain:clone(): a chain that behaves exactly as this one (its parent and tip hold too;
-- not its children).
function methods.clone(...)
    local c = check_chain((...), 1, select("#", ...))
    local st, copy = chain.chain_copy(c)
    check_status(st, 1)
    return new_handle(copy)
end

-- ---- methods: shape and pose ----

function methods.count(...)
    return check_chain((...), 1, select("#", ...)).n
end

function methods.dim(...)
    return check_chain((...), 1, select("#", ...)).dim
end

function methods.reach(...)
    return check_chain((...), 1, select("#", ...)).reach
end

local function chain_tostring(...)
    local c = check_chain((...), 1, select("#", ...))
    return format("ik.chain%dd(%d bone%s)", c.dim, c.n, c.n == 1 and "" or "s")
end

local function push_joint(c, joint)
    local p, dim = chain.chain_positions(c), c.dim
    local k = joint * dim
    if dim == 2 then return p[k], p[k + 1] end
    return p[k], p[k + 1], p[k + 2]
end

function methods.joint(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain(h, 1, top)
    return push_joint(c, check_index(i, 2, top, c.n + 1))
end

function methods.effector(...)
    local c = check_chain((...), 1, select("#", ...))
    return push_joint(c, c.n)
end

function methods.positions(...)
    local top = select("#", ...)
    local h, out = ...
    local c = check_chain(h, 1, top)
    local count = (c.n + 1) * c.dim
    out = out_table(out, 2, top)
    local p = chain.chain_positions(c)
    for k = 1, count do rawset(out, k, p[k - 1]) end
    clear_tail(out, count + 1) -- a table reused from a longer chain keeps no tail
    return out
end

function methods.set_points(...)
    local top = select("#", ...)
    local h, t = ...
    local c = check_chain(h, 1, top)
    local count = (c.n + 1) * c.dim
    check_input_table(t, 2, top)
    if rawlen(t) ~= count then
        arg_error(2, format("%d numbers expected (%d joints), got %d", count, c.n + 1, rawlen(t)))
    end
    local points = points_scratch
    for k = 0, count - 1 do points[k] = check_element(t, 2, k + 1, "coordinate") end
    check_status(limits.chain_set_points(c, points), 2)
end

function methods.length(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain(h, 1, top)
    local st, length = chain.chain_length(c, check_index(i, 2, top, c.n))
    check_status(st, 2)
    return length
end

function methods.set_length(...)
    local top = select("#", ...)
    local h, i, length = ...
    local c = check_chain(h, 1, top)
    local bone = check_index(i, 2, top, c.n)
    check_status(chain.chain_set_length(c, bone, check_real(length, 3, top)), 3)
end

function methods.weight(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain(h, 1, top)
    local st, weight = chain.chain_weight(c, check_index(i, 2, top, c.n + 1))
    check_status(st, 2)
    return weight
end

function methods.set_weight(...)
    local top = select("#", ...)
    local h, i, weight = ...
    local c = check_chain(h, 1, top)
    local joint = check_index(i, 2, top, c.n + 1)
    check_status(chain.chain_set_weight(c, joint, check_real(weight, 3, top)), 3)
end

-- 2D: x, y, angle; 3D: x, y, z, w, qx, qy, qz.
local function base_of(c, arg)
    if c.dim == 2 then
        local st, x, y, angle = chain.chain2d_base(c)
        check_status(st, arg)
        return x, y, angle
    end
    local st, x, y, z, w, qx, qy, qz = chain.chain3d_base(c)
    check_status(st, arg)
    return x, y, z, w, qx, qy, qz
end

function methods.base(...)
    local c = check_chain((...), 1, select("#", ...))
    local x, y, z, w, qx, qy, qz = base_of(c, 1)
    if c.dim == 2 then return x, y, z end
    return x, y, z, w, qx, qy, qz
end

local function check_free(c)
    if c.parent then arg_error(1, "the chain hangs on a parent, which places its base (detach it first)") end
end

-- 2D: set_base(x, y [, angle]); 3D: set_base(x, y, z [, w, qx, qy, qz]).
function methods.set_base(...)
    local top = select("#", ...)
    local h, x, y, z, w, qx, qy, qz = ...
    local c = check_chain(h, 1, top)
    if c.dim == 2 then
        x = check_coord(x, 2, top)
        y = check_coord(y, 3, top)
        local _, _, angle = base_of(c, 1)
        if z ~= nil then angle = check_real(z, 4, top) end
        if top >= 5 then check_no_more(5, "no value expected (a 2D base is x, y, angle)", ...) end
        check_free(c)
        check_status(chain.chain2d_set_base(c, x, y, angle), 2)
        return
    end
    x = check_coord(x, 2, top)
    y = check_coord(y, 3, top)
    z = check_coord(z, 4, top)
    local rotated = quat_given(w, qx, qy, qz)
    if rotated then w, qx, qy, qz = check_quat(5, top, w, qx, qy, qz) end
    if top >= 9 then check_no_more(9, "no value expected (a 3D base is x, y, z, w, qx, qy, qz)", ...) end
    check_free(c)
    if rotated then
        check_status(chain.chain3d_set_base(c, x, y, z, w, qx, qy, qz), 5)
    else
        check_status(chain.chain3d_set_base(c, x, y, z), 5)
    end
end

function methods.angle(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain_dim(h, top, 2)
    local st, angle = chain.chain2d_angle(c, check_index(i, 2, top, c.n))
    check_status(st, 2)
    return angle
end

function methods.set_angle(...)
    local top = select("#", ...)
    local h, i, angle = ...
    local c = check_chain_dim(h, top, 2)
    local bone = check_index(i, 2, top, c.n)
    check_status(chain.chain2d_set_angle(c, bone, check_real(angle, 3, top)), 3)
end

function methods.world_angle(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain_dim(h, top, 2)
    local bone = check_index(i, 2, top, c.n)
    local st, angle = chain.chain2d_world_angle(c, bone)
    check_status(st, 2)
    return angle
end

-- 2D angles(out) / 3D rotations(out): every local angle, or every rotation (w, x, y, z each).
local function chain_angles(dim, ...)
    local top = select("#", ...)
    local h, out = ...
    local c = check_chain_dim(h, top, dim)
    local n = c.n
    out = out_table(out, 2, top)
    for i = 0, n - 1 do
        if dim == 2 then
            local _, a = chain.chain2d_angle(c, i)
            rawset(out, i + 1, a)
        else
            local _, w, x, y, z = chain.chain3d_rotation(c, i)
            rawset(out, 4 * i + 1, w)
            rawset(out, 4 * i + 2, x)
            rawset(out, 4 * i + 3, y)
            rawset(out, 4 * i + 4, z)
        end
    end
    clear_tail(out, (dim == 2 and n or 4 * n) + 1)
    return out
end

-- 2D set_angles(t) / 3D set_rotations(t): every bone at once, from t[1..n] (angles) or
-- t[1..4n] (quaternions). All are checked first, so a bad one changes nothing.
local function chain_set_angles(dim, ...)
    local top = select("#", ...)
    local h, t = ...
    local c = check_chain_dim(h, top, dim)
    local n, per = c.n, dim == 2 and 1 or 4
    local want = n * per
    check_input_table(t, 2, top)
    if rawlen(t) ~= want then
        arg_error(2, format("%d numbers expected (%s), got %d", want,
            dim == 2 and "an angle a bone" or "w, x, y, z a bone", rawlen(t)))
    end
    for k = 1, want do check_element(t, 2, k, dim == 2 and "angle" or "number") end
    for i = 0, per == 4 and n - 1 or -1 do
        local w, x = check_element(t, 2, 4 * i + 1, "number"), check_element(t, 2, 4 * i + 2, "number")
        local y, z = check_element(t, 2, 4 * i + 3, "number"), check_element(t, 2, 4 * i + 4, "number")
        if w == 0 and x == 0 and y == 0 and z == 0 then
            arg_error(2, format("rotation %d: %s", i + 1, status_string(chain.ERR_ZERO_ROTATION)))
        end
    end
    for i = 0, n - 1 do
        if dim == 2 then
            check_status(chain.chain2d_set_angle(c, i, check_element(t, 2, i + 1, "angle")), 2)
        else
            local w, x = check_element(t, 2, 4 * i + 1, "number"), check_element(t, 2, 4 * i + 2, "number")
            local y, z = check_element(t, 2, 4 * i + 3, "number"), check_element(t, 2, 4 * i + 4, "number")
            check_status(chain.chain3d_set_rotation(c, i, w, x, y, z), 2)
        end
    end
end

function methods.angles(...) return (chain_angles(2, ...)) end
function methods.rotations(...) return (chain_angles(3, ...)) end
function methods.set_angles(...) chain_set_angles(2, ...) end
function methods.set_rotations(...) chain_set_angles(3, ...) end

function methods.rotation(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain_dim(h, top, 3)
    local st, w, x, y, z = chain.chain3d_rotation(c, check_index(i, 2, top, c.n))
    check_status(st, 2)
    return w, x, y, z
end

function methods.set_rotation(...)
    local top = select("#", ...)
    local h, i, w, x, y, z = ...
    local c = check_chain_dim(h, top, 3)
    local bone = check_index(i, 2, top, c.n)
    w, x, y, z = check_quat(3, top, w, x, y, z)
    check_status(chain.chain3d_set_rotation(c, bone, w, x, y, z), 3)
end

function methods.world_rotation(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain_dim(h, top, 3)
    local bone = check_index(i, 2, top, c.n)
    local st, w, x, y, z = chain.chain3d_world_rotation(c, bone)
    check_status(st, 2)
    return w, x, y, z
end

-- ---- methods: joint limits ----

-- A bound of a limit's range: a finite number within [-pi, pi].
local function check_bound(v, arg, top)
    v = check_real(v, arg, top)
    if v < -PI or v > PI then arg_error(arg, status_string(chain.ERR_LIMIT_RANGE)) end
    return v
end

local function opt_bound(v, arg, top, def)
    if v == nil then return def end
    return check_bound(v, arg, top)
end

-- 2D set_limit(i, min, max) and 3D set_twist(i, min, max): a range on bone i, by set.
local function set_range(dim, set, ...)
    local top = select("#", ...)
    local h, i, min, max = ...
    local c = check_chain_dim(h, top, dim)
    local bone = check_index(i, 2, top, c.n)
    min = check_bound(min, 3, top)
    max = check_bound(max, 4, top)
    -- Both bounds are in range: what is left is min > max, blamed on min.
    check_status(set(c, bone, min, max), 3)
end

function methods.set_limit(...) set_range(2, limits.chain2d_set_limit, ...) end

-- 2D: min, max of bone i's limit, or nothing when it has none. 3D: "hinge", ax, ay, az,
-- min, max; or "cone", half_angle, twist_min, twist_max (pi, and -pi, pi, where a cone or a
-- twist limit is not set); nothing when the bone has no limit.
function methods.limit(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain(h, 1, top)
    local bone = check_index(i, 2, top, c.n)
    if c.dim == 2 then
        local st, has, min, max = limits.chain2d_limit(c, bone)
        check_status(st, 2)
        if not has then return end
        return min, max
    end
    local st, hinge, ax, ay, az, min, max, cone, half_angle, twist, twist_min, twist_max = limits.chain3d_limit(c, bone)
    check_status(st, 2)
    if hinge then return "hinge", ax, ay, az, min, max end
    if not cone and not twist then return end
    return "cone", half_angle, twist_min, twist_max
end

function methods.set_hinge(...)
    local top = select("#", ...)
    local h, i, ax, ay, az, min, max = ...
    local c = check_chain_dim(h, top, 3)
    local bone = check_index(i, 2, top, c.n)
    ax = check_real(ax, 3, top)
    ay = check_real(ay, 4, top)
    az = check_real(az, 5, top)
    min = opt_bound(min, 6, top, -PI)
    max = opt_bound(max, 7, top, PI)
    local st = limits.chain3d_set_hinge(c, bone, ax, ay, az, min, max)
    check_status(st, st == chain.ERR_AXIS and 3 or 6)
end

function methods.set_cone(...)
    local top = select("#", ...)
    local h, i, half_angle = ...
    local c = check_chain_dim(h, top, 3)
    local bone = check_index(i, 2, top, c.n)
    check_status(limits.chain3d_set_cone(c, bone, check_real(half_angle, 3, top)), 3)
end

function methods.set_twist(...) set_range(3, limits.chain3d_set_twist, ...) end

function methods.clear_limit(...)
    local top = select("#", ...)
    local h, i = ...
    local c = check_chain(h, 1, top)
    check_status(limits.chain_clear_limit(c, check_index(i, 2, top, c.n)), 2)
end

function methods.stretch_factor(...)
    return chain.chain_stretch_factor(check_chain((...), 1, select("#", ...)))
end

-- ---- methods: settings ----

-- The value of a settings entry, checked: errors blame argument 2.
local function setting_number(key, v)
    if type(v) ~= "number" then arg_error(2, format("%s: number expected, got %s", c_string(key), typeof(v))) end
    return v + 0.0
end

local INT_MAX, INT_MIN = 2147483647, -2147483648

local function setting_whole(key, v)
    if type(v) ~= "number" then arg_error(2, format("%s: integer expected, got %s", c_string(key), typeof(v))) end
    if not is_whole(v) then arg_error(2, format("%s: number has no integer representation", c_string(key))) end
    if v > INT_MAX then arg_error(2, format("%s: number too large", c_string(key))) end
    if v < INT_MIN then return INT_MIN end
    return floor(v)
end

local function setting_boolean(key, v)
    if type(v) ~= "boolean" then arg_error(2, format("%s: boolean expected, got %s", c_string(key), typeof(v))) end
    return v
end

local function setting_solver(v)
    if type(v) ~= "string" then arg_error(2, format("solver: string expected, got %s", typeof(v))) end
    local st, solver = chain.solver_parse(v) -- a string with a zero byte is no solver's name
    if st ~= OK then arg_error(2, status_string(chain.ERR_SOLVER)) end
    return solver
end

local number_keys = {
    tolerance = true, angle_tolerance = true, greed = true, mix = true, softness = true,
    max_turn = true, effector_weight = true, stiffness = true, damping = true,
}
local boolean_keys = { greed_ramp = true, escape = true, stretch = true }

-- Reads the entry key = v into the settings s. Out-of-range numbers that fit the field are
-- left for chain_configure to reject, so its messages are the only ones.
local function read_setting(c, s, key, v)
    if type(key) ~= "string" then arg_error(2, format("keys must be strings, got %s", typeof(key))) end
    if key == "iterations" then
        s.iterations = setting_whole(key, v)
    elseif number_keys[key] then
        s[key] = setting_number(key, v)
    elseif boolean_keys[key] then
        s[key] = setting_boolean(key, v)
    elseif key == "gravity" then
        local dim = c.dim
        local why = dim == 2 and "gravity: a table of 2 numbers expected" or "gravity: a table of 3 numbers expected"
        if typeof(v) ~= "table" or is_proxy(v) or rawlen(v) ~= dim then arg_error(2, why) end
        s.gravity_x, s.gravity_y, s.gravity_z = 0.0, 0.0, 0.0
        for k = 1, dim do
            local g = rawget(v, k)
            if type(g) ~= "number" then arg_error(2, why) end
            if k == 1 then s.gravity_x = g + 0.0 elseif k == 2 then s.gravity_y = g + 0.0 else s.gravity_z = g + 0.0 end
        end
    elseif key == "bend" then
        local b = setting_whole(key, v)
        if b ~= 1 and b ~= -1 then arg_error(2, status_string(chain.ERR_BEND)) end
        s.bend = b
    elseif key == "solver" then
        s.solver = setting_solver(v)
    elseif key == "pole" then
        if c.dim ~= 3 then arg_error(2, "pole is for 3D chains") end
        if v == false then
            s.use_pole = false
        elseif typeof(v) == "table" then
            if is_proxy(v) then arg_error(2, "pole: a plain table expected (this one has an __index metamethod)") end
            local p = {}
            for k = 1, 3 do
                p[k] = rawget(v, k)
                if type(p[k]) ~= "number" then arg_error(2, "pole: a table of 3 numbers expected") end
            end
            s.pole_x, s.pole_y, s.pole_z = p[1] + 0.0, p[2] + 0.0, p[3] + 0.0
            s.use_pole = true -- zero or non-finite: chain_configure says so
        else
            arg_error(2, format("pole: table or false expected, got %s", typeof(v)))
        end
    else
        arg_error(2, format("unknown key '%s'", c_string(key)))
    end
end

local scratch = chain.default_settings() -- configure parses into it

function methods.configure(...)
    local top = select("#", ...)
    local h, t = ...
    local c = check_chain(h, 1, top)
    top = top < 2 and 2 or top -- the C's lua_settop(L, 2)
    -- Parse into a copy: the chain changes only if the whole table is valid.
    local s = chain.copy_settings(scratch, chain.chain_settings(c))
    check_input_table(t, 2, top)
    for key, v in next, t do read_setting(c, s, key, v) end
    check_status(chain.chain_configure(c, s), 2)
    return h
end

function methods.settings(...)
    local top = select("#", ...)
    local h, out = ...
    local c = check_chain(h, 1, top)
    local s = chain.chain_settings(c)
    out = out_table(out, 2, top)
    out.solver = chain.solver_name(s.solver)
    out.iterations = s.iterations
    out.tolerance = s.tolerance
    out.angle_tolerance = s.angle_tolerance
    out.greed = s.greed
    out.greed_ramp = s.greed_ramp
    out.bend = s.bend
    out.escape = s.escape
    out.mix = s.mix
    out.softness = s.softness
    out.stretch = s.stretch
    out.max_turn = s.max_turn
    out.effector_weight = s.effector_weight
    out.stiffness = s.stiffness
    out.damping = s.damping
    if c.dim == 2 then
        out.gravity = { s.gravity_x, s.gravity_y }
        return out -- the pole is a 3D setting
    end
    out.gravity = { s.gravity_x, s.gravity_y, s.gravity_z }
    if s.use_pole then out.pole = { s.pole_x, s.pole_y, s.pole_z } else out.pole = false end
    return out
end

-- ---- methods: goals ----

-- dim target coordinates from argument 2 on; nothing after them, in 2D as in 3D.
local function check_target(c, top, ...)
    local _, x, y, z = ...
    x = check_coord(x, 2, top)
    y = check_coord(y, 3, top)
    if c.dim == 2 then
        if top >= 4 then check_no_more(4, "no value expected (a 2D chain takes x, y)", ...) end
        return x, y
    end
    z = check_coord(z, 4, top)
    if top >= 5 then check_no_more(5, "no value expected (a 3D chain takes x, y, z)", ...) end
    return x, y, z
end

function methods.set_target(...)
    local top = select("#", ...)
    local c = check_chain((...), 1, top)
    local x, y, z = check_target(c, top, ...)
    if c.tip_parent then arg_error(1, status_string(chain.ERR_HELD)) end
    check_status(chain.chain_set_target(c, x, y, z), 2)
end

function methods.target(...)
    local c = check_chain((...), 1, select("#", ...))
    local _, has, x, y, z = chain.chain_target(c)
    if not has then return nil end
    if c.dim == 2 then return x, y end
    return x, y, z
end

function methods.goal_error(...)
    local c = check_chain((...), 1, select("#", ...))
    local has, distance, angle_error = goal.chain_goal_error(c)
    if not has then return nil end
    return distance, angle_error
end

function methods.clear_target(...)
    local c = check_chain((...), 1, select("#", ...))
    chain.chain_detach_tip(c)
    chain.chain_clear_target(c)
end

function methods.set_target_angle(...)
    local top = select("#", ...)
    local h, angle = ...
    local c = check_chain_dim(h, top, 2)
    check_status(chain.chain2d_set_target_angle(c, check_real(angle, 2, top)), 2)
end

function methods.target_angle(...)
    local c = check_chain_dim((...), select("#", ...), 2)
    local _, has, angle = chain.chain2d_target_angle(c)
    if has then return angle end
    return nil
end

function methods.set_target_rotation(...)
    local top = select("#", ...)
    local h, w, x, y, z = ...
    local c = check_chain_dim(h, top, 3)
    w, x, y, z = check_quat(2, top, w, x, y, z)
    check_status(chain.chain3d_set_target_rotation(c, w, x, y, z), 2)
end

function methods.target_rotation(...)
    local c = check_chain_dim((...), select("#", ...), 3)
    local _, has, w, x, y, z = chain.chain3d_target_rotation(c)
    if not has then return nil end
    return w, x, y, z
end

-- ---- methods: motion over time ----

function methods.drag(...)
    local top = select("#", ...)
    local c = check_chain((...), 1, top)
    local x, y, z = check_target(c, top, ...)
    check_status(motion.chain_drag(c, x, y, z), 1)
end

-- A time step at argument 2 (the arguments from 1 on are ...): a finite number > 0, and
-- nothing after it (why: what the call takes).
local function check_dt(why, ...)
    local dt = check_number((select(2, ...)), 2, select("#", ...))
    if not (dt - dt == 0 and dt > 0) then arg_error(2, status_string(chain.ERR_TIME_STEP)) end
    check_no_more(3, why, ...)
    return dt
end

function methods.simulate(...)
    local c = check_chain((...), 1, select("#", ...))
    local dt = check_dt("no value expected (simulate takes dt)", ...)
    check_status(motion.chain_simulate(c, dt), 2)
end

function methods.set_rest(...)
    check_status(motion.chain_set_rest(check_chain((...), 1, select("#", ...))), 1)
end

-- ---- methods: solves ----

-- The result of the solve being made (a solve is never nested): one table, no garbage.
local result = { reached = false, distance = 0.0, angle_error = 0.0, iterations = 0 }

-- Whether the arguments from 2 on (the arguments from 1 on are ...) are all nil, or none.
local function all_nil(...)
    for k = 2, select("#", ...) do
        if select(k, ...) ~= nil then return false end
    end
    return true
end

-- chain:solve*(x, y[, z]) or, with no coordinates, towards the kept goal: reached, the
-- distance (an aim: the angle error) and the iterations.
local function solve_with(solver_solve, ...)
    local top = select("#", ...)
    local c = check_chain((...), 1, top)
    local st
    if all_nil(...) then
        st = solver_solve(c, nil, nil, nil, result) -- towards the kept goal
        if st == chain.ERR_NO_TARGET then arg_error(2, status_string(st)) end
    else
        local x, y, z = check_target(c, top, ...)
        if c.tip_parent then arg_error(1, status_string(chain.ERR_HELD)) end
        st = solver_solve(c, x, y, z, result)
    end
    -- Targets are checked above: what is left is the chain's (ERR_NOT_TWO_BONE).
    check_status(st, 1)
    return result.reached, result.distance, result.iterations
end

-- A solve method: solve_with with the core's entry point (no tail call: an error names
-- the method's frame).
local function solve_method(solver_solve)
    return function(...)
        -- The usual call, a 2D chain towards two numbers within range and nothing after
        -- them, without solve_with's calls (speed: under PUC Lua they cost as much as a
        -- short chain's solve); any other goes solve_with's way, which checks the same.
        local h, x, y = ...
        if select("#", ...) == 3 and type(x) == "number" and type(y) == "number" and type(h) == "table"
            and x <= MAX_COORD and x >= -MAX_COORD and y <= MAX_COORD and y >= -MAX_COORD then
            local c = rawget(h, CORE)
            if c and c.dim == 2 and not c.tip_parent then
                check_status(solver_solve(c, x + 0.0, y + 0.0, nil, result), 1)
                return result.reached, result.distance, result.iterations
            end
        end
        local reached, distance, iterations = solve_with(solver_solve, ...)
        return reached, distance, iterations
    end
end

methods.solve = solve_method(solve.chain_solve)
methods.solve_fabrik = solve_method(solve.chain_solve_fabrik)
methods.solve_ccd = solve_method(solve.chain_solve_ccd)
methods.solve_relax = solve_method(solve.chain_solve_relax)
methods.solve_two_bone = solve_method(solve.chain_solve_two_bone)
methods.solve_aim = solve_method(solve.chain_solve_aim)

-- ik.solve_many(chains, targets [, reached [, distances [, iterations]]]): targets nil
-- solves each towards its kept goal; the optional tables receive each chain's result.
-- Everything is checked in a first pass, so a rejected call solves nothing; the chains are
-- then solved in blocks of SOLVE_BLOCK, as the C module does (its results are written
-- block by block), through arrays made once here (nothing is allocated).
local SOLVE_BLOCK, MAX_DIM = 64, 3
local INT_MAX = 2147483647
local many_chains, many_targets, many_results = {}, {}, {}
for k = 0, SOLVE_BLOCK - 1 do
    many_results[k] = { reached = false, distance = 0.0, angle_error = 0.0, iterations = 0 }
end

-- Chain k (1-based) of the array t at argument 1, checked: an ik chain, of chain 1's
-- dimension (dim, which chain 1 sets); the chain and dim.
local function solve_many_chain(t, k, dim)
    local c = to_chain(rawget(t, k))
    if c == nil then arg_error(1, format("chain %d is not an ik chain", k)) end
    if k == 1 then dim = c.dim end
    if c.dim ~= dim then arg_error(1, format("chain %d is %dD, chain 1 is %dD", k, c.dim, dim)) end
    return c, dim
end

-- What the core would refuse of chain k: a two-bone solver on the wrong bone count, no kept
-- goal when there are no targets.
local function solve_many_core_checks(c, k, has_targets)
    if c.settings.solver == chain.SOLVER_TWO_BONE and c.n ~= (c.has_orientation and 3 or 2) then
        arg_error(1, format("chain %d: %s", k, status_string(chain.ERR_NOT_TWO_BONE)))
    end
    if has_targets and c.tip_parent then arg_error(2, format("chain %d: %s", k, status_string(chain.ERR_HELD))) end
    if not has_targets and not c.has_target then
        arg_error(2, format("chain %d keeps no target (give targets)", k))
    end
end

function ik.solve_many(...)
    local top = 5 -- lua_settop(L, 5): what comes after is not looked at
    local t, targets = ...
    local out3, out4, out5 = select(3, ...)
    local dim, reached_count = 2, 0
    check_input_table(t, 1, top)
    local has_targets = targets ~= nil
    if has_targets then check_input_table(targets, 2, top) end
    if out3 ~= nil and typeof(out3) ~= "table" then type_error(3, "table or nil", out3, top) end
    if out4 ~= nil and typeof(out4) ~= "table" then type_error(4, "table or nil", out4, top) end
    if out5 ~= nil and typeof(out5) ~= "table" then type_error(5, "table or nil", out5, top) end
    local count = rawlen(t)
    if count > floor(INT_MAX / MAX_DIM) then arg_error(1, "too many chains") end

    -- The first pass: every chain, every target, then what the core would refuse.
    for k = 1, count do
        local c
        c, dim = solve_many_chain(t, k, dim)
        if k <= SOLVE_BLOCK then many_chains[k - 1] = c end
    end
    if has_targets then
        for k = 1, count * dim do
            local v = check_element(targets, 2, k, "target")
            if abs(v) > MAX_COORD then arg_error(2, format("target %d: %s", k, status_string(chain.ERR_RANGE))) end
            if k <= SOLVE_BLOCK * dim then many_targets[k - 1] = v end
        end
    end
    for k = 1, count do
        local c = many_chains[k - 1]
        if k > SOLVE_BLOCK then c, dim = solve_many_chain(t, k, dim) end
        solve_many_core_checks(c, k, has_targets)
    end

    for block = 0, count - 1, SOLVE_BLOCK do
        local size = count - block < SOLVE_BLOCK and count - block or SOLVE_BLOCK
        if block > 0 then -- read again: checked in the first pass
            for k = 0, size - 1 do many_chains[k], dim = solve_many_chain(t, block + k + 1, dim) end
            if has_targets then
                for k = 0, size * dim - 1 do
                    many_targets[k] = check_element(targets, 2, block * dim + k + 1, "target")
                end
            end
        end
        local status, reached, failed = solve.solve_many(many_chains, size, has_targets and many_targets or nil,
            many_results)
        if status ~= OK then -- unreachable after the first pass
            arg_error(1, format("chain %d: %s", block + failed + 1, status_string(status)))
        end
        reached_count = reached_count + reached
        for k = 0, size - 1 do
            local r = many_results[k]
            if out3 ~= nil then rawset(out3, block + k + 1, r.reached) end
        end
        for k = 0, size - 1 do
            local r = many_results[k]
            if out4 ~= nil then rawset(out4, block + k + 1, r.distance) end
        end
        for k = 0, size - 1 do
            local r = many_results[k]
            if out5 ~= nil then rawset(out5, block + k + 1, r.iterations) end
        end
    end
    for k = 0, SOLVE_BLOCK - 1 do many_chains[k] = nil end -- no chain kept alive here
    return reached_count
end

-- ---- methods: attachment ----

-- 2D child:attach(parent, j [, angle]); 3D child:attach(parent, j [, w, x, y, z]).
function methods.attach(...)
    local top = select("#", ...)
    local h, hp, j, w, x, y, z = ...
    local child = check_chain(h, 1, top)
    local parent = check_chain(hp, 2, top)
    local dim = child.dim
    if parent.dim ~= dim then arg_error(2, format("a %dD chain expected (this one is %dD)", dim, parent.dim)) end
    local joint = check_index(j, 3, top, parent.n + 1)
    local angle, rotated = 0.0, false
    if dim == 2 then
        angle = opt_real(w, 4, top, 0.0)
        if top >= 5 then check_no_more(5, "no value expected (a 2D offset is one angle)", ...) end
    else
        rotated = quat_given(w, x, y, z)
        if rotated then w, x, y, z = check_quat(4, top, w, x, y, z) end
        if rotated and w == 0 and x == 0 and y == 0 and z == 0 then
            arg_error(4, status_string(chain.ERR_ZERO_ROTATION))
        end
        if top >= 8 then check_no_more(8, "no value expected (a 3D offset is one rotation: w, x, y, z)", ...) end
    end
    if child.parent then arg_error(1, status_string(chain.ERR_ATTACHED)) end
    local st
    if dim == 2 then
        st = chain.chain2d_attach(child, parent, joint, angle)
    elseif rotated then
        st = chain.chain3d_attach(child, parent, joint, w, x, y, z)
    else
        st = chain.chain3d_attach(child, parent, joint)
    end
    check_status(st, st == chain.ERR_CYCLE and 2 or 1)
end

function methods.detach(...)
    chain.chain_detach(check_chain((...), 1, select("#", ...)))
end

-- A linked chain's handle and its joint (1-based), or nothing for none.
local function push_link(other, joint)
    if other == nil then return end
    return other.box, joint + 1
end

function methods.parent(...)
    return push_link(chain.chain_parent(check_chain((...), 1, select("#", ...))))
end

-- ---- methods: closed loops ----

-- 2D chain:attach_tip(other, j [, dx, dy]); 3D chain:attach_tip(other, j [, dx, dy, dz]).
function methods.attach_tip(...)
    local top = select("#", ...)
    local h, ho, j, dx, dy, dz = ...
    local c = check_chain(h, 1, top)
    local other = check_chain(ho, 2, top)
    local dim = c.dim
    if other.dim ~= dim then arg_error(2, format("a %dD chain expected (this one is %dD)", dim, other.dim)) end
    if other == c then arg_error(2, status_string(chain.ERR_SELF)) end
    local joint = check_index(j, 3, top, other.n + 1)
    local given = dx ~= nil or dy ~= nil or (dim == 3 and dz ~= nil)
    if given then
        dx = check_coord(dx, 4, top)
        dy = check_coord(dy, 5, top)
        if dim == 3 then dz = check_coord(dz, 6, top) end
    end
    if top >= 4 + dim then
        check_no_more(4 + dim, dim == 2 and "no value expected (a 2D offset is dx, dy)"
            or "no value expected (a 3D offset is dx, dy, dz)", ...)
    end
    if c.tip_parent then arg_error(1, status_string(chain.ERR_TIP_HELD)) end
    if given then
        check_status(chain.chain_attach_tip(c, other, joint, dx, dy, dz), 1)
    else
        check_status(chain.chain_attach_tip(c, other, joint), 1)
    end
end

function methods.detach_tip(...)
    chain.chain_detach_tip(check_chain((...), 1, select("#", ...)))
end

function methods.tip_parent(...)
    return push_link(chain.chain_tip_parent(check_chain((...), 1, select("#", ...))))
end

-- ---- rigs ----

local RIG_MT = {}      -- the rigs' metatable
local rig_methods = {} -- its __index
local RIG = {}         -- the key under which a handle holds its rig
local KEPT = {}        -- and the handles of its chains (the C's kept table)

-- The rig of the handle v, or nil when v is not one.
function to_rig(v)
    if type(v) ~= "table" then return nil end
    return rawget(v, RIG)
end

local function check_rig(v, arg, top)
    local r = to_rig(v)
    if r == nil then type_error(arg, "ik rig", v, top) end
    return r
end

-- ik.rig(chains): a rig over the chains of the array (see rig.lua's rig_init). The rig keeps
-- the array's chains (in a table of its own) alive. The handle's array part holds count
-- values, as a chain's holds n (#rig where __len is not consulted for tables).
function ik.rig(...)
    local t = ...
    local top = 1 -- the C's lua_settop(L, 1)
    check_input_table(t, 1, top)
    local count = rawlen(t)
    if count < 1 then arg_error(1, "at least one chain expected") end
    if count > MAX_BONES then arg_error(1, "too many chains") end
    local chains, kept = {}, {}
    for k = 1, count do
        local v = rawget(t, k)
        chains[k - 1] = to_chain(v)
        if chains[k - 1] == nil then arg_error(1, format("chain %d is not an ik chain", k)) end
        kept[k] = v
    end
    local st, r, culprit = rig.rig_init(chains, count)
    if st ~= OK then
        if culprit >= 0 then arg_error(1, format("chain %d: %s", culprit + 1, status_string(st))) end
        arg_error(1, status_string(st))
    end
    local h = { [RIG] = r, [KEPT] = kept }
    for k = 1, count do h[k] = true end
    return setmetatable(h, RIG_MT)
end

function rig_methods.count(...)
    return rig.rig_chain_count(check_rig((...), 1, select("#", ...)))
end
rig_methods.chain_count = rig_methods.count

local function rig_tostring(...)
    local count = rig.rig_chain_count(check_rig((...), 1, select("#", ...)))
    return format("ik.rig(%d chain%s)", count, count == 1 and "" or "s")
end

function rig_methods.chain(...)
    local top = select("#", ...)
    local h, k = ...
    local r = check_rig(h, 1, top)
    k = check_index(k, 2, top, rig.rig_chain_count(r))
    return rawget(h, KEPT)[k + 1]
end

local rig_scratch = rig.rig_default_settings() -- configure parses into it

function rig_methods.configure(...)
    local top = select("#", ...)
    local h, t = ...
    local r = check_rig(h, 1, top)
    local from, s = rig.rig_settings_of(r), rig_scratch
    s.solver, s.iterations = from.solver, from.iterations
    s.tolerance, s.angle_tolerance = from.tolerance, from.angle_tolerance
    top = top < 2 and 2 or top -- the C's lua_settop(L, 2)
    check_input_table(t, 2, top)
    for key, v in next, t do
        if type(key) ~= "string" then arg_error(2, format("keys must be strings, got %s", typeof(key))) end
        if key == "iterations" then
            s.iterations = setting_whole(key, v)
        elseif key == "tolerance" or key == "angle_tolerance" then
            s[key] = setting_number(key, v)
        elseif key == "solver" then
            s.solver = setting_solver(v)
            if s.solver ~= chain.SOLVER_FABRIK and s.solver ~= chain.SOLVER_RELAX then
                arg_error(2, status_string(chain.ERR_RIG_SOLVER))
            end
        else
            arg_error(2, format("unknown key '%s'", c_string(key)))
        end
    end
    check_status(rig.rig_configure(r, s), 2)
    return h
end

function rig_methods.settings(...)
    local top = select("#", ...)
    local h, out = ...
    local s = rig.rig_settings_of(check_rig(h, 1, top))
    out = out_table(out, 2, top)
    out.solver = chain.solver_name(s.solver)
    out.iterations = s.iterations
    out.tolerance = s.tolerance
    out.angle_tolerance = s.angle_tolerance
    return out
end

function rig_methods.solve(...)
    local r = check_rig((...), 1, select("#", ...))
    check_no_more(2, "no value expected (the goals are kept on the chains: set_target)", ...)
    check_status(rig.rig_solve(r, result), 1)
    return result.reached, result.distance, result.iterations
end

-- ---- the stepping controller: ik.gait ----

-- A gait is a handle as a chain is (its metatable private, getmetatable gives "ik.gait"),
-- holding the core's gait (gait.lua) under a private key, and n values in its array part
-- for #gait where __len is not consulted. The gait keeps its legs (the core's gait holds
-- them) and its ground function, with the state of a call of it: call.

local function check_gait(v, arg, top) return check_handle(to_gait, "ik gait", v, arg, top) end

-- A gait's ground, called from the core during an update: the Lua function, under a
-- pcall. When it fails, its error (or why its value is no height) is kept in call.err, and
-- the core's update, which then stops and changes nothing, hands it on.
local function call_ground(call, x, z)
    local ok, y
    if call.dim == 3 then ok, y = pcall(call.fn, x, z) else ok, y = pcall(call.fn, x) end
    if not ok then
        call.err = y
        return false
    end
    if type(y) ~= "number" or not (y - y == 0) or abs(y) > MAX_COORD then
        local got = type(y) == "number" and "a number out of range" or typeof(y)
        -- lua_pushfstring's %f: LUAI_NUMFFORMAT, as tostring writes a float
        if call.dim == 3 then
            call.err = format("ik.gait: ground returned %s at x = %s, z = %s (a finite number expected: the height there)",
                got, tostring(x), tostring(z))
        else
            call.err = format("ik.gait: ground returned %s at x = %s (a finite number expected: the height there)",
                got, tostring(x))
        end
        return false
    end
    return true, y + 0.0
end

-- The options table t read into the core's options (stride required), leg k's group
-- (0-based; nil for none) and the ground function (or nil).
local function read_gait_options(count, t)
    local has_stride, has_lift, lift = false, false, 0.0
    local o = gait.gait_default_options(1.0)
    local group_of, ground = nil, nil
    for key, v in next, t do
        if type(key) ~= "string" then arg_error(2, format("keys must be strings, got %s", typeof(key))) end
        if key == "stride" then
            o.stride, has_stride = setting_number(key, v), true
        elseif key == "step_time" then
            o.step_time = setting_number(key, v)
        elseif key == "lift" then
            lift, has_lift = setting_number(key, v), true
        elseif key == "lead" then
            o.lead = setting_number(key, v)
        elseif key == "max_groups" then
            o.max_groups = setting_whole(key, v)
        elseif key == "up" then
            o.up = setting_whole(key, v)
        elseif key == "ground" then
            if type(v) ~= "function" then arg_error(2, format("ground: function expected, got %s", typeof(v))) end
            ground = v
        elseif key == "groups" then
            if typeof(v) ~= "table" or is_proxy(v) then
                arg_error(2, "groups: a plain table of arrays of leg numbers expected")
            end
            group_of = {}
            for k = 0, count - 1 do group_of[k] = -1 end
            for j = 1, rawlen(v) do
                local members, size = rawget(v, j), 0
                if typeof(members) == "table" and not is_proxy(members) then size = rawlen(members) end
                if size == 0 then arg_error(2, format("groups: group %d is not a plain array of leg numbers", j)) end
                for i = 1, size do
                    local leg = rawget(members, i)
                    if type(leg) ~= "number" or not is_whole(leg) or leg < 1 or leg > count then
                        arg_error(2, format("groups: group %d holds no leg number in 1..%d", j, count))
                    end
                    leg = floor(leg)
                    if group_of[leg - 1] >= 0 then arg_error(2, format("groups: leg %d is in more than one group", leg)) end
                    group_of[leg - 1] = j - 1
                end
            end
            for k = 0, count - 1 do
                if group_of[k] < 0 then arg_error(2, format("groups: leg %d is in no group", k + 1)) end
            end
        else
            arg_error(2, format("unknown key '%s'", c_string(key)))
        end
    end
    if not has_stride then arg_error(2, "stride: a number > 0 is required") end
    if has_lift then o.lift = lift else o.lift = gait.DEFAULT_LIFT * o.stride end
    check_status(gait.gait_validate(o), 2)
    return o, group_of, ground
end

function ik.gait(...)
    local legs_t, t = ...
    local top = 2 -- the C's lua_settop(L, 2)
    check_input_table(legs_t, 1, top)
    check_input_table(t, 2, top)
    local count = rawlen(legs_t)
    if count < 1 then arg_error(1, "at least one leg expected") end
    if count > MAX_BONES then arg_error(1, "too many legs") end
    local options, group_of, ground = read_gait_options(count, t)
    local legs = {}
    for k = 1, count do
        local c = to_chain(rawget(legs_t, k))
        if c == nil then arg_error(1, format("leg %d is not an ik chain", k)) end
        if c.dim ~= (legs[0] or c).dim then
            arg_error(1, format("leg %d: %s", k, status_string(chain.ERR_DIMENSION)))
        end
        legs[k - 1] = c
    end
    local st, g = gait.gait_create(legs, count, group_of, options)
    if st == chain.ERR_GROUPS then arg_error(1, "a leg is in the array twice") end
    check_status(st, (st == chain.ERR_COUNT or st == chain.ERR_DIMENSION) and 1 or 2)
    g.call = { fn = ground, dim = g.dim, err = nil }
    return (make_handle(GAIT_MT, GAIT, g, count))
end

function gait_methods.update(...)
    local g = check_gait((...), 1, select("#", ...))
    local dt = check_dt("no value expected (update takes dt)", ...)
    local call = g.call
    if call.fn == nil then gait.gait_set_ground(g, nil, nil) else gait.gait_set_ground(g, call_ground, call) end
    local st = gait.gait_update(g, dt)
    gait.gait_set_ground(g, nil, nil)
    if st == chain.ERR_GROUND then -- what the ground left
        local err = call.err
        call.err = nil
        error(err, 0)
    end
    if st ~= OK then api_error("ik.gait: " .. status_string(st)) end
end

function gait_methods.foot(...)
    local top = select("#", ...)
    local h, k = ...
    local g = check_gait(h, 1, top)
    local _, x, y, z, stepping, progress = gait.gait_foot(g, check_index(k, 2, top, gait.gait_count(g)))
    if g.dim == 2 then return x, y, stepping, progress end
    return x, y, z, stepping, progress
end

function gait_methods.reset(...)
    gait.gait_reset(check_gait((...), 1, select("#", ...)))
end

function gait_methods.count(...)
    return gait.gait_count(check_gait((...), 1, select("#", ...)))
end

local function gait_tostring(...)
    local count = gait.gait_count(check_gait((...), 1, select("#", ...)))
    return format("ik.gait(%d leg%s)", count, count == 1 and "" or "s")
end

-- ---- registration ----

MT.__index = methods
MT.__len = methods.count
MT.__tostring = chain_tostring
MT.__metatable = "ik.chain"
MT.__name = "ik.chain"

RIG_MT.__index = rig_methods
RIG_MT.__len = rig_methods.count
RIG_MT.__tostring = rig_tostring
RIG_MT.__metatable = "ik.rig"
RIG_MT.__name = "ik.rig"

GAIT_MT.__index = gait_methods
GAIT_MT.__len = gait_methods.count
GAIT_MT.__tostring = gait_tostring
GAIT_MT.__metatable = "ik.gait"
GAIT_MT.__name = "ik.gait"

ik._VERSION = "ik " .. chain.VERSION
ik.backend = "lua"

for _, t in ipairs({ methods, rig_methods, gait_methods, ik }) do
    for _, f in pairs(t) do
        if type(f) == "function" then api[f] = true end
    end
end
api[chain_tostring] = true
api[rig_tostring] = true
api[gait_tostring] = true

return ik
