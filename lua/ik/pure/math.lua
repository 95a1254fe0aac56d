-- ik.pure.math: src/ik_math.h in plain Lua, function for function, in the same order.
--
-- Vectors and quaternions are multiple values, never tables: a 2D vector is x, y, a 3D
-- one x, y, z, a quaternion w, x, y, z (rotation a * b: by b, then by a). Every operation
-- keeps the C's arithmetic and its order (the core is compiled with -ffp-contract=off, so
-- no fused multiply-add), and calls the same libm functions, so the results are the same
-- bits. Every number here is a float (0.0, not 0: Lua 5.3 and later keep integers apart).
-- The constructors (ik_v2, ik_v3, ik_q) and the loads and stores need no function.

local sqrt, abs, sin, cos = math.sqrt, math.abs, math.sin, math.cos
local fmod = math.fmod
local atan2 = math.atan2 or math.atan -- Lua 5.3 and later: math.atan(y, x)

local M = {}

M.PI = 3.14159265358979323846
M.TWO_PI = 6.28318530717958647692
local PI, TWO_PI = M.PI, M.TWO_PI
local THREE_PI = 3 * PI -- 3 * IK_PI, as the C rounds it (at compile time, in double)

-- 0x1p-600 and 0x1p600 (Lua 5.1 has no hexadecimal floats; powers of two are exact).
local DOWN, UP = 2 ^ -600, 2 ^ 600

-- glibc's hypot (2.35 and later, sysdeps/ieee754/dbl-64/e_hypot.c, the build without a
-- fused multiply-add, which is x86-64's): Borges' correction of sqrt(x^2 + y^2), with
-- scaling at the extremes. Lua has no hypot; this gives glibc's bits.
local LARGE_VAL, TINY_VAL, EPS, SCALE = 2 ^ 511, 2 ^ -459, 2 ^ -54, 2 ^ -600

local function hypot_kernel(ax, ay)
    local h = sqrt(ax * ax + ay * ay)
    local t1, t2
    if h <= 2.0 * ay then
        local delta = h - ay
        t1 = ax * (2.0 * delta - ax)
        t2 = (delta - 2.0 * (ax - ay)) * delta
    else
        local delta = h - ax
        t1 = 2.0 * delta * (ax - 2.0 * ay)
        t2 = (4.0 * delta - ay) * ay + delta * delta
    end
    return h - (t1 + t2) / (2.0 * h)
end

local function hypot(x, y)
    if not (x - x == 0 and y - y == 0) then
        if abs(x) == 1 / 0 or abs(y) == 1 / 0 then return 1 / 0 end
        return x + y
    end
    x, y = abs(x), abs(y)
    local ax, ay = x, y
    if x < y then ax, ay = y, x end
    if ax > LARGE_VAL then
        if ay <= ax * EPS then return ax + ay end
        return hypot_kernel(ax * SCALE, ay * SCALE) / SCALE
    end
    if ay < TINY_VAL then
        if ax >= ay / EPS then return ax + ay end
        return hypot_kernel(ax / SCALE, ay / SCALE) * SCALE
    end
    if ay <= ax * EPS then return ax + ay end
    return hypot_kernel(ax, ay)
end
M.hypot = hypot

-- remainder(x, y) for finite x and y > 0 (y * 2 finite): exact, as IEEE 754 has it. fmod is
-- exact too; the quotient rounded to nearest, ties to even, takes one more step of y, which
-- is exact (Sterbenz), and fmod(x, 2 y) tells the parity of a tie.
local function remainder(x, y)
    local r = fmod(x, y)
    local half = y * 0.5
    if abs(r) > half or (abs(r) == half and abs(fmod(x, 2.0 * y)) >= y) then
        if r > 0 then r = r - y else r = r + y end
    end
    return r
end
M.remainder = remainder

-- ---- 2D ----

