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

return h
