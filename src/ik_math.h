/*
 * ik_math.h - tiny inline 2D vector helpers for the core (private).
 *
 * By-value structs, radians. Degenerate cases have defined results: normalising a zero
 * vector returns the fallback the caller gives, never a NaN.
 */
#ifndef IK_MATH_H
#define IK_MATH_H

#include <math.h>

#include "ik.h"

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

/*
 * a scaled by a power of two (exact, same direction) when it is so long that a product of
 * two such vectors could overflow.
 */
static inline ik_vec2 ik_v2_tame(ik_vec2 a)
{
    return ik_v2_len(a) <= 1e150 ? a : ik_v2(a.x * 0x1p-600, a.y * 0x1p-600);
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
    ik_real cross = ik_v2_cross(a, b), dot = ik_v2_dot(a, b);
    if (!isfinite(cross) || !isfinite(dot)) { /* products overflowed: rescale, same angle */
        a = ik_v2_tame(a), b = ik_v2_tame(b);
        cross = ik_v2_cross(a, b), dot = ik_v2_dot(a, b);
    }
    return atan2(cross, dot);
}

/* The angle wrapped to [-pi, pi]. remainder() is exact, so wrapping adds no rounding. */
static inline ik_real ik_wrap_angle(ik_real a) { return remainder(a, IK_TWO_PI); }

static inline ik_real ik_clamp(ik_real v, ik_real lo, ik_real hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

#endif /* IK_MATH_H */
