/*
 * ik_math.h - tiny inline 2D and 3D vector and quaternion helpers for the core (private).
 *
 * By-value structs, radians. Degenerate cases have defined results: normalising a zero
 * vector returns the fallback the caller gives, never a NaN.
 */
#ifndef IK_MATH_H
#define IK_MATH_H

#include <float.h>
#include <math.h>

#include "ik.h"

/* For the few helpers that must be inlined to be specialised (a constant dimension). */
#if defined(__GNUC__) || defined(__clang__)
#define IK_ALWAYS_INLINE inline __attribute__((always_inline))
#define IK_NOINLINE __attribute__((noinline))
/* A header's rarely taken path, kept out of the inlined callers (unused in some files). */
#define IK_OUT_OF_LINE __attribute__((noinline, unused))
#else
#define IK_OUT_OF_LINE inline
#define IK_ALWAYS_INLINE inline
#define IK_NOINLINE
#endif

#define IK_PI 3.14159265358979323846
#define IK_TWO_PI 6.28318530717958647692

typedef struct ik_vec2 {
    ik_real x, y;
} ik_vec2;

static inline ik_vec2 ik_v2(ik_real x, ik_real y)
{
    ik_vec2 v;
    v.x = x;
    v.y = y;
    return v;
}
/* Loads and stores of the chain's arrays: dim numbers a point. */
static inline ik_vec2 ik_v2_load(const ik_real *p) { return ik_v2(p[0], p[1]); }
static inline void ik_v2_store(ik_real *p, ik_vec2 v) { p[0] = v.x, p[1] = v.y; }
static inline ik_vec2 ik_v2_add(ik_vec2 a, ik_vec2 b) { return ik_v2(a.x + b.x, a.y + b.y); }
static inline ik_vec2 ik_v2_sub(ik_vec2 a, ik_vec2 b) { return ik_v2(a.x - b.x, a.y - b.y); }
static inline ik_vec2 ik_v2_scale(ik_vec2 a, ik_real s) { return ik_v2(a.x * s, a.y * s); }
static inline ik_real ik_v2_dot(ik_vec2 a, ik_vec2 b) { return a.x * b.x + a.y * b.y; }
/* z of the 3D cross product: > 0 when b is counter-clockwise from a. */
static inline ik_real ik_v2_cross(ik_vec2 a, ik_vec2 b) { return a.x * b.y - a.y * b.x; }
/*
 * sqrt(dot) is the fast path; when the square overflows or underflows (coordinates near
 * 1e300 or 1e-160) hypot gives the exact length instead.
 */
static inline ik_real ik_v2_len(ik_vec2 a)
{
    ik_real d = a.x * a.x + a.y * a.y;
    if (d < 1e300 && d > 1e-300) return sqrt(d);
    return hypot(a.x, a.y);
}
static inline ik_vec2 ik_v2_perp(ik_vec2 a) { return ik_v2(-a.y, a.x); }
/* a rotated by the angle whose (cos, sin) is r: complex multiplication. */
static inline ik_vec2 ik_v2_rotate(ik_vec2 a, ik_vec2 r)
{
    return ik_v2(r.x * a.x - r.y * a.y, r.y * a.x + r.x * a.y);
}

/* a rotated back by the angle whose (cos, sin) is r: a * conj(r). */
static inline ik_vec2 ik_v2_unrotate(ik_vec2 a, ik_vec2 r)
{
    return ik_v2(r.x * a.x + r.y * a.y, r.x * a.y - r.y * a.x);
}
/*
 * v pulled back to unit length to first order, v (3 - |v|^2) / 2: for products of unit
 * turns, which rounding moves off unit length by a few ulps; no square root.
 */
static inline ik_vec2 ik_v2_renorm(ik_vec2 v) { return ik_v2_scale(v, (3 - ik_v2_dot(v, v)) / 2); }

/*
 * a scaled by a power of two (exact, same direction) when it is so long that a product of
 * two such vectors could overflow, or so short that one could underflow (and a subnormal
 * vector divided by its length is not unit: (5e-324, 5e-324) gave (0.727, 0.727)).
 */
static inline ik_vec2 ik_v2_tame(ik_vec2 a)
{
    ik_real d = a.x * a.x + a.y * a.y, len;
    if (d < 1e300 && d > 1e-300) return a; /* 1e-150 < |a| < 1e150: the usual case */
    len = hypot(a.x, a.y);
    if (len > 1e150) return ik_v2(a.x * 0x1p-600, a.y * 0x1p-600);
    if (len < 1e-150) return ik_v2(a.x * 0x1p600, a.y * 0x1p600);
    return a;
}