function M.v2_add(ax, ay, bx, by) return ax + bx, ay + by end
function M.v2_sub(ax, ay, bx, by) return ax - bx, ay - by end
function M.v2_scale(ax, ay, s) return ax * s, ay * s end
function M.v2_dot(ax, ay, bx, by) return ax * bx + ay * by end
-- z of the 3D cross product: > 0 when b is counter-clockwise from a.
function M.v2_cross(ax, ay, bx, by) return ax * by - ay * bx end

-- sqrt(dot) is the fast path; hypot where the square overflows or underflows.
local function v2_len(x, y)
    local d = x * x + y * y
    if d < 1e300 and d > 1e-300 then return sqrt(d) end
    return hypot(x, y)
end
M.v2_len = v2_len

function M.v2_perp(x, y) return -y, x end

-- a rotated by the angle whose (cos, sin) is r: complex multiplication.
function M.v2_rotate(ax, ay, rx, ry) return rx * ax - ry * ay, ry * ax + rx * ay end

-- a rotated back by r: a * conj(r).
function M.v2_unrotate(ax, ay, rx, ry) return rx * ax + ry * ay, rx * ay - ry * ax end

-- v pulled back to unit length to first order, v (3 - |v|^2) / 2 (for products of unit turns).
function M.v2_renorm(x, y)
    local s = (3 - (x * x + y * y)) / 2
    return x * s, y * s
end

-- a scaled by a power of two when a product of two such vectors could overflow or underflow.
local function v2_tame(x, y)
    local d = x * x + y * y
    if d < 1e300 and d > 1e-300 then return x, y end
    local len = hypot(x, y)
    if len > 1e150 then return x * DOWN, y * DOWN end
    if len < 1e-150 then return x * UP, y * UP end
    return x, y
end
M.v2_tame = v2_tame

-- a / |a|, or the fallback when a is zero; finite for every finite a.
function M.v2_normalize_or(x, y, fx, fy)
    x, y = v2_tame(x, y)
    local len = v2_len(x, y)
    if not (len > 0.0) then return fx, fy end
    return x / len, y / len
end

-- The angle that turns a towards b, in [-pi, pi]; 0 when either is zero. Rescaled first
-- (the same power of two on both products keeps the angle).
function M.v2_angle_between(ax, ay, bx, by)
    ax, ay = v2_tame(ax, ay)
    bx, by = v2_tame(bx, by)
    return atan2(ax * by - ay * bx, ax * bx + ay * by)
end

-- The angle wrapped to [-pi, pi]: remainder(a, 2 pi), exact; a -+ 2 pi is the same for
-- |a| in (pi, 3 pi) (Sterbenz).
function M.wrap_angle(a)
    if a >= -PI and a <= PI then return a end
    if a > PI and a < THREE_PI then return a - TWO_PI end
    if a < -PI and a > -THREE_PI then return a + TWO_PI end
    return remainder(a, TWO_PI)
end

-- The turn (cos a, sin a) of an angle already wrapped.
function M.v2_turn(wrapped) return cos(wrapped), sin(wrapped) end

-- C's fmax (glibc's generic one): a when a >= b or b is NaN, else b. Called on magnitudes
-- only (never -0 against +0, where the x86-64 instruction would give b).
function M.fmax(a, b)
    if a >= b or b ~= b then return a end
    return b
end

function M.clamp(v, lo, hi)
    if v < lo then return lo end
    if v > hi then return hi end
    return v
end

-- ---- 3D ----

local function v3_add(ax, ay, az, bx, by, bz) return ax + bx, ay + by, az + bz end
local function v3_sub(ax, ay, az, bx, by, bz) return ax - bx, ay - by, az - bz end
local function v3_scale(ax, ay, az, s) return ax * s, ay * s, az * s end
local function v3_dot(ax, ay, az, bx, by, bz) return ax * bx + ay * by + az * bz end
local function v3_cross(ax, ay, az, bx, by, bz)
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
end
M.v3_add, M.v3_sub, M.v3_scale, M.v3_dot, M.v3_cross = v3_add, v3_sub, v3_scale, v3_dot, v3_cross

