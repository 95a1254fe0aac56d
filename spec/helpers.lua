-- Shared helpers for the busted specs of `ik`: a deterministic RNG that gives the same
-- numbers in Lua 5.4 and LuaJIT, tolerance checks that collect failures over thousands of
-- cases, forward kinematics recomputed in Lua, snapshots of a chain, and argument-error
-- checks in the luaL_argerror style.
--
-- Required from the specs as `require("spec.helpers")`; busted runs from the repository
-- root, where "./?.lua" finds spec/helpers.lua.

local h = {}

-- busted gives specs luassert as `assert`; a required module sees the plain function.
local luassert = require("luassert")

local abs, sqrt, cos, sin, atan2, pi = math.abs, math.sqrt, math.cos, math.sin, math.atan2, math.pi
atan2 = atan2 or math.atan -- Lua 5.4 has no math.atan2; math.atan(y, x) is the same

h.pi = pi
h.atan2 = atan2

-- Whether this is a POSIX system, where specs may start child processes through sh (not
-- Windows: make test-windows runs the specs under wine, with no sh, env or ulimit).
h.posix = package.config:sub(1, 1) == "/"

-- The Debian command of the Lua that runs these specs, and the package.cpath entry of the
-- plain build of ik.core for it (make's, from the repository root), for specs that start a
-- child process of the same VM.
function h.interpreter()
    if jit then return "luajit", "build/luajit/?.so" end
    local minor = _VERSION:match("^Lua 5%.(%d)$")
    if minor == "4" then return "lua5.4", "build/lua5.4/?.so" end
    return "lua5." .. minor, "build/lua5." .. minor .. "/?.so"
end

-- ---------------------------------------------------------------------------------------
-- RNG: Lehmer / Park-Miller with multiplier 48271 and modulus 2^31 - 1, on floats. Every
-- product is below 2^47, so float arithmetic is exact and both VMs give the same sequence
-- (math.random is a different algorithm in each VM, so the specs never use it).

local MODULUS = 2147483647.0
local MULTIPLIER = 48271.0

function h.rng(seed)
    local state = (seed % (MODULUS - 1.0)) + 1.0
    local r = {}
    -- Uniform in (0, 1).
    function r.next()
        state = (MULTIPLIER * state) % MODULUS
        return state / MODULUS
    end
    -- Uniform in (a, b).
    function r.uniform(a, b)
        return a + (b - a) * r.next()
    end
    -- A whole number in [a, b].
    function r.int(a, b)
        return a + math.floor(r.next() * (b - a + 1))
    end
    -- An angle in (-pi, pi).
    function r.angle()
        return (2.0 * r.next() - 1.0) * pi
    end
    return r
end

-- ---------------------------------------------------------------------------------------
-- Numbers.

function h.finite(x)
    return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge
end

-- Wraps an angle to [-pi, pi].
function h.wrap(a)
    a = math.fmod(a, 2.0 * pi)
    if a > pi then
        a = a - 2.0 * pi
    elseif a < -pi then
        a = a + 2.0 * pi
    end
    return a
end

-- The absolute difference of two angles modulo 2 pi, in [0, pi].
function h.angle_diff(a, b)
    return abs(h.wrap(a - b))
end

-- The largest turn of any joint between two poses, in radians: 2D, a and b hold each
-- bone's angle; 3D, its unit quaternion, 4 numbers a bone (either sign is the same turn).
function h.largest_turn(a, b, dim)
    local most = 0
    if dim == 2 then
        for i = 1, #a do most = math.max(most, h.angle_diff(a[i], b[i])) end
        return most
    end
    for k = 1, #a, 4 do
        local d = abs(a[k] * b[k] + a[k + 1] * b[k + 1] + a[k + 2] * b[k + 2] + a[k + 3] * b[k + 3])
        most = math.max(most, 2 * math.acos(math.min(1, d)))
    end
    return most
end

function h.dist(ax, ay, bx, by)
    local dx, dy = ax - bx, ay - by
    return sqrt(dx * dx + dy * dy)
end

-- |a - b| <= tol * scale; scale defaults to max(1, |a|, |b|).
function h.near(a, b, tol, scale)
    scale = scale or math.max(1.0, abs(a), abs(b))
    return abs(a - b) <= tol * scale
end

-- ---------------------------------------------------------------------------------------
-- A checker collects failures over many cases and asserts once, naming the first few
-- failing inputs. Messages are formatted only on failure.

local Checker = {}
Checker.__index = Checker

function h.checker(what)
    return setmetatable({ what = what or "check", failures = 0, cases = 0, first = {} }, Checker)
end

function Checker:fail(fmt, ...)
    self.failures = self.failures + 1
    if #self.first < 5 then
        self.first[#self.first + 1] = string.format(fmt, ...)
    end
end

function Checker:ok(cond, fmt, ...)
    self.cases = self.cases + 1
    if not cond then
        self:fail(fmt, ...)
    end
    return cond
end

-- |got - want| <= tol * scale (scale defaults to max(1, |got|, |want|)).
function Checker:near(got, want, tol, scale, fmt, ...)
    self.cases = self.cases + 1
    if not (type(got) == "number" and h.near(got, want, tol, scale)) then
        self:fail("%s: got %.17g, want %.17g (tol %g, scale %g)", string.format(fmt, ...),
            tonumber(got) or 0 / 0, want, tol, scale or math.max(1.0, abs(want)))
        return false
    end
    return true
end

function Checker:done()
    local msg = string.format("%s: %d of %d checks failed; first:\n  %s", self.what, self.failures,
        self.cases, table.concat(self.first, "\n  "))
    luassert.is_true(self.failures == 0, msg)
    return self.cases
end

-- ---------------------------------------------------------------------------------------
-- Forward kinematics in Lua: flat {x1, y1, ..., x(n+1), y(n+1)} from lengths, local
-- angles and the base (x, y, angle).

function h.fk(lengths, angles, bx, by, ba)
    local out = { bx or 0.0, by or 0.0 }
    local x, y, a = bx or 0.0, by or 0.0, ba or 0.0
    for i = 1, #lengths do
        a = a + angles[i]
        x = x + lengths[i] * cos(a)
        y = y + lengths[i] * sin(a)
        out[#out + 1] = x
        out[#out + 1] = y
    end
    return out
end

-- Sets every local angle of chain c to a random angle; returns the angles.
function h.random_pose(rng, c)
    local angles = {}
    for i = 1, c:count() do
        angles[i] = rng.angle()
        c:set_angle(i, angles[i])
    end
    return angles
end

function h.set_angles(c, angles)
    for i = 1, #angles do
        c:set_angle(i, angles[i])
    end
end

function h.lengths(c)
    local t = {}
    for i = 1, c:count() do
        t[i] = c:length(i)
    end
    return t
end

function h.total_length(c)
    local s = 0.0
    for i = 1, c:count() do
        s = s + c:length(i)
    end
    return s
end

-- Everything observable about a chain, for before/after comparisons.
function h.snapshot(c)
    local n = c:count()
    local s = {
        len_op = #c,
        count = n,
        dim = c:dim(),
        positions = c:positions(),
        effector = { c:effector() },
        base = { c:base() },
        settings = c:settings(),
        joints = {},
        angles = {},
        world_angles = {},
        lengths = {},
        weights = {},
    }
    for i = 1, n do
        s.angles[i] = c:angle(i)
        s.world_angles[i] = c:world_angle(i)
        s.lengths[i] = c:length(i)
    end
    for i = 1, n + 1 do
        s.joints[i] = { c:joint(i) }
        s.weights[i] = c:weight(i)
    end
    return s
end

-- Bit-for-bit equality of two snapshots (a rejected call changes nothing).
function h.assert_unchanged(before, after, what)
    luassert.are.same(before, after, (what or "call") .. " changed the chain")
end

-- ---------------------------------------------------------------------------------------
-- Argument errors. f must make the call as a statement (not `return f(...)`: a tail call
-- loses the name of the called function in both VMs).
--
-- Expects "bad argument #k to 'name' (...)", optionally after a "chunk:line: " position,
-- where the reported name is exactly `name` (with h.NAME_EXACT false it may also end in
-- "." .. name, as Lua 5.4 names a function it finds in a loaded module, "ik.two_bone").
-- k == 0 means the error is about self in method-call syntax, which both VMs report as
-- "calling 'name' on bad self (...)".

h.NAME_EXACT = true -- both VMs report the plain name: 'set_angle', 'two_bone'

function h.argerror(k, name, f)
    local ok, err = pcall(f)
    if ok then
        return false, string.format("expected bad argument #%d to '%s', but the call succeeded", k, name)
    end
    err = tostring(err)
    -- LuaJIT (and a binding raising at the caller's level) prefix "chunk:line: "
    local body = err
    if not (body:find("^bad argument #") or body:find("^calling '")) then
        body = body:match("^[^%s]+:%d+: (.*)$") or body
    end
    local got_k, got_name
    if k == 0 then
        got_k, got_name = 0, body:match("^calling '([^']*)' on bad self %(")
    else
        got_k, got_name = body:match("^bad argument #(%d+) to '([^']*)' %(")
        got_k = tonumber(got_k)
    end
    if got_k ~= k or not got_name then
        return false, string.format("expected bad argument #%d to '%s', got: %s", k, name, err)
    end
    local name_ok = got_name == name
    if not name_ok and not h.NAME_EXACT then
        name_ok = got_name:sub(-#name - 1) == "." .. name or got_name:sub(-#name - 1) == ":" .. name
    end
    if not name_ok then
        return false, string.format("expected bad argument #%d to '%s', got: %s", k, name, err)
    end
    return true, err
end

function h.assert_argerror(k, name, f)
    local ok, msg = h.argerror(k, name, f)
    luassert.is_true(ok, msg)
    return msg
end

-- ---------------------------------------------------------------------------------------
-- 3D: vectors and quaternions (w, x, y, z; a * b rotates by b, then by a), as multiple
-- return values so the checks allocate nothing per number. The specs recompute forward
-- kinematics and the minimal rotation with these, independently of the C core.

-- |(x, y, z)|, without overflow or underflow at extreme scales (the specs reach 1e300).
function h.len3(x, y, z)
    local m = math.max(abs(x), abs(y), abs(z))
    if m == 0 or m ~= m or m == math.huge then
        return m
    end
    if m > 1e150 or m < 1e-150 then
        x, y, z = x / m, y / m, z / m
        return m * sqrt(x * x + y * y + z * z)
    end
    return sqrt(x * x + y * y + z * z)
end

function h.dist3(ax, ay, az, bx, by, bz)
    return h.len3(ax - bx, ay - by, az - bz)
end

function h.dot3(ax, ay, az, bx, by, bz)
    return ax * bx + ay * by + az * bz
end

function h.cross3(ax, ay, az, bx, by, bz)
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
end

-- v / |v| (v must not be zero).
function h.unit3(x, y, z)
    local l = h.len3(x, y, z)
    return x / l, y / l, z / l
end

function h.qlen(w, x, y, z)
    return sqrt(w * w + x * x + y * y + z * z)
end

function h.qnormalize(w, x, y, z)
    local l = sqrt(w * w + x * x + y * y + z * z)
    return w / l, x / l, y / l, z / l
end

function h.qconj(w, x, y, z)
    return w, -x, -y, -z
end

-- a * b.
function h.qmul(aw, ax, ay, az, bw, bx, by, bz)
    return aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw
end

-- v rotated by the unit quaternion q: v + 2w (u x v) + 2 u x (u x v), u the vector part.
function h.qrotate(w, x, y, z, vx, vy, vz)
    local tx, ty, tz = h.cross3(x, y, z, vx, vy, vz)
    tx, ty, tz = 2 * tx, 2 * ty, 2 * tz
    local cx, cy, cz = h.cross3(x, y, z, tx, ty, tz)
    return vx + w * tx + cx, vy + w * ty + cy, vz + w * tz + cz
end

-- The rotation by angle (radians) about the unit axis (ax, ay, az).
function h.qaxis(ax, ay, az, angle)
    local s = sin(angle / 2)
    return cos(angle / 2), ax * s, ay * s, az * s
end

-- The smallest rotation taking the unit vector a to the unit vector b (w >= 0). Opposite
-- vectors have no unique smallest rotation: the caller avoids them.
function h.from_to(ax, ay, az, bx, by, bz)
    local d = ax * bx + ay * by + az * bz
    local cx, cy, cz = h.cross3(ax, ay, az, bx, by, bz)
    return h.qnormalize(1 + d, cx, cy, cz)
end

-- The distance between two unit quaternions as rotations: min(|a - b|, |a + b|), since q
-- and -q are the same rotation.
function h.qdist(aw, ax, ay, az, bw, bx, by, bz)
    local m = sqrt((aw - bw) ^ 2 + (ax - bx) ^ 2 + (ay - by) ^ 2 + (az - bz) ^ 2)
    local p = sqrt((aw + bw) ^ 2 + (ax + bx) ^ 2 + (ay + by) ^ 2 + (az + bz) ^ 2)
    return math.min(m, p)
end

-- A uniformly distributed unit quaternion (Shoemake's subgroup algorithm).
function h.random_quat(rng)
    local u1, u2, u3 = rng.next(), rng.next(), rng.next()
    local a, b = sqrt(1 - u1), sqrt(u1)
    return a * sin(2 * pi * u2), a * cos(2 * pi * u2), b * sin(2 * pi * u3), b * cos(2 * pi * u3)
end

-- A uniformly distributed unit vector.
function h.random_dir(rng)
    local z = rng.uniform(-1, 1)
    local a = rng.angle()
    local r = sqrt(math.max(0, 1 - z * z))
    return r * cos(a), r * sin(a), z
end

-- Forward kinematics in 3D: lengths, local rotations {{w, x, y, z}, ...}, base position
-- {x, y, z} and base rotation {w, x, y, z}. Returns the flat positions {x1, y1, z1, ...}
-- of the n+1 joints and the world rotations {{w, x, y, z}, ...} of the n bones.
function h.fk3(lengths, rotations, bpos, brot)
    bpos = bpos or { 0, 0, 0 }
    brot = brot or { 1, 0, 0, 0 }
    local x, y, z = bpos[1], bpos[2], bpos[3]
    local qw, qx, qy, qz = brot[1], brot[2], brot[3], brot[4]
    local out, world = { x, y, z }, {}
    for i = 1, #lengths do
        local r = rotations[i]
        qw, qx, qy, qz = h.qmul(qw, qx, qy, qz, r[1], r[2], r[3], r[4])
        world[i] = { qw, qx, qy, qz }
        local dx, dy, dz = h.qrotate(qw, qx, qy, qz, 1, 0, 0)
        x, y, z = x + lengths[i] * dx, y + lengths[i] * dy, z + lengths[i] * dz
        out[#out + 1] = x
        out[#out + 1] = y
        out[#out + 1] = z
    end
    return out, world
end

-- Sets every local rotation of the 3D chain c to a random unit quaternion; returns them.
function h.random_pose3(rng, c)
    local rots = {}
    for i = 1, c:count() do
        local w, x, y, z = h.random_quat(rng)
        rots[i] = { w, x, y, z }
        c:set_rotation(i, w, x, y, z)
    end
    return rots
end

function h.set_rotations(c, rots)
    for i = 1, #rots do
        c:set_rotation(i, rots[i][1], rots[i][2], rots[i][3], rots[i][4])
    end
end

-- The local (or world) rotations of a 3D chain, {{w, x, y, z}, ...}.
function h.rotations(c)
    local t = {}
    for i = 1, c:count() do
        t[i] = { c:rotation(i) }
    end
    return t
end

function h.world_rotations(c)
    local t = {}
    for i = 1, c:count() do
        t[i] = { c:world_rotation(i) }
    end
    return t
end

-- Everything observable about a 3D chain, for before/after comparisons.
function h.snapshot3(c)
    local n = c:count()
    local s = {
        len_op = #c,
        count = n,
        dim = c:dim(),
        positions = c:positions(),
        effector = { c:effector() },
        base = { c:base() },
        settings = c:settings(),
        joints = {},
        rotations = h.rotations(c),
        world_rotations = h.world_rotations(c),
        lengths = {},
        weights = {},
    }
    for i = 1, n do
        s.lengths[i] = c:length(i)
    end
    for i = 1, n + 1 do
        s.joints[i] = { c:joint(i) }
        s.weights[i] = c:weight(i)
    end
    return s
end

-- As h.argerror, but any argument number in the list ks is accepted (a quaternion is four
-- arguments: a zero one is bad as a whole, and the error may name any of them).
function h.argerror_any(ks, name, f)
    local msgs = {}
    for _, k in ipairs(ks) do
        local ok, msg = h.argerror(k, name, f)
        if ok then
            return true, msg
        end
        msgs[#msgs + 1] = msg
    end
    return false, table.concat(msgs, "; or ")
end

-- ---------------------------------------------------------------------------------------
-- Joint limits. The limits a spec sets are kept in Lua tables, so the checks do not trust
-- the chain's own getters:
--   2D: L[i] = { min, max }, or false for a bone without a limit;
--   3D: L[i] = { hinge = { ax, ay, az } (unit), min = , max = }, or { cone = half or nil,
--       twist = { min, max } or nil }, or false.

h.LIMIT_TOL = 1e-9

-- a within [min, max] up to tol; pi and -pi are one angle, so an angle within tol of a bound
-- around the circle counts as on it.
function h.angle_within(a, min, max, tol)
    tol = tol or h.LIMIT_TOL
    if a >= min - tol and a <= max + tol then
        return true
    end
    return h.angle_diff(a, min) <= tol or h.angle_diff(a, max) <= tol
end

-- 3D measures of a local rotation (w, x, y, z), the same for q and -q.
-- The swing: the angle between the bone's direction (local +x rotated by q) and the
-- parent's +x, acos(1 - 2 (y^2 + z^2)); computed as 2 atan2(|(y, z)|, |(w, x)|), the same
-- angle without acos's loss of precision near 0.
function h.swing_angle(w, x, y, z)
    return 2 * atan2(sqrt(y * y + z * z), sqrt(w * w + x * x))
end

-- The twist about the bone's own axis (local +x): 2 atan2(x, w), wrapped to [-pi, pi].
function h.twist_angle(w, x, y, z)
    return h.wrap(2 * atan2(x, w))
end

-- How far q is from a turn about the unit axis a: |v x a|, v the vector part (0 for a pure
-- turn about a). A cross product, not sqrt(|v|^2 - (v.a)^2), which loses ~1e-8 to
-- cancellation.
function h.hinge_off(w, x, y, z, ax, ay, az)
    return h.len3(h.cross3(x, y, z, ax, ay, az))
end

-- The angle of q's turn about the unit axis a: 2 atan2(v.a, w), wrapped.
function h.hinge_angle(w, x, y, z, ax, ay, az)
    return h.wrap(2 * atan2(x * ax + y * ay + z * az, w))
end

-- A range [center - half, center + half] within [-pi, pi], half in [lo, hi].
function h.random_range(rng, lo, hi)
    local half = rng.uniform(lo or 0.2, hi or 1.5)
    local center = rng.uniform(-pi + half, pi - half)
    return center - half, center + half
end

-- 2D: n random ranges (every bone limited), set on c when given.
function h.random_limits2(rng, n, c)
    local L = {}
    for i = 1, n do
        local lo, hi = h.random_range(rng)
        L[i] = { lo, hi }
    end
    if c then
        h.apply_limits2(c, L)
    end
    return L
end

function h.apply_limits2(c, L)
    for i = 1, #L do
        if L[i] then
            c:set_limit(i, L[i][1], L[i][2])
        else
            c:clear_limit(i)
        end
    end
end

-- Random local angles within the limits L (any angle for a bone without one).
function h.random_within2(rng, L)
    local angles = {}
    for i = 1, #L do
        angles[i] = L[i] and rng.uniform(L[i][1], L[i][2]) or rng.angle()
    end
    return angles
end

-- 3D: n random limits of a kind: "cone" (a cone and a twist range on every bone), "hinge"
-- (a random axis and range), or "mixed" (either, per bone). Set on c when given.
function h.random_limits3(rng, n, kind, c)
    local L = {}
    for i = 1, n do
        local k = kind
        if k == "mixed" then
            k = rng.next() < 0.5 and "cone" or "hinge"
        end
        if k == "hinge" then
            local ax, ay, az = h.random_dir(rng)
            local lo, hi = h.random_range(rng)
            L[i] = { hinge = { ax, ay, az }, min = lo, max = hi }
        else
            local cone = rng.uniform(0.2, 1.5)
            local lo, hi = h.random_range(rng)
            L[i] = { cone = cone, twist = { lo, hi } }
        end
    end
    if c then
        h.apply_limits3(c, L)
    end
    return L
end

function h.apply_limits3(c, L)
    for i = 1, #L do
        local l = L[i]
        c:clear_limit(i)
        if l and l.hinge then
            -- l.given: the axis as passed (any nonzero length; l.hinge is it made unit);
            -- l.default: no range passed, so the range is [-pi, pi]
            local g = l.given or l.hinge
            if l.default then
                c:set_hinge(i, g[1], g[2], g[3])
            else
                c:set_hinge(i, g[1], g[2], g[3], l.min, l.max)
            end
        elseif l then
            if l.cone then
                c:set_cone(i, l.cone)
            end
            if l.twist then
                c:set_twist(i, l.twist[1], l.twist[2])
            end
        end
    end
end

-- The rotation swing * twist: a swing by angle s about (0, cos phi, sin phi) (the bone then
-- points s away from the parent's +x), then a twist by t about the bone's own axis.
function h.swing_twist(phi, s, t)
    local sw, sx, sy, sz = h.qaxis(0, cos(phi), sin(phi), s)
    local tw, tx, ty, tz = h.qaxis(1, 0, 0, t)
    return h.qmul(sw, sx, sy, sz, tw, tx, ty, tz)
end

-- Random local rotations {{w, x, y, z}, ...} within the limits L.
function h.random_within3(rng, L)
    local rots = {}
    for i = 1, #L do
        local l = L[i]
        if not l then
            rots[i] = { h.random_quat(rng) }
        elseif l.hinge then
            rots[i] = { h.qaxis(l.hinge[1], l.hinge[2], l.hinge[3], rng.uniform(l.min, l.max)) }
        else
            local phi = rng.angle()
            local s = rng.uniform(0, l.cone or pi)
            local t = l.twist and rng.uniform(l.twist[1], l.twist[2]) or rng.angle()
            rots[i] = { h.swing_twist(phi, s, t) }
        end
    end
    return rots
end

-- Checks (into checker chk) that every limited bone of the 2D chain c is within L.
function h.check_limits2(chk, c, L, what)
    for i = 1, #L do
        local l = L[i]
        if l then
            local a = c:angle(i)
            chk:ok(h.angle_within(a, l[1], l[2]), "%s: angle(%d) = %.17g is outside [%.17g, %.17g]", what, i, a, l[1], l[2])
        end
    end
end

-- The same for a 3D chain: a hinge bone turns only about its axis (|v x axis| <= tol) by
-- an angle within its range; a cone bone's swing is at most the half angle; a twist
-- bone's twist is within its range.
function h.check_limits3(chk, c, L, what)
    local tol = h.LIMIT_TOL
    for i = 1, #L do
        local l = L[i]
        if l then
            local w, x, y, z = c:rotation(i)
            if l.hinge then
                local ax, ay, az = l.hinge[1], l.hinge[2], l.hinge[3]
                local off = h.hinge_off(w, x, y, z, ax, ay, az)
                chk:ok(off <= tol, "%s: rotation(%d) = (%.17g, %.17g, %.17g, %.17g) is %.3g off the hinge axis (%.17g, %.17g, %.17g)",
                    what, i, w, x, y, z, off, ax, ay, az)
                local a = h.hinge_angle(w, x, y, z, ax, ay, az)
                chk:ok(h.angle_within(a, l.min, l.max), "%s: bone %d hinge angle %.17g is outside [%.17g, %.17g]", what, i, a, l.min, l.max)
            else
                if l.cone then
                    local s = h.swing_angle(w, x, y, z)
                    chk:ok(s <= l.cone + tol, "%s: rotation(%d) = (%.17g, %.17g, %.17g, %.17g) swings %.17g, beyond the cone %.17g",
                        what, i, w, x, y, z, s, l.cone)
                end
                if l.twist then
                    local t = h.twist_angle(w, x, y, z)
                    chk:ok(h.angle_within(t, l.twist[1], l.twist[2]), "%s: rotation(%d) = (%.17g, %.17g, %.17g, %.17g) twists %.17g, outside [%.17g, %.17g]",
                        what, i, w, x, y, z, t, l.twist[1], l.twist[2])
                end
            end
        end
    end
end

-- The 2D limits as the chain reports them: {{min, max} or false, ...}.
function h.limits2(c)
    local t = {}
    for i = 1, c:count() do
        local min, max = c:limit(i)
        t[i] = min ~= nil and { min, max } or false
    end
    return t
end

return h