/* a / |a|, or fallback when a is zero. Finite for every finite a, even when |a| overflows. */
static inline ik_vec2 ik_v2_normalize_or(ik_vec2 a, ik_vec2 fallback)
{
    ik_real len;
    a = ik_v2_tame(a);
    len = ik_v2_len(a);
    if (!(len > 0.0)) return fallback;
    return ik_v2(a.x / len, a.y / len);
}

/* The angle that turns a towards b, in [-pi, pi]; 0 when either is zero. */
static inline ik_real ik_v2_angle_between(ik_vec2 a, ik_vec2 b)
{
    /*
     * Rescaled before the products: they overflowed (inf - inf made a NaN, if only until
     * a check) or underflowed to 0 (atan2(0, 0): no turn for vectors below 1e-160). Both
     * products scale by the same power of two, so the angle is the same.
     */
    a = ik_v2_tame(a), b = ik_v2_tame(b);
    return atan2(ik_v2_cross(a, b), ik_v2_dot(a, b));
}

/*
 * The angle wrapped to [-pi, pi]: remainder(a, 2 pi), which is exact. The common cases are
 * done without the call: for |a| in (pi, 3 pi) the quotient is 1 and a -+ 2 pi is exact
 * (Sterbenz: a and 2 pi are within a factor of 2), so the bits are remainder()'s.
 */
static inline ik_real ik_wrap_angle(ik_real a)
{
    if (a >= -IK_PI && a <= IK_PI) return a;
    if (a > IK_PI && a < 3 * IK_PI) return a - IK_TWO_PI;
    if (a < -IK_PI && a > -3 * IK_PI) return a + IK_TWO_PI;
    return remainder(a, IK_TWO_PI);
}

/*
 * The turn (cos a, sin a) of an angle already wrapped by ik_wrap_angle. A 2D angle is kept
 * wrapped and posed by the turn of the wrapped value, so the angle read back and the pose
 * agree: cos(1e9) itself differs from cos(remainder(1e9, 2 pi)) by 4e-8, as 2 pi is rounded.
 */
static inline ik_vec2 ik_v2_turn(ik_real wrapped)
{
    return ik_v2(cos(wrapped), sin(wrapped));
}