-- As v2_len.
local function v3_len(x, y, z)
    local d = x * x + y * y + z * z
    if d < 1e300 and d > 1e-300 then return sqrt(d) end
    return hypot(hypot(x, y), z)
end
M.v3_len = v3_len

-- As v2_tame.
local function v3_tame(x, y, z)
    local d = x * x + y * y + z * z
    if d < 1e300 and d > 1e-300 then return x, y, z end
    local len = hypot(hypot(x, y), z)
    if len > 1e150 then return x * DOWN, y * DOWN, z * DOWN end
    if len < 1e-150 then return x * UP, y * UP, z * UP end
    return x, y, z
end
M.v3_tame = v3_tame

-- v3_normalize_or for vectors near 0 or beyond 1e150.
local function v3_normalize_slow(x, y, z, fx, fy, fz)
    x, y, z = v3_tame(x, y, z)
    local len = v3_len(x, y, z)
    if not (len > 0.0) then return fx, fy, fz end
    return x / len, y / len, z / len
end
M.v3_normalize_slow = v3_normalize_slow

-- a / |a|, or the fallback when a is zero; finite for every finite a.
local function v3_normalize_or(x, y, z, fx, fy, fz)
    local d = x * x + y * y + z * z
    if d < 1e300 and d > 1e-300 then
        local inv = 1 / sqrt(d)
        return x * inv, y * inv, z * inv
    end
    return v3_normalize_slow(x, y, z, fx, fy, fz)
end
M.v3_normalize_or = v3_normalize_or

-- A unit vector perpendicular to unit u: u x e, e the axis u leans on least.
local function v3_any_perpendicular(x, y, z)
    local ax, ay, az = abs(x), abs(y), abs(z)
    local ex, ey, ez
    if ax <= ay and ax <= az then
        ex, ey, ez = 1.0, 0.0, 0.0
    elseif ay <= az then
        ex, ey, ez = 0.0, 1.0, 0.0
    else
        ex, ey, ez = 0.0, 0.0, 1.0
    end
    local cx, cy, cz = v3_cross(x, y, z, ex, ey, ez)
    return v3_normalize_or(cx, cy, cz, 0.0, 0.0, 1.0)
end
M.v3_any_perpendicular = v3_any_perpendicular

function M.q_identity() return 1.0, 0.0, 0.0, 0.0 end
function M.q_conj(w, x, y, z) return w, -x, -y, -z end

-- a * b: rotate by b, then by a.
local function q_mul(aw, ax, ay, az, bw, bx, by, bz)
    return aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw
end
M.q_mul = q_mul

-- q / |q|; the identity for a zero (or non-finite) q. One division in the usual range, the
-- length first outside it.
local function q_normalize(w, x, y, z)
    local d = w * w + x * x + y * y + z * z
    if d < 1e300 and d > 1e-300 then
        local inv = 1 / sqrt(d)
        return w * inv, x * inv, y * inv, z * inv
    end
    local len = sqrt(d)
    if not (len > 0.0) or not (len - len == 0) then return 1.0, 0.0, 0.0, 0.0 end
    return w / len, x / len, y / len, z / len
end
M.q_normalize = q_normalize

-- v rotated by unit q: v + 2w (u x v) + 2 u x (u x v), u the vector part.
function M.q_rotate(qw, qx, qy, qz, vx, vy, vz)
    local tx, ty, tz = v3_cross(qx, qy, qz, vx, vy, vz)
    tx, ty, tz = tx * 2, ty * 2, tz * 2
    local cx, cy, cz = v3_cross(qx, qy, qz, tx, ty, tz)
    return vx + tx * qw + cx, vy + ty * qw + cy, vz + tz * qw + cz
end

-- The bone direction of a frame: its local +x axis in the parent's space.
function M.q_x_axis(w, x, y, z)
    return 1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)
end

-- The smallest rotation taking unit a to unit b (w >= 0). Near a half turn the angle comes
-- from the cross and dot products (1 + a.b loses its digits there); exactly opposite
-- vectors: the half turn about a fixed perpendicular of a.
local function q_from_to(ax, ay, az, bx, by, bz)
    local d = v3_dot(ax, ay, az, bx, by, bz)
    local cx, cy, cz = v3_cross(ax, ay, az, bx, by, bz)
    if d > -0.5 then return q_normalize(1 + d, cx, cy, cz) end
    -- The cross product's error along a taken out, twice (once can leave 1e-8 along a).
    local k
    cx, cy, cz = v3_tame(cx, cy, cz)
    k = v3_dot(ax, ay, az, cx, cy, cz)
    cx, cy, cz = cx - ax * k, cy - ay * k, cz - az * k
    cx, cy, cz = v3_tame(cx, cy, cz)
    k = v3_dot(ax, ay, az, cx, cy, cz)
    cx, cy, cz = cx - ax * k, cy - ay * k, cz - az * k
    local s = v3_len(cx, cy, cz)
    -- Nothing across a left (a is unit only to an ulp, so each pass keeps 1 - a.a of what
    -- lies along it): b is opposite a to rounding, a half turn about any axis across a (to
    -- 1e-12: an axis tilted by e lands 2e off; see the C).
    k = v3_dot(ax, ay, az, cx, cy, cz)
    if not (s > 0) or not (abs(k) <= 1e-12 * s) then
        local px, py, pz = v3_any_perpendicular(ax, ay, az)
        return 0.0, px, py, pz
    end
    -- The half angle's sine from 1 - d (no cancellation here), its cosine from
    -- |a x b| = 2 sin(half) cos(half).
    local sin_half = sqrt((1 - d) / 2)
    local cos_half = v3_len(v3_cross(ax, ay, az, bx, by, bz)) / (2 * sin_half)
    k = sin_half / s
    return cos_half, cx * k, cy * k, cz * k
end
M.q_from_to = q_from_to

-- The turn from unit a to unit b as q_from_to gives it, not brought to unit length (for a
-- product normalised after); nearly opposite vectors take q_from_to's careful way.
function M.q_turn(ax, ay, az, bx, by, bz)
    local d = v3_dot(ax, ay, az, bx, by, bz)
    if d > -0.5 then
        local cx, cy, cz = v3_cross(ax, ay, az, bx, by, bz)
        return 1 + d, cx, cy, cz
    end
    return q_from_to(ax, ay, az, bx, by, bz)
end

-- The fraction t of the rotation q (w >= 0): same axis, t times the angle.
local function q_fraction(w, x, y, z, t)
    local s = sqrt(x * x + y * y + z * z)
    if t == 1 or not (s > 0) then return w, x, y, z end
    local half = atan2(s, w) * t
    local k = sin(half) / s
    return cos(half), x * k, y * k, z * k
end
M.q_fraction = q_fraction

-- Spherical interpolation from a (t = 0) to b (t = 1) along the shorter arc.
function M.q_slerp(aw, ax, ay, az, bw, bx, by, bz, t)
    local dw, dx, dy, dz = q_mul(bw, bx, by, bz, aw, -ax, -ay, -az)
    if dw < 0 then dw, dx, dy, dz = -dw, -dx, -dy, -dz end
    local fw, fx, fy, fz = q_fraction(dw, dx, dy, dz, t)
    return q_normalize(q_mul(fw, fx, fy, fz, aw, ax, ay, az))
end

-- The rotation by angle (radians) about unit axis.
function M.q_axis_angle(ax, ay, az, angle)
    local s = sin(angle / 2)
    return cos(angle / 2), ax * s, ay * s, az * s
end

return M