static inline ik_real ik_clamp(ik_real v, ik_real lo, ik_real hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* ---- 3D ---- */

typedef struct ik_vec3 {
    ik_real x, y, z;
} ik_vec3;

/* A rotation: w + xi + yj + zk, unit length. */
typedef struct ik_quat {
    ik_real w, x, y, z;
} ik_quat;

static inline ik_vec3 ik_v3(ik_real x, ik_real y, ik_real z)
{
    ik_vec3 v;
    v.x = x;
    v.y = y;
    v.z = z;
    return v;
}
static inline ik_vec3 ik_v3_load(const ik_real *p) { return ik_v3(p[0], p[1], p[2]); }
static inline void ik_v3_store(ik_real *p, ik_vec3 v) { p[0] = v.x, p[1] = v.y, p[2] = v.z; }
static inline ik_vec3 ik_v3_add(ik_vec3 a, ik_vec3 b) { return ik_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline ik_vec3 ik_v3_sub(ik_vec3 a, ik_vec3 b) { return ik_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline ik_vec3 ik_v3_scale(ik_vec3 a, ik_real s) { return ik_v3(a.x * s, a.y * s, a.z * s); }
static inline ik_real ik_v3_dot(ik_vec3 a, ik_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline ik_vec3 ik_v3_cross(ik_vec3 a, ik_vec3 b)
{
    return ik_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

/* As ik_v2_len: sqrt on the fast path, an overflow-free fallback at the extremes. */
static inline ik_real ik_v3_len(ik_vec3 a)
{
    ik_real d = ik_v3_dot(a, a);
    if (d < 1e300 && d > 1e-300) return sqrt(d);
    return hypot(hypot(a.x, a.y), a.z);
}

/* As ik_v2_tame. */
static inline ik_vec3 ik_v3_tame(ik_vec3 a)
{
    ik_real d = ik_v3_dot(a, a), len;
    if (d < 1e300 && d > 1e-300) return a;
    len = hypot(hypot(a.x, a.y), a.z);
    if (len > 1e150) return ik_v3_scale(a, 0x1p-600);
    if (len < 1e-150) return ik_v3_scale(a, 0x1p600);
    return a;
}

/* ik_v3_normalize_or for vectors near 0 or beyond 1e150. */
static IK_OUT_OF_LINE ik_vec3 ik_v3_normalize_slow(ik_vec3 a, ik_vec3 fallback)
{
    ik_real len;
    a = ik_v3_tame(a);
    len = ik_v3_len(a);
    if (!(len > 0.0)) return fallback;
    return ik_v3(a.x / len, a.y / len, a.z / len);
}

/*
 * a / |a|, or fallback when a is zero; finite for every finite a. Always inlined (GCC kept
 * a called copy in every file, its vectors passed through memory: a fifth of a 3D two-bone
 * solve); the rare slow path is not.
 */
static IK_ALWAYS_INLINE ik_vec3 ik_v3_normalize_or(ik_vec3 a, ik_vec3 fallback)
{
    ik_real d = ik_v3_dot(a, a);
    if (d < 1e300 && d > 1e-300) { /* the fast path: one square root, one division */
        ik_real inv = 1 / sqrt(d);
        return ik_v3(a.x * inv, a.y * inv, a.z * inv);
    }
    return ik_v3_normalize_slow(a, fallback);
}

/* A unit vector perpendicular to unit u: u x e, e the axis u leans on least. */
static inline ik_vec3 ik_v3_any_perpendicular(ik_vec3 u)
{
    ik_real ax = fabs(u.x), ay = fabs(u.y), az = fabs(u.z);
    ik_vec3 e = ax <= ay && ax <= az ? ik_v3(1, 0, 0) : (ay <= az ? ik_v3(0, 1, 0) : ik_v3(0, 0, 1));
    return ik_v3_normalize_or(ik_v3_cross(u, e), ik_v3(0, 0, 1));
}

static inline ik_quat ik_q(ik_real w, ik_real x, ik_real y, ik_real z)
{
    ik_quat q;
    q.w = w;
    q.x = x;
    q.y = y;
    q.z = z;
    return q;
}
static inline ik_quat ik_q_identity(void) { return ik_q(1, 0, 0, 0); }
static inline ik_quat ik_q_conj(ik_quat q) { return ik_q(q.w, -q.x, -q.y, -q.z); }

/* a * b: rotate by b, then by a. */
static inline ik_quat ik_q_mul(ik_quat a, ik_quat b)
{
    return ik_q(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}

/* q / |q|; the identity for a zero (or non-finite) q. One division for a q whose squared
   length is within 1e-300 to 1e300 (every q the solvers make); outside, the length first so
   that its square neither overflows nor underflows. */
static inline ik_quat ik_q_normalize(ik_quat q)
{
    ik_real d = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z, len, inv;
    if (d < 1e300 && d > 1e-300) {
        inv = 1 / sqrt(d);
        return ik_q(q.w * inv, q.x * inv, q.y * inv, q.z * inv);
    }
    len = sqrt(d);
    if (!(len > 0.0) || !isfinite(len)) return ik_q_identity();
    return ik_q(q.w / len, q.x / len, q.y / len, q.z / len);
}

/* v rotated by unit q: v + 2w (u x v) + 2 u x (u x v), u the vector part. */
static inline ik_vec3 ik_q_rotate(ik_quat q, ik_vec3 v)
{
    ik_vec3 u = ik_v3(q.x, q.y, q.z);
    ik_vec3 t = ik_v3_scale(ik_v3_cross(u, v), 2);
    return ik_v3_add(ik_v3_add(v, ik_v3_scale(t, q.w)), ik_v3_cross(u, t));
}

/* The bone direction of a frame: its local +x axis in the parent's space. */
static inline ik_vec3 ik_q_x_axis(ik_quat q)
{
    return ik_v3(1 - 2 * (q.y * q.y + q.z * q.z), 2 * (q.x * q.y + q.w * q.z),
                 2 * (q.x * q.z - q.w * q.y));
}

/*
 * The smallest rotation taking unit a to unit b (w >= 0). Near a half turn 1 + a.b loses
 * its digits (a direction 1e-6 rad off was the price), so there the angle comes from atan2
 * of the cross and dot products and the axis from the cross product, both accurate to the
 * last bits. Exactly opposite vectors: the half turn about a fixed perpendicular of a, so
 * the result is always defined and deterministic.
 */
static inline ik_quat ik_q_from_to(ik_vec3 a, ik_vec3 b)
{
    ik_real d = ik_v3_dot(a, b), s, sin_half, cos_half, k;
    ik_vec3 axis = ik_v3_cross(a, b);
    if (d > -0.5) return ik_q_normalize(ik_q(1 + d, axis.x, axis.y, axis.z));
    /*
     * The cross product of nearly opposite vectors is small and carries an error of a few
     * ulps along a; taken out, the axis is perpendicular to a again, so turning a about it
     * lands on b however far the axis itself is off. Taken out twice: when the cross product
     * is nothing but that error (b opposite a to the last bits), what the first pass leaves
     * is small and still 1e-8 along a (a reversed bone's world rotation was 7.5e-9 off).
     */
    axis = ik_v3_tame(axis);
    axis = ik_v3_sub(axis, ik_v3_scale(a, ik_v3_dot(a, axis)));
    axis = ik_v3_tame(axis);
    axis = ik_v3_sub(axis, ik_v3_scale(a, ik_v3_dot(a, axis)));
    s = ik_v3_len(axis);
    /*
     * And when nothing of the cross product stands across a, what is left still lies along
     * it: a is unit only to an ulp or two, so each pass keeps (1 - a.a) of that part (a
     * fuzzed 3D chain whose bone FABRIK turned end for end, its direction off unit by 2 ulps
     * and b its opposite to the last bits, kept a world rotation turned about the bone's own
     * direction, pointing against its joints). b is then opposite a to rounding: a half
     * turn about any axis across a, as for a cross product of nothing. Across means to 1e-12:
     * an axis tilted by e towards a lands 2e off b (at 1e-3, a second fuzzed case 0.002 off);
     * two passes leave every other axis across a to 3e-16 (unit a and b at every angle from
     * 1 to 1e-16 short of a half turn).
     */
    if (!(s > 0) || !(fabs(ik_v3_dot(a, axis)) <= 1e-12 * s)) {
        axis = ik_v3_any_perpendicular(a);
        return ik_q(0, axis.x, axis.y, axis.z);
    }
    /*
     * The half angle's sine from 1 - d (at least 1.5 here: no cancellation), its cosine
     * from sin(angle) = |a x b| = 2 sin(half) cos(half), which is exact for small |a x b|
     * where (1 + d) would cancel; no trigonometric call.
     */
    sin_half = sqrt((1 - d) / 2);
    cos_half = ik_v3_len(ik_v3_cross(a, b)) / (2 * sin_half);
    k = sin_half / s;
    return ik_q(cos_half, axis.x * k, axis.y * k, axis.z * k);
}

/*
 * The turn from unit a to unit b as ik_q_from_to gives it, but not brought to unit length
 * (its length is sqrt(2 (1 + a.b))): for a product that is normalised after, which saves
 * a square root and four divisions. Nearly opposite vectors take ik_q_from_to's careful way.
 */
static inline ik_quat ik_q_turn(ik_vec3 a, ik_vec3 b)
{
    ik_real d = ik_v3_dot(a, b);
    ik_vec3 axis = ik_v3_cross(a, b);
    if (d > -0.5) return ik_q(1 + d, axis.x, axis.y, axis.z);
    return ik_q_from_to(a, b);
}

/* The fraction t of the rotation q (w >= 0): same axis, t times the angle (a slerp). */
static inline ik_quat ik_q_fraction(ik_quat q, ik_real t)
{
    ik_real s = sqrt(q.x * q.x + q.y * q.y + q.z * q.z), half, k;
    if (t == 1 || !(s > 0)) return q;
    half = atan2(s, q.w) * t;
    k = sin(half) / s;
    return ik_q(cos(half), q.x * k, q.y * k, q.z * k);
}

/* Spherical interpolation from a (t = 0) to b (t = 1) along the shorter arc. */
static inline ik_quat ik_q_slerp(ik_quat a, ik_quat b, ik_real t)
{
    ik_quat delta = ik_q_mul(b, ik_q_conj(a));
    if (delta.w < 0) delta = ik_q(-delta.w, -delta.x, -delta.y, -delta.z);
    return ik_q_normalize(ik_q_mul(ik_q_fraction(delta, t), a));
}

/* The rotation by angle (radians) about unit axis. */
static inline ik_quat ik_q_axis_angle(ik_vec3 axis, ik_real angle)
{
    ik_real s = sin(angle / 2);
    return ik_q(cos(angle / 2), axis.x * s, axis.y * s, axis.z * s);
}

#endif /* IK_MATH_H */
