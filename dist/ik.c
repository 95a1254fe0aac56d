/* ik.c - the core of ik in one file, made by tools/amalgamate.sh from src/ (do not
   edit: edit src/ and run make amalgamation). Compile it with ik.h beside it. */
#include "ik.h"

/* ---- src/ik_math.h ---- */
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

/* ---- src/chain.h ---- */
/*
 * chain.h - the chain's layout and the internal interface of the core's layers (private).
 *
 * The core reads bottom-up; each section below belongs to one file, and a file only calls
 * the sections above its own:
 *   ik_math.h    vectors, complex numbers (2D turns), quaternions
 *   chain.c      the chain: layout, settings, pose, forward kinematics, attachment
 *   limits.c     joint limits, and posing a bone along a direction within them
 *   joint_space.c  damped least-squares steps on joint rotations, limits as bounds: the
 *                finish of every single-chain solver and, bone by bone, of rigs
 *   sweep.c      one CCD sweep: the CCD solver's iteration, and the escape's last resort
 *   escape.c     progress of an iterative solve: lock-ups (the escape) and stalls
 *   two_bone.c fabrik.c ccd.c relax.c aim.c   the solvers, one file each
 *   batch.c      FABRIK on many chains at once, in lanes on the vector units
 *                (batch_lanes.h: its passes, written once per instruction set)
 *   goal.c       a chain's goal and the finish around a solve: distance, angle, the pose
 *                before, orientation, mix, max_turn (for solve.c and the rig)
 *   solve.c      the dispatcher: the solvers' table, goals, stretch, softness, solve_many
 *   rig.c        several chains solved together: the tree and the solve's order, with
 *                rig_fabrik.c and rig_relax.c (each rig solver's passes) and rig_joint.c
 *                (the stages on rotations); rig_tree.h is what the four share
 *   motion.c     chains moved over time: follow-the-leader (drag), secondary motion
 *                (simulate)
 *   gait.c       a stepping controller: feet that plant and step, setting legs' goals
 *   ik_lua.c     the Lua binding (the only file that includes lua.h)
 *
 * A chain is one block: this header followed by its arrays. Two things can be the truth
 * about where the bones are:
 *   - the local pose (2D: unit complex numbers (cos, sin) with the exact angle when one was
 *     set; 3D: unit quaternions), from which forward kinematics (ik_chain_update) derives
 *     the world data: joint positions, bone directions, 3D world rotations. Setters mark it
 *     stale from the first changed bone;
 *   - or the joint positions themselves, after a position-based solve (FABRIK, relaxation):
 *     the solve leaves its points as they are (pose_behind), and the local pose is derived
 *     from them when it is read (ik_chain_derive_*, pure) or needed by a change
 *     (ik_chain_settle). The world directions (and 3D world rotations) then still hold
 *     the pose before that solve: zero-length bones keep that direction, and 3D bones turn
 *     from it by the smallest rotation (which keeps their twist).
 * Either way joint positions are dim numbers each (2D chains carry no z).
 */
#ifndef IK_CHAIN_H
#define IK_CHAIN_H


/* Which limits a bone has (bit flags). */
enum {
    IK_LIMIT_RANGE = 1, /* 2D: local angle in [min, max] */
    IK_LIMIT_HINGE = 2, /* 3D: a turn about axis by an angle in [min, max] */
    IK_LIMIT_CONE = 4,  /* 3D: direction within cone of the parent's +x */
    IK_LIMIT_TWIST = 8  /* 3D: turn about the bone's own axis in [twist_min, twist_max] */
};

typedef struct ik_limit {
    int flags;
    ik_real min, max; /* RANGE and HINGE */
    ik_vec3 axis;     /* HINGE: unit, in the parent frame */
    ik_real cone;     /* CONE: half angle */
    ik_real twist_min, twist_max;
} ik_limit;

/* "ikch": the first word of every chain, checked by the binding against type confusion. */
#define IK_CHAIN_MAGIC 0x696b6368u

struct ik_chain {
    unsigned magic;
    int n;           /* bones */
    int dim;         /* 2 or 3 */
    int stale_from;  /* first bone whose world data is out of date; n when all fresh */
    int pose_behind; /* the joints moved in a solve; the local pose is derived from them */
    int limited;     /* how many bones have limits: 0 takes the solvers' fast paths */
    int kicked;      /* the escape bent the chain during the current solve */
    int batched;     /* ik_solve_many: the chain waits in the batch being gathered */
    ik_settings settings;
    ik_real scale;     /* stretch factor: world bone length = length * scale */
    ik_real reach;     /* the sum of the lengths */
    ik_real longest;   /* the longest bone */

    /* The base: the world frame of joint 0 (for an attached chain, derived from the parent). */
    ik_vec3 base;       /* z = 0 in 2D */
    ik_real base_angle; /* 2D: world angle of the base frame, wrapped */
    ik_vec2 base_turn;  /* 2D: (cos, sin) of base_angle */
    ik_quat base_rot;   /* 3D: world rotation of the base frame */

    /* Attachment (see ik_chain_follow). */
    ik_chain *parent;   /* NULL for a free chain */
    int parent_joint;   /* the parent's joint the base follows, 0..parent->n */
    ik_real offset_angle;  /* 2D: the base frame's turn from the parent bone's frame */
    ik_vec2 offset_turn;
    ik_quat offset_rot;    /* 3D */
    unsigned long long version;     /* counts changes of this chain's world data */
    unsigned long long parent_seen; /* the parent's version the base was derived from */
    unsigned long long links;       /* counts this chain's attach and detach calls: a rig
                                       compares it, as an address can be reused */
    ik_chain *down; /* ik_chain_follow's scratch: the child on the way down to the chain
                       being brought up to date */
    unsigned long long base_moves; /* counts the changes of version that only moved the base
                                      (ik_chain_pose_version) */

    /* Tracking's prediction (joint_space.c, predict): track_turn / track_rot hold the local
       pose a tracked solve started from; track_have says the last solve was such a one, and
       track_seen is the pose version it left. */
    int track_recorded;  /* the solve under way kept its start */
    int track_have;
    unsigned long long track_seen;

    /* The tip hold: a closed loop (ik_chain_attach_tip). While held, has_target is set and
       target is the held point as last read (ik_chain_read_hold). */
    ik_chain *tip_parent;  /* NULL: the tip is free */
    int tip_joint;         /* 0..tip_parent->n */
    ik_vec3 tip_offset;    /* in the frame of tip_parent's bone that ends at tip_joint */
    unsigned long long holds; /* counts attach_tip and detach_tip calls: a rig compares it */

    /* Goals kept on the chain. */
    int has_target, has_orientation;
    ik_vec3 target;        /* z = 0 in 2D */
    ik_real target_angle;  /* 2D, wrapped */
    ik_vec2 target_turn;   /* 2D: (cos, sin) of target_angle */
    ik_quat target_rot;    /* 3D */

    /* Secondary motion (motion.c): the state simulate keeps between calls. */
    int sim_live;          /* sim holds the joints of the last two sub-steps, and the local
                              pose has not changed since (sim_pose): the joints keep their speed */
    ik_real sim_scale;     /* the stretch factor then */
    ik_vec3 sim_base;      /* the base then, which the next call's sub-steps move from */
    ik_vec3 sim_base_before; /* the base a call earlier, and that call's time (0: none): the
                                base's path through the three is a parabola */
    ik_real sim_time;
    ik_real sim_base_angle; /* 2D */
    ik_quat sim_base_rot;   /* 3D */

    ik_real *length;    /* [n] */
    ik_real *weight;    /* [n + 1] relaxation weight per joint, aim weight per bone */
    ik_real *joint;     /* [(n + 1) * dim] world positions */
    ik_real *dir;       /* [n * dim] world unit direction of each bone */
    ik_real *work;      /* [(n + 1) * dim] scratch points for the solvers */
    ik_vec2 *turn;      /* 2D [n]: (cos, sin) of bone i's local angle: the 2D pose */
    ik_real *angle;     /* 2D [n]: bone i's local angle, wrapped, when known exactly (the
                           value set_angle was given); IK_ANGLE_UNKNOWN once a solve turned
                           the bone: it is then derived from turn */
    ik_quat *rot;       /* 3D [n]: local rotation of bone i relative to its parent */
    ik_quat *wrot;      /* 3D [n]: world rotation of bone i */
    ik_vec2 *prev_turn;  /* 2D [n]: the local pose before the solve, for mix and max_turn */
    ik_real *prev_angle; /* 2D [n] */
    ik_quat *prev_rot;   /* 3D [n] */
    ik_vec2 *best_turn;  /* 2D [n]: the best pose of a solve's tries so far (solve.c) */
    ik_real *best_angle; /* 2D [n] */
    ik_quat *best_rot;   /* 3D [n] */
    ik_quat *points_rot; /* 3D [n]: the world rotations a solver on points (FABRIK,
                            relaxation) derives its pose from, kept over joint-space steps
                            (joint_space.c) */
    ik_real *sim;        /* [2 (n + 1) dim]: the joints after the last sub-step of simulate,
                            then the ones a sub-step before: their speed */
    ik_real *sim_scratch; /* [n (dim + 2)]: a sub-step's bone directions before it (dim
                             each), and its tridiagonal sweep (2 each) */
    ik_vec2 *rest_turn;  /* 2D [n]: the rest pose simulate's stiffness pulls towards */
    ik_quat *rest_rot;   /* 3D [n] */
    ik_vec2 *sim_turn;   /* 2D [n]: the local pose simulate left (a change gives no speed) */
    ik_quat *sim_rot;    /* 3D [n] */
    ik_vec2 *track_turn; /* 2D [n]: the local pose the last tracked solve started from */
    ik_quat *track_rot;  /* 3D [n] */
    ik_limit *limit;     /* [n] */
};

/* The marker of an angle that must be derived from its turn (see struct ik_chain). */
#define IK_ANGLE_UNKNOWN NAN

/* ---- chain.c ---- */

static inline ik_real *ik_joint(const ik_chain *c, int i) { return c->joint + (size_t)i * (size_t)c->dim; }
static inline ik_real *ik_dir(const ik_chain *c, int i) { return c->dir + (size_t)i * (size_t)c->dim; }
static inline ik_vec2 ik_joint2(const ik_chain *c, int i) { return ik_v2_load(c->joint + 2 * (size_t)i); }
static inline ik_vec3 ik_joint3(const ik_chain *c, int i) { return ik_v3_load(c->joint + 3 * (size_t)i); }
static inline ik_vec2 ik_dir2(const ik_chain *c, int i) { return ik_v2_load(c->dir + 2 * (size_t)i); }
static inline ik_vec3 ik_dir3(const ik_chain *c, int i) { return ik_v3_load(c->dir + 3 * (size_t)i); }
/* Any joint as a 3D point (z = 0 in 2D). */
static inline ik_vec3 ik_joint_v3(const ik_chain *c, int i)
{
    const ik_real *p = ik_joint(c, i);
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

/* Any bone's world direction as a 3D vector (z = 0 in 2D). */
static inline ik_vec3 ik_dir_v3(const ik_chain *c, int i)
{
    const ik_real *d = ik_dir(c, i);
    return ik_v3(d[0], d[1], c->dim == 3 ? d[2] : 0);
}

/* Bone i's local angle (2D), wrapped: the exact one set_angle was given, or atan2. */
static inline ik_real ik_turn_angle(const ik_chain *c, int i)
{
    ik_real a = c->angle[i];
    return a == a ? a : atan2(c->turn[i].y, c->turn[i].x);
}

/* Sets bone i's local angle (2D): the angle wrapped, and the turn of that same angle. */
static inline void ik_chain_set_turn_angle(ik_chain *c, int i, ik_real angle)
{
    c->angle[i] = ik_wrap_angle(angle);
    c->turn[i] = ik_v2_turn(c->angle[i]);
}

/* Joint m's distance from target (a 2D chain's z ignored: the same bits as with z = 0). */
static inline ik_real ik_joint_distance(const ik_chain *c, int m, ik_vec3 target)
{
    if (c->dim == 2) return ik_v2_len(ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, m)));
    return ik_v3_len(ik_v3_sub(target, ik_joint3(c, m)));
}

/* The argument checks of the setters and getters: a status for the caller to return. */
#define IK_CHECK_BONE(c, i) \
    if ((i) < 0 || (i) >= (c)->n) return IK_ERR_INDEX
#define IK_CHECK_JOINT(c, i) \
    if ((i) < 0 || (i) > (c)->n) return IK_ERR_INDEX
#define IK_CHECK_DIM(c, d) \
    if ((c)->dim != (d)) return IK_ERR_DIMENSION

/* count user numbers: finite (IK_ERR_NOT_FINITE) and within IK_MAX_COORD (IK_ERR_RANGE). */
ik_status ik_check_coords(const ik_real *v, int count);

static inline void ik_chain_mark_stale(ik_chain *c, int bone)
{
    if (bone < c->stale_from) c->stale_from = bone;
}

/*
 * Brings an attached chain's base up to date with its parents (carrying it rigidly);
 * nothing for a free chain. Every entry point calls it first. O(depth), writing nothing
 * when no parent changed.
 */
void ik_chain_follow(ik_chain *c);
/* The same one level up: c's base from its parent, which must be up to date. */
void ik_chain_follow_parent(ik_chain *c);

/* World data of bone i and joint i + 1 from bone i - 1's (or the base's). */
void ik_chain_fk_bone(ik_chain *c, int i);
/*
 * Forward kinematics: world data up to date with the local pose (nothing while pose_behind:
 * the joints are the truth). Does not follow the parent.
 */
void ik_chain_fk(ik_chain *c);

/*
 * Derived from the joints while pose_behind (pure: callable by readers). The world
 * direction of bone i: its segment's, or its direction before the solve for a segment with
 * no direction (a zero-length bone). 2D: the local turn (kept unit to first order); 3D: the
 * world rotation, the smallest turn from its direction before, applied to its rotation
 * before.
 */
ik_vec2 ik_chain_derive_dir2(const ik_chain *c, int i);
ik_vec2 ik_chain_derive_turn(const ik_chain *c, int i);
ik_quat ik_chain_derive_wrot(const ik_chain *c, int i);
/* 2D local angle, world angle; 3D local, world rotation: current in either state. */
ik_real ik_chain_local_angle(const ik_chain *c, int i);
ik_real ik_chain_world_angle_of(const ik_chain *c, int i);
ik_quat ik_chain_local_rot(const ik_chain *c, int i);
ik_quat ik_chain_world_rot(const ik_chain *c, int i);

/*
 * Makes the local pose the truth again (and the world directions current), keeping the
 * joints as the solve left them. Nothing when the pose is not behind.
 */
void ik_chain_settle(ik_chain *c);

/* Marks a change of the chain's world data, for its children. */
static inline void ik_chain_changed(ik_chain *c) { c->version++; }
/* The same for a change that only moved the base (its own, or its parent's frame). */
static inline void ik_chain_base_moved(ik_chain *c)
{
    c->version++;
    c->base_moves++;
}
/* Counts every change but the base's moves: the local pose is as a solve left it while this
   stays the same (tracking's prediction asks it). */
static inline unsigned long long ik_chain_pose_version(const ik_chain *c)
{
    return c->version - c->base_moves;
}

/* The goal kept on c: coordinates already checked (ik_check_coords); -0 taken as +0. */
static inline void ik_chain_keep_target(ik_chain *c, const ik_real *t)
{
    c->target = ik_v3(t[0] + 0.0, t[1] + 0.0, c->dim == 3 ? t[2] + 0.0 : 0);
    c->has_target = 1;
}

/* The world frame at joint j of c (j = 0: the base frame), as a child attached there sees it. */
ik_vec2 ik_chain_frame2(const ik_chain *c, int j);
ik_quat ik_chain_frame3(const ik_chain *c, int j);

/* The point held at joint j of c, moved by offset in the frame there; c's world data current. */
ik_vec3 ik_hold_point(const ik_chain *c, int j, ik_vec3 offset);

/* A held chain's goal (target) read where the held point is now: the chain holding it
   brought up to date (its world data; it does not move). Nothing for a chain not held. */
void ik_chain_read_hold(ik_chain *c);

/*
 * For the rig: c's base (and joint 0) put on its parent's joint as the parent is now, and
 * nothing else (the rig's passes use the joints as their working points).
 */
void ik_chain_take_base(ik_chain *c);

/*
 * The side a chain prefers to bend to, seen along the unit line (base to target): 2D, the
 * side bend asks for (1: positive joint angles, the joints clockwise of the line, as in the
 * two-bone solve); 3D, the pole made perpendicular to the line, or a fixed perpendicular of
 * the line without a pole (or with one along it). Unit.
 */
ik_vec3 ik_chain_bend_side(const ik_chain *c, ik_vec3 line);

/* The reach of bones 0..m-1 (and their longest): the cached sums for the whole chain. */
static inline ik_real ik_chain_reach_to(const ik_chain *c, int m, ik_real *longest)
{
    ik_real total = 0, most = 0;
    int i;
    if (m == c->n) {
        if (longest) *longest = c->longest;
        return c->reach;
    }
    for (i = 0; i < m; i++) {
        total += c->length[i];
        if (c->length[i] > most) most = c->length[i];
    }
    if (longest) *longest = most;
    return total;
}

/* The iterations a solve may do: the setting, at most IK_MAX_ITERATIONS. */
static inline int ik_iteration_budget(int iterations)
{
    return iterations < IK_MAX_ITERATIONS ? iterations : IK_MAX_ITERATIONS;
}

/* Recomputes reach and longest after a length changed; keeps scale * longest in range. */
void ik_chain_lengths_changed(ik_chain *c);

/* ---- limits.c ---- */

/* The local angle (2D) or rotation (3D) of a bone moved within its limits. */
ik_real ik_limit_angle(const ik_limit *limit, ik_real angle);
ik_quat ik_limit_rotation(const ik_limit *limit, ik_quat rotation);
/*
 * For the backward passes: bone i's new world direction (unit) held within what its
 * child's limit allows, given the child's new direction (2D: its range; 3D: its cone).
 */
ik_vec3 ik_limit_backward(const ik_chain *chain, int i, ik_vec3 dir, ik_vec3 child);
/* The angle of q's turn about unit axis (its twist about that axis), in [-pi, pi]. */
ik_real ik_twist_angle(ik_quat q, ik_vec3 axis);
/* Brings every limited bone within its limits (the local pose; the cache goes stale). */
void ik_chain_clamp_limits(ik_chain *chain);
/*
 * A local angle (2D) or rotation (3D) within limit at fractions u, v, w in [0, 1] of its
 * ranges (see limits.c): the starts of a solve's other tries.
 */
ik_real ik_limit_sample_angle(const ik_limit *limit, ik_real u);
ik_quat ik_limit_sample_rotation(const ik_limit *limit, ik_real u, ik_real v, ik_real w);
/* ---- joint_space.c ---- */

/*
 * A solve that crawls (a chain with limits stuck against them, or any chain creeping near
 * its goal): damped least-squares steps on the joint angles of bones first..m-1, the
 * limits as bounds, until joint m is within tolerance of target, the
 * steps gain nothing, or `iterations` steps are spent. The chain must be settled and
 * current; its world data is current afterwards. Returns the steps used. points: for a
 * solver on points (FABRIK, relaxation): on a 3D chain without limits, each bone's world
 * rotation is then derived from the one before the steps by the smallest turn of its
 * direction (pose_behind), as the passes derive it: the twist kept.
 */
int ik_joint_finish(ik_chain *chain, ik_vec3 target, int m, int iterations, int first, int points);
/*
 * One bone in a joint-space step. A turn is an angle (in .x) for a 2D bone or a 3D hinge,
 * else a rotation vector in the world frame. ik_joint_axes: the world axes bone j turns
 * about (2D: z; a hinge: its axis; else x, y, z, or, with mode, an orthonormal set without
 * the ways out its limits block: bit 1 the swing out of its cone, bit 2 its twist beyond a
 * bound), returns how many. ik_joint_blocked: what its limits block of a turn: -1 all (a
 * 2D range or hinge at the bound the turn pushes beyond), else the mode bits (a cone or
 * twist at its bound, or that the turn would carry across it by more than half: counted
 * in, a joint its limit holds back makes the others' turns too small). ik_joint_turn:
 * turns bone j (its local pose; the caller marks the chain stale) within its limits. Bones
 * 0..j-1 must be current.
 */
/* Whether bone j has bounds on one angle (a 2D range, a 3D hinge), and that angle now. */
int ik_joint_has_bounds(const ik_chain *chain, int j);
ik_real ik_joint_bound_angle(const ik_chain *chain, int j);
int ik_joint_axes(const ik_chain *chain, int j, int mode, ik_vec3 axes[3]);
int ik_joint_blocked(const ik_chain *chain, int j, ik_vec3 turn);
void ik_joint_turn(ik_chain *chain, int j, ik_vec3 turn);
/*
 * Solves the symmetric positive definite k x k system a y = e by Cholesky (a: rows of
 * `stride` numbers; its lower half is overwritten by the factor); 0 when a is not positive
 * definite (or a pivot is not finite). The joint-space steps of chains and rigs.
 */
int ik_solve_spd(ik_real *a, int stride, int k, const ik_real *e, ik_real *y);
/*
 * Whether a solve of bones 0..m-1 is for the point behind a tip bone with an orientation
 * goal and a limit (m = n - 1): ik_joint_finish then also turns bone m - 1 so that the tip
 * bone can take its goal within its limit. The solvers end with it on chains with limits.
 */
int ik_limits_oriented(const ik_chain *chain, int m);
/* A goal within this fraction of the reach from the tip is tracked (moved a little since
   the last frame): ik_joint_track, and solve.c's other tries. 0.15: an animation moves a
   tip up to 5.5% of the reach a frame (bench/track_limits.lua), and at 0.05 the frames that
   moved more were solved afresh by the passes, which jumped (with limits: up to 1.4 rad). */
#define IK_TRACK_NEAR 0.15
/* Whether a solve of bones 0..m-1 may track at all: escape on, and not one free bone (the
   solver points it at the goal, the smallest turn there is). */
static inline int ik_may_track(const ik_chain *c, int m)
{
    return c->settings.escape && m > 0 && (m > 1 || c->limited);
}
/*
 * A solve whose joint m is already near target (a goal tracked frame by frame):
 * joint-space steps first, as ik_joint_finish. Returns 1 when they met the goal (the solve
 * is done), with the steps taken in *used; 0 otherwise (nothing done when the chain is not
 * near, or escape is off). *distance (unless NULL): joint m's from target after steps taken.
 */
int ik_joint_track(ik_chain *chain, ik_vec3 target, int m, int first, int points, int *used,
                   ik_real *distance);

/* No joint turns more than this (radians) in one joint-space step: the linearisation holds
   for small turns. */
#define IK_STEP_MAX_TURN 0.4
/*
 * The rows of a step: the tip's position (2 or 3), and with an oriented tip bone (below)
 * the turn its parent still needs (1 or 3), scaled by `scale` (a length) so both kinds of
 * row weigh alike. At most 6.
 */
typedef struct ik_rows {
    int k;             /* rows */
    int oriented;      /* the tip bone (bone m) has an orientation goal and a limit */
    ik_real unit;      /* 1 / the reach: the steps measure lengths in reaches */
    ik_real scale;     /* of the orientation rows (in reaches) */
    ik_real e[6];      /* the error: (target - tip) * unit, then the turn needed (times scale) */
    ik_vec3 gap_axis;  /* oriented: 3D the tip bone's hinge axis, or the gap's direction
                          (world); 2D (1, 0, 0) while there is a gap, else 0 (see gap_turn) */
    int hinge_tip;     /* the tip bone's limit is a hinge */
    ik_real distance;  /* the tip's from the target (world units) */
} ik_rows;

/*
 * ik_joint_track in phases, so the batch (batch.c) can take the tracking steps of many chains
 * side by side: ik_steps_track does what ik_joint_track does before its first step (0: the
 * chain is not tracked, nothing done); while ik_steps_going, ik_steps_keep, one step (the
 * solve's own, or, where ik_steps_free2 says it is the closed-form 2D step, the batch's with
 * the same arithmetic), then ik_steps_after, given whether it stepped; ik_steps_end returns
 * what ik_joint_track would.
 */
typedef struct ik_steps {
    ik_chain *c;
    ik_vec3 target;
    int m, first, points, iterations, iter, unbends, stuck, done, stopped;
    ik_real lambda2, size;
    ik_rows rows;
} ik_steps;
int ik_steps_track(ik_steps *s, ik_chain *chain, ik_vec3 target, int m, int first, int points,
                   ik_real distance); /* joint m's from target; NaN: measured */
int ik_steps_going(const ik_steps *s);
void ik_steps_keep(ik_steps *s);
int ik_steps_free2(const ik_steps *s);
void ik_steps_after(ik_steps *s, int stepped);
int ik_steps_step(ik_steps *s); /* the solve's own step: whether it stepped */
void ik_steps_run(ik_steps *s); /* the steps while going, each the solve's own */
int ik_steps_end(ik_steps *s, int *used, ik_real *distance);

/*
 * Poses bone i along world direction dir (unit): its local pose becomes the one that points
 * it there, taken in 3D as the smallest turn from its current world rotation (which keeps
 * its twist), then moved within its limits; then its world data and joint i + 1 follow by
 * forward kinematics. Bones 0..i-1 must be current (bones are posed in order from the
 * base); the chain must not be pose_behind.
 */
void ik_pose_bone(ik_chain *chain, int i, ik_vec3 dir);
/* Bone i takes the world turn (2D) or rotation (3D) given, within its limits; as above. */
void ik_pose_bone_turn(ik_chain *chain, int i, ik_vec2 world);
void ik_pose_bone_rot(ik_chain *chain, int i, ik_quat world);

/*
 * Poses bones first..last-1 to point from points[i] to points[i + 1] (dim numbers each, world
 * space), within limits, in order; a zero-length bone, or a segment with no direction,
 * keeps its world direction. The world data of those bones is current afterwards; bones
 * from last on are left stale.
 */
void ik_pose_points(ik_chain *chain, const ik_real *points, int first, int last);
/*
 * Bone i of a 3D chain, unlimited, turned onto direction u by the smallest turn from its
 * direction now (its twist kept), as ik_pose_bone does with fewer roundings and products:
 * the world rotation normalised once and kept as the bone's, the local one derived from it
 * and pulled back to unit length to first order (as ik_chain_fk_bone does); the direction
 * and joint i + 1 from the world rotation. The world data of the bones before it must be
 * current. For the lean solves of plain chains (solve.c).
 */
static IK_ALWAYS_INLINE void ik_turn_bone3(ik_chain *c, int i, ik_vec3 u)
{
    ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
    ik_quat world = ik_q_normalize(ik_q_mul(ik_q_turn(ik_dir3(c, i), u), c->wrot[i]));
    ik_quat local = ik_q_mul(ik_q_conj(parent), world);
    ik_real k = (3 - (local.w * local.w + local.x * local.x + local.y * local.y + local.z * local.z)) / 2;
    ik_vec3 dir = ik_q_x_axis(world);
    c->rot[i] = ik_q(local.w * k, local.x * k, local.y * k, local.z * k);
    c->wrot[i] = world;
    ik_v3_store(ik_dir(c, i), dir);
    ik_v3_store(ik_joint(c, i + 1), ik_v3_add(ik_joint3(c, i), ik_v3_scale(dir, c->length[i] * c->scale)));
}

/* ---- sweep.c ---- */

/*
 * One CCD iteration over joints first..m-1 towards target (the tip is joint m), each joint
 * turned by greed times the angle that points the tip at the target, within limits; the
 * world data is current afterwards. The chain must not be pose_behind.
 */
void ik_ccd_sweep(ik_chain *chain, ik_vec3 target, int m, ik_real greed, int first);

/* ---- escape.c ---- */

/*
 * The progress of an iterative solve towards a target (bones 0..m-1, the tip joint m): after
 * each iteration the solver asks what to do next.
 */
typedef struct ik_progress {
    ik_real last;      /* distance after the previous iteration */
    ik_real reach;     /* of bones 0..m-1 */
    ik_real least;     /* no pose can come closer: the distance to the reach ring, or 0 */
    ik_real mark;      /* the distance IK_STALL_ITERATIONS iterations ago (or since a kick) */
    ik_real middle;    /* the distance IK_STALL_ITERATIONS / 2 iterations after mark */
    ik_real stall;     /* a window gaining less than this fraction of distance - least stalls */
    int kicks;         /* bends so far in this solve */
    int since;         /* iterations since mark */
    int reachable;     /* escape is on and the target is within the chain's reach */
    int limited;       /* the chain has limits: a stall there is a minimum they made */
    ik_real floor;     /* distances below this are rounding, not a lock-up */
    ik_real slow;      /* an iteration gaining less than this fraction counts as stuck */
    int crawl;         /* a chain without limits not yet handed to joint-space steps */
    int m;
} ik_progress;

typedef enum ik_next {
    IK_GO_ON = 0, /* iterate again */
    IK_KICK,      /* stuck on a target within reach: bend the chain (ik_escape_kick) */
    IK_STOP,      /* stalled: no iteration gains anything any more */
    IK_CRAWL      /* creeping (a chain without limits, once a solve): joint-space steps */
} ik_next;

ik_progress ik_progress_start(const ik_chain *chain, ik_vec3 target, int m);
/* The same, given the tip's distance from the target and the base's. */
ik_progress ik_progress_from(const ik_chain *chain, int m, ik_real distance, ik_real base_distance);
/* Progress with no escape, for an error of the given scale (aiming: an angle, scale pi). */
ik_progress ik_progress_plain(ik_real error, ik_real scale);
/* distance: the tip's after this iteration (above tolerance, which the caller checks). */
ik_next ik_progress_next(const ik_chain *chain, ik_progress *progress, ik_real distance);
/*
 * Bends bones first..m-1 (the bones before first, and so joints 0..first, stay put) towards
 * the bend side (2D) or the pole (3D); the chain must be settled; its world data is current
 * afterwards.
 */
void ik_escape_kick(ik_chain *chain, ik_vec3 target, ik_progress *progress, int first);
/*
 * A stuck position-based solve on a chain with limits: the limits made the minimum, and a
 * bend rarely leaves it, so the solve spends the iterations it has left on CCD sweeps
 * (greed 1, joints first..m-1), whose every turn stays within the limits. The chain must be
 * settled and current. Returns the iterations used.
 */
int ik_escape_finish(ik_chain *chain, ik_vec3 target, int m, int iterations, int first);

/* ---- the solvers ---- */

/*
 * Each moves bones 0..m-1 (m <= n) so that joint m reaches target, from the chain's current
 * state, and returns the iterations it took. The chain has followed its parent; the world
 * data is current (or pose_behind, for FABRIK and relaxation, which start from the joints).
 * They leave it current or pose_behind. The target is within IK_MAX_COORD.
 */
/* FABRIK's *distance: joint m's from target before (NaN: to be measured), and after (NaN when
   not known: the chain was straightened, or finished by CCD sweeps). */
int ik_fabrik(ik_chain *chain, ik_vec3 target, int m, ik_real *distance);
int ik_ccd(ik_chain *chain, ik_vec3 target, int m);
int ik_relax(ik_chain *chain, ik_vec3 target, int m);
int ik_two_bone_chain(ik_chain *chain, ik_vec3 target); /* bones 0 and 1 */
/* Aim: the tip bone (bone n-1) points at target; returns iterations, *error the angle. */
int ik_aim(ik_chain *chain, ik_vec3 target, ik_real *error);
/* The angle between the tip bone and the line from its base to target (0 without one);
   the chain must not be pose_behind. */
ik_real ik_aim_error(const ik_chain *chain, ik_vec3 target);
/*
 * The lean solves of a plain 3D chain (solve.c says which: no limits, no orientation goal,
 * mix 1, no max_turn or stretch; current, at its own lengths): the whole solve in one pass
 * towards aim (the goal, softened), the same pose as the solver's to rounding. Each fills
 * out (iterations, distance from the goal or angle error, reached) and returns nonzero when
 * it moved the chain.
 */
int ik_two_bone_lean3(ik_chain *chain, ik_vec3 aim, ik_result *out); /* 2 bones */
int ik_aim_lean3(ik_chain *chain, ik_vec3 aim, ik_result *out);      /* 1 bone */

/*
 * FABRIK's passes, for the rig: backward over bones hi-1 down to lo with joint hi placed
 * at `end` first (dim numbers); forward over bones lo..hi-1 from joint lo as it is (the
 * caller puts it back where it belongs: the backward pass moved it). Chains
 * without limits work on the joints alone (pose_behind); with limits, the forward pass poses
 * each bone within them.
 */
void ik_fabrik_backward(ik_chain *chain, int lo, int hi, const ik_real *end);
/* Bones 0..m-1 along the line from joint 0 to target (within limits): FABRIK's (and
   relaxation's) answer to a target out of reach, or within tolerance of it. */
void ik_fabrik_straighten(ik_chain *chain, ik_vec3 target, int m);
void ik_fabrik_forward(ik_chain *chain, int lo, int hi);

/* Joint 0 back on the base (the backward pass moved it). */
void ik_fabrik_put_base(ik_chain *chain);

/*
 * FABRIK's step: w scaled to length len, or fallback (a unit direction) scaled to it when w
 * has none. The fast path needs |w|^2 in (1e-300, 1e300) and q = len / |w|^2 in [1e-150,
 * 1e300], which keeps |w q| = len / |w| within [1e-300, 1e300]: no product overflows or
 * underflows (a bone of 1e-246 next to joints near 1e150 lost its length to an underflow).
 * Anything else, zero-length bones included, normalises first (the _slow forms). The batch
 * (batch.c) computes exactly this on several chains at once.
 */
ik_vec2 ik_fab_step2_slow(ik_vec2 w, ik_real len, const ik_real *fallback);
ik_vec3 ik_fab_step3_slow(ik_vec3 w, ik_real len, const ik_real *fallback);

/* q = len / d is only taken for d in range: 0 / 0 (a zero-length bone between coinciding
   joints) would raise FE_INVALID. */
static inline int ik_fab_fast(ik_real d, ik_real len, ik_real *q)
{
    if (!(d > 1e-300 && d < 1e300)) return 0;
    *q = len / d;
    return *q >= 1e-150 && *q <= 1e300;
}

static IK_ALWAYS_INLINE ik_vec2 ik_fab_step2(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y, q;
    if (ik_fab_fast(d, len, &q)) {
        ik_real s = sqrt(d);
        return ik_v2(w.x * q * s, w.y * q * s);
    }
    return ik_fab_step2_slow(w, len, fallback);
}

static IK_ALWAYS_INLINE ik_vec3 ik_fab_step3(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y + w.z * w.z, q;
    if (ik_fab_fast(d, len, &q)) {
        ik_real s = sqrt(d);
        return ik_v3(w.x * q * s, w.y * q * s, w.z * q * s);
    }
    return ik_fab_step3_slow(w, len, fallback);
}

/* One FABRIK solve in progress, which the single solve and the batch share. */
typedef struct ik_fab {
    ik_chain *c;
    ik_vec3 target;
    ik_real end[3];
    ik_real distance; /* the tip's from target now; NaN when not known */
    int m, iter;
    int crawl;        /* the kick asked for is joint-space steps (IK_CRAWL) */
    ik_progress progress;
} ik_fab;

enum { IK_FAB_DONE = 0, IK_FAB_GO_ON = 1, IK_FAB_KICK = 2 };

/*
 * Starts a solve of bones 0..m-1 towards target, given joint m's distance from it (NaN: to be
 * measured): the iterations it is done with (0: within tolerance already; 1: out of reach,
 * or one bone, straightened), or -1 when it is to iterate.
 */
int ik_fab_start(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance);
/*
 * ik_fab_start in two halves, with the tracking steps between them taken by the caller
 * (the batch takes many chains' steps side by side): ik_fab_open measures *distance (when
 * NaN) and says IK_FAB_DONE (within tolerance), IK_FAB_STEPS (steps started: take them while
 * ik_steps_going) or IK_FAB_PASSES; ik_fab_close, given that and the distance, returns
 * what ik_fab_start would.
 */
enum { IK_FAB_STEPS = 1, IK_FAB_PASSES = 2 };
int ik_fab_open(ik_fab *f, ik_steps *steps, ik_chain *c, ik_vec3 target, int m, ik_real *distance);
int ik_fab_close(ik_fab *f, ik_steps *steps, int opened, ik_real distance);
/*
 * After an iteration's two passes, given the tip's distance from the target: IK_FAB_DONE,
 * IK_FAB_GO_ON, or IK_FAB_KICK, when the chain is stuck and its joints must be current for
 * ik_fab_kick, which bends it (or finishes a limited chain) and says whether to go on.
 */
int ik_fab_next(ik_fab *f, ik_real distance);
int ik_fab_kick(ik_fab *f);
/* The rest of a solve in progress, one chain alone: what a single solve does after
   ik_fab_start, and what the batch does with a chain whose kick took joint-space steps
   (so the steps after them are the single solve's, to the bit, in every build). */
void ik_fab_finish(ik_fab *f);

/* ---- batch.c ---- */

/*
 * FABRIK on count (<= IK_BATCH) chains of one dimension without limits, pose_behind or
 * current, side by side: iterations[k] is what ik_fabrik would return for chain k (all its
 * bones), and every chain ends bit for bit as ik_fabrik leaves it. distances[k] as ik_fabrik's
 * distance: the tip's from targets[k] before (NaN: to be measured), and after.
 */
#define IK_BATCH 64
void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, int *iterations,
                     ik_real *distances);

/* ---- goal.c: a chain's goal, and the finish around a solve (single, many, rigs) ---- */

/* The world direction the orientation goal gives the tip bone. */
ik_vec3 ik_goal_direction(const ik_chain *c);
/* The tip's distance from the kept target; the tip bone's angle from its orientation goal. */
ik_real ik_tip_distance(const ik_chain *c);
ik_real ik_orientation_error(const ik_chain *c);
/* The tip bone takes its orientation goal, within its limit (the chain is settled first). */
void ik_orient_tip(ik_chain *c);
/* Remembers the local pose (for mix and max_turn), and holds each bone's turn from it. */
void ik_save_pose(ik_chain *c);
void ik_hold_turns(ik_chain *c, ik_real max_turn);
/* The local pose moved the fraction mix of the way from the remembered pose to the new one. */
void ik_mix_pose(ik_chain *c, ik_real mix);

#endif /* IK_CHAIN_H */

/* ---- src/rig_tree.h ---- */
/*
 * rig_tree.h - what the files of the rig solve share (not installed): the tree as the
 * solve sees it, and the calls between rig.c (the tree's bookkeeping and the solve's
 * order), rig_fabrik.c and rig_relax.c (the passes of each rig solver on points) and
 * rig_joint.c (the tree sweeps and the joint-space stage).
 */
#ifndef IK_RIG_TREE_H
#define IK_RIG_TREE_H


/* The most goal coordinates the joint-space stage takes (16 goals in 3D, 24 in 2D). */
#define DLS_ROWS 48

typedef struct rig_node {
    ik_chain *chain;
    ik_chain *parent_chain;   /* at ik_rig_init: the tree must not change */
    int parent_joint;
    unsigned long long links; /* the chain's count of attach and detach calls then */
    int parent;   /* index in the rig; -1 for the root */
    int first;    /* its children: kids[first .. first + kids - 1], by joint, highest first */
    int kids;
    int *above;   /* [n + 1]: how many of its children hang above joint k (kid_range) */
    int pre, size; /* its place in rig->dfs, and its subtree's number of chains there */
    /* set up by each solve */
    int end;      /* the joint the chain's goal drives (n, or n - 1 with an orientation
                     goal); -1 without a goal */
    int top;      /* the highest joint the passes move; -1: the chain is carried */
    int last;     /* the passes move bones 0..last-1 (n - 1 with an orientation goal) */
    ik_vec3 goal; /* where joint end goes */
    ik_real weight;  /* its own goal's */
    ik_real subtree; /* the goals' in its subtree */
    ik_real *beyond; /* [n + 1]: the goals' beyond joint k along this chain (its own, and
                        those of children at joints above k) */
    ik_vec3 *relaxed; /* relaxation's points, or FABRIK's joints before the pass, [n + 1] */
    ik_vec3 eff;      /* the tree sweeps: joint end as the turns of the sweep so far put it */
    int row;          /* the joint-space stage: its goal's first row, -1 without a goal */
    ik_real *saved;   /* [16 (n + 1)]: poses to go back to (rig_keep_pose): the joint-space
                         stage's before the step (0) and its best before a kick (1); a
                         limb's before its last sweeps (finish_limbs, 0); a tracked frame's
                         start (2) and its first answer (3), for calm_retry */
    signed char *mode; /* [n + 1]: how bone i takes part in a joint-space step: the ways
                          its limits block (ik_joint_axes), -1 left out */
    /* A tip hold (a closed loop): the chain's goal is a point on another chain. */
    ik_chain *tip_parent;  /* at ik_rig_init, with tip_joint and holds: must not change */
    int tip_joint;
    unsigned long long holds;
    int hold;         /* the node holding the tip, when it is in the rig (a loop); else -1 */
    int moves;        /* the highest joint the joint-space stage moves: top, or higher where
                         a loop's held point is on the chain (or on chains hanging on it) */
    ik_real reach;    /* of bones 0..end-1 */
    ik_real inner;    /* the inner radius of their reach ring: 2 * longest - reach, or less */
} rig_node;

struct ik_rig {
    int count;
    int dim;
    ik_rig_settings settings;
    ik_real omega; /* FABRIK's over-relaxation at sub-bases now (see merge) */
    int rest;       /* the joint-space stage pushes bounded joints off their bounds, free 2D
                       ones off straight and folded (tracking) */
    rig_node *node; /* [count], in the order given */
    int *order;     /* [count]: node indices, parents before children */
    int *kid;       /* [count]: node indices, grouped by parent */
    int *dfs;       /* [count]: node indices, each subtree in one run, its root first */
    int *goals;     /* [count]: the nodes with a goal, in dfs order (set by each solve) */
    int *goal_at;   /* [count + 1]: for a place in dfs, the first of goals at or after it */
    int goal_count;
    int limited;    /* chains with limits (set by each solve) */
    int *loops;     /* [count]: the nodes whose tip another node holds */
    int *sorted;    /* [count]: the node indices by their chains' addresses (node_of) */
    int loop_count;
    /* The joint-space stage's normal equations (see dls_step), rows up to DLS_ROWS. */
    ik_real normal[DLS_ROWS * DLS_ROWS], error[DLS_ROWS], y[DLS_ROWS];
    /* The free joints' push off straight and folded in the goals' rows, solved apart. */
    ik_real push_normal[DLS_ROWS * DLS_ROWS], push[DLS_ROWS], push_y[DLS_ROWS], push_lambda2;
    int pushing; /* the last solve took that push */
};

/* The nodes with a goal at places from..to-1 of rig->dfs, in O(their number). */
#define FOR_GOALS(rig, g, k, from, to)                                                       \
    for ((k) = (rig)->goal_at[from];                                                         \
         (k) < (rig)->goal_count && ((g) = &(rig)->node[(rig)->goals[k]])->pre < (to); (k)++)

static inline ik_vec3 joint_at(const ik_chain *c, int j) { return ik_joint_v3(c, j); }

static inline void set_joint(ik_chain *c, int j, ik_vec3 v)
{
    ik_real *p = ik_joint(c, j);
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/* Whether node k's child kid takes part: it has a goal below it, and a chain with an
   orientation goal holds its tip, so a child there cannot pull on it. */
static inline int pulls(const ik_rig *rig, const rig_node *nd, int kid)
{
    const rig_node *child = &rig->node[kid];
    return child->top >= 0 && !(nd->end >= 0 && nd->last < nd->chain->n && child->parent_joint == nd->chain->n);
}

/* Node nd's children hanging on joint j: kid[*from .. *to - 1]. */
static inline void kid_range(const rig_node *nd, int j, int *from, int *to)
{
    *from = nd->first + nd->above[j];
    *to = nd->first + (j > 0 ? nd->above[j - 1] : nd->kids);
}

/* A limb: a chain with a goal and nothing that pulls hanging on it (see limb_forward). */
static inline int is_limb(const rig_node *nd)
{
    return nd->kids == 0 && nd->end >= 1 && nd->end == nd->top;
}

/* The first place in rig->dfs past the chains hanging beyond joint j of node nd. */
static inline int beyond_end(const ik_rig *rig, const rig_node *nd, int j)
{
    return nd->above[j] < nd->kids ? rig->node[rig->kid[nd->first + nd->above[j]]].pre : nd->pre + nd->size;
}

/* The bones node nd's goals and children bend: 0..hi-1. */
static inline int bends(const rig_node *nd) { return nd->top < nd->last ? nd->top : nd->last; }

/* The bones the joint-space stage turns: those, and those that move a loop's held point. */
static inline int turns(const rig_node *nd) { return nd->moves < nd->last ? nd->moves : nd->last; }

/* Whether the point held at joint j of node held moves when bone i of node nd turns. */
static inline int moves_hold(const ik_rig *rig, const rig_node *nd, int i, const rig_node *held, int j)
{
    return held == nd ? j > i : held->pre > nd->pre && held->pre < beyond_end(rig, nd, i);
}

/*
 * A limb (a chain with a goal and nothing hanging on it) has nothing to wait for once the
 * forward pass has put its base: it is solved from there as one chain would be, with up to
 * LIMB_PASSES passes of its own (a goal beyond its reach, or within tolerance of it, straight
 * at it; two bones without limits exactly). Its passes alone would approach that only one
 * step per iteration of the rig, and slowly where a limb is nearly straight.
 */
#define LIMB_PASSES 4

/* rig.c */
/* Joint end of node nd where its goal puts it: its own tip goal, as the passes start. */
void rig_place_tip(rig_node *nd);
/* The largest distance of a goal's joint from its goal. */
ik_real rig_worst(const ik_rig *rig);
/* Chain nd's tip bone posed to its orientation goal (and its max_turn and limits). */
void rig_finish_chain(rig_node *nd);
/* Keeps (back = 0) or puts back (1) the local pose of bones 0..bones-1 of node nd, in
   place `which` (0 to 3) of nd->saved. */
void rig_keep_pose(rig_node *nd, int bones, int back, int which);
/* Every chain's world data from its local pose, parents first. */
void rig_fk(ik_rig *rig);
/* Every chain with a goal finished (rig_finish_chain). */
void rig_finish_all(ik_rig *rig);
/* The loops' goals where their held points are: posed (points = 0; the chains current), or
   as the passes' points put them (1). */
void rig_read_loops(ik_rig *rig, int points);

/* rig_fabrik.c: a rig solver's passes, and the merge at sub-bases the passes share */
void rig_merge(const ik_rig *rig, rig_node *nd, int j, int continues, const ik_vec3 *before);
void rig_limb_forward(const ik_rig *rig, rig_node *nd);
void rig_fabrik_iteration(ik_rig *rig);
ik_real rig_fabrik_omega(ik_real omega, ik_real before, ik_real distance);

/* rig_relax.c */
void rig_relax_start(ik_rig *rig);
void rig_relax_iteration(ik_rig *rig);
ik_real rig_relax_omega(ik_real omega, ik_real before, ik_real distance);

/* rig_joint.c: the stages after the passes */
int rig_dls_in_range(const ik_rig *rig, ik_real reach);
int rig_dls_rows(ik_rig *rig, ik_real reach);
/* How rig_joint_space runs: a solve's stage, tracking's, or a tracked frame's calm retry
   (steps alone: no push off the bounds, no nudge; see calm_retry in rig.c). */
enum { RIG_SOLVE = 0, RIG_TRACK = 1, RIG_CALM = 2 };
int rig_joint_space(ik_rig *rig, int iterations, ik_real reach, int bones, int m, int mode);
int rig_tree_sweeps(ik_rig *rig, int iterations, ik_real reach);

#endif

/* ---- src/chain.c ---- */
/*
 * chain.c - the chain: statuses and settings, the block and its layout, the pose and its
 * forward kinematics, the pose derived from the joints after a position-based solve, goals,
 * and attachment to a parent chain.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- statuses and settings ---- */

const char *ik_status_string(ik_status status)
{
    switch (status) {
    case IK_OK: return "ok";
    case IK_ERR_COUNT: return "at least one bone expected";
    case IK_ERR_TOO_LARGE: return "too many bones";
    case IK_ERR_NO_MEMORY: return "not enough memory";
    case IK_ERR_NOT_FINITE: return "number has no finite value";
    case IK_ERR_NEGATIVE: return "must not be negative";
    case IK_ERR_INDEX: return "index out of range";
    case IK_ERR_ITERATIONS: return "iterations must be an integer >= 1";
    case IK_ERR_TOLERANCE: return "tolerance must be a finite number >= 0";
    case IK_ERR_GREED: return "greed must be in (0, 1]";
    case IK_ERR_BEND: return "bend must be 1 or -1";
    case IK_ERR_SOLVER: return "solver must be 'fabrik', 'ccd', 'relax', 'two_bone' or 'aim'";
    case IK_ERR_NOT_TWO_BONE:
        return "the two-bone solver needs a chain of 2 bones (3 with an orientation goal)";
    case IK_ERR_DIMENSION: return "wrong dimension for this chain";
    case IK_ERR_ZERO_ROTATION: return "quaternion has zero length";
    case IK_ERR_POLE: return "pole must be a nonzero finite direction, on a 3D chain";
    case IK_ERR_MIX: return "mix must be in [0, 1]";
    case IK_ERR_SOFTNESS: return "softness must be a finite number >= 0";
    case IK_ERR_LIMIT_RANGE: return "limits must satisfy -pi <= min <= max <= pi";
    case IK_ERR_AXIS: return "axis must be a nonzero finite direction";
    case IK_ERR_CONE: return "half angle must be in [0, pi]";
    case IK_ERR_RANGE: return "number out of range (magnitude above 1e300)";
    case IK_ERR_ANGLE_TOLERANCE: return "angle_tolerance must be a finite number >= 0";
    case IK_ERR_MAX_TURN: return "max_turn must be a number > 0 (math.huge: no limit)";
    case IK_ERR_EFFECTOR_WEIGHT: return "effector_weight must be a finite number >= 0";
    case IK_ERR_NO_TARGET: return "no target: give one, or set_target first";
    case IK_ERR_ATTACHED: return "the chain is attached to a parent (detach it first)";
    case IK_ERR_CYCLE: return "attaching would make the chain its own ancestor";
    case IK_ERR_NOT_A_TREE: return "the chains do not form one tree";
    case IK_ERR_RIG_CHANGED: return "the rig's chains were attached or detached since it was made";
    case IK_ERR_RIG_SOLVER: return "a rig's solver must be 'fabrik' or 'relax'";
    case IK_ERR_GRAVITY: return "gravity must have finite components of magnitude at most 1e300";
    case IK_ERR_STIFFNESS: return "stiffness must be a finite number >= 0";
    case IK_ERR_DAMPING: return "damping must be a finite number >= 0";
    case IK_ERR_TIME_STEP: return "dt must be a finite number > 0";
    case IK_ERR_STRIDE: return "stride must be a finite number > 0";
    case IK_ERR_STEP_TIME: return "step_time must be a finite number > 0";
    case IK_ERR_LIFT: return "lift must be a finite number >= 0";
    case IK_ERR_LEAD: return "lead must be a finite number >= 0";
    case IK_ERR_GROUPS: return "groups must hold every leg exactly once, each group a leg or more";
    case IK_ERR_MAX_GROUPS: return "max_groups must be an integer >= 1";
    case IK_ERR_GROUND: return "ground must return a finite number (the height there)";
    case IK_ERR_UP: return "up must be 1 or -1";
    case IK_ERR_HELD: return "the tip is held (attach_tip): its goal is the held point (detach_tip first)";
    case IK_ERR_TIP_HELD: return "the tip is held already (detach_tip first)";
    case IK_ERR_SELF: return "a chain cannot hold its own tip";
    }
    return "unknown status";
}

static const char *const solver_names[] = {"fabrik", "ccd", "relax", "two_bone", "aim"};

const char *ik_solver_name(ik_solver solver)
{
    if ((int)solver < 0 || (int)solver > (int)IK_SOLVER_AIM) return NULL;
    return solver_names[solver];
}

ik_status ik_solver_parse(const char *name, ik_solver *out)
{
    int i;
    for (i = 0; name && i <= (int)IK_SOLVER_AIM; i++) {
        if (strcmp(name, solver_names[i]) == 0) {
            *out = (ik_solver)i;
            return IK_OK;
        }
    }
    return IK_ERR_SOLVER;
}

ik_settings ik_default_settings(void)
{
    ik_settings s;
    memset(&s, 0, sizeof s);
    s.solver = IK_SOLVER_FABRIK;
    s.iterations = IK_DEFAULT_ITERATIONS;
    s.tolerance = IK_DEFAULT_TOLERANCE;
    s.angle_tolerance = IK_DEFAULT_ANGLE_TOLERANCE;
    s.greed = IK_DEFAULT_GREED;
    s.greed_ramp = IK_DEFAULT_GREED_RAMP;
    s.bend = IK_DEFAULT_BEND;
    s.use_pole = 0;
    s.escape = IK_DEFAULT_ESCAPE;
    s.mix = IK_DEFAULT_MIX;
    s.softness = IK_DEFAULT_SOFTNESS;
    s.stretch = IK_DEFAULT_STRETCH;
    s.max_turn = INFINITY;
    s.effector_weight = IK_DEFAULT_EFFECTOR_WEIGHT;
    s.damping = IK_DEFAULT_DAMPING;
    return s;
}

static int finite_at_least_zero(ik_real v) { return isfinite(v) && v >= 0; }

ik_status ik_settings_validate(const ik_settings *s)
{
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!finite_at_least_zero(s->tolerance)) return IK_ERR_TOLERANCE;
    if (!finite_at_least_zero(s->angle_tolerance)) return IK_ERR_ANGLE_TOLERANCE;
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return IK_ERR_GREED;
    if (s->bend != 1 && s->bend != -1) return IK_ERR_BEND;
    if (ik_solver_name(s->solver) == NULL) return IK_ERR_SOLVER;
    if (!(isfinite(s->mix) && s->mix >= 0 && s->mix <= 1)) return IK_ERR_MIX;
    if (!finite_at_least_zero(s->softness)) return IK_ERR_SOFTNESS;
    /* NaN fails too (tested first: an ordered comparison with NaN raises FE_INVALID); infinity is "off" */
    if (isnan(s->max_turn) || !(s->max_turn > 0)) return IK_ERR_MAX_TURN;
    if (!finite_at_least_zero(s->effector_weight)) return IK_ERR_EFFECTOR_WEIGHT;
    if (ik_check_coords(s->gravity, 3) != IK_OK) return IK_ERR_GRAVITY;
    if (!finite_at_least_zero(s->stiffness)) return IK_ERR_STIFFNESS;
    if (!finite_at_least_zero(s->damping)) return IK_ERR_DAMPING;
    if (s->use_pole) {
        ik_vec3 p = ik_v3(s->pole[0], s->pole[1], s->pole[2]);
        if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) return IK_ERR_POLE;
        if (p.x == 0 && p.y == 0 && p.z == 0) return IK_ERR_POLE;
    }
    return IK_OK;
}

/* ---- the block ---- */

/* The header rounded up so the arrays after it are aligned for any scalar. */
#define HEADER_SIZE ((sizeof(struct ik_chain) + 15u) / 16u * 16u)

/*
 * Numbers a chain of n bones keeps past the header, as per_bone * n + extra. Both: length,
 * weight (n + 1), joint, dir and work (dim each; joint and work n + 1), sim (2 dim, n + 1),
 * sim_scratch (dim + 2), and a limit. 2D adds turn, prev_turn, rest_turn, sim_turn,
 * best_turn and track_turn (2 each), angle, prev_angle and best_angle; 3D adds rot, wrot,
 * prev_rot, points_rot, rest_rot, sim_rot, best_rot and track_rot (4 each).
 */
static size_t reals_per_bone(int dim)
{
    return dim == 2 ? 1 + 1 + 2 * 5 + 4 + 12 + 3 : 1 + 1 + 3 * 5 + 5 + 32;
}
static size_t reals_extra(int dim) { return 1 + 4 * (size_t)dim; }

static size_t chain_size(int dim, int n)
{
    size_t per_bone = reals_per_bone(dim) * sizeof(ik_real) + sizeof(ik_limit);
    size_t extra = reals_extra(dim) * sizeof(ik_real);
    if (n < 1) return 0;
    /* The range of coordinates needs it (ik.h); it also keeps 4 * (n + 1) within an int. */
    if (n > IK_MAX_BONES) return 0;
    if ((size_t)n > (SIZE_MAX - HEADER_SIZE - extra) / per_bone) return 0;
    return HEADER_SIZE + per_bone * (size_t)n + extra;
}

size_t ik_chain2d_size(int n) { return chain_size(2, n); }
size_t ik_chain3d_size(int n) { return chain_size(3, n); }

/* Points the array pointers into the block after the header. */
static void layout(ik_chain *c)
{
    size_t n = (size_t)c->n, dim = (size_t)c->dim;
    ik_real *p;
    /* The limits first: their struct's alignment is that of ik_real or less. */
    c->limit = (ik_limit *)((unsigned char *)c + HEADER_SIZE);
    p = (ik_real *)(c->limit + n);
    c->length = p, p += n;
    c->weight = p, p += n + 1;
    c->joint = p, p += dim * (n + 1);
    c->dir = p, p += dim * n;
    c->work = p, p += dim * (n + 1);
    c->sim = p, p += 2 * dim * (n + 1);
    c->sim_scratch = p, p += (dim + 2) * n;
    c->turn = NULL, c->angle = NULL, c->prev_turn = NULL, c->prev_angle = NULL;
    c->rest_turn = NULL, c->sim_turn = NULL, c->best_turn = NULL, c->best_angle = NULL;
    c->rot = NULL, c->wrot = NULL, c->prev_rot = NULL, c->points_rot = NULL;
    c->rest_rot = NULL, c->sim_rot = NULL, c->best_rot = NULL;
    c->track_turn = NULL, c->track_rot = NULL;
    if (dim == 2) {
        c->turn = (ik_vec2 *)p, p += 2 * n;
        c->prev_turn = (ik_vec2 *)p, p += 2 * n;
        c->rest_turn = (ik_vec2 *)p, p += 2 * n;
        c->sim_turn = (ik_vec2 *)p, p += 2 * n;
        c->best_turn = (ik_vec2 *)p, p += 2 * n;
        c->track_turn = (ik_vec2 *)p, p += 2 * n;
        c->angle = p, p += n;
        c->prev_angle = p, p += n;
        c->best_angle = p;
    } else {
        c->rot = (ik_quat *)p, p += 4 * n;
        c->wrot = (ik_quat *)p, p += 4 * n;
        c->prev_rot = (ik_quat *)p, p += 4 * n;
        c->points_rot = (ik_quat *)p, p += 4 * n;
        c->rest_rot = (ik_quat *)p, p += 4 * n;
        c->sim_rot = (ik_quat *)p, p += 4 * n;
        c->track_rot = (ik_quat *)p, p += 4 * n;
        c->best_rot = (ik_quat *)p;
    }
}

static ik_status check_lengths(int dim, int n, const ik_real *lengths)
{
    int i;
    if (n < 1) return IK_ERR_COUNT;
    if (chain_size(dim, n) == 0) return IK_ERR_TOO_LARGE;
    for (i = 0; i < n; i++) {
        if (!isfinite(lengths[i])) return IK_ERR_NOT_FINITE;
        if (lengths[i] < 0) return IK_ERR_NEGATIVE;
        if (lengths[i] > IK_MAX_COORD) return IK_ERR_RANGE;
    }
    return IK_OK;
}

static ik_status chain_init(int dim, void *memory, size_t size, int n, const ik_real *lengths,
                            ik_chain **out)
{
    ik_chain *c = (ik_chain *)memory;
    int i;
    ik_status st = check_lengths(dim, n, lengths);
    if (st != IK_OK) return st;
    if (memory == NULL || size < chain_size(dim, n)) return IK_ERR_TOO_LARGE;

    memset(c, 0, chain_size(dim, n));
    c->magic = IK_CHAIN_MAGIC;
    c->n = n;
    c->dim = dim;
    c->settings = ik_default_settings();
    c->base = ik_v3(0, 0, 0);
    c->base_angle = 0;
    c->base_turn = ik_v2(1, 0);
    c->base_rot = ik_q_identity();
    c->offset_turn = ik_v2(1, 0);
    c->offset_rot = ik_q_identity();
    c->target_turn = ik_v2(1, 0);
    c->target_rot = ik_q_identity();
    c->scale = 1;
    layout(c);
    for (i = 0; i < n; i++) {
        c->length[i] = lengths[i] + 0.0; /* + 0.0 turns -0 into +0 */
        if (dim == 2) ik_chain_set_turn_angle(c, i, 0), c->rest_turn[i] = ik_v2(1, 0);
        else c->rot[i] = ik_q_identity(), c->rest_rot[i] = ik_q_identity();
    }
    for (i = 0; i <= n; i++) c->weight[i] = 1;
    ik_chain_lengths_changed(c);
    c->stale_from = 0;
    ik_chain_fk(c);
    *out = c;
    return IK_OK;
}

ik_status ik_chain2d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out)
{
    return chain_init(2, memory, size, n, lengths, out);
}

ik_status ik_chain3d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out)
{
    return chain_init(3, memory, size, n, lengths, out);
}

static ik_chain *chain_create(int dim, int n, const ik_real *lengths, ik_status *status)
{
    ik_chain *c = NULL;
    void *memory = NULL;
    ik_status st = check_lengths(dim, n, lengths);
    if (st == IK_OK) {
        memory = malloc(chain_size(dim, n));
        st = memory ? chain_init(dim, memory, chain_size(dim, n), n, lengths, &c)
                    : IK_ERR_NO_MEMORY;
        if (st != IK_OK) free(memory);
    }
    if (status) *status = st;
    return st == IK_OK ? c : NULL;
}

ik_chain *ik_chain2d_create(int n, const ik_real *lengths, ik_status *status)
{
    return chain_create(2, n, lengths, status);
}

ik_chain *ik_chain3d_create(int n, const ik_real *lengths, ik_status *status)
{
    return chain_create(3, n, lengths, status);
}

void ik_chain_destroy(ik_chain *chain) { free(chain); }

ik_status ik_chain_copy(void *memory, size_t size, const ik_chain *from, ik_chain **out)
{
    size_t bytes = chain_size(from->dim, from->n);
    ik_chain *c = (ik_chain *)memory;
    if (memory == NULL || size < bytes) return IK_ERR_TOO_LARGE;
    memcpy(c, from, bytes);
    layout(c); /* the pointers, into the new block */
    *out = c;
    return IK_OK;
}

int ik_chain_check(const void *memory, size_t size)
{
    const ik_chain *c = (const ik_chain *)memory;
    if (memory == NULL || size < HEADER_SIZE || c->magic != IK_CHAIN_MAGIC) return 0;
    if (c->dim != 2 && c->dim != 3) return 0;
    return chain_size(c->dim, c->n) != 0 && size >= chain_size(c->dim, c->n) &&
           c->limit == (const ik_limit *)((const unsigned char *)c + HEADER_SIZE);
}

int ik_chain_bone_count(const ik_chain *chain) { return chain->n; }
int ik_chain_count(const ik_chain *chain) { return chain->n; }
int ik_chain_dim(const ik_chain *chain) { return chain->dim; }
ik_real ik_chain_reach(const ik_chain *chain) { return chain->reach; }

void ik_chain_lengths_changed(ik_chain *c)
{
    ik_real total = 0, longest = 0;
    int i;
    for (i = 0; i < c->n; i++) {
        total += c->length[i];
        if (c->length[i] > longest) longest = c->length[i];
    }
    c->reach = total;
    c->longest = longest;
    c->sim_live = 0; /* simulate's joints were at the old lengths */
    /* A stretched bone stays within the range of ik.h, so no joint can overflow. */
    if (longest * c->scale > IK_MAX_COORD) {
        c->scale = IK_MAX_COORD / longest; /* longest * scale > 1e300: no overflow here */
        ik_chain_mark_stale(c, 0);
    }
}

ik_vec3 ik_chain_bend_side(const ik_chain *c, ik_vec3 line)
{
    ik_vec3 side;
    if (c->dim == 2) return ik_v3_scale(ik_v3(line.y, -line.x, 0), c->settings.bend);
    if (!c->settings.use_pole) return ik_v3_any_perpendicular(line);
    side = ik_v3(c->settings.pole[0], c->settings.pole[1], c->settings.pole[2]);
    side = ik_v3_sub(side, ik_v3_scale(line, ik_v3_dot(side, line)));
    return ik_v3_normalize_or(side, ik_v3_any_perpendicular(line));
}

/* ---- forward kinematics ---- */

/*
 * World data of bone i and joint i + 1 from bone i - 1's (or the base's). The world turn or
 * rotation is the parent's times the local one. Rounding would grow along a long chain (|w|
 * off by 1e-9 after 100,000 bones), so each is pulled back to unit length to first order,
 * (3 - |w|^2) / 2, which needs no square root.
 */
void ik_chain_fk_bone(ik_chain *c, int i)
{
    ik_real step = c->length[i] * c->scale;
    if (c->dim == 2) {
        ik_vec2 parent = i == 0 ? c->base_turn : ik_dir2(c, i - 1);
        ik_vec2 world = ik_v2_renorm(ik_v2_rotate(c->turn[i], parent));
        ik_vec2 joint = ik_joint2(c, i);
        ik_v2_store(ik_dir(c, i), world);
        ik_v2_store(ik_joint(c, i + 1), ik_v2_add(joint, ik_v2_scale(world, step)));
    } else {
        ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
        ik_quat w = ik_q_mul(parent, c->rot[i]);
        ik_real k = (3 - (w.w * w.w + w.x * w.x + w.y * w.y + w.z * w.z)) / 2;
        ik_vec3 dir;
        c->wrot[i] = ik_q(w.w * k, w.x * k, w.y * k, w.z * k);
        dir = ik_q_x_axis(c->wrot[i]);
        ik_v3_store(ik_dir(c, i), dir);
        ik_v3_store(ik_joint(c, i + 1), ik_v3_add(ik_joint3(c, i), ik_v3_scale(dir, step)));
    }
}

/*
 * Bones i..n-1 as ik_chain_fk_bone makes them, each from the one before it kept in locals:
 * the same arithmetic, without reading back what was just stored (a chain's stores may
 * alias its other arrays as far as the compiler knows). Tracking's joint-space step runs
 * this once a frame on the whole chain; the batch's lanes have it too (free2 in
 * batch_lanes.h).
 */
static void fk2(ik_chain *c, int i)
{
    const ik_real *length = c->length, scale = c->scale;
    const ik_vec2 *turn = c->turn;
    ik_real *dir = c->dir, *joint = c->joint;
    ik_vec2 parent = i == 0 ? c->base_turn : ik_v2_load(dir + 2 * (size_t)(i - 1));
    ik_vec2 at = ik_v2_load(joint + 2 * (size_t)i);
    const int n = c->n;
    for (; i < n; i++) {
        ik_real step = length[i] * scale;
        parent = ik_v2_renorm(ik_v2_rotate(turn[i], parent));
        at = ik_v2_add(at, ik_v2_scale(parent, step));
        ik_v2_store(dir + 2 * (size_t)i, parent);
        ik_v2_store(joint + 2 * (size_t)(i + 1), at);
    }
}

void ik_chain_fk(ik_chain *c)
{
    int i = c->stale_from;
    if (c->pose_behind || i >= c->n) return;
    if (i == 0) {
        ik_real *p = ik_joint(c, 0);
        p[0] = c->base.x, p[1] = c->base.y;
        if (c->dim == 3) p[2] = c->base.z;
    }
    if (c->dim == 2) fk2(c, i);
    else
        for (; i < c->n; i++) ik_chain_fk_bone(c, i);
    c->stale_from = c->n;
}

/* ---- the pose derived from the joints ---- */

ik_vec2 ik_chain_derive_dir2(const ik_chain *c, int i)
{
    ik_vec2 before = ik_dir2(c, i);
    if (!(c->length[i] > 0)) return before;
    return ik_v2_normalize_or(ik_v2_sub(ik_joint2(c, i + 1), ik_joint2(c, i)), before);
}

static ik_vec3 derive_dir3(const ik_chain *c, int i)
{
    ik_vec3 before = ik_dir3(c, i);
    if (!(c->length[i] > 0)) return before;
    return ik_v3_normalize_or(ik_v3_sub(ik_joint3(c, i + 1), ik_joint3(c, i)), before);
}

ik_vec2 ik_chain_derive_turn(const ik_chain *c, int i)
{
    ik_vec2 parent = i == 0 ? c->base_turn : ik_chain_derive_dir2(c, i - 1);
    return ik_v2_renorm(ik_v2_unrotate(ik_chain_derive_dir2(c, i), parent));
}

ik_quat ik_chain_derive_wrot(const ik_chain *c, int i)
{
    return ik_q_normalize(ik_q_mul(ik_q_from_to(ik_dir3(c, i), derive_dir3(c, i)), c->wrot[i]));
}

ik_real ik_chain_local_angle(const ik_chain *c, int i)
{
    ik_vec2 t;
    if (!c->pose_behind) return ik_turn_angle(c, i);
    t = ik_chain_derive_turn(c, i);
    return atan2(t.y, t.x);
}

ik_real ik_chain_world_angle_of(const ik_chain *c, int i)
{
    ik_vec2 d = c->pose_behind ? ik_chain_derive_dir2(c, i) : ik_dir2(c, i);
    return atan2(d.y, d.x);
}

ik_quat ik_chain_world_rot(const ik_chain *c, int i)
{
    return c->pose_behind ? ik_chain_derive_wrot(c, i) : c->wrot[i];
}

ik_quat ik_chain_local_rot(const ik_chain *c, int i)
{
    ik_quat parent;
    if (!c->pose_behind) return c->rot[i];
    parent = i == 0 ? c->base_rot : ik_chain_derive_wrot(c, i - 1);
    return ik_q_normalize(ik_q_mul(ik_q_conj(parent), ik_chain_derive_wrot(c, i)));
}

void ik_chain_settle(ik_chain *c)
{
    int i;
    if (!c->pose_behind) return;
    if (c->dim == 2) {
        /* Every turn first: they read the directions before, which are then replaced. */
        for (i = 0; i < c->n; i++) {
            c->turn[i] = ik_chain_derive_turn(c, i);
            c->angle[i] = IK_ANGLE_UNKNOWN;
        }
        for (i = c->n - 1; i >= 0; i--) ik_v2_store(ik_dir(c, i), ik_chain_derive_dir2(c, i));
    } else {
        ik_quat parent = c->base_rot;
        for (i = 0; i < c->n; i++) {
            /* derive_wrot(i) reads bone i's arrays only, so bone i - 1's may be replaced. */
            ik_quat world = ik_chain_derive_wrot(c, i);
            c->rot[i] = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
            c->wrot[i] = world;
            ik_v3_store(ik_dir(c, i), ik_q_x_axis(world));
            parent = world;
        }
    }
    c->pose_behind = 0;
    c->stale_from = c->n;
}

/* ---- attachment ---- */

ik_vec2 ik_chain_frame2(const ik_chain *c, int j)
{
    if (j == 0) return c->base_turn;
    return c->pose_behind ? ik_chain_derive_dir2(c, j - 1) : ik_dir2(c, j - 1);
}

ik_quat ik_chain_frame3(const ik_chain *c, int j)
{
    return j == 0 ? c->base_rot : ik_chain_world_rot(c, j - 1);
}

/* Where c's base belongs on its parent as the parent is now: the joint, and the frame. */
static void parent_frame(const ik_chain *c, ik_vec3 *at, ik_vec2 *turn, ik_quat *rot)
{
    const ik_chain *p = c->parent;
    int j = c->parent_joint;
    *at = ik_joint_v3(p, j);
    if (c->dim == 2) *turn = ik_v2_renorm(ik_v2_rotate(c->offset_turn, ik_chain_frame2(p, j)));
    else *rot = ik_q_normalize(ik_q_mul(ik_chain_frame3(p, j), c->offset_rot));
}

/*
 * Puts c's base where its parent's joint now is. When it moved, the local pose is made the
 * truth first (against the old base), so the chain is carried rigidly.
 */
static void rebase(ik_chain *c)
{
    ik_vec3 at;
    ik_vec2 turn = c->base_turn;
    ik_quat rot = c->base_rot;
    ik_chain_fk(c->parent);
    parent_frame(c, &at, &turn, &rot);
    if (memcmp(&at, &c->base, sizeof at) != 0 || memcmp(&turn, &c->base_turn, sizeof turn) != 0 ||
        memcmp(&rot, &c->base_rot, sizeof rot) != 0) {
        ik_chain_settle(c);
        c->base = at;
        c->base_turn = turn;
        c->base_rot = rot;
        c->stale_from = 0;
        ik_chain_base_moved(c);
    }
    c->parent_seen = c->parent->version;
}

void ik_chain_take_base(ik_chain *c)
{
    ik_real *p = ik_joint(c, 0);
    parent_frame(c, &c->base, &c->base_turn, &c->base_rot);
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}

/*
 * Brings the bases up to date from the root of c's tree down. A first walk up finds the
 * highest chain whose parent changed since it last looked (reading only, so chains that
 * are current can be read by several threads at once); a second leaves each chain on the
 * way a pointer to its child towards c, and the walk down rebases every chain whose parent
 * changed, each after its parent. O(depth), with no recursion, so any depth of attachment
 * is safe.
 */
void ik_chain_follow(ik_chain *c)
{
    ik_chain *x, *top = NULL;
    for (x = c; x->parent; x = x->parent)
        if (x->parent->version != x->parent_seen) top = x;
    if (top == NULL) return;
    for (x = c; x != top; x = x->parent) x->parent->down = x;
    for (x = top;; x = x->down) {
        ik_chain_follow_parent(x);
        if (x == c) return;
    }
}

void ik_chain_follow_parent(ik_chain *c)
{
    if (c->parent && c->parent->version != c->parent_seen) rebase(c);
}

void ik_chain_update(ik_chain *c)
{
    ik_chain_follow(c);
    ik_chain_fk(c);
}

static ik_status attach(ik_chain *child, ik_chain *parent, int joint)
{
    ik_chain *x;
    if (child->dim != parent->dim) return IK_ERR_DIMENSION;
    if (joint < 0 || joint > parent->n) return IK_ERR_INDEX;
    if (child->parent) return IK_ERR_ATTACHED;
    for (x = parent; x; x = x->parent)
        if (x == child) return IK_ERR_CYCLE;
    return IK_OK;
}

static void link(ik_chain *child, ik_chain *parent, int joint)
{
    ik_chain_follow(parent);
    child->parent = parent;
    child->parent_joint = joint;
    child->links++;
    rebase(child);
    ik_chain_changed(child); /* its base is no longer its own */
}

ik_status ik_chain2d_attach(ik_chain *child, ik_chain *parent, int joint, ik_real angle)
{
    ik_status st = child->dim != 2 ? IK_ERR_DIMENSION : attach(child, parent, joint);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    child->offset_angle = ik_wrap_angle(angle);
    child->offset_turn = ik_v2_turn(child->offset_angle);
    link(child, parent, joint);
    return IK_OK;
}

static ik_status quat_in(const ik_real in[4], ik_quat *q);

ik_status ik_chain3d_attach(ik_chain *child, ik_chain *parent, int joint,
                            const ik_real *rotation)
{
    ik_quat q = ik_q_identity();
    ik_status st = child->dim != 3 ? IK_ERR_DIMENSION : attach(child, parent, joint);
    if (st != IK_OK) return st;
    if (rotation) {
        st = quat_in(rotation, &q);
        if (st != IK_OK) return st;
    }
    child->offset_rot = q;
    link(child, parent, joint);
    return IK_OK;
}

void ik_chain_detach(ik_chain *c)
{
    if (c->parent == NULL) return;
    ik_chain_follow(c);
    c->parent = NULL;
    c->parent_joint = 0; /* a root's joint is 0 (ik_chain_parent, and the rigs comparing it) */
    c->links++;
    if (c->dim == 2) c->base_angle = atan2(c->base_turn.y, c->base_turn.x);
    ik_chain_changed(c);
}

ik_chain *ik_chain_parent(const ik_chain *c, int *joint)
{
    if (joint) *joint = c->parent ? c->parent_joint : 0;
    return c->parent;
}

/* ---- the tip hold (closed loops) ---- */

ik_vec3 ik_hold_point(const ik_chain *c, int j, ik_vec3 offset)
{
    ik_vec3 at = ik_joint_v3(c, j);
    if (offset.x == 0 && offset.y == 0 && offset.z == 0) return at;
    if (c->dim == 2) {
        ik_vec2 v = ik_v2_rotate(ik_v2(offset.x, offset.y), ik_chain_frame2(c, j));
        return ik_v3(at.x + v.x, at.y + v.y, 0);
    }
    return ik_v3_add(at, ik_q_rotate(ik_chain_frame3(c, j), offset));
}

void ik_chain_read_hold(ik_chain *c)
{
    if (c->tip_parent == NULL) return;
    ik_chain_update(c->tip_parent);
    c->target = ik_hold_point(c->tip_parent, c->tip_joint, c->tip_offset);
    c->has_target = 1;
}

ik_status ik_chain_attach_tip(ik_chain *c, ik_chain *other, int joint, const ik_real *offset)
{
    ik_vec3 v = ik_v3(0, 0, 0);
    if (other->dim != c->dim) return IK_ERR_DIMENSION;
    if (other == c) return IK_ERR_SELF;
    if (joint < 0 || joint > other->n) return IK_ERR_INDEX;
    if (c->tip_parent) return IK_ERR_TIP_HELD;
    if (offset) {
        ik_status st = ik_check_coords(offset, c->dim);
        if (st != IK_OK) return st;
        v = ik_v3(offset[0] + 0.0, offset[1] + 0.0, c->dim == 3 ? offset[2] + 0.0 : 0);
    }
    c->tip_parent = other;
    c->tip_joint = joint;
    c->tip_offset = v;
    c->holds++;
    ik_chain_read_hold(c);
    return IK_OK;
}

void ik_chain_detach_tip(ik_chain *c)
{
    if (c->tip_parent == NULL) return;
    c->tip_parent = NULL;
    c->tip_joint = 0;
    c->tip_offset = ik_v3(0, 0, 0);
    c->holds++;
    c->has_target = 0;
}

ik_chain *ik_chain_tip_parent(const ik_chain *c, int *joint, ik_real *offset)
{
    if (joint) *joint = c->tip_parent ? c->tip_joint : 0;
    if (offset) {
        offset[0] = c->tip_offset.x, offset[1] = c->tip_offset.y;
        if (c->dim == 3) offset[2] = c->tip_offset.z;
    }
    return c->tip_parent;
}

/* ---- getters and setters ---- */

const ik_real *ik_chain_positions(ik_chain *c)
{
    ik_chain_update(c);
    return c->joint;
}


static int all_finite(const ik_real *v, int count)
{
    int i;
    for (i = 0; i < count; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

ik_status ik_check_coords(const ik_real *v, int count)
{
    int i;
    /* One quiet comparison each on the way through: NaN and the infinities fail it too. */
    for (i = 0; i < count; i++)
        if (!islessequal(fabs(v[i]), IK_MAX_COORD))
            return all_finite(v, count) ? IK_ERR_RANGE : IK_ERR_NOT_FINITE;
    return IK_OK;
}
/* A change of bone `bone` onwards: the pose becomes the truth, and the world data after it
   goes stale. */
static void pose_changes(ik_chain *c, int bone)
{
    ik_chain_follow(c);
    ik_chain_settle(c);
    ik_chain_mark_stale(c, bone);
    ik_chain_changed(c);
}

/* A move of the base: the same, but the local pose stays as it was (a base move). */
static void base_changes(ik_chain *c)
{
    pose_changes(c, 0);
    c->base_moves++;
}

ik_status ik_chain_length(const ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_BONE(c, bone);
    *out = c->length[bone];
    return IK_OK;
}

ik_status ik_chain_set_length(ik_chain *c, int bone, ik_real length)
{
    IK_CHECK_BONE(c, bone);
    if (!isfinite(length)) return IK_ERR_NOT_FINITE;
    if (length < 0) return IK_ERR_NEGATIVE;
    if (length > IK_MAX_COORD) return IK_ERR_RANGE;
    pose_changes(c, bone);
    c->length[bone] = length + 0.0;
    ik_chain_lengths_changed(c);
    return IK_OK;
}

ik_status ik_chain_weight(const ik_chain *c, int joint, ik_real *out)
{
    IK_CHECK_JOINT(c, joint);
    *out = c->weight[joint];
    return IK_OK;
}

ik_status ik_chain_set_weight(ik_chain *c, int joint, ik_real weight)
{
    IK_CHECK_JOINT(c, joint);
    if (!isfinite(weight)) return IK_ERR_NOT_FINITE;
    if (weight < 0) return IK_ERR_NEGATIVE;
    c->weight[joint] = weight + 0.0;
    return IK_OK;
}

ik_status ik_chain2d_base(ik_chain *c, ik_real *x, ik_real *y, ik_real *angle)
{
    IK_CHECK_DIM(c, 2);
    ik_chain_follow(c);
    *x = c->base.x;
    *y = c->base.y;
    *angle = c->parent ? atan2(c->base_turn.y, c->base_turn.x) : c->base_angle;
    return IK_OK;
}

ik_status ik_chain2d_set_base(ik_chain *c, ik_real x, ik_real y, ik_real angle)
{
    ik_real position[2];
    ik_status st;
    IK_CHECK_DIM(c, 2);
    position[0] = x, position[1] = y;
    st = ik_check_coords(position, 2);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    if (c->parent) return IK_ERR_ATTACHED;
    base_changes(c);
    c->base = ik_v3(x + 0.0, y + 0.0, 0);
    c->base_angle = ik_wrap_angle(angle);
    c->base_turn = ik_v2_turn(c->base_angle);
    return IK_OK;
}

ik_status ik_chain2d_angle(ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    ik_chain_follow(c);
    *out = ik_chain_local_angle(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_set_angle(ik_chain *c, int bone, ik_real angle)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    pose_changes(c, bone);
    ik_chain_set_turn_angle(c, bone, angle);
    return IK_OK;
}

ik_status ik_chain2d_world_angle(ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    ik_chain_update(c);
    *out = ik_chain_world_angle_of(c, bone);
    return IK_OK;
}

static void quat_out(ik_quat q, ik_real out[4])
{
    out[0] = q.w, out[1] = q.x, out[2] = q.y, out[3] = q.z;
}

/* A unit quaternion from 4 user numbers: finite and of nonzero length. */
static ik_status quat_in(const ik_real in[4], ik_quat *q)
{
    ik_real len;
    if (!all_finite(in, 4)) return IK_ERR_NOT_FINITE;
    /* Scaled first, so huge or tiny (but nonzero) inputs normalise without overflow. */
    len = fmax(fmax(fabs(in[0]), fabs(in[1])), fmax(fabs(in[2]), fabs(in[3])));
    if (len == 0) return IK_ERR_ZERO_ROTATION;
    *q = ik_q_normalize(ik_q(in[0] / len, in[1] / len, in[2] / len, in[3] / len));
    return IK_OK;
}

ik_status ik_chain3d_base(ik_chain *c, ik_real position[3], ik_real rotation[4])
{
    IK_CHECK_DIM(c, 3);
    ik_chain_follow(c);
    position[0] = c->base.x, position[1] = c->base.y, position[2] = c->base.z;
    quat_out(c->base_rot, rotation);
    return IK_OK;
}

ik_status ik_chain3d_set_base(ik_chain *c, const ik_real position[3], const ik_real *rotation)
{
    ik_quat q = c->base_rot;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    st = ik_check_coords(position, 3);
    if (st != IK_OK) return st;
    if (rotation) {
        st = quat_in(rotation, &q);
        if (st != IK_OK) return st;
    }
    if (c->parent) return IK_ERR_ATTACHED;
    base_changes(c);
    c->base = ik_v3(position[0] + 0.0, position[1] + 0.0, position[2] + 0.0);
    c->base_rot = q;
    return IK_OK;
}

ik_status ik_chain3d_rotation(ik_chain *c, int bone, ik_real out[4])
{
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    ik_chain_follow(c);
    quat_out(ik_chain_local_rot(c, bone), out);
    return IK_OK;
}

ik_status ik_chain3d_set_rotation(ik_chain *c, int bone, const ik_real rotation[4])
{
    ik_quat q;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    st = quat_in(rotation, &q);
    if (st != IK_OK) return st;
    pose_changes(c, bone);
    c->rot[bone] = q;
    return IK_OK;
}

ik_status ik_chain3d_world_rotation(ik_chain *c, int bone, ik_real out[4])
{
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    ik_chain_update(c);
    quat_out(ik_chain_world_rot(c, bone), out);
    return IK_OK;
}

/* ---- settings ---- */

const ik_settings *ik_chain_settings(const ik_chain *c) { return &c->settings; }

ik_real ik_chain_stretch_factor(const ik_chain *c) { return c->scale; }
ik_real ik_chain_stretch(const ik_chain *c) { return c->scale; }

ik_status ik_chain_configure(ik_chain *c, const ik_settings *settings)
{
    ik_status st = ik_settings_validate(settings);
    if (st != IK_OK) return st;
    if (settings->solver == IK_SOLVER_TWO_BONE && c->n != 2 && c->n != 3) return IK_ERR_NOT_TWO_BONE;
    if (settings->use_pole && c->dim != 3) return IK_ERR_POLE;
    c->settings = *settings;
    c->settings.greed_ramp = settings->greed_ramp != 0;
    c->settings.use_pole = settings->use_pole != 0;
    c->settings.escape = settings->escape != 0;
    c->settings.stretch = settings->stretch != 0;
    c->settings.tolerance += 0.0; /* -0 is kept as +0 */
    c->settings.angle_tolerance += 0.0;
    c->settings.softness += 0.0;
    c->settings.mix += 0.0;
    c->settings.effector_weight += 0.0;
    c->settings.stiffness += 0.0;
    c->settings.damping += 0.0;
    c->settings.gravity[0] += 0.0, c->settings.gravity[1] += 0.0;
    c->settings.gravity[2] = c->dim == 3 ? settings->gravity[2] + 0.0 : 0;
    if (c->settings.use_pole) {
        /* Normalised once, so no solve multiplies a pole near 1e308 (ik_v3_normalize_or
           rescales first, so this itself cannot overflow). */
        ik_vec3 p = ik_v3_normalize_or(ik_v3(settings->pole[0], settings->pole[1], settings->pole[2]),
                                       ik_v3(0, 1, 0));
        c->settings.pole[0] = p.x, c->settings.pole[1] = p.y, c->settings.pole[2] = p.z;
    }
    return IK_OK;
}

/* ---- goals ---- */

ik_status ik_chain_set_target(ik_chain *c, const ik_real *target)
{
    ik_status st = c->tip_parent ? IK_ERR_HELD : ik_check_coords(target, c->dim);
    if (st != IK_OK) return st;
    ik_chain_keep_target(c, target);
    return IK_OK;
}

ik_status ik_chain_target(ik_chain *c, ik_real *out, int *has)
{
    ik_chain_read_hold(c);
    *has = c->has_target;
    if (c->has_target) {
        out[0] = c->target.x, out[1] = c->target.y;
        if (c->dim == 3) out[2] = c->target.z;
    }
    return IK_OK;
}

ik_status ik_chain2d_set_target_angle(ik_chain *c, ik_real angle)
{
    IK_CHECK_DIM(c, 2);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->target_angle = ik_wrap_angle(angle);
    c->target_turn = ik_v2_turn(c->target_angle);
    c->has_orientation = 1;
    return IK_OK;
}

ik_status ik_chain2d_target_angle(const ik_chain *c, ik_real *out, int *has)
{
    IK_CHECK_DIM(c, 2);
    *has = c->has_orientation;
    if (c->has_orientation) *out = c->target_angle;
    return IK_OK;
}

ik_status ik_chain3d_set_target_rotation(ik_chain *c, const ik_real rotation[4])
{
    ik_quat q;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    st = quat_in(rotation, &q);
    if (st != IK_OK) return st;
    c->target_rot = q;
    c->has_orientation = 1;
    return IK_OK;
}

ik_status ik_chain3d_target_rotation(const ik_chain *c, ik_real out[4], int *has)
{
    IK_CHECK_DIM(c, 3);
    *has = c->has_orientation;
    if (c->has_orientation) quat_out(c->target_rot, out);
    return IK_OK;
}

void ik_chain_clear_target(ik_chain *c)
{
    ik_chain_detach_tip(c);
    c->has_target = 0;
    c->has_orientation = 0;
}

/* ---- src/limits.c ---- */
/*
 * limits.c - joint limits, local to the parent bone, and aiming a bone within them.
 *
 * 2D: the local angle in [min, max]. An angle outside goes to the nearer bound, measured
 * around the circle, so a bone just past -pi does not jump to max.
 *
 * 3D, by the swing-twist decomposition q = swing * twist, twist about the bone's own axis
 * (local +x) and swing about an axis perpendicular to it:
 *   - hinge: only the part of q about the hinge axis is kept (its twist about that axis),
 *     its angle moved within [min, max];
 *   - cone: the swing's angle (how far the bone points from the parent's +x) at most the
 *     half angle, about the same swing axis;
 *   - twist: the twist's angle within [twist_min, twist_max].
 * A rotation by a half turn about an axis perpendicular to the twist axis has no defined
 * twist; the identity is taken, so the result is always defined.
 */

#include <string.h>

/* ---- the clamps ---- */

/* How far short of a half turn a swing stops on a bone with a twist limit (radians). */
#define HALF_TURN_MARGIN 1e-6

/*
 * How far beyond a bound a rotation still counts as within it (radians): a rotation the
 * clamp put on a bound reads back a rounding beyond it, and must be kept as it is, to the
 * bit, by the next clamp (mix 0 then kept the pose only to a few ulps).
 */
#define LIMIT_ROUNDING 1e-12

/* a moved within [min, max] (wrapped angles, min <= max): the nearer bound around the circle. */
static ik_real clamp_circular(ik_real a, ik_real min, ik_real max)
{
    if (a >= min && a <= max) return a;
    return fabs(ik_wrap_angle(a - min)) <= fabs(ik_wrap_angle(a - max)) ? min : max;
}

ik_real ik_limit_angle(const ik_limit *limit, ik_real angle)
{
    if (!(limit->flags & IK_LIMIT_RANGE)) return angle;
    return clamp_circular(angle, limit->min, limit->max);
}

/* The angle of q's turn about unit axis (its twist about that axis), in [-pi, pi]. */
ik_real ik_twist_angle(ik_quat q, ik_vec3 axis)
{
    ik_real along = q.x * axis.x + q.y * axis.y + q.z * axis.z;
    if (along == 0 && q.w == 0) return 0;
    return ik_wrap_angle(2 * atan2(along, q.w));
}

ik_quat ik_limit_rotation(const ik_limit *limit, ik_quat q)
{
    ik_vec3 x_axis = ik_v3(1, 0, 0);
    ik_quat twist, swing;
    ik_real angle, s, twist_held, max_swing;
    int cone_held;
    if (limit->flags & IK_LIMIT_HINGE) {
        ik_real raw = ik_twist_angle(q, limit->axis);
        ik_vec3 off_axis = ik_v3_cross(ik_v3(q.x, q.y, q.z), limit->axis);
        angle = clamp_circular(raw, limit->min, limit->max);
        /* Already a turn about the axis, within range (to rounding): returned as it is. */
        if (fabs(ik_wrap_angle(raw - angle)) <= LIMIT_ROUNDING && ik_v3_len(off_axis) <= 1e-15)
            return q;
        return ik_q_axis_angle(limit->axis, angle);
    }
    if (!(limit->flags & (IK_LIMIT_CONE | IK_LIMIT_TWIST))) return q;

    angle = ik_twist_angle(q, x_axis);
    /* The swing is what is left once the bone's own twist is taken out: q * twist^-1. */
    swing = ik_q_mul(q, ik_q_conj(ik_q_axis_angle(x_axis, angle)));
    if (swing.w < 0) swing = ik_q(-swing.w, -swing.x, -swing.y, -swing.z);
    s = sqrt(swing.y * swing.y + swing.z * swing.z);
    /*
     * The swing's largest angle: the cone's; and with a twist limit, just short of a half
     * turn, where the twist is undefined (w = x = 0 whatever it is) and so could not be held.
     */
    max_swing = (limit->flags & IK_LIMIT_CONE) ? limit->cone : IK_PI;
    if ((limit->flags & IK_LIMIT_TWIST) && max_swing > IK_PI - HALF_TURN_MARGIN)
        max_swing = IK_PI - HALF_TURN_MARGIN;
    twist_held = (limit->flags & IK_LIMIT_TWIST)
                     ? clamp_circular(angle, limit->twist_min, limit->twist_max)
                     : angle;
    cone_held = !(s > 0 && 2 * atan2(s, swing.w) > max_swing + LIMIT_ROUNDING);
    /* Within its limits, a rotation is returned as it is, to the bit. */
    if (fabs(ik_wrap_angle(angle - twist_held)) <= LIMIT_ROUNDING && cone_held) return q;
    twist = ik_q_axis_angle(x_axis, twist_held);
    if (!cone_held) swing = ik_q_axis_angle(ik_v3(0, swing.y / s, swing.z / s), max_swing);
    return ik_q_normalize(ik_q_mul(swing, twist));
}

void ik_chain_clamp_limits(ik_chain *c)
{
    int i;
    if (c->limited == 0) return;
    for (i = 0; i < c->n; i++) {
        if (c->limit[i].flags == 0) continue;
        if (c->dim == 2) {
            ik_real angle = ik_turn_angle(c, i), held = ik_limit_angle(&c->limit[i], angle);
            if (held == angle) continue;
            ik_chain_set_turn_angle(c, i, held);
        } else {
            ik_quat held = ik_limit_rotation(&c->limit[i], c->rot[i]);
            if (memcmp(&held, &c->rot[i], sizeof held) == 0) continue;
            c->rot[i] = held;
        }
        ik_chain_mark_stale(c, i);
    }
}

/*
 * A pose within a bone's limits at the fractions u (of a range, or of the cone's way round),
 * v (of the cone's half angle) and w (of the twist's range): a start of a solve's other
 * tries (solve.c). What a bone's limits leave free starts at 0 (2D) or unturned (3D).
 */
static ik_real at_fraction(ik_real lo, ik_real hi, ik_real u) { return lo + (hi - lo) * u; }

ik_real ik_limit_sample_angle(const ik_limit *limit, ik_real u)
{
    return limit->flags & IK_LIMIT_RANGE ? at_fraction(limit->min, limit->max, u) : 0;
}

ik_quat ik_limit_sample_rotation(const ik_limit *limit, ik_real u, ik_real v, ik_real w)
{
    ik_quat swing = ik_q_identity(), twist = ik_q_identity();
    ik_real around = IK_TWO_PI * u;
    if (limit->flags & IK_LIMIT_HINGE)
        return ik_limit_rotation(limit,
                                 ik_q_axis_angle(limit->axis, at_fraction(limit->min, limit->max, u)));
    if (limit->flags & IK_LIMIT_CONE)
        swing = ik_q_axis_angle(ik_v3(0, cos(around), sin(around)), limit->cone * v);
    if (limit->flags & IK_LIMIT_TWIST)
        twist = ik_q_axis_angle(ik_v3(1, 0, 0), at_fraction(limit->twist_min, limit->twist_max, w));
    return ik_limit_rotation(limit, ik_q_normalize(ik_q_mul(swing, twist)));
}

/*
 * Bone i's new direction held within what its child's limit allows, given the child's new
 * direction: 2D, the child's local angle (child - parent) within its range; 3D, the angle
 * between the two directions within the child's cone.
 */
ik_vec3 ik_limit_backward(const ik_chain *c, int i, ik_vec3 dir, ik_vec3 child)
{
    const ik_limit *limit = &c->limit[i + 1];
    if (c->dim == 2 && (limit->flags & IK_LIMIT_RANGE)) {
        ik_real child_angle = atan2(child.y, child.x);
        ik_real local = ik_wrap_angle(child_angle - atan2(dir.y, dir.x));
        ik_real held = ik_limit_angle(limit, local);
        if (held != local) dir = ik_v3(cos(child_angle - held), sin(child_angle - held), 0);
    } else if (c->dim == 3 && (limit->flags & IK_LIMIT_CONE)) {
        ik_real cos_angle = ik_v3_dot(dir, child);
        if (cos_angle < cos(limit->cone)) {
            ik_vec3 axis = ik_v3_normalize_or(ik_v3_cross(child, dir), ik_v3_any_perpendicular(child));
            dir = ik_q_rotate(ik_q_axis_angle(axis, limit->cone), child);
        }
    }
    return dir;
}

/* ---- posing a bone ---- */

void ik_pose_bone_turn(ik_chain *c, int i, ik_vec2 world)
{
    ik_vec2 parent = i == 0 ? c->base_turn : ik_dir2(c, i - 1);
    const ik_limit *limit = &c->limit[i];
    c->turn[i] = ik_v2_renorm(ik_v2_unrotate(world, parent));
    c->angle[i] = IK_ANGLE_UNKNOWN;
    if (limit->flags) {
        ik_real angle = atan2(c->turn[i].y, c->turn[i].x), held = ik_limit_angle(limit, angle);
        if (held != angle) ik_chain_set_turn_angle(c, i, held);
    }
    ik_chain_fk_bone(c, i);
}

void ik_pose_bone_rot(ik_chain *c, int i, ik_quat world)
{
    ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
    ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
    c->rot[i] = ik_limit_rotation(&c->limit[i], local);
    ik_chain_fk_bone(c, i);
}

void ik_pose_bone(ik_chain *c, int i, ik_vec3 dir)
{
    if (c->dim == 2) {
        ik_pose_bone_turn(c, i, ik_v2(dir.x, dir.y));
    } else {
        /* The smallest turn from the bone's direction now keeps its twist. */
        ik_pose_bone_rot(c, i, ik_q_normalize(ik_q_mul(ik_q_from_to(ik_dir3(c, i), dir), c->wrot[i])));
    }
}

void ik_pose_points(ik_chain *c, const ik_real *points, int first, int last)
{
    const size_t dim = (size_t)c->dim;
    int i;
    for (i = first; i < last; i++) {
        ik_vec3 from = ik_v3(points[dim * i], points[dim * i + 1], dim == 3 ? points[dim * i + 2] : 0);
        const ik_real *q = points + dim * (size_t)(i + 1);
        ik_vec3 to = ik_v3(q[0], q[1], dim == 3 ? q[2] : 0);
        ik_vec3 before = ik_dir_v3(c, i);
        /* A zero-length bone, or a segment with no direction, keeps its world direction. */
        ik_pose_bone(c, i, c->length[i] > 0 ? ik_v3_normalize_or(ik_v3_sub(to, from), before) : before);
    }
    c->stale_from = last;
}

/* ---- setters ---- */


static ik_status check_range(ik_real min, ik_real max)
{
    if (!isfinite(min) || !isfinite(max)) return IK_ERR_NOT_FINITE;
    if (!(-IK_PI <= min && min <= max && max <= IK_PI)) return IK_ERR_LIMIT_RANGE;
    return IK_OK;
}

/* Sets bone i's limit flags, keeping the count of limited bones. */
static void set_flags(ik_chain *c, int i, int flags)
{
    c->limited += (flags != 0) - (c->limit[i].flags != 0);
    c->limit[i].flags = flags;
}

ik_status ik_chain2d_set_limit(ik_chain *c, int bone, ik_real min, ik_real max)
{
    ik_status st;
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    st = check_range(min, max);
    if (st != IK_OK) return st;
    c->limit[bone].min = min;
    c->limit[bone].max = max;
    set_flags(c, bone, IK_LIMIT_RANGE);
    return IK_OK;
}

ik_status ik_chain2d_limit(const ik_chain *c, int bone, int *has, ik_real *min, ik_real *max)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    *has = (c->limit[bone].flags & IK_LIMIT_RANGE) != 0;
    *min = *has ? c->limit[bone].min : -IK_PI;
    *max = *has ? c->limit[bone].max : IK_PI;
    return IK_OK;
}

ik_status ik_chain3d_set_hinge(ik_chain *c, int bone, const ik_real axis[3], ik_real min,
                               ik_real max)
{
    ik_vec3 a;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    if (!isfinite(axis[0]) || !isfinite(axis[1]) || !isfinite(axis[2])) return IK_ERR_NOT_FINITE;
    a = ik_v3_normalize_or(ik_v3(axis[0], axis[1], axis[2]), ik_v3(0, 0, 0));
    if (a.x == 0 && a.y == 0 && a.z == 0) return IK_ERR_AXIS;
    st = check_range(min, max);
    if (st != IK_OK) return st;
    c->limit[bone].axis = a;
    c->limit[bone].min = min;
    c->limit[bone].max = max;
    set_flags(c, bone, IK_LIMIT_HINGE);
    return IK_OK;
}

ik_status ik_chain3d_set_cone(ik_chain *c, int bone, ik_real half_angle)
{
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    if (!isfinite(half_angle)) return IK_ERR_NOT_FINITE;
    if (!(half_angle >= 0 && half_angle <= IK_PI)) return IK_ERR_CONE;
    c->limit[bone].cone = half_angle;
    set_flags(c, bone, (c->limit[bone].flags & IK_LIMIT_TWIST) | IK_LIMIT_CONE);
    return IK_OK;
}

ik_status ik_chain3d_set_twist(ik_chain *c, int bone, ik_real min, ik_real max)
{
    ik_status st;
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    st = check_range(min, max);
    if (st != IK_OK) return st;
    c->limit[bone].twist_min = min;
    c->limit[bone].twist_max = max;
    set_flags(c, bone, (c->limit[bone].flags & IK_LIMIT_CONE) | IK_LIMIT_TWIST);
    return IK_OK;
}

ik_status ik_chain_clear_limit(ik_chain *c, int bone)
{
    IK_CHECK_BONE(c, bone);
    set_flags(c, bone, 0);
    return IK_OK;
}

ik_status ik_chain3d_limit(const ik_chain *c, int bone, ik_limit3d *out)
{
    const ik_limit *limit;
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    limit = &c->limit[bone];
    out->hinge = (limit->flags & IK_LIMIT_HINGE) != 0;
    out->axis[0] = limit->axis.x, out->axis[1] = limit->axis.y, out->axis[2] = limit->axis.z;
    out->min = out->hinge ? limit->min : -IK_PI;
    out->max = out->hinge ? limit->max : IK_PI;
    out->cone = (limit->flags & IK_LIMIT_CONE) != 0;
    out->half_angle = out->cone ? limit->cone : IK_PI;
    out->twist = (limit->flags & IK_LIMIT_TWIST) != 0;
    out->twist_min = out->twist ? limit->twist_min : -IK_PI;
    out->twist_max = out->twist ? limit->twist_max : IK_PI;
    return IK_OK;
}

ik_status ik_chain_set_points(ik_chain *c, const ik_real *points)
{
    size_t count = (size_t)c->dim * (size_t)(c->n + 1);
    ik_status st = ik_check_coords(points, (int)count);
    if (st != IK_OK) return st;
    ik_chain_follow(c);
    ik_chain_settle(c);
    if (c->parent == NULL) {
        c->base = ik_v3(points[0] + 0.0, points[1] + 0.0, c->dim == 3 ? points[2] + 0.0 : 0);
        c->stale_from = 0;
    }
    ik_chain_fk(c);
    ik_pose_points(c, points, 0, c->n);
    ik_chain_fk(c);
    ik_chain_changed(c);
    return IK_OK;
}

/* ---- src/joint_space.c ---- */
/*
 * joint_space.c - damped least-squares steps on joint rotations, the limits as bounds:
 * the primitives a step needs for one bone (the axes it turns about, what its limits
 * block, the turn applied within them, the small symmetric solve), shared by the finish
 * of single chains below and the joint-space stage of rigs (rig_joint.c).
 */

#include <string.h>

/* ---- the finish on chains with limits: damped least squares within the bounds ---- */

/*
 * Where a solve on a chain with limits gets stuck, it is rarely in a true minimum: FABRIK
 * and relaxation fight the limits pass against pass, and CCD sweeps crawl when the tip is
 * near full reach or a joint rests on a bound (a knee just off straight: each sweep gains
 * a percent; measured with bench/limits.lua, most limited misses ended at the iteration cap
 * that way). Every joint moved together by a Gauss-Newton step on the joint angles does
 * not crawl there: it converges quadratically near a goal the limits allow.
 *
 * The step is damped least squares (Levenberg-Marquardt): the joints' turns d that bring
 * the tip by J d closest to the error e, with lambda^2 |d|^2 added so a straight chain or a
 * singular pose takes a small step, not a wild one: d = J^T (J J^T + lambda^2 I)^-1 e, a
 * system of 2 or 3 rows whatever the chain's length (one or three more with an orientation
 * goal, see ik_rows). Limits are bounds: a joint held at a bound that the step would push
 * beyond it leaves the step (a 2D range or a 3D hinge), or loses only that way out (a cone:
 * its swing away from the parent; a twist: its turn about the bone), and the step is solved
 * again without it; whatever is left of a turn beyond a limit, the limit then takes back. A
 * step that does not bring the tip closer is undone and the damping raised; one that does
 * lowers it. Each joint turns at most IK_STEP_MAX_TURN per step, which keeps the linearisation
 * honest.
 *
 * Where the step cannot help (a chain straight along the line to its target: J J^T sees no
 * way to shorten it), the joints with bounds turn towards the middle of their ranges: that
 * is the way each is allowed to bend, whichever side the pole asks for (a hinge cannot bend
 * towards a pole across its axis, where the escape's bend goes). What the steps leave, the
 * solvers hand to the CCD sweeps of the escape (ik_escape_finish): alternating steps and
 * sweeps was measured too, and reached less (2D: 97.3% against 98.7% for FABRIK).
 */
#define FINISH_UNBEND 0.3
#define FINISH_UNBENDS 2
#define FINISH_DAMPING 1e-3 /* lambda^2 to start with (lengths in reaches) */

/* The world axis of bone j's hinge (its parent's frame), 3D. */
static ik_vec3 hinge_axis(const ik_chain *c, int j)
{
    ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1];
    return ik_q_rotate(parent, c->limit[j].axis);
}

/* Whether a joint at a bound would be pushed beyond it by a turn of sign s (2D, hinge). */
static int pushed_out(ik_real angle, ik_real s, const ik_limit *limit)
{
    ik_real room = 1e-9;
    return (s < 0 && angle <= limit->min + room) || (s > 0 && angle >= limit->max - room);
}

/* Bone j's current angle about its 2D range or its hinge's axis. */
ik_real ik_joint_bound_angle(const ik_chain *c, int j)
{
    if (c->dim == 2) return ik_turn_angle(c, j);
    return ik_twist_angle(c->rot[j], c->limit[j].axis);
}

int ik_joint_has_bounds(const ik_chain *c, int j)
{
    return c->dim == 2 ? (c->limit[j].flags & IK_LIMIT_RANGE) != 0 : (c->limit[j].flags & IK_LIMIT_HINGE) != 0;
}

/* Keeps the local pose of bones first..m-1 in work (2D: the turn; 3D: x, y, z of the
   quaternion, w >= 0). */
static void keep_pose(ik_chain *c, int first, int m)
{
    int j;
    if (c->dim == 2) { /* the turns themselves: no angle read from them (an atan2) */
        if (m > first) memcpy(c->work + 2 * (size_t)first, c->turn + first, (size_t)(m - first) * sizeof *c->turn);
        return;
    }
    for (j = first; j < m; j++) {
        ik_quat q = c->rot[j];
        ik_real s = q.w < 0 ? -1 : 1;
        c->work[3 * j] = s * q.x, c->work[3 * j + 1] = s * q.y, c->work[3 * j + 2] = s * q.z;
    }
}

static void restore_pose(ik_chain *c, int first, int m)
{
    int j;
    for (j = first; j < m; j++) {
        if (c->dim == 2) {
            c->turn[j] = ik_v2(c->work[2 * j], c->work[2 * j + 1]);
            c->angle[j] = IK_ANGLE_UNKNOWN;
        } else {
            ik_real x = c->work[3 * j], y = c->work[3 * j + 1], z = c->work[3 * j + 2];
            ik_real w2 = 1 - (x * x + y * y + z * z);
            c->rot[j] = ik_q_normalize(ik_q(w2 > 0 ? sqrt(w2) : 0, x, y, z));
        }
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
}

/* ---- one bone in a step ---- */

/*
 * The world axes joint j turns about in a step: 2D z (its angle); a hinge its axis; a
 * cone or free joint any axis (x, y, z), or, where a bound holds it (mode), an orthonormal
 * set without the way out: s, the swing away from the parent's +x (left out when the cone
 * holds the bone: mode bit 1), t, round the cone, and d, the twist about the bone itself
 * (left out when the twist limit holds it: bit 2). Returns how many.
 */
int ik_joint_axes(const ik_chain *c, int j, int mode, ik_vec3 axes[3])
{
    ik_vec3 d, p;
    int n = 0;
    if (c->dim == 2) {
        axes[0] = ik_v3(0, 0, 1);
        return 1;
    }
    if (c->limit[j].flags & IK_LIMIT_HINGE) {
        axes[0] = hinge_axis(c, j);
        return 1;
    }
    if (mode == 0) {
        axes[0] = ik_v3(1, 0, 0), axes[1] = ik_v3(0, 1, 0), axes[2] = ik_v3(0, 0, 1);
        return 3;
    }
    d = ik_dir3(c, j);
    p = ik_q_x_axis(j == 0 ? c->base_rot : c->wrot[j - 1]);
    if (!(mode & 1)) axes[n++] = ik_v3_normalize_or(ik_v3_cross(p, d), ik_v3_any_perpendicular(d));
    axes[n++] = ik_v3_normalize_or(ik_v3_sub(p, ik_v3_scale(d, ik_v3_dot(p, d))), ik_v3_any_perpendicular(d));
    if (!(mode & 2)) axes[n++] = d;
    return n;
}

int ik_joint_blocked(const ik_chain *c, int j, ik_vec3 turn)
{
    const ik_limit *limit = &c->limit[j];
    ik_vec3 d, p;
    int mode = 0;
    if (!limit->flags) return 0;
    if (ik_joint_has_bounds(c, j)) return pushed_out(ik_joint_bound_angle(c, j), turn.x, limit) ? -1 : 0;
    if (c->dim == 2) return 0;
    d = ik_dir3(c, j);
    p = ik_q_x_axis(j == 0 ? c->base_rot : c->wrot[j - 1]);
    if (limit->flags & IK_LIMIT_CONE) {
        /* out: the turn's part that swings the bone away from the parent's axis */
        ik_vec3 s = ik_v3_normalize_or(ik_v3_cross(p, d), ik_v3(0, 0, 0));
        ik_real swing = acos(ik_clamp(ik_v3_dot(p, d), -1, 1)), out = ik_v3_dot(turn, s);
        if (out > 0 && (swing >= limit->cone - 1e-9 || swing + out - limit->cone > 0.5 * out)) mode |= 1;
    }
    if (limit->flags & IK_LIMIT_TWIST) {
        ik_real twist = ik_twist_angle(c->rot[j], ik_v3(1, 0, 0)), along = ik_v3_dot(turn, d);
        if ((along > 0 && (twist >= limit->twist_max - 1e-9 || twist + along - limit->twist_max > 0.5 * along)) ||
            (along < 0 && (twist <= limit->twist_min + 1e-9 || limit->twist_min - (twist + along) > -0.5 * along)))
            mode |= 2;
    }
    return mode;
}

void ik_joint_turn(ik_chain *c, int j, ik_vec3 t)
{
    if (c->dim == 2 && !c->limit[j].flags) {
        /* A free joint's turn turned by t: no angle read back from it (an atan2). */
        c->turn[j] = ik_v2_renorm(ik_v2_rotate(c->turn[j], ik_v2(cos(t.x), sin(t.x))));
        c->angle[j] = IK_ANGLE_UNKNOWN;
    } else if (c->dim == 2) {
        ik_real a = ik_turn_angle(c, j) + t.x;
        ik_chain_set_turn_angle(c, j, ik_limit_angle(&c->limit[j], ik_wrap_angle(a)));
    } else {
        ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1], r;
        if (c->limit[j].flags & IK_LIMIT_HINGE) {
            r = ik_q_axis_angle(c->limit[j].axis, t.x); /* in the parent's frame already */
        } else {
            ik_real angle = ik_v3_len(t);
            ik_vec3 unit = ik_v3_normalize_or(t, ik_v3(0, 0, 0)); /* 1 / angle overflows */
            if (!(angle > 0 && isfinite(angle)) || ik_v3_dot(unit, unit) == 0) return;
            r = ik_q_axis_angle(unit, angle);
            r = ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent);
        }
        c->rot[j] = ik_limit_rotation(&c->limit[j], ik_q_normalize(ik_q_mul(r, c->rot[j])));
    }
}

/*
 * With an orientation goal, the solvers reach for the point behind the tip bone with bones
 * 0..m-1 (m = n - 1), and the tip bone then takes its goal within its own limit: the goal
 * is met only if the turn from bone m - 1 to the goal is one that limit allows. The turn
 * bone m - 1 still needs for that: the goal's world orientation against the nearest local
 * rotation the tip's limit allows (2D an angle, 3D a rotation vector, world frame).
 */
static ik_vec3 orientation_gap(const ik_chain *c, int m)
{
    const ik_limit *limit = &c->limit[m];
    if (c->dim == 2) {
        ik_vec2 d = ik_dir2(c, m - 1);
        ik_real local = ik_wrap_angle(c->target_angle - atan2(d.y, d.x));
        return ik_v3(ik_wrap_angle(local - ik_limit_angle(limit, local)), 0, 0);
    } else {
        ik_quat w = c->wrot[m - 1], local = ik_q_normalize(ik_q_mul(ik_q_conj(w), c->target_rot));
        ik_quat held = ik_limit_rotation(limit, local);
        /* bone m - 1 must become goal * held^-1: the turn from w to that, in the world */
        ik_quat r = ik_q_normalize(ik_q_mul(ik_q_mul(c->target_rot, ik_q_conj(held)), ik_q_conj(w)));
        ik_real s = sqrt(r.x * r.x + r.y * r.y + r.z * r.z), angle;
        if (r.w < 0) r = ik_q(-r.w, -r.x, -r.y, -r.z);
        if (!(s > 0)) return ik_v3(0, 0, 0);
        angle = 2 * atan2(s, r.w);
        return ik_v3(r.x / s * angle, r.y / s * angle, r.z / s * angle);
    }
}

static ik_real gap_angle(const ik_chain *c, ik_vec3 gap)
{
    return c->dim == 2 ? fabs(gap.x) : ik_v3_len(gap);
}

/*
 * The axis gap_turn works with. 2D: (1, 0, 0) while there is a gap, else 0. 3D: a hinge on
 * the tip bone, while the goal's turn about it (from bone m - 1) is inside its range: its
 * axis in the world (gap_turn then takes a turn's part about it away); at a bound the hinge
 * takes nothing back that way: 0, and the whole turn counts (taken away there, 300 reachable
 * goals of 3-bone chains with hinges were reached 280 to 284 times, where 299 is right). A
 * cone or twist: the gap's direction, 0 without a gap (a gap below GAP_NONE, rounding, is
 * none: normalised, it would be a direction of noise).
 */
#define GAP_NONE 1e-12

static ik_vec3 gap_axis(const ik_chain *c, int m, ik_vec3 gap, int *hinge_tip)
{
    const ik_limit *limit = &c->limit[m];
    ik_vec3 none = ik_v3(0, 0, 0);
    *hinge_tip = c->dim == 3 && (limit->flags & IK_LIMIT_HINGE) != 0;
    if (c->dim == 2) return ik_v3(gap.x != 0 ? 1 : 0, 0, 0);
    if (*hinge_tip) {
        ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(c->wrot[m - 1]), c->target_rot));
        ik_real about = ik_twist_angle(local, limit->axis);
        if (!(about > limit->min && about < limit->max)) return none;
        return ik_q_rotate(c->wrot[m - 1], limit->axis);
    }
    return ik_v3_len(gap) > GAP_NONE ? ik_v3_normalize_or(gap, none) : none;
}

/* The error of the pose now (rows->e) and its size against the tolerances: 1 when met. */
static int finish_error(const ik_chain *c, ik_vec3 target, int m, ik_rows *rows, ik_real *size)
{
    ik_vec3 e = ik_v3_sub(target, ik_joint_v3(c, m)), gap;
    ik_real d = ik_v3_len(e), tolerance = c->settings.tolerance;
    rows->distance = d;
    rows->e[0] = e.x * rows->unit, rows->e[1] = e.y * rows->unit, rows->e[2] = e.z * rows->unit;
    rows->k = c->dim;
    *size = d * rows->unit;
    rows->gap_axis = ik_v3(0, 0, 0);
    rows->hinge_tip = 0;
    if (!rows->oriented) return d <= tolerance;
    gap = orientation_gap(c, m);
    rows->gap_axis = gap_axis(c, m, gap, &rows->hinge_tip);
    rows->e[c->dim] = rows->scale * gap.x;
    if (c->dim == 3) rows->e[4] = rows->scale * gap.y, rows->e[5] = rows->scale * gap.z;
    rows->k = c->dim == 2 ? 3 : 6;
    *size = d * rows->unit + rows->scale * gap_angle(c, gap);
    /*
     * Met: the point behind and the tip bone's own error (the arc its tip is off by, longer
     * than the chord) within the tolerance together, the angle within its own. (Half the
     * tolerance each, as before, missed 16% of 2D tracking frames by a point behind at
     * 5e-4 to 1.3e-3 with no angle left to take.)
     */
    return gap_angle(c, gap) <= c->settings.angle_tolerance &&
           d + gap_angle(c, gap) * c->length[m] <= tolerance;
}

/*
 * How a turn of bone m - 1 (world rotation vector) changes the orientation gap, to first
 * order: the tip bone's limit takes whatever part of it the tip can turn back. A hinge takes
 * the part about its axis; a cone and twist take the turns within the cone and the twist's
 * range, so only the part along the gap itself (out across the bound) is left; a 2D range
 * takes every turn while the tip's angle is inside it (no gap). Taken whole,
 * as the gap's change, the steps spent their turns where the tip undid them: on 500 3-bone
 * chains with limits and an orientation goal (bench/limits.lua), most misses were crawls,
 * 0.002 to 0.007 short after 64 iterations, and 3.4% more reached with 1000.
 */
static ik_vec3 gap_turn(const ik_rows *rows, ik_vec3 turn)
{
    ik_vec3 along = ik_v3_scale(rows->gap_axis, ik_v3_dot(rows->gap_axis, turn));
    return rows->hinge_tip ? ik_v3_sub(turn, along) : along;
}

/* Joint j's columns of the step (1 to 3), each of rows->k entries; returns how many. */
static int joint_columns(const ik_chain *c, int j, int mode, ik_vec3 r, const ik_rows *rows, ik_real col[3][6])
{
    ik_vec3 axes[3];
    int i, n;
    if (c->dim == 2) {
        /* the orientation row: gap_turn */
        col[0][0] = -r.y, col[0][1] = r.x, col[0][2] = rows->scale * rows->gap_axis.x;
        return 1;
    }
    n = ik_joint_axes(c, j, mode, axes);
    for (i = 0; i < n; i++) {
        ik_vec3 v = ik_v3_cross(axes[i], r), a = gap_turn(rows, axes[i]);
        col[i][0] = v.x, col[i][1] = v.y, col[i][2] = v.z;
        col[i][3] = rows->scale * a.x, col[i][4] = rows->scale * a.y, col[i][5] = rows->scale * a.z;
    }
    return n;
}

/* Joint j's turn for the solution y: 2D and hinges an angle (in .x), else a rotation vector. */
static ik_vec3 joint_turn(const ik_chain *c, int j, int mode, ik_vec3 r, const ik_rows *rows, const ik_real *y)
{
    ik_real col[3][6];
    ik_vec3 axes[3], w = ik_v3(0, 0, 0);
    int n = joint_columns(c, j, mode, r, rows, col), i, k;
    if (c->dim == 3) ik_joint_axes(c, j, mode, axes);
    for (i = 0; i < n; i++) {
        ik_real t = 0;
        for (k = 0; k < rows->k; k++) t += col[i][k] * y[k];
        if (c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE)) return ik_v3(t, 0, 0);
        w = ik_v3_add(w, ik_v3_scale(axes[i], t));
    }
    return w;
}

int ik_solve_spd(ik_real *a, int stride, int k, const ik_real *e, ik_real *y)
{
    int i, j, l;
    for (i = 0; i < k; i++) {
        for (j = 0; j <= i; j++) {
            ik_real sum = a[i * stride + j];
            for (l = 0; l < j; l++) sum -= a[i * stride + l] * a[j * stride + l];
            if (i == j) {
                if (!(sum > 0 && isfinite(sum))) return 0;
                a[i * stride + i] = sqrt(sum);
            } else {
                a[i * stride + j] = sum / a[j * stride + j];
            }
        }
    }
    for (i = 0; i < k; i++) { /* L z = e */
        ik_real sum = e[i];
        for (l = 0; l < i; l++) sum -= a[i * stride + l] * y[l];
        y[i] = sum / a[i * stride + i];
    }
    for (i = k - 1; i >= 0; i--) { /* L^T y = z */
        ik_real sum = y[i];
        for (l = i + 1; l < k; l++) sum -= a[l * stride + i] * y[l];
        y[i] = sum / a[i * stride + i];
    }
    return 1;
}

/*
 * How bone j takes part in a step, given the first solution y0 (drop: there was one): -1
 * left out, else the mode of ik_joint_axes (ik_joint_blocked of its turn in y0).
 */
static int joint_mode(const ik_chain *c, int j, ik_vec3 r, const ik_rows *rows, const ik_real *y0, int drop)
{
    if (!drop || !c->limit[j].flags) return 0;
    return ik_joint_blocked(c, j, joint_turn(c, j, 0, r, rows, y0));
}

/* From joint j to the tip, in reaches. */
static ik_vec3 lever(const ik_chain *c, ik_vec3 tip, int j, const ik_rows *rows)
{
    return ik_v3_scale(ik_v3_sub(tip, ik_joint_v3(c, j)), rows->unit);
}

/*
 * The step below for a 2D chain without limits and orientation rows, in closed form: two
 * rows, every joint free, so J J^T + lambda^2 I is 2 x 2 and solved by its determinant, and
 * no joint is ever left out; the turns taken without trigonometry (below). Tracking takes
 * one a frame, so its cost is a solve's (bench/lua_bench.lua: a 3-bone chain tracking took
 * 2.1 times a hand-written FABRIK's time under LuaJIT through the general step, about 0.75
 * this way). The batch takes the same step, with the forward kinematics after it, for many
 * chains at once in vector lanes (free2 in batch_lanes.h): a change here is a change there.
 */
static int free_step2(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec2 tip = ik_joint2(c, m), r;
    ik_real a = lambda2, b = 0, d = lambda2, det, y0, y1, t, largest = 0, scale;
    int j;
    for (j = first; j < m; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        a += r.y * r.y, b -= r.y * r.x, d += r.x * r.x;
    }
    det = a * d - b * b;
    if (!(det > 0 && isfinite(det))) return 0;
    y0 = (d * rows->e[0] - b * rows->e[1]) / det;
    y1 = (a * rows->e[1] - b * rows->e[0]) / det;
    for (j = first; j < m; j++) {
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        t = fabs(r.x * y1 - r.y * y0);
        if (t > largest) largest = t;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    /*
     * Every turn from the pose the step was taken at, as below, each by the rotation
     * (1 - h^2, 2h) / (1 + h^2), h = t / 2: a turn of 2 atan(t / 2), which is t to third
     * order (t^3 / 12 less: 1.3% at the largest turn a step takes), with no trigonometric
     * call. The step is a linear estimate either way; what it gains is measured after.
     */
    for (j = first; j < m; j++) {
        ik_real h, k;
        r = ik_v2_scale(ik_v2_sub(tip, ik_joint2(c, j)), rows->unit);
        h = (r.x * y1 - r.y * y0) * scale / 2;
        k = 1 / (1 + h * h);
        c->turn[j] = ik_v2_renorm(ik_v2_rotate(c->turn[j], ik_v2((1 - h * h) * k, 2 * h * k)));
        c->angle[j] = IK_ANGLE_UNKNOWN;
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/*
 * The same for a 3D chain without limits: every joint turns about any axis, so its three
 * columns (e_i x r for the world axes e_i) add |r|^2 I - r r^T to J J^T, a 3 x 3 system
 * solved by its cofactors, and its turn, sum_i e_i ((e_i x r) . y), is the rotation vector
 * r x y; each taken as the rotation (1, w / 2) normalised (by 2 atan(|w| / 2)), no
 * trigonometry, as in 2D.
 */
static int free_step3(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec3 tip = ik_joint3(c, m), r, w, y;
    ik_real a[3][3] = {{lambda2, 0, 0}, {0, lambda2, 0}, {0, 0, lambda2}}, k[3][3], det, rr, size, largest = 0,
            scale;
    int j, i, l;
    for (j = first; j < m; j++) {
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        rr = ik_v3_dot(r, r);
        a[0][0] += rr - r.x * r.x, a[1][1] += rr - r.y * r.y, a[2][2] += rr - r.z * r.z;
        a[0][1] -= r.x * r.y, a[0][2] -= r.x * r.z, a[1][2] -= r.y * r.z;
    }
    a[1][0] = a[0][1], a[2][0] = a[0][2], a[2][1] = a[1][2];
    k[0][0] = a[1][1] * a[2][2] - a[1][2] * a[2][1];
    k[0][1] = a[0][2] * a[2][1] - a[0][1] * a[2][2];
    k[0][2] = a[0][1] * a[1][2] - a[0][2] * a[1][1];
    k[1][1] = a[0][0] * a[2][2] - a[0][2] * a[2][0];
    k[1][2] = a[0][2] * a[1][0] - a[0][0] * a[1][2];
    k[2][2] = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    k[1][0] = k[0][1], k[2][0] = k[0][2], k[2][1] = k[1][2];
    det = a[0][0] * k[0][0] + a[0][1] * k[1][0] + a[0][2] * k[2][0];
    if (!(det > 0 && isfinite(det))) return 0;
    for (i = 0; i < 3; i++) {
        ik_real sum = 0;
        for (l = 0; l < 3; l++) sum += k[i][l] * rows->e[l];
        (&y.x)[i] = sum / det;
    }
    for (j = first; j < m; j++) {
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        size = ik_v3_len(ik_v3_cross(r, y));
        if (size > largest) largest = size;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    for (j = first; j < m; j++) {
        ik_quat parent = j == 0 ? c->base_rot : c->wrot[j - 1], turn;
        r = ik_v3_scale(ik_v3_sub(tip, ik_joint3(c, j)), rows->unit);
        w = ik_v3_scale(ik_v3_cross(r, y), scale / 2);
        turn = ik_q_normalize(ik_q(1, w.x, w.y, w.z));
        turn = ik_q_mul(ik_q_mul(ik_q_conj(parent), turn), parent); /* in the parent's frame */
        c->rot[j] = ik_q_normalize(ik_q_mul(turn, c->rot[j]));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/* One damped least-squares step of bones first..m-1; 0 when no joint can move. */
static int finish_step(ik_chain *c, int m, int first, const ik_rows *rows, ik_real lambda2)
{
    ik_vec3 tip = ik_joint_v3(c, m), t;
    ik_real a[6][6], col[3][6], y[6] = {0, 0, 0, 0, 0, 0}, y0[6], largest = 0, scale;
    int i, j, k, l, drop = 0, n, mode;
    if (!c->limited && !rows->oriented)
        return c->dim == 2 ? free_step2(c, m, first, rows, lambda2) : free_step3(c, m, first, rows, lambda2);
    for (;;) {
        int moving = 0, again = 0;
        memcpy(y0, y, sizeof y);
        for (k = 0; k < rows->k; k++)
            for (l = 0; l < rows->k; l++) a[k][l] = k == l ? lambda2 : 0;
        for (j = first; j < m; j++) {
            ik_vec3 r = lever(c, tip, j, rows);
            mode = joint_mode(c, j, r, rows, y0, drop);
            if (mode < 0) continue;
            moving++;
            n = joint_columns(c, j, mode, r, rows, col);
            for (i = 0; i < n; i++)
                for (k = 0; k < rows->k; k++)
                    for (l = 0; l <= k; l++) a[k][l] += col[i][k] * col[i][l];
        }
        if (moving == 0 || !ik_solve_spd(&a[0][0], 6, rows->k, rows->e, y)) return 0;
        if (drop) break;
        for (j = first; j < m && !again; j++)
            again = joint_mode(c, j, lever(c, tip, j, rows), rows, y, 1) != 0;
        if (!again) break;
        drop = 1; /* solve again without the ways out the bounds hold */
    }
    /* No joint turns more than IK_STEP_MAX_TURN: the linearisation holds for small turns. */
    for (j = first; j < m; j++) {
        ik_vec3 r = lever(c, tip, j, rows);
        ik_real size;
        mode = joint_mode(c, j, r, rows, y0, drop);
        if (mode < 0) continue;
        t = joint_turn(c, j, mode, r, rows, y);
        size = c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE) ? fabs(t.x) : ik_v3_len(t);
        if (size > largest) largest = size;
    }
    if (!(largest > 1e-15)) return 0;
    scale = largest > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / largest : 1;
    for (k = 0; k < rows->k; k++) y[k] *= scale;
    /* Every turn from the pose the step was taken at: the world data stays the old one
       until the forward kinematics below, as the linearisation assumes. */
    for (j = first; j < m; j++) {
        ik_vec3 r = lever(c, tip, j, rows);
        mode = joint_mode(c, j, r, rows, y0, drop);
        if (mode >= 0) ik_joint_turn(c, j, joint_turn(c, j, mode, r, rows, y));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/* Turns each bounded joint towards the middle of its range (see the top of the section). */
static int unbend(ik_chain *c, int m, int first)
{
    int j, moved = 0;
    for (j = first; j < m; j++) {
        ik_real angle, mid, turn;
        if (!ik_joint_has_bounds(c, j)) continue;
        angle = ik_joint_bound_angle(c, j);
        mid = (c->limit[j].min + c->limit[j].max) / 2;
        turn = ik_clamp(mid - angle, -FINISH_UNBEND, FINISH_UNBEND);
        if (fabs(turn) < 1e-3) continue;
        if (c->dim == 2) ik_chain_set_turn_angle(c, j, angle + turn);
        else c->rot[j] = ik_limit_rotation(&c->limit[j], ik_q_normalize(ik_q_mul(ik_q_axis_angle(c->limit[j].axis, turn), c->rot[j])));
        moved = 1;
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return moved;
}

int ik_limits_oriented(const ik_chain *c, int m)
{
    return c->has_orientation && m == c->n - 1 && m > 0 && c->limit[m].flags != 0;
}

/*
 * The steps measure lengths in reaches (the unit), so a chain and its target scaled by a
 * power of two take the same steps, to the bit. They are taken where that unit and every
 * joint and the target, measured from the base in reaches, are finite and within
 * FINISH_RANGE, so no product they form overflows (lambda^2 went to infinity, then
 * inf * 0) or loses all its bits. Beyond that the solver's own answer stands. At the bones'
 * own lengths (scale 1, as every solve that steps has them) and with no joint pinned
 * (first 0), the joints need no look: every one is made from the base by unit turns of the
 * bones (by steps_begin, or before it while the pose was the truth), so none lies farther
 * from it than the reach, or twice that where the base is far from the origin (each sum
 * rounds by at most its step again): 2 in reaches at most; only the target is measured (7%
 * of a tracked solve's instructions in a 10-bone 2D chain went to the joints' look). Pinned
 * joints (relaxation's weight 0) are where the solve found them, so they are measured.
 */
#define FINISH_RANGE 1e100

static int finish_in_range(const ik_chain *c, ik_vec3 target, int m, int first, ik_real unit)
{
    ik_vec3 base = ik_joint_v3(c, 0), v;
    int j = c->scale == 1 && first == 0 ? m + 1 : 0;
    if (!(unit > 0 && unit < INFINITY)) return 0;
    if (c->dim == 2) { /* the joints' z is 0: the target's last */
        ik_vec2 b = ik_v2(base.x, base.y), w;
        for (; j <= m; j++) {
            w = ik_v2_scale(ik_v2_sub(ik_joint2(c, j), b), unit);
            if (!(fabs(w.x) <= FINISH_RANGE && fabs(w.y) <= FINISH_RANGE)) return 0;
        }
    }
    for (; j <= m + 1; j++) {
        v = ik_v3_scale(ik_v3_sub(j > m ? target : ik_joint_v3(c, j), base), unit);
        if (!(fabs(v.x) <= FINISH_RANGE && fabs(v.y) <= FINISH_RANGE && fabs(v.z) <= FINISH_RANGE)) return 0;
    }
    return 1;
}

/*
 * Tracking with limits: the steps take the smallest turns that bring the tip to its goal, so
 * a joint that reached a bound stays on it, and frame by frame the pose drifts into the
 * corners of its ranges until too few joints are left free to follow the goal; then the
 * chain loses it and jumps when the solve finds it again (bench/track_limits.lua: 2 of 8
 * chains of 6 bones stayed within 3 times the animation's own turn a frame). So a tracked
 * solve first turns each joint with bounds (a 2D range, a 3D hinge) towards the middle of
 * its range, by CENTER_RATE times how far it is from the middle in half ranges, with the
 * tip's share of that turn taken out by the other joints (the turns projected on the steps'
 * null space: g - J^T (J J^T + CENTER_DAMPING I)^-1 J g); the steps then take what the
 * projection, linear, left. Only where the joints can move more ways than the rows ask:
 * otherwise no turn leaves the tip where it is. The rate was measured at 0.005 to 0.1 a
 * solve; bench/limits.lua 2D 6 bones tracking, the largest change of a joint between frames
 * 1.355 / 0.505 / 0.845 rad (FABRIK / CCD / relax) -> 0.060 for all three (the animation
 * turns 0.038).
 */
#define CENTER_RATE 0.05
#define CENTER_DAMPING 1e-6

/* Bone j's turn towards the middle of its range, before the projection. */
static ik_real center_pull(const ik_chain *c, int j)
{
    const ik_limit *limit = &c->limit[j];
    ik_real half = (limit->max - limit->min) / 2;
    if (!ik_joint_has_bounds(c, j) || !(half > 0)) return 0;
    return CENTER_RATE * ((limit->min + half - ik_joint_bound_angle(c, j)) / half);
}

/* The turn above, from the rows of the pose as it stands (finish's, goal not met); each
   bone's pull kept in c->work (free until finish's steps). Returns whether it turned. */
static int center(ik_chain *c, int m, int first, const ik_rows *rows)
{
    ik_real a[6][6], col[3][6], b[6] = {0, 0, 0, 0, 0, 0}, y[6], *pull = c->work;
    ik_vec3 tip = ik_joint_v3(c, m);
    int i, j, k, l, n, ways = 0, pulled = 0;
    for (k = 0; k < rows->k; k++)
        for (l = 0; l < rows->k; l++) a[k][l] = k == l ? CENTER_DAMPING : 0;
    for (j = first; j < m; j++) {
        pull[j] = center_pull(c, j);
        if (pull[j] != 0) pulled = 1;
        n = joint_columns(c, j, 0, lever(c, tip, j, rows), rows, col);
        ways += n;
        for (i = 0; i < n; i++)
            for (k = 0; k < rows->k; k++) {
                for (l = 0; l <= k; l++) a[k][l] += col[i][k] * col[i][l];
                b[k] += col[i][k] * pull[j]; /* a joint with bounds has one column */
            }
    }
    if (!pulled || ways <= rows->k || !ik_solve_spd(&a[0][0], 6, rows->k, b, y)) return 0;
    for (j = first; j < m; j++) {
        ik_vec3 t = joint_turn(c, j, 0, lever(c, tip, j, rows), rows, y);
        ik_joint_turn(c, j, ik_v3(pull[j] - t.x, -t.y, -t.z));
    }
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
    return 1;
}

/*
 * Tracking's prediction. A goal that moves smoothly moves the pose smoothly, and where the
 * goal fixes the pose but for a side, only the motion before tells the sides apart: a 2D
 * 3-bone chain with an orientation goal, its middle joint taken through straight by the
 * animation, bent back the side it came from (as good an answer to that frame's goal), and
 * twenty frames on a bound forced it across in one frame (bench/limits.lua: 0.410 rad where
 * the animation turns 0.036). So a tracked solve whose goal the pose does not meet starts
 * from the pose the last two solves' motion continues to: each bone turned again by its turn
 * between the starts of the last tracked solve and this one, within its limits, when that
 * turn is at most PREDICT_CAP (a larger one is a jump, not a motion, and is not repeated).
 * Only when the chain is as the last solve, a tracked one, left it (its pose version: a base
 * that moved keeps it); the start is kept for the next solve either way. The steps then take
 * what the motion did not.
 *
 * Where the bones can turn more ways than the steps' rows ask, a motion the goal does not see
 * would go on frame after frame (at the whole turn, a 3D chain of 7 free bones tracking an
 * animation of 0.0058 rad a frame turned 0.0237, spec/tracking_spec.lua): there the bones
 * turn on by PREDICT_SPARE of it, and such a motion dies out. Chains without limits and with
 * bones to spare do not predict: they did not jump before, and at 0.9 their frames still
 * take a step, so it only cost time (bench/lua_bench.lua, LuaJIT, a 10-bone chain tracking
 * 176 -> 287 ns). With limits, side by side (bench/limits.lua, tracking, 1000 frames): 2D 3
 * bones with an orientation goal met 99.2 -> 100% of frames, iterations a frame 1.8 -> 0.9,
 * largest turn 0.410 -> 0.038 rad; 2D 6 bones 1.7 -> 1.0 iterations, 0.060 -> 0.063 rad; 3D 7
 * bones 1.9 -> 1.2, 0.075 -> 0.068 rad; bench/limits_fresh.lua's 2D chains within 3 times the
 * animation's turn 17 -> 19 of 20 a solver. Rigs have their own stages and do not predict (on
 * their joint-space stage it made the 3D rigs jump more).
 */
#define PREDICT_CAP 0.05
#define PREDICT_COS 0.99875026039496628    /* cos(PREDICT_CAP) */
#define PREDICT_COS_HALF 0.99968751627570263 /* cos(PREDICT_CAP / 2): a quaternion's w */
#define PREDICT_SPARE 0.9

/* How many ways bones first..m-1 can turn (2D and hinges 1 each, other 3D joints 3). */
static int ways_to_turn(const ik_chain *c, int first, int m)
{
    int j, ways = 0;
    if (!c->limited) return (m - first) * (c->dim == 2 ? 1 : 3);
    for (j = first; j < m; j++) ways += c->dim == 2 || (c->limit[j].flags & IK_LIMIT_HINGE) ? 1 : 3;
    return ways;
}

/* Bones first..m-1 continue their motion (a goal not met: apply); every bone's start kept.
   rows: the steps' rows of the pose now. Returns whether a bone turned. */
static int predict(ik_chain *c, int first, int m, int apply, const ik_rows *rows)
{
    int j, from = m, spare;
    ik_real k;
    spare = ways_to_turn(c, first, m) > rows->k;
    if (spare && !c->limited) return 0;
    k = spare ? PREDICT_SPARE : 1;
    apply = apply && c->track_have && c->track_seen == ik_chain_pose_version(c);
    c->track_recorded = 1;
    for (j = 0; j < c->n; j++) {
        int go = apply && j >= first && j < m;
        if (c->dim == 2) {
            ik_vec2 now = c->turn[j], d = ik_v2_unrotate(now, c->track_turn[j]);
            c->track_turn[j] = now;
            if (!go || !(d.x >= PREDICT_COS) || d.y == 0) continue; /* (d.y 0: unturned) */
            if (c->limit[j].flags) {
                ik_real a = ik_wrap_angle(ik_turn_angle(c, j) + k * atan2(d.y, d.x));
                ik_chain_set_turn_angle(c, j, ik_limit_angle(&c->limit[j], a));
            } else {
                if (k != 1) {
                    d = ik_v2(1 + k * (d.x - 1), k * d.y);
                    d = ik_v2_scale(d, 1 / sqrt(ik_v2_dot(d, d)));
                }
                c->turn[j] = ik_v2_renorm(ik_v2_rotate(now, d));
                c->angle[j] = IK_ANGLE_UNKNOWN;
            }
        } else {
            ik_quat now = c->rot[j], d = ik_q_mul(ik_q_conj(c->track_rot[j]), now);
            c->track_rot[j] = now;
            if (d.w < 0) d = ik_q(-d.w, -d.x, -d.y, -d.z);
            if (!go || !(d.w >= PREDICT_COS_HALF) || (d.x == 0 && d.y == 0 && d.z == 0)) continue;
            if (k != 1) d = ik_q(1 + k * (d.w - 1), k * d.x, k * d.y, k * d.z);
            c->rot[j] = ik_q_normalize(ik_q_mul(now, d));
            if (c->limit[j].flags) c->rot[j] = ik_limit_rotation(&c->limit[j], c->rot[j]);
        }
        if (j < from) from = j;
    }
    if (from == m) return 0;
    ik_chain_mark_stale(c, from);
    ik_chain_fk(c);
    return 1;
}

/*
 * A solve in phases (ik_steps in chain.h): steps_begin makes the chain current and measures
 * it (0: out of the steps' range, nothing to do); while ik_steps_going, each iteration keeps
 * the pose (ik_steps_keep), steps, and weighs the step (ik_steps_after). centre: a tracked
 * solve, which turns the bounded joints first (center, above).
 */
static int steps_begin(ik_steps *s, ik_chain *c, ik_vec3 target, int m, int iterations, int first, int centre)
{
    ik_real reach = ik_chain_reach_to(c, m, NULL);
    s->c = c, s->target = target, s->m = m, s->first = first, s->iterations = iterations;
    s->iter = 0, s->unbends = 0, s->stuck = 0, s->done = 0, s->stopped = 0;
    s->rows.oriented = ik_limits_oriented(c, m);
    /*
     * The orientation rows weigh a radian as an eighth of the reach: the bench measured
     * 1 (the reach), 1/4, 1/8, 1/16 and 1/40 and the tip bone's length; 1/8 reached most
     * (orientation first drove the bones into the corners of their cones).
     */
    s->rows.unit = 1 / reach;
    s->rows.scale = 1.0 / 8;
    s->rows.distance = NAN;
    /* The steps turn the local pose: the joints are made from it (only a pose derived from
       the joints just now needs that; otherwise they are). */
    if (c->pose_behind) {
        ik_chain_settle(c);
        ik_chain_mark_stale(c, first);
    }
    ik_chain_fk(c);
    if (!finish_in_range(c, target, m, first, s->rows.unit)) return 0;
    s->lambda2 = FINISH_DAMPING;
    /* The error of the pose as it stands: measured again only when the pose changed. */
    s->done = finish_error(c, target, m, &s->rows, &s->size);
    if (centre && predict(c, first, m, !s->done, &s->rows)) s->done = finish_error(c, target, m, &s->rows, &s->size);
    if (centre && c->limited && !s->done && center(c, m, first, &s->rows))
        s->done = finish_error(c, target, m, &s->rows, &s->size);
    return 1;
}

int ik_steps_going(const ik_steps *s) { return s->iter < s->iterations && !s->done && !s->stopped; }

void ik_steps_keep(ik_steps *s)
{
    keep_pose(s->c, s->first, s->m);
    s->iter++;
}

int ik_steps_free2(const ik_steps *s) { return s->c->dim == 2 && !s->c->limited && !s->rows.oriented; }

/* Whether the bounded joints turned towards the middles of their ranges (at most
   FINISH_UNBENDS times a solve); when not, the steps stop. */
static int unbend_or_stop(ik_steps *s)
{
    if (s->unbends >= FINISH_UNBENDS || !unbend(s->c, s->m, s->first)) {
        s->stopped = 1;
        return 0;
    }
    s->unbends++;
    return 1;
}

/* A step taken, its error now: kept if it gained (the damping lowered), else undone. */
static void weigh(ik_steps *s, const ik_rows *now, ik_real after, int met_now)
{
    ik_chain *c = s->c;
    if (after < s->size) {
        /* a gain of less than a percent twice running: a minimum the limits made */
        s->stuck = after > 0.99 * s->size ? s->stuck + 1 : 0;
        s->lambda2 = s->lambda2 * 0.25;
        if (s->lambda2 < 1e-12) s->lambda2 = 1e-12;
        s->rows = *now, s->size = after, s->done = met_now;
    } else {
        restore_pose(c, s->first, s->m); /* (3D: to rounding, so measured again) */
        s->lambda2 *= 8;
        s->stuck = s->lambda2 > 1 ? s->stuck + 2 : s->stuck;
        s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
    }
    if (s->stuck >= 2 && unbend_or_stop(s)) {
        s->stuck = 0;
        s->lambda2 = FINISH_DAMPING;
        s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
    }
}

void ik_steps_after(ik_steps *s, int stepped)
{
    ik_chain *c = s->c;
    ik_real after;
    ik_rows now;
    int met_now;
    if (!stepped) {
        if (unbend_or_stop(s)) s->done = finish_error(c, s->target, s->m, &s->rows, &s->size);
        return;
    }
    now = s->rows;
    met_now = finish_error(c, s->target, s->m, &now, &after);
    weigh(s, &now, after, met_now);
}

int ik_steps_step(ik_steps *s) { return finish_step(s->c, s->m, s->first, &s->rows, s->lambda2); }

void ik_steps_run(ik_steps *s)
{
    while (ik_steps_going(s)) {
        ik_steps_keep(s);
        ik_steps_after(s, ik_steps_step(s));
    }
}

/*
 * A solver on points derives each bone's world rotation from the one before the solve by
 * the smallest turn of its direction (ik_chain_settle), which keeps its twist; the steps turn
 * bones about any axis. So on a 3D chain without limits the world rotations the passes
 * would derive from are kept, the steps taken, and the pose then derived from the joints
 * they leave, as after the passes (with limits, the limits say what the twist is).
 */
static int keeps_twist(const ik_chain *c, int points) { return points && c->dim == 3 && !c->limited; }

static void keep_points_rot(ik_chain *c, int points)
{
    if (keeps_twist(c, points)) memcpy(c->points_rot, c->wrot, (size_t)c->n * sizeof *c->wrot);
}

static void derive_from_points(ik_chain *c, int points)
{
    int i;
    if (!keeps_twist(c, points)) return;
    for (i = 0; i < c->n; i++) {
        c->wrot[i] = c->points_rot[i];
        ik_v3_store(ik_dir(c, i), ik_q_x_axis(c->wrot[i]));
    }
    c->pose_behind = 1;
}

int ik_joint_finish(ik_chain *c, ik_vec3 target, int m, int iterations, int first, int points)
{
    ik_steps s;
    keep_points_rot(c, points);
    if (steps_begin(&s, c, target, m, iterations, first, 0)) ik_steps_run(&s);
    derive_from_points(c, points);
    return s.iter;
}

/*
 * Tracking: a goal that moved a little since the last solve (within IK_TRACK_NEAR of the
 * reach). The passes of FABRIK and relaxation creep against limits and CCD's sweeps turn
 * one joint at a time, so 10 iterations a frame often fell short and the pose jumped when
 * they caught up (bench/limits.lua: 3D FABRIK met 88% of frames, its largest joint change
 * between frames 0.94 rad for an animation that turns 0.04; without limits FABRIK, CCD and
 * relaxation met 83.5, 63.2 and 57.1% of frames in 2D); joint-space steps from where the
 * chain is move every joint a little, as the goal did. A chain without limits leaves a
 * target beyond its reach to the solver (which straightens). With escape off the solvers
 * stay as the textbooks have them, here too.
 */

int ik_steps_track(ik_steps *s, ik_chain *c, ik_vec3 target, int m, int first, int points, ik_real distance)
{
    ik_real reach;
    s->points = points;
    s->iter = 0;
    if (!ik_may_track(c, m)) return 0;
    reach = ik_chain_reach_to(c, m, NULL);
    if (distance != distance) distance = ik_joint_distance(c, m, target);
    if (!(distance < IK_TRACK_NEAR * reach)) return 0;
    if (!c->limited && !(ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))) < reach - c->settings.tolerance))
        return 0;
    keep_points_rot(c, points);
    if (!steps_begin(s, c, target, m, ik_iteration_budget(c->settings.iterations), first, 1)) s->iterations = 0;
    return 1;
}

int ik_steps_end(ik_steps *s, int *used, ik_real *distance)
{
    derive_from_points(s->c, s->points);
    *used = s->iter;
    if (distance) *distance = s->rows.distance;
    return s->done;
}

int ik_joint_track(ik_chain *c, ik_vec3 target, int m, int first, int points, int *used, ik_real *distance)
{
    ik_steps s;
    *used = 0;
    if (!ik_steps_track(&s, c, target, m, first, points, NAN)) return 0;
    ik_steps_run(&s);
    return ik_steps_end(&s, used, distance);
}

/* ---- src/sweep.c ---- */
/*
 * sweep.c - one CCD sweep: the iteration of the CCD solver (ccd.c), and the last resort of
 * the escape on chains with limits (escape.c).
 *
 * After "IK Solver From Scratch In Unity", ../shared/seeds/ccd-ik-unity.txt
 * (PerformIK_Cascade): the joints are visited from the base to the last one, as the
 * article's code does. At joint j the sweep takes the shortest rotation turning (tip -
 * joint) into (target - joint) and applies the fraction `greed` of it: the article
 * interpolates from the identity (Quaternion.Lerp); we scale the rotation's angle about the
 * same axis (a slerp), which is exactly "the fraction greed".
 *
 * Turning joint j moves every joint after it rigidly. Rather than moving them all (O(n)
 * per joint), the turns are composed into one rigid map x -> R x + b that takes a joint's
 * position at the start of the sweep to its current one; each joint is mapped when its turn
 * comes, so a sweep costs O(n). The tip is carried along directly. The local pose is the
 * truth: the world data is refreshed from it at the end.
 *
 * Joint limits: each joint's new local rotation is moved within its limits as soon as it
 * turns, and the turn it actually made is the one composed into the map.
 *
 * Degenerate cases: a joint on the tip or on the target does not turn (atan2(0, 0) = 0 in
 * 2D, a zero direction in 3D). Tip and target in exactly opposite directions (a straight
 * chain and a target on its line, behind the joint) turn by (greed times) a half turn whose
 * sense the chain's bend side decides (ik_chain_bend_side: bend in 2D, the pole in 3D): at
 * the first joint the chain swings to that side; at a later one the tip swings away from
 * it, so once the joints before turn it back to the target, the joint ends up on it. The
 * chain bends as the two-bone solve and the escape bend.
 */

static void sweep2d(ik_chain *c, ik_vec2 target, int m, ik_real g, int first)
{
    ik_vec2 rot = ik_v2(1, 0), shift = ik_v2(0, 0); /* R as (cos, sin), and b */
    ik_vec2 tip = ik_joint2(c, m);
    int j;
    for (j = first; j < m; j++) {
        ik_vec2 pj = ik_v2_add(ik_v2_rotate(ik_joint2(c, j), rot), shift);
        ik_vec2 to_tip = ik_v2_sub(tip, pj), to_target = ik_v2_sub(target, pj);
        ik_real delta = g * ik_v2_angle_between(to_tip, to_target);
        if (ik_v2_cross(ik_v2_tame(to_tip), ik_v2_tame(to_target)) == 0 &&
            ik_v2_dot(ik_v2_tame(to_tip), ik_v2_tame(to_target)) < 0)
            delta = g * IK_PI * (j == first ? -c->settings.bend : c->settings.bend); /* see the top */
        ik_real held = 0;
        if (delta != 0 && c->limit[j].flags) {
            /* Within the limits: the held angle is exact, and delta the turn it makes. */
            ik_real angle = ik_turn_angle(c, j);
            held = ik_limit_angle(&c->limit[j], ik_wrap_angle(angle + delta));
            delta = ik_wrap_angle(held - angle);
        }
        if (delta != 0) {
            ik_vec2 r = ik_v2(cos(delta), sin(delta));
            if (c->limit[j].flags) {
                ik_chain_set_turn_angle(c, j, held);
            } else {
                /* Turn by complex multiplication, kept unit to first order (no sqrt). */
                c->turn[j] = ik_v2_renorm(ik_v2_rotate(c->turn[j], r));
                c->angle[j] = IK_ANGLE_UNKNOWN;
            }
            /* Compose the turn about pj after the map: x -> r (R x + b - pj) + pj. */
            rot = ik_v2_rotate(rot, r);
            shift = ik_v2_add(ik_v2_rotate(ik_v2_sub(shift, pj), r), pj);
            tip = ik_v2_add(ik_v2_rotate(to_tip, r), pj);
        }
    }
}

static void sweep3d(ik_chain *c, ik_vec3 target, int m, ik_real g, int first)
{
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_quat rot = ik_q_identity();
    ik_vec3 shift = zero, tip = ik_joint3(c, m);
    int j;
    for (j = first; j < m; j++) {
        ik_vec3 pj = ik_v3_add(ik_q_rotate(rot, ik_joint3(c, j)), shift);
        ik_vec3 to_tip = ik_v3_sub(tip, pj);
        ik_vec3 u_tip = ik_v3_normalize_or(to_tip, zero);
        ik_vec3 u_target = ik_v3_normalize_or(ik_v3_sub(target, pj), zero);
        ik_quat r, parent, local;
        if (ik_v3_dot(u_tip, u_tip) == 0 || ik_v3_dot(u_target, u_target) == 0) continue;
        r = ik_q_from_to(u_tip, u_target);
        if (r.w == 0 && ik_v3_dot(u_tip, u_target) < 0) {
            /* exactly opposite: a half turn that swings the tip away from the bend side */
            ik_vec3 side = ik_chain_bend_side(c, ik_v3_scale(u_tip, -1));
            ik_vec3 axis = ik_v3_normalize_or(ik_v3_cross(u_tip, ik_v3_scale(side, j == first ? 1 : -1)),
                                              ik_v3_any_perpendicular(u_tip));
            r = ik_q(0, axis.x, axis.y, axis.z);
        }
        r = ik_q_fraction(r, g);
        /*
         * The world turn r of bone j, as a change of its local rotation: with the parent's
         * current world rotation P, local' = P^-1 r P local. Within limits, the turn made
         * is r' = (P local') (P local)^-1.
         */
        parent = j == 0 ? c->base_rot : ik_q_mul(rot, c->wrot[j - 1]);
        local = ik_q_normalize(
            ik_q_mul(ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent), c->rot[j]));
        if (c->limit[j].flags) {
            local = ik_limit_rotation(&c->limit[j], local);
            r = ik_q_normalize(ik_q_mul(ik_q_mul(parent, local),
                                        ik_q_conj(ik_q_mul(parent, c->rot[j]))));
        }
        c->rot[j] = local;
        rot = ik_q_normalize(ik_q_mul(r, rot));
        shift = ik_v3_add(ik_q_rotate(r, ik_v3_sub(shift, pj)), pj);
        tip = ik_v3_add(ik_q_rotate(r, to_tip), pj);
    }
}

void ik_ccd_sweep(ik_chain *c, ik_vec3 target, int m, ik_real greed, int first)
{
    if (c->dim == 2) sweep2d(c, ik_v2(target.x, target.y), m, greed, first);
    else sweep3d(c, target, m, greed, first);
    ik_chain_mark_stale(c, first);
    ik_chain_fk(c);
}

/* ---- src/escape.c ---- */
/*
 * escape.c - the progress of an iterative solve: the escape from lock-ups, and the stop
 * when an iteration no longer gains anything.
 *
 * A solve is stuck when an iteration brings the tip no closer (by a part in a million)
 * while the target is within the chain's reach and the distance is more than rounding:
 * FABRIK and relaxation on a straight chain with the target on its line, CCD when every
 * joint already sees the tip and the target in one direction, or an oscillation. The
 * escape then bends the chain by ESCAPE_ANGLE at its first movable bone, towards the
 * preferred side of the line to the target: that bone turns towards the side and the bones
 * after it keep their world directions, so the next joint, and every one after it, moves
 * to that side. From there every solver converges bending to that side. The side is the
 * one bend (2D: positive joint angles, as in the two-bone solve) or the pole (3D, else a
 * fixed perpendicular of the line) asks for; every other bend tries the other side, in
 * case the limits forbid the first. At most ESCAPE_KICKS bends per solve.
 *
 * Limits make minima of their own, where the position-based solvers creep rather than
 * stop: on a chain with limits an iteration that brings the tip less than STUCK_LIMITED
 * (10%) closer counts as stuck, and FABRIK and relaxation hand the iterations they have
 * left to CCD sweeps (ik_escape_finish), whose every turn stays within the limits and which
 * escape their own lock-ups the same way. On limited chains the bend is a curl (every bone
 * turns, each a little more than its parent), which gets more joints off their limits.
 * The bench (`make bench`) measured the thresholds: 1e-6, 1e-3, 1e-2, 5e-2 and 0.1 for
 * limited chains, the last best for every solver in 2D and 3D.
 *
 * A solve also stops once IK_STALL_ITERATIONS iterations together brought the tip closer by
 * less than a fraction of what was left to gain, its distance less the least any pose can
 * have. Within the reach ring (from the longest bone less the others to the whole length)
 * the least is 0 and the fraction STALL_REACHABLE, a thousandth. Outside it, beyond the
 * whole length or in the hole about the base that a bone longer than all the others
 * together leaves, the least is the distance to the ring, the fraction STALL_OUTSIDE, a
 * hundredth (getting closer to the ring gains nothing a user sees), and the solve also
 * stops as soon as it is within tolerance of the least. Two windows that stall go on all
 * the same:
 * - one whose second half gained more than STALL_ACCELERATING times its first: a chain
 *   leaving a balance it sat on (rounding moved it off) gains 1.15 to 3 times more each
 *   iteration, from 1e-10 of what is left (without this, the bench's spider rig, whose
 *   limbs have no escape, missed 3 goal sets in 1000 more);
 * - on a chain with limits and a target within reach, with bends left: a minimum the
 *   limits made, where FABRIK and relaxation creep; the bend leaves it (the bench reaches
 *   up to 0.4% more goals with it than it did at a hundred-thousandth without it; a
 *   thousandth without it lost 0.9%).
 * Where every solver crawls, at a fold (a target on or about the inner edge of the ring)
 * or just outside the ring, what is left shrinks as 1/iterations: the stall ends the solve
 * after IK_STALL_ITERATIONS / fraction iterations, about 8,000 within the ring and 800
 * outside it (1,400 for relaxation), whatever `iterations` allows; IK_MAX_ITERATIONS
 * bounds everything else (ik.h).
 * So a solve stops short of its tolerance only after IK_STALL_ITERATIONS iterations: at
 * tolerance 0 it goes on until its distance is 0 or has stopped shrinking (or reaches
 * IK_MAX_ITERATIONS).
 * Everything is deterministic.
 */

#define ESCAPE_ANGLE 0.25
#define ESCAPE_KICKS 4
#define STUCK_FREE 1e-6
#define STUCK_LIMITED 0.1
#define STALL_REACHABLE 1e-3
#define STALL_OUTSIDE 1e-2
#define STALL_ACCELERATING 1.5

ik_progress ik_progress_start(const ik_chain *c, ik_vec3 target, int m)
{
    return ik_progress_from(c, m, ik_joint_distance(c, m, target),
                            ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))));
}

ik_progress ik_progress_from(const ik_chain *c, int m, ik_real distance, ik_real d)
{
    ik_progress e;
    ik_real longest, total = ik_chain_reach_to(c, m, &longest), inner;
    e.m = m;
    e.reach = total;
    e.last = distance;
    /* Reach: the ring between the longest bone less the others, and the whole length. */
    inner = 2 * longest - total;
    e.least = d > total ? d - total : d < inner ? inner - d : 0;
    e.stall = e.least > 0 ? STALL_OUTSIDE : STALL_REACHABLE;
    e.mark = e.last;
    e.middle = e.last;
    e.kicks = 0;
    e.since = 0;
    /* A converged solve (tolerance 0, say) also stops improving: that is not a lock-up. */
    e.floor = 1e-9 * total;
    e.limited = c->limited;
    e.slow = c->limited ? STUCK_LIMITED : STUCK_FREE;
    e.reachable = c->settings.escape && d <= total && d >= inner;
    e.crawl = !c->limited;
    return e;
}

ik_progress ik_progress_plain(ik_real error, ik_real scale)
{
    ik_progress e;
    e.m = 0;
    e.reach = scale;
    e.last = error;
    e.least = 0;
    e.stall = STALL_REACHABLE;
    e.mark = error;
    e.middle = error;
    e.kicks = 0;
    e.since = 0;
    e.floor = 0;
    e.slow = 0;
    e.limited = 0;
    e.reachable = 0;
    e.crawl = 0;
    return e;
}

ik_next ik_progress_next(const ik_chain *c, ik_progress *e, ik_real distance)
{
    ik_real last = e->last, from;
    e->last = distance;
    if (e->crawl && e->reachable && distance > e->floor && distance >= last * (1 - STUCK_LIMITED)) {
        e->crawl = 0;
        return IK_CRAWL;
    }
    if (e->reachable && e->kicks < ESCAPE_KICKS && distance > e->floor &&
        distance >= last * (1 - e->slow))
        return IK_KICK;
    if (e->least > 0 && distance - e->least <= c->settings.tolerance) return IK_STOP;
    if (++e->since == IK_STALL_ITERATIONS / 2) e->middle = distance;
    if (e->since < IK_STALL_ITERATIONS) return IK_GO_ON;
    e->since = 0;
    from = e->mark;
    e->mark = distance;
    if (distance - e->least < (1 - e->stall) * (from - e->least)) return IK_GO_ON;
    if (e->middle < from && e->middle - distance > STALL_ACCELERATING * (from - e->middle))
        return IK_GO_ON;
    if (e->limited && e->reachable && e->kicks < ESCAPE_KICKS && distance > e->floor)
        return IK_KICK;
    return IK_STOP;
}

int ik_escape_finish(ik_chain *c, ik_vec3 target, int m, int iterations, int first)
{
    ik_progress e = ik_progress_start(c, target, m);
    int iter = 0;
    e.slow = STUCK_FREE; /* only a real lock-up: slow sweeps are still the way out */
    while (iter < iterations) {
        ik_real distance = ik_joint_distance(c, m, target);
        ik_next next;
        if (distance <= c->settings.tolerance) break;
        ik_ccd_sweep(c, target, m, 1, first);
        iter++;
        /* The sweeps have lock-ups of their own (a chain folded onto the target's line). */
        next = ik_progress_next(c, &e, ik_joint_distance(c, m, target));
        if (next == IK_KICK) ik_escape_kick(c, target, &e, first);
        else if (next == IK_STOP) break;
    }
    return iter;
}

void ik_escape_kick(ik_chain *c, ik_vec3 target, ik_progress *e, int first)
{
    ik_vec3 line, side, axis, dir;
    ik_real angle = ESCAPE_ANGLE * (1 + e->kicks / 2);
    int i, m = e->m;
    if (e->kicks % 2 == 1) angle = -angle; /* every other bend tries the other side */
    e->kicks++;
    c->kicked = 1;

    line = ik_v3_normalize_or(ik_v3_sub(target, ik_joint_v3(c, first)), ik_v3(1, 0, 0));
    side = ik_chain_bend_side(c, line);
    if (c->limited) {
        /*
         * Limits: a curl. Each bone from `first` on turns (i - first + 1) times the angle
         * about line x side, so every joint moves, and some limit has room for it.
         */
        axis = ik_v3_normalize_or(ik_v3_cross(line, side), ik_v3_any_perpendicular(line));
        for (i = first; i < m; i++) {
            dir = ik_dir_v3(c, i);
            ik_pose_bone(c, i, ik_q_rotate(ik_q_axis_angle(axis, angle * (i - first + 1)), dir));
        }
    } else {
        /* Bone `first` turns towards the side; the bones after it keep their directions. */
        dir = ik_dir_v3(c, first);
        axis = ik_v3_normalize_or(ik_v3_cross(dir, side), ik_v3_any_perpendicular(dir));
        ik_pose_bone(c, first, ik_q_rotate(ik_q_axis_angle(axis, angle), dir));
        for (i = first + 1; i < m; i++) {
            dir = ik_dir_v3(c, i);
            ik_pose_bone(c, i, dir);
        }
    }
    c->stale_from = m;
    ik_chain_fk(c);
    e->last = ik_joint_distance(c, m, target);
    e->mark = e->last;
    e->since = 0;
}

/* ---- src/two_bone.c ---- */
/*
 * two_bone.c - the analytic two-bone solves.
 *
 * Angle form: Ryan Juckett, "Analytic Two-Bone IK in 2D" (2008), ../shared/seeds/
 * analytic-two-bone-ik-2d.txt. The law of cosines gives cos(a2); clamping it into [-1, 1]
 * gives the closest pose when the target is out of reach; a1 = atan2 of the target rotated
 * back by the triangle's angle at the root.
 *
 * Vector form: Inigo Quilez, two-bone IK without trigonometry, ../shared/seeds/
 * two-bone-ik-vector-form.txt. The joint j satisfies |j| = r1 and |j - p| = r2, so
 * j.p = (r1^2 - r2^2 + |p|^2) / 2, and j = (w p -+ sqrt(4 r1^2 h - w^2) perp(p)) / (2 h)
 * with h = |p|^2, w = h + r1^2 - r2^2; computed as u w / (2 |p|) -+ perp(u) sqrt(r1^2 -
 * (w / (2 |p|))^2) with u = p / |p|, the same in exact arithmetic.
 *
 * Both forms first divide every length by the largest input magnitude m: angles and the
 * joint's direction do not depend on scale, and in [0, 1] no square overflows even for
 * coordinates near 1e300. Both classify reachability with the same test (ring_side), so
 * they agree on `reached` and on the pose for every target.
 */

/* Slack, in units of m, for targets on the ring's edges: rounding must not flip reached. */
#define RING_EPS 1e-12

static ik_real max4(ik_real a, ik_real b, ik_real c, ik_real d)
{
    ik_real m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* -1: closer than |l1 - l2|, 0: reachable, 1: farther than l1 + l2 (scaled inputs). */
static int ring_side(ik_real h, ik_real l1, ik_real l2)
{
    ik_real outer = l1 + l2, inner = l1 - l2;
    if (h - outer * outer > RING_EPS) return 1;
    if (inner * inner - h > RING_EPS) return -1;
    return 0;
}

static ik_status check_inputs(ik_real l1, ik_real l2, ik_real x, ik_real y, int bend)
{
    if (!isfinite(l1) || !isfinite(l2) || !isfinite(x) || !isfinite(y))
        return IK_ERR_NOT_FINITE;
    if (l1 < 0 || l2 < 0) return IK_ERR_NEGATIVE;
    if (bend != 1 && bend != -1) return IK_ERR_BEND;
    return IK_OK;
}

ik_status ik_two_bone(ik_real l1, ik_real l2, ik_real x, ik_real y, int bend, ik_real *a1,
                      ik_real *a2, int *reached)
{
    ik_real m, h, cos2, sin2, adjacent, opposite, tan_y, tan_x;
    ik_status st = check_inputs(l1, l2, x, y, bend);
    if (st != IK_OK) return st;

    m = max4(l1, l2, fabs(x), fabs(y));
    if (m == 0) { /* everything at the origin: reached, straight */
        *a1 = 0, *a2 = 0, *reached = 1;
        return IK_OK;
    }
    l1 /= m, l2 /= m, x /= m, y /= m;
    h = x * x + y * y;
    *reached = ring_side(h, l1, l2) == 0;

    if (2 * l1 * l2 > 0) {
        cos2 = ik_clamp((h - l1 * l1 - l2 * l2) / (2 * l1 * l2), -1, 1);
        *a2 = bend * acos(cos2);
        sin2 = sin(*a2);
    } else {
        /* A zero-length bone: any a2 serves; 0 keeps the chain straight (the article). */
        *a2 = 0, cos2 = 1, sin2 = 0;
    }
    adjacent = l1 + l2 * cos2;
    opposite = l2 * sin2;
    tan_y = y * adjacent - x * opposite;
    tan_x = x * adjacent + y * opposite;
    /* atan2(+-0, +-0) may be +-pi depending on zero signs; the vector form uses +x. */
    *a1 = (tan_x == 0 && tan_y == 0) ? 0 : atan2(tan_y, tan_x);
    return IK_OK;
}

ik_status ik_two_bone_joint(ik_real x, ik_real y, ik_real r1, ik_real r2, int bend,
                            ik_real *jx, ik_real *jy, int *reached)
{
    ik_real m, h, w, len, along, across;
    ik_vec2 p, u, j;
    int side;
    ik_status st = check_inputs(r1, r2, x, y, bend);
    if (st != IK_OK) return st;

    m = max4(r1, r2, fabs(x), fabs(y));
    if (m == 0) {
        *jx = 0, *jy = 0, *reached = 1;
        return IK_OK;
    }
    r1 /= m, r2 /= m;
    p = ik_v2(x / m, y / m);
    h = ik_v2_dot(p, p);
    side = ring_side(h, r1, r2);
    *reached = side == 0;

    /*
     * Below, p is divided by |p| and never by h: for |p| near 1e-160, h is subnormal (few
     * significant bits) and 1 / h overflows; below 1e-162 h is 0, but p still has a
     * direction, which the angle form follows.
     */
    w = h + r1 * r1 - r2 * r2;
    len = ik_v2_len(p);
    u = ik_v2_normalize_or(p, ik_v2(1, 0));
    if (len == 0) {
        /* Target on the root: the angle form's a1 = 0, so the joint is on +x. */
        j = ik_v2(r1, 0);
    } else if (side != 0 || r1 == 0 || r2 == 0) {
        /*
         * Out of reach, or a zero-length bone: the closest pose is straight along p, or
         * folded back (-p) when the second bone is the longer one. w's sign tells which.
         * The joint stays at distance r1: the bones are never stretched.
         */
        j = ik_v2_scale(u, w < 0 ? -r1 : r1);
    } else {
        /*
         * As in 3D: j.p = w / 2 fixes the part along p; |j| = r1 gives the part across.
         * Clamped as the angle form clamps its cosine: the ring's slack lets a target just
         * inside |r1 - r2| count as reached, where w / (2 |p|) exceeds r1 (by far when |p|
         * is small: 1000 r1 for r2 = r1 + 1e-7 and |p| = 1e-10).
         */
        along = ik_clamp(w / (2 * len), -r1, r1);
        across = r1 * r1 - along * along;
        across = across > 0 ? sqrt(across) : 0;
        /* bend 1 (a2 >= 0) puts the joint clockwise of the root->target line. */
        j = ik_v2_sub(ik_v2_scale(u, along), ik_v2_scale(ik_v2_perp(u), bend * across));
    }
    *jx = j.x * m;
    *jy = j.y * m;
    return IK_OK;
}

ik_status ik_two_bone_joint3(const ik_real target[3], ik_real r1, ik_real r2,
                             const ik_real pole[3], ik_real joint[3], int *reached)
{
    ik_real m, inv, h, len, w, along, across;
    ik_vec3 p, axis, bend, j, zero = ik_v3(0, 0, 0);
    int side, k;
    for (k = 0; k < 3; k++)
        if (!isfinite(target[k]) || !isfinite(pole[k])) return IK_ERR_NOT_FINITE;
    if (!isfinite(r1) || !isfinite(r2)) return IK_ERR_NOT_FINITE;
    if (r1 < 0 || r2 < 0) return IK_ERR_NEGATIVE;

    m = max4(r1, r2, fmax(fabs(target[0]), fabs(target[1])), fabs(target[2]));
    if (m == 0) {
        joint[0] = joint[1] = joint[2] = 0;
        *reached = 1;
        return IK_OK;
    }
    /* In units of m: by one division where 1 / m is exact to rounding, else by three. */
    if (m > 1e-300 && m < 1e300) {
        inv = 1 / m;
        r1 *= inv, r2 *= inv;
        p = ik_v3(target[0] * inv, target[1] * inv, target[2] * inv);
    } else {
        r1 /= m, r2 /= m;
        p = ik_v3(target[0] / m, target[1] / m, target[2] / m);
    }
    h = ik_v3_dot(p, p);
    side = ring_side(h, r1, r2);
    *reached = side == 0;

    /*
     * The bend direction: the pole made perpendicular to the root->target axis; when that
     * leaves nothing (a zero pole, or one along the axis), world +y made perpendicular, or
     * +z when the axis is along y. A target on the root has no axis: the bend direction is
     * the pole itself (or +y), and the joint goes there.
     */
    axis = ik_v3_normalize_or(p, zero);
    bend = ik_v3(pole[0], pole[1], pole[2]);
    /* A pole of unit length already (a chain's, stored normalised) is taken as it is. */
    if (!(fabs(ik_v3_dot(bend, bend) - 1) < 1e-12)) bend = ik_v3_normalize_or(bend, zero);
    bend = ik_v3_sub(bend, ik_v3_scale(axis, ik_v3_dot(bend, axis)));
    across = ik_v3_dot(bend, bend);
    if (across > 0.01) {
        /* A pole at least 0.1 off the axis: the part along it left is below 1e-15. */
        bend = ik_v3_scale(bend, 1 / sqrt(across));
    } else {
        if (!(ik_v3_len(bend) > 1e-12)) {
            bend = ik_v3_sub(ik_v3(0, 1, 0), ik_v3_scale(axis, axis.y));
            if (!(ik_v3_len(bend) > 1e-12)) bend = ik_v3_sub(ik_v3(0, 0, 1), ik_v3_scale(axis, axis.z));
        }
        bend = ik_v3_normalize_or(bend, ik_v3(0, 1, 0));
        /*
         * Made perpendicular once more: for a pole nearly along the axis the subtraction
         * above cancels, leaving a part along the axis of about 1e-16 / |the part across|
         * (1e-6 for a pole 1e-10 off the axis), and |joint| would miss r1 by as much.
         */
        bend = ik_v3_normalize_or(ik_v3_sub(bend, ik_v3_scale(axis, ik_v3_dot(bend, axis))), bend);
    }

    /* |p| as p.axis: not sqrt(h), which is 0 for |p| below 1e-162 (as in 2D). */
    len = ik_v3_dot(p, axis);
    w = h + r1 * r1 - r2 * r2;
    if (len == 0) {
        j = ik_v3_scale(bend, r1);
    } else if (side != 0 || r1 == 0 || r2 == 0) {
        /* Out of reach or a zero-length bone: straight along p, or folded back (as 2D). */
        j = ik_v3_scale(axis, w < 0 ? -r1 : r1);
    } else {
        /* j.p = w / 2 fixes the part along the axis; |j| = r1 gives the part across
           (clamped as in 2D). */
        along = ik_clamp(w / (2 * len), -r1, r1);
        across = r1 * r1 - along * along;
        across = across > 0 ? sqrt(across) : 0;
        j = ik_v3_add(ik_v3_scale(axis, along), ik_v3_scale(bend, across));
    }
    joint[0] = j.x * m, joint[1] = j.y * m, joint[2] = j.z * m;
    return IK_OK;
}

ik_status ik_two_bone_middle(ik_real l1, ik_real l2, ik_real x, ik_real y, int bend,
                             ik_real *jx, ik_real *jy, int *reached)
{
    return ik_two_bone_joint(x, y, l1, l2, bend, jx, jy, reached);
}

ik_status ik_two_bone_middle3(ik_real l1, ik_real l2, const ik_real target[3],
                              const ik_real pole[3], ik_real joint[3], int *reached)
{
    return ik_two_bone_joint3(target, l1, l2, pole, joint, reached);
}

/* 2D chain: the target in the base frame, the angle form's a1 and a2 as the local angles. */
static void two_bone_chain2d(ik_chain *c, ik_vec3 target)
{
    ik_vec2 local = ik_v2_unrotate(ik_v2(target.x - c->base.x, target.y - c->base.y), c->base_turn);
    ik_real a1, a2;
    int valid;
    /* Only a target so far from the base that the difference overflows fails here. */
    if (ik_two_bone(c->length[0], c->length[1], local.x, local.y, c->settings.bend, &a1, &a2,
                    &valid) == IK_OK) {
        ik_chain_set_turn_angle(c, 0, a1);
        ik_chain_set_turn_angle(c, 1, a2);
        ik_chain_mark_stale(c, 0);
        ik_chain_fk(c);
    }
}

/*
 * 3D chain: the vector form gives the middle joint (its offset j from the base), bending
 * towards the pole, or, with no pole, in the plane the chain bends in now (the middle
 * joint's current offset). Only a target so far from the base that the difference
 * overflows fails (returns 0).
 */
static int middle_offset3(const ik_chain *c, ik_vec3 base, ik_vec3 target, ik_vec3 *j)
{
    ik_vec3 bend = c->settings.use_pole
                       ? ik_v3(c->settings.pole[0], c->settings.pole[1], c->settings.pole[2])
                       : ik_v3_sub(ik_joint3(c, 1), base);
    ik_real t[3], pole[3], out[3];
    int valid;
    ik_v3_store(t, ik_v3_sub(target, base));
    ik_v3_store(pole, bend);
    if (ik_two_bone_joint3(t, c->length[0], c->length[1], pole, out, &valid) != IK_OK) return 0;
    *j = ik_v3_load(out);
    return 1;
}

/* The bones turn onto the middle joint and the (closest) tip by their smallest rotations,
   keeping twist. */
static void two_bone_chain3d(ik_chain *c, ik_vec3 target)
{
    ik_vec3 base = ik_joint3(c, 0), j, middle, tip;
    ik_real *p = c->work;
    if (!middle_offset3(c, base, target, &j)) return;
    middle = ik_v3_add(base, j);
    tip = ik_v3_add(middle, ik_v3_scale(ik_v3_normalize_or(ik_v3_sub(target, middle), ik_dir3(c, 1)),
                                        c->length[1]));
    ik_v3_store(p, base);
    ik_v3_store(p + 3, middle);
    ik_v3_store(p + 6, tip);
    ik_pose_points(c, p, 0, 2);
    ik_chain_fk(c);
}

/*
 * The lean solve: the middle joint as above; bone 0 turned onto it and bone 1 onto the
 * target (or the closest point), each by ik_turn_bone3, which writes the local rotation and
 * the world data at once.
 */
int ik_two_bone_lean3(ik_chain *c, ik_vec3 aim, ik_result *out)
{
    ik_vec3 base = ik_joint3(c, 0), j, middle;
    ik_real l0 = c->length[0];
    out->iterations = 1;
    if (middle_offset3(c, base, aim, &j)) {
        middle = ik_v3_add(base, j);
        /* |j| is l0 to rounding: j / l0 is bone 0's direction, unit enough for
           ik_turn_bone3. A bone of length 0 keeps its world rotation, as ik_pose_points
           keeps it for a segment with no direction. */
        if (l0 > 1e-300) ik_turn_bone3(c, 0, ik_v3_scale(j, 1 / l0));
        else if (l0 > 0) ik_turn_bone3(c, 0, ik_v3_normalize_or(j, ik_dir3(c, 0)));
        else ik_turn_bone3(c, 0, ik_dir3(c, 0));
        ik_turn_bone3(c, 1, c->length[1] > 0 ? ik_v3_normalize_or(ik_v3_sub(aim, middle), ik_dir3(c, 1))
                                             : ik_dir3(c, 1));
    }
    out->distance = ik_v3_len(ik_v3_sub(ik_joint3(c, 2), c->target));
    out->angle_error = 0;
    out->reached = out->distance <= c->settings.tolerance;
    return 1;
}

int ik_two_bone_chain(ik_chain *c, ik_vec3 target)
{
    if (c->dim == 2) two_bone_chain2d(c, target);
    else two_bone_chain3d(c, target);
    return 1;
}

/* ---- src/fabrik.c ---- */
/*
 * fabrik.c - Forward And Backward Reaching Inverse Kinematics, 2D and 3D.
 *
 * A. Aristidou and J. Lasenby, "FABRIK: A fast, iterative solver for the Inverse
 * Kinematics problem", Graphical Models 73(5), 2011. On world-space joint points: the
 * backward pass puts the tip on the target and walks to the base, placing each joint at
 * its bone's length from the child along the line to its old position; the forward pass
 * puts joint 0 back on the base and walks out again. After a forward pass every bone has
 * its length (to rounding), so the tip's distance is the real one.
 *
 * A chain without limits is solved on its joints alone: they become the truth
 * (pose_behind), and angles or rotations are derived from them only when read (chain.c).
 * 2D chains carry no z. Each step computes len / |w| as (len / |w|^2) * sqrt(|w|^2): the
 * division and the square root then run side by side instead of one after the other,
 * which is most of a step's latency (ik_fab_step2 in chain.h). Many chains at once are
 * batch.c's.
 *
 * Joint limits act inside both passes, as the paper suggests. Backward, a bone's direction
 * is held within what its child's limit allows relative to the child's new direction (the
 * child's 2D range, or its 3D cone). Forward, each bone is posed along its new segment
 * within its own limits (ik_pose_bone) before the next joint is placed, so every forward
 * pass ends on a pose the limits allow.
 *
 * Unreachable (|target - base| >= total length): the chain straightens towards the target
 * in one step, as in the paper; so does a target within tolerance of full reach, which
 * the straight chain reaches and FABRIK's passes approach only very slowly. A solve that
 * stops making progress escapes or stops (escape.c); on a chain with limits it first takes
 * joint-space steps (ik_joint_finish, joint_space.c), which do not crawl where the passes and
 * the limits fight, and an orientation goal's tip bone is made able to take its goal the
 * same way.
 */

/*
 * The passes without limits. Backward over bones hi-1..lo, joint hi already placed: joint i
 * at length[i] from joint i + 1. Forward over bones lo..hi-1 from joint lo: joint i + 1 at
 * length[i] from joint i. The same in both dimensions, but 2D carries no z.
 */
static void backward2(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec2 next = ik_v2_load(joint + 2 * (size_t)hi);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_real *p = joint + 2 * (size_t)i;
        next = ik_v2_sub(next, ik_fab_step2(ik_v2_sub(next, ik_v2_load(p)), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, next);
    }
}

static void forward2(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec2 from = ik_v2_load(joint + 2 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 2 * (size_t)(i + 1);
        from = ik_v2_add(from, ik_fab_step2(ik_v2_sub(ik_v2_load(p), from), length[i], dir + 2 * (size_t)i));
        ik_v2_store(p, from);
    }
}

static void backward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 next = ik_v3_load(joint + 3 * (size_t)hi);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_real *p = joint + 3 * (size_t)i;
        next = ik_v3_sub(next, ik_fab_step3(ik_v3_sub(next, ik_v3_load(p)), length[i], dir + 3 * (size_t)i));
        ik_v3_store(p, next);
    }
}

static void forward3(ik_real *joint, const ik_real *length, const ik_real *dir, int lo, int hi)
{
    ik_vec3 from = ik_v3_load(joint + 3 * (size_t)lo);
    int i;
    for (i = lo; i < hi; i++) {
        ik_real *p = joint + 3 * (size_t)(i + 1);
        from = ik_v3_add(from, ik_fab_step3(ik_v3_sub(ik_v3_load(p), from), length[i], dir + 3 * (size_t)i));
        ik_v3_store(p, from);
    }
}

static void backward_limited(ik_chain *c, int lo, int hi)
{
    ik_vec3 child = ik_v3(0, 0, 0);
    int i;
    for (i = hi - 1; i >= lo; i--) {
        ik_vec3 next = ik_joint_v3(c, i + 1);
        ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(next, ik_joint_v3(c, i)), ik_dir_v3(c, i));
        ik_real *p = ik_joint(c, i);
        if (i + 1 < hi && c->length[i + 1] > 0) dir = ik_limit_backward(c, i, dir, child);
        next = ik_v3_sub(next, ik_v3_scale(dir, c->length[i]));
        p[0] = next.x, p[1] = next.y;
        if (c->dim == 3) p[2] = next.z;
        if (c->length[i] > 0) child = dir;
    }
}

void ik_fabrik_backward(ik_chain *c, int lo, int hi, const ik_real *end)
{
    int a;
    for (a = 0; a < c->dim; a++) ik_joint(c, hi)[a] = end[a];
    if (c->limited) {
        backward_limited(c, lo, hi);
        return;
    }
    c->pose_behind = 1; /* the joints are the truth from now on */
    if (c->dim == 2) backward2(c->joint, c->length, c->dir, lo, hi);
    else backward3(c->joint, c->length, c->dir, lo, hi);
}

void ik_fabrik_forward(ik_chain *c, int lo, int hi)
{
    if (c->limited) {
        /* The forward pass within limits: each bone posed as it goes (ik_pose_points). */
        ik_pose_points(c, c->joint, lo, hi);
        return;
    }
    if (c->dim == 2) forward2(c->joint, c->length, c->dir, lo, hi);
    else forward3(c->joint, c->length, c->dir, lo, hi);
}

/* Joint 0 back on the base, which the backward pass moved. */
void ik_fabrik_put_base(ik_chain *c)
{
    ik_real *p = c->joint;
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}


void ik_fabrik_straighten(ik_chain *c, ik_vec3 target, int m)
{
    ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, ik_joint_v3(c, 0)), ik_dir_v3(c, 0));
    int i, a;
    if (c->limited) {
        for (i = 0; i < m; i++) ik_pose_bone(c, i, c->length[i] > 0 ? u : ik_dir_v3(c, i));
        ik_chain_mark_stale(c, m);
        return;
    }
    c->pose_behind = 1;
    for (i = 0; i < m; i++) {
        ik_real *p = ik_joint(c, i), uv[3];
        uv[0] = u.x, uv[1] = u.y, uv[2] = u.z;
        for (a = 0; a < c->dim; a++) p[c->dim + a] = p[a] + uv[a] * c->length[i];
    }
}


/*
 * FABRIK's step when it must normalise first (ik_fab_step2, ik_fab_step3 in chain.h): w
 * scaled to len, or the fallback direction when w has none.
 */
IK_NOINLINE ik_vec2 ik_fab_step2_slow(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    return ik_v2_scale(ik_v2_normalize_or(w, ik_v2_load(fallback)), len);
}

IK_NOINLINE ik_vec3 ik_fab_step3_slow(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    return ik_v3_scale(ik_v3_normalize_or(w, ik_v3_load(fallback)), len);
}

/* ---- one solve in progress: what the single solve and the batch (batch.c) share ---- */

/* The start after the tracking steps: used of them taken (none met the goal). */
static int fab_rest(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance, int used)
{
    const ik_settings *s = &c->settings;
    ik_real from_base;
    if (used > 0) { /* they fell short: the passes go on from where they left the chain */
        distance = ik_joint_distance(c, m, target);
        f->distance = NAN;
        if (used >= ik_iteration_budget(s->iterations)) return used;
    }
    from_base = c->dim == 2 ? ik_v2_len(ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, 0)))
                            : ik_v3_len(ik_v3_sub(target, ik_joint3(c, 0)));
    /*
     * Out of reach, or within tolerance of full reach (where FABRIK crawls): straight. One
     * bone: its first iteration points it at the target, and every later one would repeat it.
     */
    if (m == 1 || from_base >= ik_chain_reach_to(c, m, NULL) - s->tolerance) {
        ik_fabrik_straighten(c, target, m);
        f->distance = NAN;
        return used + 1;
    }
    f->c = c;
    f->target = target;
    f->end[0] = target.x, f->end[1] = target.y, f->end[2] = target.z;
    f->m = m;
    f->iter = used;
    f->crawl = 0;
    f->progress = ik_progress_from(c, m, distance, from_base);
    return -1;
}

/* Joint m's distance from target, measured when NaN, kept in f: whether it is within tolerance. */
static int fab_met(ik_fab *f, const ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    if (*distance != *distance) *distance = ik_joint_distance(c, m, target);
    f->distance = *distance;
    return *distance <= c->settings.tolerance;
}

/*
 * As ik_fab_open, the steps and ik_fab_close would do it, written out: a short chain's solve
 * feels every call and store (one bone through open and close took 3 to 5 ns more, 46 ns).
 */
int ik_fab_start(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance)
{
    int used = 0;
    if (fab_met(f, c, target, m, &distance)) return 0;
    /* A goal tracked frame by frame: joint-space steps first (joint_space.c). */
    if (ik_may_track(c, m) && ik_joint_track(c, target, m, 0, 1, &used, &f->distance)) return used; /* met */
    return fab_rest(f, c, target, m, distance, used);
}

int ik_fab_open(ik_fab *f, ik_steps *steps, ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    f->c = c;
    f->target = target;
    f->m = m;
    if (fab_met(f, c, target, m, distance)) return IK_FAB_DONE;
    /* A goal tracked frame by frame: joint-space steps first (joint_space.c). */
    return ik_steps_track(steps, c, target, m, 0, 1, *distance) ? IK_FAB_STEPS : IK_FAB_PASSES;
}

int ik_fab_close(ik_fab *f, ik_steps *steps, int opened, ik_real distance)
{
    int used = 0;
    if (opened == IK_FAB_DONE) return 0;
    if (opened == IK_FAB_STEPS && ik_steps_end(steps, &used, &f->distance)) return used; /* met */
    return fab_rest(f, f->c, f->target, f->m, distance, used);
}

int ik_fab_next(ik_fab *f, ik_real distance)
{
    const ik_settings *s = &f->c->settings;
    f->iter++;
    f->distance = distance;
    if (distance <= s->tolerance || f->iter >= ik_iteration_budget(s->iterations))
        return IK_FAB_DONE;
    switch (ik_progress_next(f->c, &f->progress, distance)) {
    case IK_GO_ON: return IK_FAB_GO_ON;
    case IK_STOP: return IK_FAB_DONE;
    case IK_KICK: break;
    case IK_CRAWL: f->crawl = 1; break;
    }
    return IK_FAB_KICK;
}

int ik_fab_kick(ik_fab *f)
{
    ik_chain *c = f->c;
    const ik_settings *s = &c->settings;
    if (f->crawl) {
        /* Creeping without limits: joint-space steps (joint_space.c), then passes again
           if they leave anything. */
        int budget = ik_iteration_budget(s->iterations);
        f->crawl = 0;
        f->iter += ik_joint_finish(c, f->target, f->m, budget - f->iter, 0, 1);
        f->distance = ik_joint_distance(c, f->m, f->target);
        return f->distance > s->tolerance && f->iter < budget;
    }
    ik_chain_settle(c);
    if (c->limited) {
        /* Joint-space steps first (joint_space.c); what they leave, the CCD sweeps. */
        int budget = ik_iteration_budget(s->iterations);
        f->iter += ik_joint_finish(c, f->target, f->m, budget - f->iter, 0, 1);
        f->iter += ik_escape_finish(c, f->target, f->m, budget - f->iter, 0);
        f->distance = NAN;
        return 0;
    }
    ik_escape_kick(c, f->target, &f->progress, 0);
    return 1;
}

void ik_fab_finish(ik_fab *f)
{
    ik_chain *c = f->c;
    int m = f->m, next;
    do {
        if (c->limited) {
            ik_fabrik_backward(c, 0, m, f->end);
            ik_fabrik_put_base(c);
            ik_fabrik_forward(c, 0, m);
        } else if (c->dim == 2) { /* the passes themselves: a short chain feels every call */
            c->pose_behind = 1;
            ik_v2_store(ik_joint(c, m), ik_v2(f->end[0], f->end[1]));
            backward2(c->joint, c->length, c->dir, 0, m);
            ik_v2_store(c->joint, ik_v2(c->base.x, c->base.y));
            forward2(c->joint, c->length, c->dir, 0, m);
        } else {
            c->pose_behind = 1;
            ik_v3_store(ik_joint(c, m), ik_v3_load(f->end));
            backward3(c->joint, c->length, c->dir, 0, m);
            ik_v3_store(c->joint, c->base);
            forward3(c->joint, c->length, c->dir, 0, m);
        }
        next = ik_fab_next(f, ik_joint_distance(c, m, f->target));
        if (next == IK_FAB_KICK) next = ik_fab_kick(f);
    } while (next);
}

static int fabrik_run(ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    ik_fab f;
    int done = ik_fab_start(&f, c, target, m, *distance);
    *distance = f.distance;
    if (done >= 0) return done;
    ik_fab_finish(&f);
    *distance = f.distance;
    return f.iter;
}

int ik_fabrik(ik_chain *c, ik_vec3 target, int m, ik_real *distance)
{
    int iter = fabrik_run(c, target, m, distance);
    /* The point behind an oriented tip bone reached: its parent turned so the tip bone's
       limit lets it take its goal (joint_space.c). */
    if (c->limited && ik_limits_oriented(c, m) && iter < ik_iteration_budget(c->settings.iterations)) {
        iter += ik_joint_finish(c, target, m, ik_iteration_budget(c->settings.iterations) - iter, 0, 1);
        *distance = NAN;
    }
    return iter;
}

/* ---- src/batch.c ---- */
/*
 * batch.c - FABRIK on many chains at once: the chains without limits that ik_solve_many is
 * given. Every chain takes exactly the steps ik_fabrik would, with the same arithmetic in
 * the same order, so it ends bit for bit as its own solve leaves it; only the chains' steps
 * run side by side. One chain's step waits on its division and square root (the step
 * before gives the next its point); independent chains fill that wait.
 *
 * A chain whose goal is tracked (near its tip) takes joint-space steps first, as its own
 * solve does (ik_steps in chain.h); the first step of the 2D chains, the one a tracked frame
 * usually needs, runs side by side in lanes too (free2 in batch_lanes.h).
 *
 * Chains of one bone count go in lanes (batch_lanes.h): their joints laid out side by side,
 * coordinate by coordinate, so one vector instruction takes one step of 2 or 4 chains
 * (SSE2 on every x86-64, AVX2 where the processor has it, chosen at run time; NEON on
 * arm64). A chain that is done leaves its lane to the next chain waiting; when none waits,
 * the chains still going move to the front after the iteration, so the vectors stay full. Chains that are alone in their bone count, or too
 * long for the scratch space (GROUP_REALS on the stack), and builds without vector
 * extensions are interleaved one step of each chain after the other.
 */

/*
 * GCC for 64-bit Windows cannot align the stack to 32 bytes, yet spills 256-bit registers
 * with aligned moves (GCC bug 54412): AVX2 stays off there, SSE2 does the lanes.
 */
#if defined(_WIN32) && !defined(IK_NO_AVX2)
#define IK_NO_AVX2
#endif

#if defined(IK_NO_LANES) || !(defined(__GNUC__) || defined(__clang__))
#define IK_LANES 0
#elif defined(__x86_64__)
#define IK_LANES 1
#include <immintrin.h>
#elif defined(__aarch64__)
#define IK_LANES 2
#include <arm_neon.h>
#else
#define IK_LANES 0
#endif

/* ---- interleaved, one step of each chain after the other ---- */

/* What the passes read of each chain, gathered once so the inner loops only compute. */
typedef struct lanes {
    ik_real *joint[IK_BATCH];
    const ik_real *length[IK_BATCH], *dir[IK_BATCH];
    int n[IK_BATCH];
} lanes;

static int gather(ik_fab *const *f, int count, lanes *ln, int dim)
{
    int k, longest = 0;
    for (k = 0; k < count; k++) {
        ik_chain *c = f[k]->c;
        ln->joint[k] = c->joint, ln->length[k] = c->length, ln->dir[k] = c->dir, ln->n[k] = c->n;
        if (c->n > longest) longest = c->n;
        if (dim == 2) ik_v2_store(ik_joint(c, c->n), ik_v2(f[k]->end[0], f[k]->end[1]));
        else ik_v3_store(ik_joint(c, c->n), ik_v3_load(f[k]->end));
        c->pose_behind = 1;
    }
    return longest;
}

static void batch_passes2(ik_fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 2);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 2 * (size_t)i;
                ik_vec2 next = ik_v2_load(p + 2);
                next = ik_v2_sub(next, ik_fab_step2(ik_v2_sub(next, ik_v2_load(p)), ln.length[k][i], ln.dir[k] + 2 * (size_t)i));
                ik_v2_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) ik_fabrik_put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 2 * (size_t)s;
                ik_vec2 from = ik_v2_load(p);
                from = ik_v2_add(from, ik_fab_step2(ik_v2_sub(ik_v2_load(p + 2), from), ln.length[k][s], ln.dir[k] + 2 * (size_t)s));
                ik_v2_store(p + 2, from);
            }
        }
    }
}

static void batch_passes3(ik_fab *const *f, int count)
{
    lanes ln;
    int k, s, longest = gather(f, count, &ln, 3);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            int i = ln.n[k] - 1 - s;
            if (i >= 0) {
                ik_real *p = ln.joint[k] + 3 * (size_t)i;
                ik_vec3 next = ik_v3_load(p + 3);
                next = ik_v3_sub(next, ik_fab_step3(ik_v3_sub(next, ik_v3_load(p)), ln.length[k][i], ln.dir[k] + 3 * (size_t)i));
                ik_v3_store(p, next);
            }
        }
    }
    for (k = 0; k < count; k++) ik_fabrik_put_base(f[k]->c);
    for (s = 0; s < longest; s++) {
        for (k = 0; k < count; k++) {
            if (s < ln.n[k]) {
                ik_real *p = ln.joint[k] + 3 * (size_t)s;
                ik_vec3 from = ik_v3_load(p);
                from = ik_v3_add(from, ik_fab_step3(ik_v3_sub(ik_v3_load(p + 3), from), ln.length[k][s], ln.dir[k] + 3 * (size_t)s));
                ik_v3_store(p + 3, from);
            }
        }
    }
}


static void interleave(ik_fab **live, int n)
{
    while (n > 0) {
        int k, kept = 0;
        if (live[0]->c->dim == 2) batch_passes2(live, n);
        else batch_passes3(live, n);
        for (k = 0; k < n; k++) {
            ik_fab *f = live[k];
            int next = ik_fab_next(f, ik_joint_distance(f->c, f->m, f->target));
            if (next == IK_FAB_KICK && f->crawl) { /* joint-space steps: alone from here */
                if (ik_fab_kick(f)) ik_fab_finish(f);
                next = 0;
            } else if (next == IK_FAB_KICK) {
                next = ik_fab_kick(f);
            }
            if (next) live[kept++] = f;
        }
        n = kept;
    }
}

#if IK_LANES

/* ---- in lanes ---- */

#define GROUP_REALS 4096 /* the scratch of a group: 32 KB */
#define WIDEST 4         /* doubles in the widest vector */

/*
 * Chains of n bones side by side: joint j of lane k at x[j * cap + k] (y, z alike), bone i's
 * length at len[i * cap + k]; lanes 0..live-1 hold a chain (fab[k]), and the rest of the
 * last vector a copy of some chain, so every number a vector holds is one a solve made.
 */
typedef struct group {
    int n, dim, cap, live;
    ik_real *x, *y, *z, *len;
    ik_fab *fab[IK_BATCH];
    ik_real tx[IK_BATCH], ty[IK_BATCH], tz[IK_BATCH], bx[IK_BATCH], by[IK_BATCH], bz[IK_BATCH];
    ik_real dist[IK_BATCH]; /* each lane's tip from its target after the passes */
} group;

typedef void (*passes_fn)(group *g);
typedef void (*free2_fn)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped);

/* The scratch free2 (batch_lanes.h) takes for cap chains of n bones. */
#define STEP_LANE 12
#define STEP_REALS(n, cap) ((9 * (size_t)(n) + 4 + STEP_LANE) * (size_t)(cap))

/* Chain f into lane k. */
static void take(group *g, int k, ik_fab *f)
{
    const ik_chain *c = f->c;
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        const ik_real *p = c->joint + (size_t)g->dim * (size_t)j;
        g->x[j * cap + k] = p[0], g->y[j * cap + k] = p[1];
        if (g->dim == 3) g->z[j * cap + k] = p[2];
    }
    for (j = 0; j < g->n; j++) g->len[j * cap + k] = c->length[j];
    g->tx[k] = f->end[0], g->ty[k] = f->end[1], g->tz[k] = f->end[2];
    g->bx[k] = c->base.x, g->by[k] = c->base.y, g->bz[k] = c->base.z;
    g->fab[k] = f;
    f->c->pose_behind = 1; /* the joints are the truth */
}

/* Lane k's joints back into its chain. */
static void put(const group *g, int k)
{
    ik_chain *c = g->fab[k]->c;
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        ik_real *p = c->joint + (size_t)g->dim * (size_t)j;
        p[0] = g->x[j * cap + k], p[1] = g->y[j * cap + k];
        if (g->dim == 3) p[2] = g->z[j * cap + k];
    }
}

/* Lane `from` copied into lane `to`. */
static void move(group *g, int from, int to)
{
    const size_t cap = (size_t)g->cap;
    int j;
    for (j = 0; j <= g->n; j++) {
        g->x[j * cap + to] = g->x[j * cap + from], g->y[j * cap + to] = g->y[j * cap + from];
        if (g->dim == 3) g->z[j * cap + to] = g->z[j * cap + from];
    }
    for (j = 0; j < g->n; j++) g->len[j * cap + to] = g->len[j * cap + from];
    g->tx[to] = g->tx[from], g->ty[to] = g->ty[from], g->tz[to] = g->tz[from];
    g->bx[to] = g->bx[from], g->by[to] = g->by[from], g->bz[to] = g->bz[from];
    g->dist[to] = g->dist[from];
    g->fab[to] = g->fab[from];
}

/*
 * Solves the count chains of queue (n bones each) in lanes; cap lanes at a time, a lane that
 * is done taken by the next chain waiting.
 */
static void run_group(ik_fab *const *queue, int count, int cap, passes_fn passes)
{
    ik_real scratch[GROUP_REALS] __attribute__((aligned(32)));
    const ik_chain *first = queue[0]->c;
    group g;
    int k, next = 0, rows;
    g.n = first->n, g.dim = first->dim, g.cap = cap, g.live = 0;
    rows = (g.n + 1) * cap;
    g.x = scratch, g.y = g.x + rows;
    g.z = g.dim == 3 ? g.y + rows : NULL;
    g.len = (g.dim == 3 ? g.z : g.y) + rows;
    while (g.live < cap && next < count) take(&g, g.live++, queue[next++]);
    for (k = g.live; k % WIDEST; k++) move(&g, 0, k); /* the rest of the last vector */
    while (g.live > 0) {
        int holes = 0;
        passes(&g);
        for (k = 0; k < g.live; k++) {
            ik_fab *f = g.fab[k];
            int step = ik_fab_next(f, g.dist[k]), alone = 0;
            if (step == IK_FAB_KICK) { /* the kick works on the chain itself */
                put(&g, k);
                if (f->crawl) { /* joint-space steps: alone from here (ik_fab_finish) */
                    if (ik_fab_kick(f)) ik_fab_finish(f);
                    step = IK_FAB_DONE, alone = 1;
                } else {
                    step = ik_fab_kick(f);
                    take(&g, k, f);
                }
            }
            if (step != IK_FAB_DONE) continue;
            if (!alone) put(&g, k);
            if (next < count) {
                take(&g, k, queue[next++]);
            } else {
                g.fab[k] = NULL;
                holes++;
            }
        }
        /* The lanes still going to the front: the last lanes' chains into the holes. */
        if (holes > 0) {
            int hole = 0, last = g.live - 1;
            for (;;) {
                while (hole < last && g.fab[hole] != NULL) hole++;
                while (last > hole && g.fab[last] == NULL) last--;
                if (hole >= last) break;
                move(&g, last, hole);
                g.fab[last] = NULL;
            }
            g.live -= holes;
        }
    }
}

#if IK_LANES == 1
#define LANES_ALIGNED __attribute__((aligned(32)))

#define LANES_NAME(f) f##_sse2
#define LANES_TARGET
#define LANES_W 2
#define V __m128d
#define V_LOAD _mm_loadu_pd
#define V_STORE _mm_storeu_pd
#define V_ADD _mm_add_pd
#define V_SUB _mm_sub_pd
#define V_MUL _mm_mul_pd
#define V_DIV _mm_div_pd
#define V_SQRT _mm_sqrt_pd
#define V_MIN _mm_min_pd
#define V_MAX _mm_max_pd
#define V_SET1 _mm_set1_pd
/* The lanes (bits) where d is not in (1e-300, 1e300); where q is not in [1e-150, 1e300]. */
#define V_OUT_D(d) (3 & ~_mm_movemask_pd(_mm_and_pd(_mm_cmpgt_pd(d, _mm_set1_pd(1e-300)), \
                                                       _mm_cmplt_pd(d, _mm_set1_pd(1e300)))))
#define V_OUT_Q(q) (3 & ~_mm_movemask_pd(_mm_and_pd(_mm_cmpge_pd(q, _mm_set1_pd(1e-150)), \
                                                       _mm_cmple_pd(q, _mm_set1_pd(1e300)))))
/* Pairs (x, y) at p[l] + at, lane l's, as a vector of the x and one of the y; and back. */
static inline void xy_load_sse2(const ik_real *const *p, size_t at, __m128d *x, __m128d *y)
{
    __m128d a = _mm_loadu_pd(p[0] + at), b = _mm_loadu_pd(p[1] + at);
    *x = _mm_unpacklo_pd(a, b), *y = _mm_unpackhi_pd(a, b);
}
static inline void xy_store_sse2(ik_real *const *p, size_t at, __m128d x, __m128d y)
{
    _mm_storeu_pd(p[0] + at, _mm_unpacklo_pd(x, y)), _mm_storeu_pd(p[1] + at, _mm_unpackhi_pd(x, y));
}
#define V_XY_LOAD xy_load_sse2
#define V_XY_STORE xy_store_sse2
/*
 * batch_lanes.h - the two FABRIK passes of batch.c over a group of chains laid side by side,
 * written once over a vector of LANES_W doubles and included by batch.c once per instruction
 * set, with these defined:
 *
 *   LANES_NAME(f)   the function's name for this instruction set
 *   LANES_TARGET    the function attribute that enables it (or nothing)
 *   LANES_W         doubles in a vector
 *   V               the vector type; V_LOAD, V_STORE (aligned), V_ADD, V_SUB, V_MUL, V_DIV,
 *                   V_SQRT, V_MIN, V_MAX its operations, each exactly rounded as the scalar one;
 *                   V_SET1(x) x in every lane
 *   V_OUT_D(d)      the bits (lane 0 the lowest) of the lanes where d is not in (1e-300,
 *                   1e300); V_OUT_Q(q) where q is not in [1e-150, 1e300]
 *   V_XY_LOAD(p, at, &x, &y)  the pairs (x, y) at p[l] + at, lane l's, into a vector of the
 *                   x and one of the y; V_XY_STORE(p, at, x, y) back
 *
 * The arithmetic is ik_fab_step2 / ik_fab_step3's, in the same order, so each lane computes
 * the bits ik_fabrik computes for its chain; a lane that needs the slow step takes it from
 * the scalar code. The fast step runs in every lane first, so a slow lane's numbers are held
 * within the fast step's range (STEP_D, STEP_Q: the same bits in a fast lane), where no
 * 0 * inf or inf / inf makes a NaN (coinciding joints, d == 0, raised FE_INVALID). The passes end with each lane's tip distance from its target, as
 * ik_joint_distance computes it (ik_v2_len, ik_v3_len: hypot where the square would
 * overflow or underflow).
 */

/* d and q as the fast step has them, a slow lane's held within range (see the top). */
#define STEP_D(d) V_MIN(V_MAX(d, V_SET1(1e-300)), V_SET1(1e300))
#define STEP_Q(len, d) V_MIN(V_DIV(len, STEP_D(d)), V_SET1(1e301)) /* still out if it was */

/* Lanes of the vector at lane `first` that hold a chain (the last vector may be partly empty). */
static inline int LANES_NAME(used)(const group *g, int first)
{
    int left = g->live - first;
    return left >= LANES_W ? (1 << LANES_W) - 1 : (1 << left) - 1;
}

/* The scalar step for the lanes in `slow` (bits) of the vector at lane `first`, patched in;
   a lane without a chain (past live) does not move, so its numbers stay finite (an inf left
   there would make inf - inf in the next pass). */
static void LANES_NAME(patch)(const group *g, int bone, int first, int slow, ik_real *wx, ik_real *wy,
                                           ik_real *wz, ik_real *sx, ik_real *sy, ik_real *sz)
{
    int l, used = LANES_NAME(used)(g, first);
    for (l = 0; l < LANES_W; l++) {
        const ik_chain *c;
        ik_real len;
        if (!(slow >> l & 1)) continue;
        if (!(used >> l & 1)) { /* no chain: the lane stays where it is, finite */
            sx[l] = sy[l] = 0;
            if (sz) sz[l] = 0;
            continue;
        }
        c = g->fab[first + l]->c;
        len = g->len[(size_t)bone * g->cap + first + l];
        if (g->dim == 2) {
            ik_vec2 s = ik_fab_step2_slow(ik_v2(wx[l], wy[l]), len, c->dir + 2 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y;
        } else {
            ik_vec3 s = ik_fab_step3_slow(ik_v3(wx[l], wy[l], wz[l]), len, c->dir + 3 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y, sz[l] = s.z;
        }
    }
}

/* The steps s of the vector at lane `first` (bone `bone`, segments w) with the slow lanes' patched in. */
static LANES_TARGET void LANES_NAME(fix2)(const group *g, int bone, int first, int slow, V wx, V wy, V *sx, V *sy)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], bx[LANES_W], by[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(bx, *sx), V_STORE(by, *sy);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, NULL, bx, by, NULL);
    *sx = V_LOAD(bx), *sy = V_LOAD(by);
}

static LANES_TARGET void LANES_NAME(fix3)(const group *g, int bone, int first, int slow, V wx, V wy, V wz, V *sx,
                                          V *sy, V *sz)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], az[LANES_W], bx[LANES_W], by[LANES_W], bz[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(az, wz), V_STORE(bx, *sx), V_STORE(by, *sy), V_STORE(bz, *sz);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, az, bx, by, bz);
    *sx = V_LOAD(bx), *sy = V_LOAD(by), *sz = V_LOAD(bz);
}

static LANES_TARGET void LANES_NAME(passes2)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y;
    const ik_real *len = g->len;
    int i, k;
    /* Backward: the tip on the target, each joint at its bone's length from the next. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py));
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
        }
    }
    /* Forward: joint 0 back on the base, each joint at its bone's length from the one before. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy);
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V d = V_ADD(V_MUL(dx, dx), V_MUL(dy, dy));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1) g->dist[k + l] = hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]);
    }
}

static LANES_TARGET void LANES_NAME(passes3)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y, *z = g->z;
    const ik_real *len = g->len;
    int i, k;
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
        V_STORE(z + g->n * cap + k, V_LOAD(g->tz + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap), nz = V_LOAD(pz + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py)), wz = V_SUB(nz, V_LOAD(pz));
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
            V_STORE(pz, V_SUB(nz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
        V_STORE(z + k, V_LOAD(g->bz + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py), fz = V_LOAD(pz);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy), wz = V_SUB(V_LOAD(pz + cap), fz);
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
            V_STORE(pz + cap, V_ADD(fz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V dz = V_SUB(V_LOAD(g->tz + k), V_LOAD(z + g->n * cap + k));
        V d = V_ADD(V_ADD(V_MUL(dx, dx), V_MUL(dy, dy)), V_MUL(dz, dz));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1)
                g->dist[k + l] = hypot(hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]),
                                       g->tz[k + l] - z[g->n * cap + k + l]);
    }
}

#undef STEP_D
#undef STEP_Q

/*
 * The closed-form 2D tracking step (joint_space.c's free_step2, then the forward kinematics
 * ik_chain_fk does after it) on `used` chains of n bones at once, all their bones: the same
 * operations in the same order, so each lane ends with the bits the chain's own step leaves.
 * The chains lie side by side in the scratch (STEP_REALS(n, cap) doubles, aligned), joint j
 * of lane l at x[j * cap + l], cap lanes (used rounded up to whole vectors, the rest copies
 * of lane 0: numbers a step made); each loop runs over the bones, and over the vectors within
 * a bone, so the vectors' forward kinematics (each bone waits for the one before it) overlap.
 * A lane whose step would not have been taken (the scalar step returns 0 and touches
 * nothing) is left out: stepped[l] 0; its numbers are held finite (det taken as 1), so no
 * lane makes a NaN.
 */
static LANES_TARGET void LANES_NAME(free2)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped)
{
    const size_t w = (size_t)cap;
    ik_real *jx = scratch, *jy = jx + (n + 1) * w, *ux = jy + (n + 1) * w, *uy = ux + n * w;
    ik_real *len = uy + n * w, *ox = len + n * w, *oy = ox + (n + 1) * w, *dx = oy + (n + 1) * w;
    ik_real *dy = dx + n * w, *lane = dy + n * w; /* lane: STEP_LANE numbers a lane, below */
    /* dx, dy: each bone's lever (made once, read by the three loops over the bones), then,
       in the last loop, its new world direction */
    ik_real *unit = lane, *e0 = unit + w, *e1 = e0 + w, *a = e1 + w, *b = a + w, *d = b + w;
    ik_real *y0 = d + w, *y1 = y0 + w, *big = y1 + w, *scale = big + w, *px = scale + w, *py = px + w;
    const V half = V_SET1(0.5), one = V_SET1(1), zero = V_SET1(0), two = V_SET1(2), three = V_SET1(3);
    int j, l, k;
    for (k = 0; k < cap; k += LANES_W) {
        const ik_real *pj[LANES_W], *pt[LANES_W];
        V x, y;
        for (l = 0; l < LANES_W; l++) {
            const ik_chain *c = s[k + l < used ? k + l : 0]->c;
            pj[l] = c->joint, pt[l] = &c->turn[0].x; /* (x, y) pairs both */
        }
        for (j = 0; j <= n; j++) {
            V_XY_LOAD(pj, 2 * (size_t)j, &x, &y);
            V_STORE(jx + j * w + k, x), V_STORE(jy + j * w + k, y);
        }
        for (j = 0; j < n; j++) {
            V_XY_LOAD(pt, 2 * (size_t)j, &x, &y);
            V_STORE(ux + j * w + k, x), V_STORE(uy + j * w + k, y);
        }
    }
    for (l = 0; l < cap; l++) {
        const ik_steps *t = s[l < used ? l : 0];
        const ik_chain *c = t->c;
        const ik_real *length = c->length, scale_c = c->scale; /* read once (len may alias them) */
        for (j = 0; j < n; j++) len[j * w + l] = length[j] * scale_c;
        unit[l] = t->rows.unit, e0[l] = t->rows.e[0], e1[l] = t->rows.e[1];
        a[l] = d[l] = t->lambda2, b[l] = 0, big[l] = 0;
        px[l] = c->base_turn.x, py[l] = c->base_turn.y, ox[l] = c->base.x, oy[l] = c->base.y;
    }
    for (j = 0; j < n; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        for (k = 0; k < cap; k += LANES_W) {
            V u = V_LOAD(unit + k);
            V rx = V_MUL(V_SUB(V_LOAD(jx + n * w + k), V_LOAD(jx + j * w + k)), u);
            V ry = V_MUL(V_SUB(V_LOAD(jy + n * w + k), V_LOAD(jy + j * w + k)), u);
            V_STORE(dx + j * w + k, rx), V_STORE(dy + j * w + k, ry); /* kept for the loops below */
            V_STORE(a + k, V_ADD(V_LOAD(a + k), V_MUL(ry, ry)));
            V_STORE(b + k, V_SUB(V_LOAD(b + k), V_MUL(ry, rx)));
            V_STORE(d + k, V_ADD(V_LOAD(d + k), V_MUL(rx, rx)));
        }
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k);
        V_STORE(y0 + k, V_SUB(V_MUL(av, dv), V_MUL(bv, bv))); /* det, for now */
    }
    for (l = 0; l < cap; l++) {
        stepped[l] = y0[l] > 0 && isfinite(y0[l]);
        if (!stepped[l]) y0[l] = 1;
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k), det = V_LOAD(y0 + k);
        V ev = V_LOAD(e0 + k), fv = V_LOAD(e1 + k);
        V_STORE(y0 + k, V_DIV(V_SUB(V_MUL(dv, ev), V_MUL(bv, fv)), det));
        V_STORE(y1 + k, V_DIV(V_SUB(V_MUL(av, fv), V_MUL(bv, ev)), det));
    }
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k);
            V t = V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k)));
            V_STORE(big + k, V_MAX(V_LOAD(big + k), V_MAX(t, V_SUB(zero, t)))); /* |t| */
        }
    }
    for (l = 0; l < cap; l++) {
        if (!(big[l] > 1e-15)) stepped[l] = 0;
        scale[l] = big[l] > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / big[l] : 1;
    }
    /* Each bone's turn from the old joints, then its world data and the joint after it (into
       ox, oy: the next bone's lever still reads the old joint). */
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k); /* then its world turn */
            V h = V_MUL(V_MUL(V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k))), V_LOAD(scale + k)), half);
            V hh = V_MUL(h, h), kk = V_DIV(one, V_ADD(one, hh));
            V cx = V_MUL(V_SUB(one, hh), kk), cy = V_MUL(V_MUL(two, h), kk);
            V tx = V_LOAD(ux + j * w + k), ty = V_LOAD(uy + j * w + k), pxv = V_LOAD(px + k), pyv = V_LOAD(py + k);
            V nx = V_SUB(V_MUL(cx, tx), V_MUL(cy, ty)), ny = V_ADD(V_MUL(cy, tx), V_MUL(cx, ty));
            V q = V_MUL(V_SUB(three, V_ADD(V_MUL(nx, nx), V_MUL(ny, ny))), half), wx, wy, step;
            nx = V_MUL(nx, q), ny = V_MUL(ny, q);
            V_STORE(ux + j * w + k, nx), V_STORE(uy + j * w + k, ny);
            /* the world turn: the parent's rotated by the new local one */
            wx = V_SUB(V_MUL(pxv, nx), V_MUL(pyv, ny)), wy = V_ADD(V_MUL(pyv, nx), V_MUL(pxv, ny));
            q = V_MUL(V_SUB(three, V_ADD(V_MUL(wx, wx), V_MUL(wy, wy))), half);
            wx = V_MUL(wx, q), wy = V_MUL(wy, q);
            step = V_LOAD(len + j * w + k);
            V_STORE(px + k, wx), V_STORE(py + k, wy);
            V_STORE(dx + j * w + k, wx), V_STORE(dy + j * w + k, wy);
            V_STORE(ox + (j + 1) * w + k, V_ADD(V_LOAD(ox + j * w + k), V_MUL(wx, step)));
            V_STORE(oy + (j + 1) * w + k, V_ADD(V_LOAD(oy + j * w + k), V_MUL(wy, step)));
        }
    }
    /* Back into the chains that stepped: a vector at a time where all its lanes did. */
    for (k = 0; k < used; k += LANES_W) {
        int whole = k + LANES_W <= used;
        for (l = 0; l < LANES_W && whole; l++) whole = stepped[k + l];
        if (whole) {
            ik_real *pj[LANES_W], *pt[LANES_W], *pd[LANES_W];
            for (l = 0; l < LANES_W; l++) {
                ik_chain *c = s[k + l]->c;
                pj[l] = c->joint, pt[l] = &c->turn[0].x, pd[l] = c->dir;
                for (j = 0; j < n; j++) c->angle[j] = IK_ANGLE_UNKNOWN;
                c->stale_from = c->n;
            }
            for (j = 0; j < n; j++) {
                V_XY_STORE(pt, 2 * (size_t)j, V_LOAD(ux + j * w + k), V_LOAD(uy + j * w + k));
                V_XY_STORE(pd, 2 * (size_t)j, V_LOAD(dx + j * w + k), V_LOAD(dy + j * w + k));
            }
            for (j = 0; j <= n; j++) V_XY_STORE(pj, 2 * (size_t)j, V_LOAD(ox + j * w + k), V_LOAD(oy + j * w + k));
            continue;
        }
        for (l = k; l < k + LANES_W && l < used; l++) {
            ik_chain *c = s[l]->c;
            if (!stepped[l]) continue;
            for (j = 0; j < n; j++) {
                c->turn[j] = ik_v2(ux[j * w + l], uy[j * w + l]);
                c->angle[j] = IK_ANGLE_UNKNOWN;
                c->dir[2 * j] = dx[j * w + l], c->dir[2 * j + 1] = dy[j * w + l];
            }
            for (j = 0; j <= n; j++) c->joint[2 * j] = ox[j * w + l], c->joint[2 * j + 1] = oy[j * w + l];
            c->stale_from = c->n;
        }
    }
}
#undef LANES_NAME
#undef LANES_TARGET
#undef LANES_W
#undef V
#undef V_LOAD
#undef V_STORE
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_SQRT
#undef V_MIN
#undef V_MAX
#undef V_SET1
#undef V_OUT_D
#undef V_OUT_Q
#undef V_XY_LOAD
#undef V_XY_STORE

#ifndef IK_NO_AVX2
#define LANES_NAME(f) f##_avx2
#define LANES_TARGET __attribute__((target("avx2")))
#define LANES_W 4
#define V __m256d
#define V_LOAD _mm256_loadu_pd
#define V_STORE _mm256_storeu_pd
#define V_ADD _mm256_add_pd
#define V_SUB _mm256_sub_pd
#define V_MUL _mm256_mul_pd
#define V_DIV _mm256_div_pd
#define V_SQRT _mm256_sqrt_pd
#define V_MIN _mm256_min_pd
#define V_MAX _mm256_max_pd
#define V_SET1 _mm256_set1_pd
#define V_OUT_D(d) (15 & ~_mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(d, _mm256_set1_pd(1e-300), _CMP_GT_OQ), \
                                                             _mm256_cmp_pd(d, _mm256_set1_pd(1e300), _CMP_LT_OQ))))
#define V_OUT_Q(q) (15 & ~_mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(q, _mm256_set1_pd(1e-150), _CMP_GE_OQ), \
                                                             _mm256_cmp_pd(q, _mm256_set1_pd(1e300), _CMP_LE_OQ))))
static inline __attribute__((target("avx2"))) void xy_load_avx2(const ik_real *const *p, size_t at, __m256d *x,
                                                                __m256d *y)
{
    __m128d a = _mm_loadu_pd(p[0] + at), b = _mm_loadu_pd(p[1] + at);
    __m128d c = _mm_loadu_pd(p[2] + at), d = _mm_loadu_pd(p[3] + at);
    *x = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpacklo_pd(a, b)), _mm_unpacklo_pd(c, d), 1);
    *y = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_unpackhi_pd(a, b)), _mm_unpackhi_pd(c, d), 1);
}
static inline __attribute__((target("avx2"))) void xy_store_avx2(ik_real *const *p, size_t at, __m256d x, __m256d y)
{
    __m128d xl = _mm256_castpd256_pd128(x), xh = _mm256_extractf128_pd(x, 1);
    __m128d yl = _mm256_castpd256_pd128(y), yh = _mm256_extractf128_pd(y, 1);
    _mm_storeu_pd(p[0] + at, _mm_unpacklo_pd(xl, yl)), _mm_storeu_pd(p[1] + at, _mm_unpackhi_pd(xl, yl));
    _mm_storeu_pd(p[2] + at, _mm_unpacklo_pd(xh, yh)), _mm_storeu_pd(p[3] + at, _mm_unpackhi_pd(xh, yh));
}
#define V_XY_LOAD xy_load_avx2
#define V_XY_STORE xy_store_avx2
/*
 * batch_lanes.h - the two FABRIK passes of batch.c over a group of chains laid side by side,
 * written once over a vector of LANES_W doubles and included by batch.c once per instruction
 * set, with these defined:
 *
 *   LANES_NAME(f)   the function's name for this instruction set
 *   LANES_TARGET    the function attribute that enables it (or nothing)
 *   LANES_W         doubles in a vector
 *   V               the vector type; V_LOAD, V_STORE (aligned), V_ADD, V_SUB, V_MUL, V_DIV,
 *                   V_SQRT, V_MIN, V_MAX its operations, each exactly rounded as the scalar one;
 *                   V_SET1(x) x in every lane
 *   V_OUT_D(d)      the bits (lane 0 the lowest) of the lanes where d is not in (1e-300,
 *                   1e300); V_OUT_Q(q) where q is not in [1e-150, 1e300]
 *   V_XY_LOAD(p, at, &x, &y)  the pairs (x, y) at p[l] + at, lane l's, into a vector of the
 *                   x and one of the y; V_XY_STORE(p, at, x, y) back
 *
 * The arithmetic is ik_fab_step2 / ik_fab_step3's, in the same order, so each lane computes
 * the bits ik_fabrik computes for its chain; a lane that needs the slow step takes it from
 * the scalar code. The fast step runs in every lane first, so a slow lane's numbers are held
 * within the fast step's range (STEP_D, STEP_Q: the same bits in a fast lane), where no
 * 0 * inf or inf / inf makes a NaN (coinciding joints, d == 0, raised FE_INVALID). The passes end with each lane's tip distance from its target, as
 * ik_joint_distance computes it (ik_v2_len, ik_v3_len: hypot where the square would
 * overflow or underflow).
 */

/* d and q as the fast step has them, a slow lane's held within range (see the top). */
#define STEP_D(d) V_MIN(V_MAX(d, V_SET1(1e-300)), V_SET1(1e300))
#define STEP_Q(len, d) V_MIN(V_DIV(len, STEP_D(d)), V_SET1(1e301)) /* still out if it was */

/* Lanes of the vector at lane `first` that hold a chain (the last vector may be partly empty). */
static inline int LANES_NAME(used)(const group *g, int first)
{
    int left = g->live - first;
    return left >= LANES_W ? (1 << LANES_W) - 1 : (1 << left) - 1;
}

/* The scalar step for the lanes in `slow` (bits) of the vector at lane `first`, patched in;
   a lane without a chain (past live) does not move, so its numbers stay finite (an inf left
   there would make inf - inf in the next pass). */
static void LANES_NAME(patch)(const group *g, int bone, int first, int slow, ik_real *wx, ik_real *wy,
                                           ik_real *wz, ik_real *sx, ik_real *sy, ik_real *sz)
{
    int l, used = LANES_NAME(used)(g, first);
    for (l = 0; l < LANES_W; l++) {
        const ik_chain *c;
        ik_real len;
        if (!(slow >> l & 1)) continue;
        if (!(used >> l & 1)) { /* no chain: the lane stays where it is, finite */
            sx[l] = sy[l] = 0;
            if (sz) sz[l] = 0;
            continue;
        }
        c = g->fab[first + l]->c;
        len = g->len[(size_t)bone * g->cap + first + l];
        if (g->dim == 2) {
            ik_vec2 s = ik_fab_step2_slow(ik_v2(wx[l], wy[l]), len, c->dir + 2 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y;
        } else {
            ik_vec3 s = ik_fab_step3_slow(ik_v3(wx[l], wy[l], wz[l]), len, c->dir + 3 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y, sz[l] = s.z;
        }
    }
}

/* The steps s of the vector at lane `first` (bone `bone`, segments w) with the slow lanes' patched in. */
static LANES_TARGET void LANES_NAME(fix2)(const group *g, int bone, int first, int slow, V wx, V wy, V *sx, V *sy)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], bx[LANES_W], by[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(bx, *sx), V_STORE(by, *sy);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, NULL, bx, by, NULL);
    *sx = V_LOAD(bx), *sy = V_LOAD(by);
}

static LANES_TARGET void LANES_NAME(fix3)(const group *g, int bone, int first, int slow, V wx, V wy, V wz, V *sx,
                                          V *sy, V *sz)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], az[LANES_W], bx[LANES_W], by[LANES_W], bz[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(az, wz), V_STORE(bx, *sx), V_STORE(by, *sy), V_STORE(bz, *sz);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, az, bx, by, bz);
    *sx = V_LOAD(bx), *sy = V_LOAD(by), *sz = V_LOAD(bz);
}

static LANES_TARGET void LANES_NAME(passes2)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y;
    const ik_real *len = g->len;
    int i, k;
    /* Backward: the tip on the target, each joint at its bone's length from the next. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py));
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
        }
    }
    /* Forward: joint 0 back on the base, each joint at its bone's length from the one before. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy);
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V d = V_ADD(V_MUL(dx, dx), V_MUL(dy, dy));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1) g->dist[k + l] = hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]);
    }
}

static LANES_TARGET void LANES_NAME(passes3)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y, *z = g->z;
    const ik_real *len = g->len;
    int i, k;
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
        V_STORE(z + g->n * cap + k, V_LOAD(g->tz + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap), nz = V_LOAD(pz + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py)), wz = V_SUB(nz, V_LOAD(pz));
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
            V_STORE(pz, V_SUB(nz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
        V_STORE(z + k, V_LOAD(g->bz + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py), fz = V_LOAD(pz);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy), wz = V_SUB(V_LOAD(pz + cap), fz);
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
            V_STORE(pz + cap, V_ADD(fz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V dz = V_SUB(V_LOAD(g->tz + k), V_LOAD(z + g->n * cap + k));
        V d = V_ADD(V_ADD(V_MUL(dx, dx), V_MUL(dy, dy)), V_MUL(dz, dz));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1)
                g->dist[k + l] = hypot(hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]),
                                       g->tz[k + l] - z[g->n * cap + k + l]);
    }
}

#undef STEP_D
#undef STEP_Q

/*
 * The closed-form 2D tracking step (joint_space.c's free_step2, then the forward kinematics
 * ik_chain_fk does after it) on `used` chains of n bones at once, all their bones: the same
 * operations in the same order, so each lane ends with the bits the chain's own step leaves.
 * The chains lie side by side in the scratch (STEP_REALS(n, cap) doubles, aligned), joint j
 * of lane l at x[j * cap + l], cap lanes (used rounded up to whole vectors, the rest copies
 * of lane 0: numbers a step made); each loop runs over the bones, and over the vectors within
 * a bone, so the vectors' forward kinematics (each bone waits for the one before it) overlap.
 * A lane whose step would not have been taken (the scalar step returns 0 and touches
 * nothing) is left out: stepped[l] 0; its numbers are held finite (det taken as 1), so no
 * lane makes a NaN.
 */
static LANES_TARGET void LANES_NAME(free2)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped)
{
    const size_t w = (size_t)cap;
    ik_real *jx = scratch, *jy = jx + (n + 1) * w, *ux = jy + (n + 1) * w, *uy = ux + n * w;
    ik_real *len = uy + n * w, *ox = len + n * w, *oy = ox + (n + 1) * w, *dx = oy + (n + 1) * w;
    ik_real *dy = dx + n * w, *lane = dy + n * w; /* lane: STEP_LANE numbers a lane, below */
    /* dx, dy: each bone's lever (made once, read by the three loops over the bones), then,
       in the last loop, its new world direction */
    ik_real *unit = lane, *e0 = unit + w, *e1 = e0 + w, *a = e1 + w, *b = a + w, *d = b + w;
    ik_real *y0 = d + w, *y1 = y0 + w, *big = y1 + w, *scale = big + w, *px = scale + w, *py = px + w;
    const V half = V_SET1(0.5), one = V_SET1(1), zero = V_SET1(0), two = V_SET1(2), three = V_SET1(3);
    int j, l, k;
    for (k = 0; k < cap; k += LANES_W) {
        const ik_real *pj[LANES_W], *pt[LANES_W];
        V x, y;
        for (l = 0; l < LANES_W; l++) {
            const ik_chain *c = s[k + l < used ? k + l : 0]->c;
            pj[l] = c->joint, pt[l] = &c->turn[0].x; /* (x, y) pairs both */
        }
        for (j = 0; j <= n; j++) {
            V_XY_LOAD(pj, 2 * (size_t)j, &x, &y);
            V_STORE(jx + j * w + k, x), V_STORE(jy + j * w + k, y);
        }
        for (j = 0; j < n; j++) {
            V_XY_LOAD(pt, 2 * (size_t)j, &x, &y);
            V_STORE(ux + j * w + k, x), V_STORE(uy + j * w + k, y);
        }
    }
    for (l = 0; l < cap; l++) {
        const ik_steps *t = s[l < used ? l : 0];
        const ik_chain *c = t->c;
        const ik_real *length = c->length, scale_c = c->scale; /* read once (len may alias them) */
        for (j = 0; j < n; j++) len[j * w + l] = length[j] * scale_c;
        unit[l] = t->rows.unit, e0[l] = t->rows.e[0], e1[l] = t->rows.e[1];
        a[l] = d[l] = t->lambda2, b[l] = 0, big[l] = 0;
        px[l] = c->base_turn.x, py[l] = c->base_turn.y, ox[l] = c->base.x, oy[l] = c->base.y;
    }
    for (j = 0; j < n; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        for (k = 0; k < cap; k += LANES_W) {
            V u = V_LOAD(unit + k);
            V rx = V_MUL(V_SUB(V_LOAD(jx + n * w + k), V_LOAD(jx + j * w + k)), u);
            V ry = V_MUL(V_SUB(V_LOAD(jy + n * w + k), V_LOAD(jy + j * w + k)), u);
            V_STORE(dx + j * w + k, rx), V_STORE(dy + j * w + k, ry); /* kept for the loops below */
            V_STORE(a + k, V_ADD(V_LOAD(a + k), V_MUL(ry, ry)));
            V_STORE(b + k, V_SUB(V_LOAD(b + k), V_MUL(ry, rx)));
            V_STORE(d + k, V_ADD(V_LOAD(d + k), V_MUL(rx, rx)));
        }
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k);
        V_STORE(y0 + k, V_SUB(V_MUL(av, dv), V_MUL(bv, bv))); /* det, for now */
    }
    for (l = 0; l < cap; l++) {
        stepped[l] = y0[l] > 0 && isfinite(y0[l]);
        if (!stepped[l]) y0[l] = 1;
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k), det = V_LOAD(y0 + k);
        V ev = V_LOAD(e0 + k), fv = V_LOAD(e1 + k);
        V_STORE(y0 + k, V_DIV(V_SUB(V_MUL(dv, ev), V_MUL(bv, fv)), det));
        V_STORE(y1 + k, V_DIV(V_SUB(V_MUL(av, fv), V_MUL(bv, ev)), det));
    }
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k);
            V t = V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k)));
            V_STORE(big + k, V_MAX(V_LOAD(big + k), V_MAX(t, V_SUB(zero, t)))); /* |t| */
        }
    }
    for (l = 0; l < cap; l++) {
        if (!(big[l] > 1e-15)) stepped[l] = 0;
        scale[l] = big[l] > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / big[l] : 1;
    }
    /* Each bone's turn from the old joints, then its world data and the joint after it (into
       ox, oy: the next bone's lever still reads the old joint). */
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k); /* then its world turn */
            V h = V_MUL(V_MUL(V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k))), V_LOAD(scale + k)), half);
            V hh = V_MUL(h, h), kk = V_DIV(one, V_ADD(one, hh));
            V cx = V_MUL(V_SUB(one, hh), kk), cy = V_MUL(V_MUL(two, h), kk);
            V tx = V_LOAD(ux + j * w + k), ty = V_LOAD(uy + j * w + k), pxv = V_LOAD(px + k), pyv = V_LOAD(py + k);
            V nx = V_SUB(V_MUL(cx, tx), V_MUL(cy, ty)), ny = V_ADD(V_MUL(cy, tx), V_MUL(cx, ty));
            V q = V_MUL(V_SUB(three, V_ADD(V_MUL(nx, nx), V_MUL(ny, ny))), half), wx, wy, step;
            nx = V_MUL(nx, q), ny = V_MUL(ny, q);
            V_STORE(ux + j * w + k, nx), V_STORE(uy + j * w + k, ny);
            /* the world turn: the parent's rotated by the new local one */
            wx = V_SUB(V_MUL(pxv, nx), V_MUL(pyv, ny)), wy = V_ADD(V_MUL(pyv, nx), V_MUL(pxv, ny));
            q = V_MUL(V_SUB(three, V_ADD(V_MUL(wx, wx), V_MUL(wy, wy))), half);
            wx = V_MUL(wx, q), wy = V_MUL(wy, q);
            step = V_LOAD(len + j * w + k);
            V_STORE(px + k, wx), V_STORE(py + k, wy);
            V_STORE(dx + j * w + k, wx), V_STORE(dy + j * w + k, wy);
            V_STORE(ox + (j + 1) * w + k, V_ADD(V_LOAD(ox + j * w + k), V_MUL(wx, step)));
            V_STORE(oy + (j + 1) * w + k, V_ADD(V_LOAD(oy + j * w + k), V_MUL(wy, step)));
        }
    }
    /* Back into the chains that stepped: a vector at a time where all its lanes did. */
    for (k = 0; k < used; k += LANES_W) {
        int whole = k + LANES_W <= used;
        for (l = 0; l < LANES_W && whole; l++) whole = stepped[k + l];
        if (whole) {
            ik_real *pj[LANES_W], *pt[LANES_W], *pd[LANES_W];
            for (l = 0; l < LANES_W; l++) {
                ik_chain *c = s[k + l]->c;
                pj[l] = c->joint, pt[l] = &c->turn[0].x, pd[l] = c->dir;
                for (j = 0; j < n; j++) c->angle[j] = IK_ANGLE_UNKNOWN;
                c->stale_from = c->n;
            }
            for (j = 0; j < n; j++) {
                V_XY_STORE(pt, 2 * (size_t)j, V_LOAD(ux + j * w + k), V_LOAD(uy + j * w + k));
                V_XY_STORE(pd, 2 * (size_t)j, V_LOAD(dx + j * w + k), V_LOAD(dy + j * w + k));
            }
            for (j = 0; j <= n; j++) V_XY_STORE(pj, 2 * (size_t)j, V_LOAD(ox + j * w + k), V_LOAD(oy + j * w + k));
            continue;
        }
        for (l = k; l < k + LANES_W && l < used; l++) {
            ik_chain *c = s[l]->c;
            if (!stepped[l]) continue;
            for (j = 0; j < n; j++) {
                c->turn[j] = ik_v2(ux[j * w + l], uy[j * w + l]);
                c->angle[j] = IK_ANGLE_UNKNOWN;
                c->dir[2 * j] = dx[j * w + l], c->dir[2 * j + 1] = dy[j * w + l];
            }
            for (j = 0; j <= n; j++) c->joint[2 * j] = ox[j * w + l], c->joint[2 * j + 1] = oy[j * w + l];
            c->stale_from = c->n;
        }
    }
}
#endif

static passes_fn lanes_passes(int dim)
{
#ifndef IK_NO_AVX2
    if (__builtin_cpu_supports("avx2")) return dim == 2 ? passes2_avx2 : passes3_avx2;
#endif
    return dim == 2 ? passes2_sse2 : passes3_sse2;
}

static free2_fn lanes_free2(int *width)
{
#ifndef IK_NO_AVX2
    if (__builtin_cpu_supports("avx2")) return *width = 4, free2_avx2;
#endif
    return *width = 2, free2_sse2;
}

#else /* NEON */
#define LANES_ALIGNED __attribute__((aligned(16)))
#define LANES_NAME(f) f##_neon
#define LANES_TARGET
#define LANES_W 2
#define V float64x2_t
#define V_LOAD vld1q_f64
#define V_STORE vst1q_f64
#define V_ADD vaddq_f64
#define V_SUB vsubq_f64
#define V_MUL vmulq_f64
#define V_DIV vdivq_f64
#define V_SQRT vsqrtq_f64
#define V_MIN vminq_f64
#define V_MAX vmaxq_f64
#define V_SET1 vdupq_n_f64
static inline int neon_out(uint64x2_t ok)
{
    return (vgetq_lane_u64(ok, 0) ? 0 : 1) | (vgetq_lane_u64(ok, 1) ? 0 : 2);
}
#define V_OUT_D(d) neon_out(vandq_u64(vcgtq_f64(d, vdupq_n_f64(1e-300)), vcltq_f64(d, vdupq_n_f64(1e300))))
#define V_OUT_Q(q) neon_out(vandq_u64(vcgeq_f64(q, vdupq_n_f64(1e-150)), vcleq_f64(q, vdupq_n_f64(1e300))))
static inline void xy_load_neon(const ik_real *const *p, size_t at, float64x2_t *x, float64x2_t *y)
{
    float64x2_t a = vld1q_f64(p[0] + at), b = vld1q_f64(p[1] + at);
    *x = vzip1q_f64(a, b), *y = vzip2q_f64(a, b);
}
static inline void xy_store_neon(ik_real *const *p, size_t at, float64x2_t x, float64x2_t y)
{
    vst1q_f64(p[0] + at, vzip1q_f64(x, y)), vst1q_f64(p[1] + at, vzip2q_f64(x, y));
}
#define V_XY_LOAD xy_load_neon
#define V_XY_STORE xy_store_neon
/*
 * batch_lanes.h - the two FABRIK passes of batch.c over a group of chains laid side by side,
 * written once over a vector of LANES_W doubles and included by batch.c once per instruction
 * set, with these defined:
 *
 *   LANES_NAME(f)   the function's name for this instruction set
 *   LANES_TARGET    the function attribute that enables it (or nothing)
 *   LANES_W         doubles in a vector
 *   V               the vector type; V_LOAD, V_STORE (aligned), V_ADD, V_SUB, V_MUL, V_DIV,
 *                   V_SQRT, V_MIN, V_MAX its operations, each exactly rounded as the scalar one;
 *                   V_SET1(x) x in every lane
 *   V_OUT_D(d)      the bits (lane 0 the lowest) of the lanes where d is not in (1e-300,
 *                   1e300); V_OUT_Q(q) where q is not in [1e-150, 1e300]
 *   V_XY_LOAD(p, at, &x, &y)  the pairs (x, y) at p[l] + at, lane l's, into a vector of the
 *                   x and one of the y; V_XY_STORE(p, at, x, y) back
 *
 * The arithmetic is ik_fab_step2 / ik_fab_step3's, in the same order, so each lane computes
 * the bits ik_fabrik computes for its chain; a lane that needs the slow step takes it from
 * the scalar code. The fast step runs in every lane first, so a slow lane's numbers are held
 * within the fast step's range (STEP_D, STEP_Q: the same bits in a fast lane), where no
 * 0 * inf or inf / inf makes a NaN (coinciding joints, d == 0, raised FE_INVALID). The passes end with each lane's tip distance from its target, as
 * ik_joint_distance computes it (ik_v2_len, ik_v3_len: hypot where the square would
 * overflow or underflow).
 */

/* d and q as the fast step has them, a slow lane's held within range (see the top). */
#define STEP_D(d) V_MIN(V_MAX(d, V_SET1(1e-300)), V_SET1(1e300))
#define STEP_Q(len, d) V_MIN(V_DIV(len, STEP_D(d)), V_SET1(1e301)) /* still out if it was */

/* Lanes of the vector at lane `first` that hold a chain (the last vector may be partly empty). */
static inline int LANES_NAME(used)(const group *g, int first)
{
    int left = g->live - first;
    return left >= LANES_W ? (1 << LANES_W) - 1 : (1 << left) - 1;
}

/* The scalar step for the lanes in `slow` (bits) of the vector at lane `first`, patched in;
   a lane without a chain (past live) does not move, so its numbers stay finite (an inf left
   there would make inf - inf in the next pass). */
static void LANES_NAME(patch)(const group *g, int bone, int first, int slow, ik_real *wx, ik_real *wy,
                                           ik_real *wz, ik_real *sx, ik_real *sy, ik_real *sz)
{
    int l, used = LANES_NAME(used)(g, first);
    for (l = 0; l < LANES_W; l++) {
        const ik_chain *c;
        ik_real len;
        if (!(slow >> l & 1)) continue;
        if (!(used >> l & 1)) { /* no chain: the lane stays where it is, finite */
            sx[l] = sy[l] = 0;
            if (sz) sz[l] = 0;
            continue;
        }
        c = g->fab[first + l]->c;
        len = g->len[(size_t)bone * g->cap + first + l];
        if (g->dim == 2) {
            ik_vec2 s = ik_fab_step2_slow(ik_v2(wx[l], wy[l]), len, c->dir + 2 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y;
        } else {
            ik_vec3 s = ik_fab_step3_slow(ik_v3(wx[l], wy[l], wz[l]), len, c->dir + 3 * (size_t)bone);
            sx[l] = s.x, sy[l] = s.y, sz[l] = s.z;
        }
    }
}

/* The steps s of the vector at lane `first` (bone `bone`, segments w) with the slow lanes' patched in. */
static LANES_TARGET void LANES_NAME(fix2)(const group *g, int bone, int first, int slow, V wx, V wy, V *sx, V *sy)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], bx[LANES_W], by[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(bx, *sx), V_STORE(by, *sy);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, NULL, bx, by, NULL);
    *sx = V_LOAD(bx), *sy = V_LOAD(by);
}

static LANES_TARGET void LANES_NAME(fix3)(const group *g, int bone, int first, int slow, V wx, V wy, V wz, V *sx,
                                          V *sy, V *sz)
{
    LANES_ALIGNED ik_real ax[LANES_W], ay[LANES_W], az[LANES_W], bx[LANES_W], by[LANES_W], bz[LANES_W];
    V_STORE(ax, wx), V_STORE(ay, wy), V_STORE(az, wz), V_STORE(bx, *sx), V_STORE(by, *sy), V_STORE(bz, *sz);
    LANES_NAME(patch)(g, bone, first, slow, ax, ay, az, bx, by, bz);
    *sx = V_LOAD(bx), *sy = V_LOAD(by), *sz = V_LOAD(bz);
}

static LANES_TARGET void LANES_NAME(passes2)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y;
    const ik_real *len = g->len;
    int i, k;
    /* Backward: the tip on the target, each joint at its bone's length from the next. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py));
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
        }
    }
    /* Forward: joint 0 back on the base, each joint at its bone's length from the one before. */
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy);
            V d = V_ADD(V_MUL(wx, wx), V_MUL(wy, wy));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix2)(g, i, k, slow, wx, wy, &sx, &sy);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V d = V_ADD(V_MUL(dx, dx), V_MUL(dy, dy));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1) g->dist[k + l] = hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]);
    }
}

static LANES_TARGET void LANES_NAME(passes3)(group *g)
{
    const size_t cap = (size_t)g->cap;
    ik_real *x = g->x, *y = g->y, *z = g->z;
    const ik_real *len = g->len;
    int i, k;
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + g->n * cap + k, V_LOAD(g->tx + k));
        V_STORE(y + g->n * cap + k, V_LOAD(g->ty + k));
        V_STORE(z + g->n * cap + k, V_LOAD(g->tz + k));
    }
    for (i = g->n - 1; i >= 0; i--) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V nx = V_LOAD(px + cap), ny = V_LOAD(py + cap), nz = V_LOAD(pz + cap);
            V wx = V_SUB(nx, V_LOAD(px)), wy = V_SUB(ny, V_LOAD(py)), wz = V_SUB(nz, V_LOAD(pz));
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px, V_SUB(nx, sx));
            V_STORE(py, V_SUB(ny, sy));
            V_STORE(pz, V_SUB(nz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V_STORE(x + k, V_LOAD(g->bx + k));
        V_STORE(y + k, V_LOAD(g->by + k));
        V_STORE(z + k, V_LOAD(g->bz + k));
    }
    for (i = 0; i < g->n; i++) {
        for (k = 0; k < g->live; k += LANES_W) {
            ik_real *px = x + i * cap + k, *py = y + i * cap + k, *pz = z + i * cap + k;
            V fx = V_LOAD(px), fy = V_LOAD(py), fz = V_LOAD(pz);
            V wx = V_SUB(V_LOAD(px + cap), fx), wy = V_SUB(V_LOAD(py + cap), fy), wz = V_SUB(V_LOAD(pz + cap), fz);
            V d = V_ADD(V_ADD(V_MUL(wx, wx), V_MUL(wy, wy)), V_MUL(wz, wz));
            V q = STEP_Q(V_LOAD(len + i * cap + k), d), s = V_SQRT(STEP_D(d));
            V sx = V_MUL(V_MUL(wx, q), s), sy = V_MUL(V_MUL(wy, q), s), sz = V_MUL(V_MUL(wz, q), s);
            int slow = V_OUT_D(d) | V_OUT_Q(q); /* lanes without a chain too: kept finite */
            if (slow) LANES_NAME(fix3)(g, i, k, slow, wx, wy, wz, &sx, &sy, &sz);
            V_STORE(px + cap, V_ADD(fx, sx));
            V_STORE(py + cap, V_ADD(fy, sy));
            V_STORE(pz + cap, V_ADD(fz, sz));
        }
    }
    for (k = 0; k < g->live; k += LANES_W) {
        V dx = V_SUB(V_LOAD(g->tx + k), V_LOAD(x + g->n * cap + k));
        V dy = V_SUB(V_LOAD(g->ty + k), V_LOAD(y + g->n * cap + k));
        V dz = V_SUB(V_LOAD(g->tz + k), V_LOAD(z + g->n * cap + k));
        V d = V_ADD(V_ADD(V_MUL(dx, dx), V_MUL(dy, dy)), V_MUL(dz, dz));
        int far = V_OUT_D(d) & LANES_NAME(used)(g, k), l;
        V_STORE(g->dist + k, V_SQRT(d));
        for (l = 0; far; l++, far >>= 1)
            if (far & 1)
                g->dist[k + l] = hypot(hypot(g->tx[k + l] - x[g->n * cap + k + l], g->ty[k + l] - y[g->n * cap + k + l]),
                                       g->tz[k + l] - z[g->n * cap + k + l]);
    }
}

#undef STEP_D
#undef STEP_Q

/*
 * The closed-form 2D tracking step (joint_space.c's free_step2, then the forward kinematics
 * ik_chain_fk does after it) on `used` chains of n bones at once, all their bones: the same
 * operations in the same order, so each lane ends with the bits the chain's own step leaves.
 * The chains lie side by side in the scratch (STEP_REALS(n, cap) doubles, aligned), joint j
 * of lane l at x[j * cap + l], cap lanes (used rounded up to whole vectors, the rest copies
 * of lane 0: numbers a step made); each loop runs over the bones, and over the vectors within
 * a bone, so the vectors' forward kinematics (each bone waits for the one before it) overlap.
 * A lane whose step would not have been taken (the scalar step returns 0 and touches
 * nothing) is left out: stepped[l] 0; its numbers are held finite (det taken as 1), so no
 * lane makes a NaN.
 */
static LANES_TARGET void LANES_NAME(free2)(ik_steps *const *s, int used, int n, int cap, ik_real *scratch, int *stepped)
{
    const size_t w = (size_t)cap;
    ik_real *jx = scratch, *jy = jx + (n + 1) * w, *ux = jy + (n + 1) * w, *uy = ux + n * w;
    ik_real *len = uy + n * w, *ox = len + n * w, *oy = ox + (n + 1) * w, *dx = oy + (n + 1) * w;
    ik_real *dy = dx + n * w, *lane = dy + n * w; /* lane: STEP_LANE numbers a lane, below */
    /* dx, dy: each bone's lever (made once, read by the three loops over the bones), then,
       in the last loop, its new world direction */
    ik_real *unit = lane, *e0 = unit + w, *e1 = e0 + w, *a = e1 + w, *b = a + w, *d = b + w;
    ik_real *y0 = d + w, *y1 = y0 + w, *big = y1 + w, *scale = big + w, *px = scale + w, *py = px + w;
    const V half = V_SET1(0.5), one = V_SET1(1), zero = V_SET1(0), two = V_SET1(2), three = V_SET1(3);
    int j, l, k;
    for (k = 0; k < cap; k += LANES_W) {
        const ik_real *pj[LANES_W], *pt[LANES_W];
        V x, y;
        for (l = 0; l < LANES_W; l++) {
            const ik_chain *c = s[k + l < used ? k + l : 0]->c;
            pj[l] = c->joint, pt[l] = &c->turn[0].x; /* (x, y) pairs both */
        }
        for (j = 0; j <= n; j++) {
            V_XY_LOAD(pj, 2 * (size_t)j, &x, &y);
            V_STORE(jx + j * w + k, x), V_STORE(jy + j * w + k, y);
        }
        for (j = 0; j < n; j++) {
            V_XY_LOAD(pt, 2 * (size_t)j, &x, &y);
            V_STORE(ux + j * w + k, x), V_STORE(uy + j * w + k, y);
        }
    }
    for (l = 0; l < cap; l++) {
        const ik_steps *t = s[l < used ? l : 0];
        const ik_chain *c = t->c;
        const ik_real *length = c->length, scale_c = c->scale; /* read once (len may alias them) */
        for (j = 0; j < n; j++) len[j * w + l] = length[j] * scale_c;
        unit[l] = t->rows.unit, e0[l] = t->rows.e[0], e1[l] = t->rows.e[1];
        a[l] = d[l] = t->lambda2, b[l] = 0, big[l] = 0;
        px[l] = c->base_turn.x, py[l] = c->base_turn.y, ox[l] = c->base.x, oy[l] = c->base.y;
    }
    for (j = 0; j < n; j++) { /* the columns (-r.y, r.x), r the lever in reaches */
        for (k = 0; k < cap; k += LANES_W) {
            V u = V_LOAD(unit + k);
            V rx = V_MUL(V_SUB(V_LOAD(jx + n * w + k), V_LOAD(jx + j * w + k)), u);
            V ry = V_MUL(V_SUB(V_LOAD(jy + n * w + k), V_LOAD(jy + j * w + k)), u);
            V_STORE(dx + j * w + k, rx), V_STORE(dy + j * w + k, ry); /* kept for the loops below */
            V_STORE(a + k, V_ADD(V_LOAD(a + k), V_MUL(ry, ry)));
            V_STORE(b + k, V_SUB(V_LOAD(b + k), V_MUL(ry, rx)));
            V_STORE(d + k, V_ADD(V_LOAD(d + k), V_MUL(rx, rx)));
        }
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k);
        V_STORE(y0 + k, V_SUB(V_MUL(av, dv), V_MUL(bv, bv))); /* det, for now */
    }
    for (l = 0; l < cap; l++) {
        stepped[l] = y0[l] > 0 && isfinite(y0[l]);
        if (!stepped[l]) y0[l] = 1;
    }
    for (k = 0; k < cap; k += LANES_W) {
        V av = V_LOAD(a + k), bv = V_LOAD(b + k), dv = V_LOAD(d + k), det = V_LOAD(y0 + k);
        V ev = V_LOAD(e0 + k), fv = V_LOAD(e1 + k);
        V_STORE(y0 + k, V_DIV(V_SUB(V_MUL(dv, ev), V_MUL(bv, fv)), det));
        V_STORE(y1 + k, V_DIV(V_SUB(V_MUL(av, fv), V_MUL(bv, ev)), det));
    }
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k);
            V t = V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k)));
            V_STORE(big + k, V_MAX(V_LOAD(big + k), V_MAX(t, V_SUB(zero, t)))); /* |t| */
        }
    }
    for (l = 0; l < cap; l++) {
        if (!(big[l] > 1e-15)) stepped[l] = 0;
        scale[l] = big[l] > IK_STEP_MAX_TURN ? IK_STEP_MAX_TURN / big[l] : 1;
    }
    /* Each bone's turn from the old joints, then its world data and the joint after it (into
       ox, oy: the next bone's lever still reads the old joint). */
    for (j = 0; j < n; j++) {
        for (k = 0; k < cap; k += LANES_W) {
            V rx = V_LOAD(dx + j * w + k), ry = V_LOAD(dy + j * w + k); /* then its world turn */
            V h = V_MUL(V_MUL(V_SUB(V_MUL(rx, V_LOAD(y1 + k)), V_MUL(ry, V_LOAD(y0 + k))), V_LOAD(scale + k)), half);
            V hh = V_MUL(h, h), kk = V_DIV(one, V_ADD(one, hh));
            V cx = V_MUL(V_SUB(one, hh), kk), cy = V_MUL(V_MUL(two, h), kk);
            V tx = V_LOAD(ux + j * w + k), ty = V_LOAD(uy + j * w + k), pxv = V_LOAD(px + k), pyv = V_LOAD(py + k);
            V nx = V_SUB(V_MUL(cx, tx), V_MUL(cy, ty)), ny = V_ADD(V_MUL(cy, tx), V_MUL(cx, ty));
            V q = V_MUL(V_SUB(three, V_ADD(V_MUL(nx, nx), V_MUL(ny, ny))), half), wx, wy, step;
            nx = V_MUL(nx, q), ny = V_MUL(ny, q);
            V_STORE(ux + j * w + k, nx), V_STORE(uy + j * w + k, ny);
            /* the world turn: the parent's rotated by the new local one */
            wx = V_SUB(V_MUL(pxv, nx), V_MUL(pyv, ny)), wy = V_ADD(V_MUL(pyv, nx), V_MUL(pxv, ny));
            q = V_MUL(V_SUB(three, V_ADD(V_MUL(wx, wx), V_MUL(wy, wy))), half);
            wx = V_MUL(wx, q), wy = V_MUL(wy, q);
            step = V_LOAD(len + j * w + k);
            V_STORE(px + k, wx), V_STORE(py + k, wy);
            V_STORE(dx + j * w + k, wx), V_STORE(dy + j * w + k, wy);
            V_STORE(ox + (j + 1) * w + k, V_ADD(V_LOAD(ox + j * w + k), V_MUL(wx, step)));
            V_STORE(oy + (j + 1) * w + k, V_ADD(V_LOAD(oy + j * w + k), V_MUL(wy, step)));
        }
    }
    /* Back into the chains that stepped: a vector at a time where all its lanes did. */
    for (k = 0; k < used; k += LANES_W) {
        int whole = k + LANES_W <= used;
        for (l = 0; l < LANES_W && whole; l++) whole = stepped[k + l];
        if (whole) {
            ik_real *pj[LANES_W], *pt[LANES_W], *pd[LANES_W];
            for (l = 0; l < LANES_W; l++) {
                ik_chain *c = s[k + l]->c;
                pj[l] = c->joint, pt[l] = &c->turn[0].x, pd[l] = c->dir;
                for (j = 0; j < n; j++) c->angle[j] = IK_ANGLE_UNKNOWN;
                c->stale_from = c->n;
            }
            for (j = 0; j < n; j++) {
                V_XY_STORE(pt, 2 * (size_t)j, V_LOAD(ux + j * w + k), V_LOAD(uy + j * w + k));
                V_XY_STORE(pd, 2 * (size_t)j, V_LOAD(dx + j * w + k), V_LOAD(dy + j * w + k));
            }
            for (j = 0; j <= n; j++) V_XY_STORE(pj, 2 * (size_t)j, V_LOAD(ox + j * w + k), V_LOAD(oy + j * w + k));
            continue;
        }
        for (l = k; l < k + LANES_W && l < used; l++) {
            ik_chain *c = s[l]->c;
            if (!stepped[l]) continue;
            for (j = 0; j < n; j++) {
                c->turn[j] = ik_v2(ux[j * w + l], uy[j * w + l]);
                c->angle[j] = IK_ANGLE_UNKNOWN;
                c->dir[2 * j] = dx[j * w + l], c->dir[2 * j + 1] = dy[j * w + l];
            }
            for (j = 0; j <= n; j++) c->joint[2 * j] = ox[j * w + l], c->joint[2 * j + 1] = oy[j * w + l];
            c->stale_from = c->n;
        }
    }
}

static passes_fn lanes_passes(int dim)
{
    return dim == 2 ? passes2_neon : passes3_neon;
}

static free2_fn lanes_free2(int *width)
{
    return *width = 2, free2_neon;
}
#endif

/* Lanes a group of count chains of n bones has: up to count, in whole vectors, within the scratch. */
static int group_cap(int count, int n, int dim)
{
    int per = (n + 1) * dim + n, cap = (count + WIDEST - 1) / WIDEST * WIDEST;
    while (cap > 0 && cap * per > GROUP_REALS) cap -= WIDEST;
    return cap;
}

/*
 * The chains that share their bone count with another go in lanes, each count its group;
 * the rest are left at the front of live, and their number returned.
 */
static int in_lanes(ik_fab **live, int n)
{
    passes_fn passes = lanes_passes(live[0]->c->dim);
    int k, j, left = 0;
    /* By bone count, stably (insertion: the chains usually come in runs). */
    for (k = 1; k < n; k++) {
        ik_fab *f = live[k];
        for (j = k; j > 0 && live[j - 1]->c->n > f->c->n; j--) live[j] = live[j - 1];
        live[j] = f;
    }
    for (k = 0; k < n; k = j) {
        int cap;
        for (j = k + 1; j < n && live[j]->c->n == live[k]->c->n; j++) {}
        cap = j - k >= 2 ? group_cap(j - k, live[k]->c->n, live[k]->c->dim) : 0;
        if (cap > 0) {
            run_group(live + k, j - k, cap, passes);
        } else {
            int i;
            for (i = k; i < j; i++) live[left++] = live[i];
        }
    }
    return left;
}
#endif /* IK_LANES */

/*
 * The tracking steps (ik_steps in chain.h) of the chains that take them, each as its own
 * solve would; the first step of the 2D chains without limits (the closed form, the one
 * tracking takes a frame) side by side in lanes, a group of chains of one bone count at a
 * time. Chains alone in their bone count, too long for the scratch, or in builds without
 * vector extensions take it alone.
 */
static void track(ik_steps *steps, const int *opened, int count)
{
    int k;
#if IK_LANES
    ik_real scratch[GROUP_REALS] __attribute__((aligned(32)));
    ik_steps *side[IK_BATCH];
    int j, n = 0, width, stepped[IK_BATCH];
    free2_fn free2 = lanes_free2(&width);
    for (k = 0; k < count; k++) {
        ik_steps *s = &steps[k];
        if (opened[k] == IK_FAB_STEPS && ik_steps_going(s) && ik_steps_free2(s) && s->first == 0 &&
            s->m == s->c->n) { /* (the steps start on a settled, current chain) */
            for (j = n++; j > 0 && side[j - 1]->c->n > s->c->n; j--) side[j] = side[j - 1];
            side[j] = s;
        }
    }
    for (k = 0; k < n; k = j) {
        int used, cap, l, bones = side[k]->c->n;
        for (j = k + 1; j < n && side[j]->c->n == bones; j++) {}
        /* as many as the scratch holds, in whole vectors; alone: its own step, below */
        cap = (j - k + width - 1) / width * width;
        while (cap > 0 && STEP_REALS(bones, cap) > GROUP_REALS) cap -= width;
        used = j - k < cap ? j - k : cap;
        if (used < 2) continue;
        j = k + used;
        for (l = 0; l < used; l++) ik_steps_keep(side[k + l]);
        free2(side + k, used, bones, cap, scratch, stepped);
        for (l = 0; l < used; l++) ik_steps_after(side[k + l], stepped[l]);
    }
#endif
    for (k = 0; k < count; k++)
        if (opened[k] == IK_FAB_STEPS) ik_steps_run(&steps[k]);
}

void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, int *iterations,
                     ik_real *distances)
{
    ik_fab run[IK_BATCH], *live[IK_BATCH];
    ik_steps steps[IK_BATCH];
    int k, n = 0, opened[IK_BATCH];
    for (k = 0; k < count; k++)
        opened[k] = ik_fab_open(&run[k], &steps[k], chains[k], targets[k], chains[k]->n, &distances[k]);
    track(steps, opened, count);
    for (k = 0; k < count; k++) {
        iterations[k] = ik_fab_close(&run[k], &steps[k], opened[k], distances[k]);
        if (iterations[k] < 0) live[n++] = &run[k];
    }
#if IK_LANES
    if (n > 1) n = in_lanes(live, n);
#endif
    interleave(live, n);
    for (k = 0; k < count; k++) {
        distances[k] = run[k].distance;
        if (iterations[k] < 0) iterations[k] = run[k].iter;
    }
}

/* ---- src/ccd.c ---- */
/*
 * ccd.c - cyclic coordinate descent with greed, 2D and 3D, after "IK Solver From Scratch
 * In Unity", ../shared/seeds/ccd-ik-unity.txt (PerformIK_Cascade).
 *
 * Each iteration is one sweep over the joints from the base to the last (sweep.c). With
 * greed_ramp the fraction rises linearly from greed on the first iteration to 1 on the
 * last. The solve stops early once the tip is within tolerance, checked before the first
 * iteration and after each one; a solve that stops making progress escapes or stops
 * (escape.c). On a chain with limits, where sweeps crawl (a joint on a bound, the tip near
 * full reach), it takes joint-space steps instead (ik_joint_finish, joint_space.c), then the
 * escape's sweeps; an orientation goal's tip bone is made able to take its goal the same way.
 */

/*
 * Whether the sweeps come to turn fully (greed 1, or a ramp to it): only then do they hand
 * over to joint-space steps. A fixed greed below 1 is a slow approach asked for.
 */
static int ramps_to_full(const ik_settings *s) { return s->greed == 1 || s->greed_ramp; }

static ik_real greed_at(const ik_settings *s, int iter)
{
    if (!s->greed_ramp || s->iterations < 2) return s->greed;
    return s->greed + (1 - s->greed) * iter / (s->iterations - 1);
}


static int ccd_run(ik_chain *c, ik_vec3 target, int m, int iter)
{
    const ik_settings *s = &c->settings;
    ik_progress progress = ik_progress_start(c, target, m);
    int budget = ik_iteration_budget(s->iterations);
    if (ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) return iter;
    for (;;) {
        ik_real distance;
        ik_next next;
        ik_ccd_sweep(c, target, m, greed_at(s, iter), 0);
        iter++;
        distance = ik_joint_distance(c, m, target);
        if (distance <= s->tolerance || iter >= budget) break;
        next = ik_progress_next(c, &progress, distance);
        if (next == IK_STOP) break;
        if (next == IK_CRAWL && ramps_to_full(s)) {
            /* Sweeps creep without limits: joint-space steps (joint_space.c), then sweeps
               again if they leave anything. */
            iter += ik_joint_finish(c, target, m, budget - iter, 0, 0);
            if (ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) break;
            continue;
        }
        if (next == IK_KICK && c->limited) {
            /* Sweeps crawl against limits: joint-space steps (joint_space.c), then sweeps again. */
            iter += ik_joint_finish(c, target, m, budget - iter, 0, 0);
            return iter + ik_escape_finish(c, target, m, budget - iter, 0);
        }
        if (next == IK_KICK) ik_escape_kick(c, target, &progress, 0);
    }
    return iter;
}

int ik_ccd(ik_chain *c, ik_vec3 target, int m)
{
    int iter = 0;
    /* Tracking a goal with limits: joint-space steps first (joint_space.c). */
    if (ramps_to_full(&c->settings) && ik_joint_track(c, target, m, 0, 0, &iter, NULL)) return iter;
    iter = ccd_run(c, target, m, iter);
    /* The point behind an oriented tip bone reached: its parent turned so the tip bone's
       limit lets it take its goal (joint_space.c). */
    if (c->limited && ik_limits_oriented(c, m) && iter < ik_iteration_budget(c->settings.iterations))
        iter += ik_joint_finish(c, target, m, ik_iteration_budget(c->settings.iterations) - iter, 0, 0);
    return iter;
}

/* ---- src/relax.c ---- */
/*
 * relax.c - constraint relaxation, 2D and 3D, after Ryan Juckett, "Constraint Relaxation
 * IK in 2D", ../shared/seeds/constraint-relaxation-ik-2d.txt.
 *
 * The joints are points b[0..m-1] (the bases of the bones; the tip is implicit) held
 * together by distance constraints. One iteration: snap the end bone's base to its length
 * from the target; resolve each interior constraint (bones m-2 down to 1) by moving both
 * ends, in proportion to their joints' weights; then pull b[1] back to its length from the
 * fixed base b[0]. The points persist across iterations, as in the article.
 *
 * After each iteration the points are mapped onto bones of exact length: each bone along
 * its relaxed segment, and the end bone pointed at the target from where its base really
 * is (the article points it from the relaxed point, which may not be where the
 * exact-length bones put it). The mapped joints are the chain's (pose_behind), so the
 * distance the solve stops on is the one it reports. As the article notes, only this
 * mapping depends on the dimension.
 *
 * Joint limits: a chain with limits is posed from the mapped points after every iteration,
 * each bone within its limits (ik_pose_points), and relaxes on from the joints of that
 * pose, so the limits act during the passes and the points never drift into a pose the
 * limits forbid. A solve that stops making progress escapes or stops (escape.c); with
 * limits it first takes joint-space steps (ik_joint_finish, joint_space.c), as FABRIK does.
 *
 * A chain without limits or pinned joints and a target beyond its reach (or within tolerance of it) goes
 * straight at it in one step, as FABRIK does: that is the pose relaxation converges to, and
 * a long chain would crawl there (a 10-bone rope took more iterations than the default).
 *
 * The article skips a constraint whose points coincide or whose weights sum to zero; so do
 * we (testing for exact zero: the article's epsilon of 1e-4 would be a length in world units).
 */

#include <string.h>

static ik_vec3 load(const ik_chain *c, const ik_real *points, int i)
{
    const ik_real *p = points + (size_t)i * (size_t)c->dim;
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

static void store(const ik_chain *c, ik_real *points, int i, ik_vec3 v)
{
    ik_real *p = points + (size_t)i * (size_t)c->dim;
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/*
 * Maps the relaxed points b[0..m-1] to exact-length bones into out[0..m] (may be b). A
 * segment with no direction keeps its bone's direction, as ik_pose_points does.
 */
static void map_points(const ik_chain *c, ik_real *b, ik_vec3 target, int m, ik_real *out)
{
    ik_vec3 joint = load(c, b, 0), relaxed = joint, u;
    int i;
    store(c, out, 0, joint);
    for (i = 0; i + 1 < m; i++) {
        u = ik_v3_normalize_or(ik_v3_sub(load(c, b, i + 1), relaxed), ik_dir_v3(c, i));
        relaxed = load(c, b, i + 1);
        joint = ik_v3_add(joint, ik_v3_scale(u, c->length[i]));
        store(c, out, i + 1, joint);
    }
    u = ik_v3_normalize_or(ik_v3_sub(target, joint), ik_dir_v3(c, m - 1));
    store(c, out, m, ik_v3_add(joint, ik_v3_scale(u, c->length[m - 1])));
}

/*
 * The mapped points become the chain's joints: as they are (pose_behind) without limits;
 * posed within the limits with them, and b then the joints of that pose.
 */
static void take_points(ik_chain *c, ik_real *b, ik_vec3 target, int m)
{
    if (!c->limited) {
        map_points(c, b, target, m, c->joint);
        c->pose_behind = 1;
        return;
    }
    map_points(c, b, target, m, b);
    ik_pose_points(c, b, 0, m);
    memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
}

/* One relaxation pass over the points (see the top of the file). */
static void relax_pass(ik_chain *c, ik_real *b, ik_vec3 target, int m)
{
    const ik_real *len = c->length, *weight = c->weight;
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, load(c, b, m - 1)), zero);
    int i;
    store(c, b, m - 1, ik_v3_sub(target, ik_v3_scale(u, len[m - 1])));

    for (i = m - 2; i >= 1; i--) {
        /*
         * Each end moves by its weight's share of the fix. Only the ratio matters: divided
         * by the larger weight first, the sum cannot overflow (weights near 1e308) nor the
         * fix divided by it (weights near 5e-324).
         */
        ik_real larger = weight[i] > weight[i + 1] ? weight[i] : weight[i + 1];
        ik_vec3 bi = load(c, b, i), bn = load(c, b, i + 1), v = ik_v3_sub(bn, bi);
        u = ik_v3_normalize_or(v, zero);
        if ((u.x != 0 || u.y != 0 || u.z != 0) && larger > 0) {
            ik_real share = weight[i] / larger, share_next = weight[i + 1] / larger;
            ik_real total = share + share_next;
            /* u * (l - d) moves the ends apart (or together) to distance l. */
            ik_vec3 fix = ik_v3_scale(u, len[i] - ik_v3_len(v));
            bi = ik_v3_sub(bi, ik_v3_scale(fix, share / total));
            bn = ik_v3_add(bn, ik_v3_scale(fix, share_next / total));
            store(c, b, i, bi);
            store(c, b, i + 1, bn);
        }
        /* Limits: turn b[i] about b[i + 1] so bone i keeps within its child's limit. */
        if (c->limited && weight[i] > 0 && len[i + 1] > 0) {
            ik_vec3 next = i + 2 < m ? load(c, b, i + 2) : target;
            ik_vec3 child = ik_v3_normalize_or(ik_v3_sub(next, bn), zero);
            ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(bn, bi), zero);
            if (ik_v3_dot(child, child) > 0 && ik_v3_dot(dir, dir) > 0) {
                dir = ik_limit_backward(c, i, dir, child);
                store(c, b, i, ik_v3_sub(bn, ik_v3_scale(dir, ik_v3_len(ik_v3_sub(bn, bi)))));
            }
        }
    }

    u = ik_v3_normalize_or(ik_v3_sub(load(c, b, 1), load(c, b, 0)), zero);
    if (u.x != 0 || u.y != 0 || u.z != 0)
        store(c, b, 1, ik_v3_add(load(c, b, 0), ik_v3_scale(u, len[0])));
}

static int relax_run(ik_chain *c, ik_vec3 target, int m, int iter)
{
    const ik_settings *s = &c->settings;
    ik_real *b = c->work;
    ik_progress progress;
    int i, pinned = 0, budget = ik_iteration_budget(s->iterations);

    /* No bone before the tip bone (a 1-bone chain with an orientation goal): nothing to
       relax, the tip bone takes its goal afterwards (solve.c). */
    if (m == 0 || ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) return iter;
    /* A weight of 0 pins an interior joint: the escape bends only the bones after it. */
    for (i = 1; i < m; i++)
        if (c->weight[i] == 0) pinned = i;
    if (!c->limited && !pinned &&
        ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))) >= ik_chain_reach_to(c, m, NULL) - s->tolerance) {
        ik_fabrik_straighten(c, target, m);
        return iter + 1;
    }
    memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
    progress = ik_progress_start(c, target, m);
    /* A single bone has no constraint to relax: the mapping points it at the target. */
    if (m == 1) {
        take_points(c, b, target, m);
        return iter;
    }
    for (;;) {
        ik_real distance;
        relax_pass(c, b, target, m);
        take_points(c, b, target, m);
        iter++;
        distance = ik_joint_distance(c, m, target);
        if (distance <= s->tolerance || iter >= budget) break;
        switch (ik_progress_next(c, &progress, distance)) {
        case IK_GO_ON: continue;
        case IK_STOP: return iter;
        case IK_KICK: break;
        case IK_CRAWL:
            /* Creeping without limits: joint-space steps (joint_space.c), the pinned joints
               kept, then passes again if they leave anything. */
            iter += ik_joint_finish(c, target, m, budget - iter, pinned, 1);
            if (ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) return iter;
            memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
            continue;
        }
        ik_chain_settle(c);
        if (c->limited) {
            /* Joint-space steps first (joint_space.c); what they leave, the CCD sweeps. */
            iter += ik_joint_finish(c, target, m, budget - iter, pinned, 1);
            return iter + ik_escape_finish(c, target, m, budget - iter, pinned);
        }
        ik_escape_kick(c, target, &progress, pinned);
        memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
    }
    return iter;
}

int ik_relax(ik_chain *c, ik_vec3 target, int m)
{
    int iter = 0, i, pinned = 0;
    for (i = 1; i < m; i++)
        if (c->weight[i] == 0) pinned = i;
    /* Tracking a goal with limits: joint-space steps first (joint_space.c), the pinned joints
       kept. */
    if (ik_joint_track(c, target, m, pinned, 1, &iter, NULL)) return iter;
    iter = relax_run(c, target, m, iter);
    /* The point behind an oriented tip bone reached: its parent turned so the tip bone's
       limit lets it take its goal (joint_space.c), the pinned joints kept. */
    if (c->limited && ik_limits_oriented(c, m) && iter < ik_iteration_budget(c->settings.iterations))
        iter += ik_joint_finish(c, target, m, ik_iteration_budget(c->settings.iterations) - iter, pinned, 1);
    return iter;
}

/* ---- src/aim.c ---- */
/*
 * aim.c - aiming: the bones turn so the tip bone (bone n-1) points at a point, as a neck and
 * head look at something. The turn is shared by the joints' weights: bone i takes the
 * fraction weight(i) / (the sum of the weights of bones 0..n-1) of it (weight 0 keeps a
 * bone still).
 *
 * One iteration measures the turn e that would point the tip bone at the target from where
 * its base is now, and gives bone i the world orientation it had, turned by e times the
 * fraction F_i of the weights up to and including its own (2D: an angle; 3D: the rotation
 * about e's axis, a slerp from the identity). Without limits the tip bone then turns by
 * exactly e; but the bones before it moved its base, so the next iteration measures again.
 * Bones are posed within their limits (ik_pose_bone_*), and as every bone aims at its own
 * world orientation, the ones after a bone held by its limit take up the turn it could not
 * make. A target on the tip bone's base (joint n-1) has no direction to aim along: its angle
 * error is 0, whatever the tip bone's direction. The solve stops when the angle error is within angle_tolerance, when it no longer
 * shrinks (escape.c), or after `iterations`.
 */

ik_real ik_aim_error(const ik_chain *c, ik_vec3 target)
{
    ik_vec3 to = ik_v3_sub(target, ik_joint_v3(c, c->n - 1)), dir = ik_dir_v3(c, c->n - 1);
    to = ik_v3_tame(to);
    /* A point on the tip bone's base has no direction: every direction points at it. */
    if (to.x == 0 && to.y == 0 && to.z == 0) return 0;
    return atan2(ik_v3_len(ik_v3_cross(dir, to)), ik_v3_dot(dir, to));
}

static void aim2d(ik_chain *c, ik_vec3 target, ik_real largest, ik_real units)
{
    ik_vec2 to = ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, c->n - 1));
    ik_real e = ik_v2_angle_between(ik_dir2(c, c->n - 1), to), share = 0;
    int i;
    for (i = 0; i < c->n; i++) {
        ik_real turn;
        if (c->weight[i] == 0) { /* still: carried by its parent */
            ik_chain_fk_bone(c, i);
            continue;
        }
        share += c->weight[i] / largest / units;
        turn = e * (share < 1 ? share : 1);
        ik_pose_bone_turn(c, i, ik_v2_rotate(ik_dir2(c, i), ik_v2(cos(turn), sin(turn))));
    }
}

static void aim3d(ik_chain *c, ik_vec3 target, ik_real largest, ik_real units)
{
    ik_vec3 to = ik_v3_sub(target, ik_joint3(c, c->n - 1));
    ik_vec3 u = ik_v3_normalize_or(to, ik_dir3(c, c->n - 1));
    ik_quat e = ik_q_from_to(ik_dir3(c, c->n - 1), u);
    ik_real share = 0;
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->weight[i] == 0) {
            ik_chain_fk_bone(c, i);
            continue;
        }
        share += c->weight[i] / largest / units;
        /* wrot[i] is still the rotation before this iteration: ik_pose_bone_rot replaces it. */
        ik_pose_bone_rot(c, i, ik_q_normalize(ik_q_mul(ik_q_fraction(e, share < 1 ? share : 1),
                                                       c->wrot[i])));
    }
}

int ik_aim(ik_chain *c, ik_vec3 target, ik_real *error)
{
    const ik_settings *s = &c->settings;
    ik_real units = 0, largest = 0;
    ik_progress progress;
    int i, iter = 0;
    /* Summed in units of the largest weight, so weights near 1e308 cannot overflow. */
    for (i = 0; i < c->n; i++)
        if (c->weight[i] > largest) largest = c->weight[i];
    *error = ik_aim_error(c, target);
    if (largest == 0) return 0; /* every bone is still */
    for (i = 0; i < c->n; i++) units += c->weight[i] / largest;
    progress = ik_progress_plain(*error, IK_PI);
    while (*error > s->angle_tolerance && iter < ik_iteration_budget(s->iterations)) {
        if (c->dim == 2) aim2d(c, target, largest, units);
        else aim3d(c, target, largest, units);
        iter++;
        *error = ik_aim_error(c, target);
        if (ik_progress_next(c, &progress, *error) == IK_STOP) break;
    }
    return iter;
}

/*
 * The angle atan2(s, d) (s >= 0) where it is small without atan2: for s / d <= 1e-5,
 * x - x^3 / 3 is atan(x) to rounding (the next term is x^5 / 5, below 1e-20 x).
 */
static ik_real small_angle(ik_real s, ik_real d)
{
    ik_real x;
    if (d > 0 && s <= 1e-5 * d) {
        x = s / d;
        return x - x * x * x / 3;
    }
    return atan2(s, d);
}

/*
 * The lean aim of one bone: one turn points it at the target (its base does not move, and
 * the turn leaves rounding, about 1e-16), so the loop's second measure is the only one
 * left. What one turn may not settle goes through the loop above.
 */
int ik_aim_lean3(ik_chain *c, ik_vec3 target, ik_result *out)
{
    /* An aim has no softness: its aim is the goal. */
    ik_real tol = c->settings.angle_tolerance, s2, d, error;
    int iterations = 0, met;
    ik_vec3 dir = ik_dir3(c, 0), to = ik_v3_tame(ik_v3_sub(target, ik_joint3(c, 0))), cross;
    /* The loop itself where one turn may not do: a target on the base, weight 0, or a
       tolerance so small that rounding may leave more. */
    if ((to.x == 0 && to.y == 0 && to.z == 0) || c->weight[0] == 0 || !(tol >= 1e-12)) {
        iterations = ik_aim(c, target, &error);
    } else {
        cross = ik_v3_cross(dir, to), s2 = ik_v3_dot(cross, cross), d = ik_v3_dot(dir, to);
        /*
         * Met already? The angle is atan(x), x = |cross| / d (d > 0); the squares settle it
         * without a root (|to| is tamed, so they neither overflow nor vanish): x <= tol is
         * met (atan(x) <= x); x > 2 tol is not, for tol < 0.6 (atan(2 tol) > tol there),
         * nor is d <= 0 (at least pi / 2); atan2 settles the rest.
         */
        if (d > 0 && s2 <= tol * tol * d * d) met = 1;
        else if (d > 0 ? s2 > 4 * tol * tol * d * d && tol < 0.6 : tol < 1.57) met = 0;
        else met = atan2(sqrt(s2), d) <= tol;
        if (met) {
            error = small_angle(sqrt(s2), d);
        } else {
            ik_turn_bone3(c, 0, ik_v3_normalize_or(to, dir));
            dir = ik_dir3(c, 0);
            error = small_angle(ik_v3_len(ik_v3_cross(dir, to)), ik_v3_dot(dir, to));
            iterations = 1;
            if (error > tol) iterations += ik_aim(c, target, &error);
        }
    }
    out->iterations = iterations;
    out->angle_error = out->distance = error;
    out->reached = error <= tol;
    return iterations > 0;
}

/* ---- src/goal.c ---- */
/*
 * goal.c - a chain's goal and the finish around every solve, shared by single solves and
 * ik_solve_many (solve.c) and rigs (rig.c): how far the tip is from its goal, in distance
 * and angle; the pose before a solve kept, and the tip bone turned to its orientation goal,
 * the pose blended with the one before (mix) and each bone's turn held to max_turn after it.
 */

#include <string.h>

/* The world direction an orientation goal gives the tip bone. */
ik_vec3 ik_goal_direction(const ik_chain *c)
{
    return c->dim == 2 ? ik_v3(c->target_turn.x, c->target_turn.y, 0) : ik_q_x_axis(c->target_rot);
}

/* The tip bone's angle from its orientation goal, or (aim) from the line to the goal. */
ik_real ik_orientation_error(const ik_chain *c)
{
    int last = c->n - 1;
    if (c->dim == 2) {
        ik_vec2 d = c->pose_behind ? ik_chain_derive_dir2(c, last) : ik_dir2(c, last);
        return fabs(ik_v2_angle_between(d, c->target_turn));
    } else {
        ik_quat q = ik_q_mul(ik_q_conj(c->target_rot), ik_chain_world_rot(c, last));
        return 2 * atan2(sqrt(q.x * q.x + q.y * q.y + q.z * q.z), fabs(q.w));
    }
}

ik_real ik_tip_distance(const ik_chain *c)
{
    if (c->dim == 2) return ik_v2_len(ik_v2_sub(ik_v2(c->target.x, c->target.y), ik_joint2(c, c->n)));
    return ik_v3_len(ik_v3_sub(c->target, ik_joint3(c, c->n)));
}

void ik_chain_goal_error(ik_chain *c, ik_real *distance, ik_real *angle_error, int *has)
{
    ik_chain_read_hold(c); /* a held tip's goal: where the held point is now */
    *has = c->has_target;
    *distance = 0, *angle_error = 0;
    if (!c->has_target) return;
    ik_chain_update(c);
    *distance = ik_tip_distance(c);
    if (c->has_orientation) *angle_error = ik_orientation_error(c);
}

void ik_save_pose(ik_chain *c)
{
    if (c->dim == 2) {
        memcpy(c->prev_turn, c->turn, (size_t)c->n * sizeof *c->turn);
        memcpy(c->prev_angle, c->angle, (size_t)c->n * sizeof *c->angle);
    } else {
        memcpy(c->prev_rot, c->rot, (size_t)c->n * sizeof *c->rot);
    }
}

/* The tip bone takes its orientation goal (within its limit). */
void ik_orient_tip(ik_chain *c)
{
    int last = c->n - 1;
    /* Through the pose, not the joints: a tip bone too short for the joints to show its
       direction (length 0, or 5e-324) takes the goal too. */
    ik_chain_settle(c);
    ik_chain_fk(c);
    if (c->dim == 2) ik_pose_bone_turn(c, last, c->target_turn);
    else ik_pose_bone_rot(c, last, c->target_rot);
}

/* The local pose moved the fraction mix of the way from the remembered pose to the new one. */
void ik_mix_pose(ik_chain *c, ik_real mix)
{
    int i;
    for (i = 0; i < c->n; i++) {
        if (mix == 0) { /* exactly the pose before, angles and all */
            if (c->dim == 2) {
                c->turn[i] = c->prev_turn[i];
                c->angle[i] = c->prev_angle[i];
            } else {
                c->rot[i] = c->prev_rot[i];
            }
        } else if (c->dim == 2) {
            ik_real from = c->prev_angle[i], to = ik_turn_angle(c, i);
            if (from != from) from = atan2(c->prev_turn[i].y, c->prev_turn[i].x);
            /* A limited bone moves inside its range; others take the shorter way round. */
            ik_chain_set_turn_angle(c, i, c->limit[i].flags ? from + mix * (to - from)
                                                            : from + mix * ik_wrap_angle(to - from));
        } else {
            c->rot[i] = ik_q_slerp(c->prev_rot[i], c->rot[i], mix);
        }
    }
    c->stale_from = 0;
}

/* The angle of the turn from a to b. */
static ik_real turn_between(ik_quat a, ik_quat b)
{
    ik_quat q = ik_q_mul(b, ik_q_conj(a));
    return 2 * atan2(sqrt(q.x * q.x + q.y * q.y + q.z * q.z), fabs(q.w));
}

/*
 * No bone's local rotation more than max_turn from the remembered pose. A limited 3D bone's
 * limits win afterwards, and clamping a rotation into a cone or twist range can turn it
 * further from a pose within them (the limits are not convex along a slerp): such a bone
 * takes less of its turn, halved until its clamped rotation is within max_turn.
 */
void ik_hold_turns(ik_chain *c, ik_real max_turn)
{
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) {
            ik_real from = c->prev_angle[i], to = ik_turn_angle(c, i), delta;
            if (from != from) from = atan2(c->prev_turn[i].y, c->prev_turn[i].x);
            /* As in mix: inside a limited bone's range, else the shorter way round. */
            delta = c->limit[i].flags ? to - from : ik_wrap_angle(to - from);
            if (fabs(delta) <= max_turn) continue;
            ik_chain_set_turn_angle(c, i, from + (delta > 0 ? max_turn : -max_turn));
        } else {
            const ik_limit *limit = &c->limit[i];
            ik_quat from = c->prev_rot[i], to = c->rot[i], held = to, clamped, from_clamped;
            ik_real angle = turn_between(from, to), t = 1;
            int k;
            /* A bone that did not turn keeps its bits: a rotation unit only to rounding seems
               turned from itself by about 1e-16, and the slerp would renormalise it. */
            if (memcmp(&from, &to, sizeof from) == 0) angle = 0;
            if (angle > max_turn) t = max_turn / angle, held = ik_q_slerp(from, to, t);
            clamped = ik_limit_rotation(limit, held);
            from_clamped = ik_limit_rotation(limit, from);
            /* (from a pose beyond the limits, they win: the turn is theirs) */
            if (limit->flags && turn_between(from, clamped) > max_turn &&
                memcmp(&from, &from_clamped, sizeof from) == 0) {
                for (k = 0; k < 40 && turn_between(from, clamped) > max_turn; k++) {
                    t /= 2;
                    held = ik_q_slerp(from, to, t);
                    clamped = ik_limit_rotation(limit, held);
                }
                if (turn_between(from, clamped) > max_turn) held = from;
            }
            if (memcmp(&held, &to, sizeof held) == 0) continue;
            c->rot[i] = held;
        }
        ik_chain_mark_stale(c, i);
    }
}

/* ---- src/solve.c ---- */
/*
 * solve.c - what every solve does around its solver.
 *
 * The order of a solve: check everything (a rejected call changes nothing) and keep the
 * target as the chain's goal; if the goal is already met, stop there. Otherwise remember
 * the pose when mix, max_turn or 3D twist need it; with an orientation goal the solver
 * reaches for the point behind the tip bone with the other bones; stretch (a target out of
 * reach scales the bones and straightens the chain, and no solver runs) or else soften the
 * target; run the solver; pose the tip bone to its orientation goal; bring every bone
 * within its limits; blend with the remembered pose (mix) and hold each bone's turn to
 * max_turn; report the distance to the real goal. The goal's measures and the finish are
 * goal.c's, which the rig shares; each solver is a row of the table below.
 */

#include <string.h>


/* ---- the way in ---- */

ik_real ik_soft_distance(ik_real d, ik_real reach, ik_real softness)
{
    /* The ease begins at reach - softness (or at the base, for a softness beyond reach). */
    ik_real start = reach - softness, span = softness;
    if (!(softness > 0)) return d; /* off */
    if (start < 0) start = 0, span = reach;
    if (!(span > 0)) return d < reach ? d : reach; /* no reach to ease into: never beyond it */
    if (!(d > start)) return d;
    /* Written from the reach down, so rounding can never put the result beyond it. */
    return reach - span * exp(-(d - start) / span);
}

/* ---- the solvers ---- */

/*
 * What a solve needs to know of its solver: how to run it, and what it needs around it.
 * Each solver is its own file; adding one is that file and a row of the table below.
 */
typedef struct solver_desc {
    /* Runs the solver towards aim (joint m; the tip bone for an aim solve, towards the
       goal), returning its iterations; *distance: the tip's from aim when known (else NaN),
       *aim_error: an aim's angle left. */
    int (*run)(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error);
    int on_points;   /* works on the joints alone (FABRIK, relaxation): a 2D chain without
                        limits and the rest around it need no local pose until the end */
    int keeps_twist; /* derives 3D rotations by the smallest turn: after an escape's bend
                        the twist is rebuilt (restore_twist) */
    int aims;        /* turns the tip bone to point at the goal: no point behind, no
                        stretch, met by the angle */
    int closed_form; /* solves in one step: not skipped when the goal looks met */
    int measures;    /* leaves the tip's distance from its aim (FABRIK) */
    int batches;     /* ik_solve_many may run it in lanes (FABRIK) */
    int bones;       /* the bones it needs (with an orientation goal, one more); 0: any */
    /* The whole solve in one pass for a plain 3D chain of lean_bones bones (lean, below);
       NULL: none. */
    int (*lean)(ik_chain *c, ik_vec3 target, ik_result *out);
    int lean_bones;
} solver_desc;

static int run_fabrik(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)aim_error;
    return ik_fabrik(c, aim, m, distance);
}

static int run_ccd(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)distance, (void)aim_error;
    return ik_ccd(c, aim, m);
}

static int run_relax(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)distance, (void)aim_error;
    return ik_relax(c, aim, m);
}

static int run_two_bone(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)m, (void)distance, (void)aim_error;
    return ik_two_bone_chain(c, aim);
}

static int run_aim(ik_chain *c, ik_vec3 aim, int m, ik_real *distance, ik_real *aim_error)
{
    (void)aim, (void)m, (void)distance;
    return ik_aim(c, c->target, aim_error);
}

/* By ik_solver: run, on_points, keeps_twist, aims, closed_form, measures, batches, bones,
   lean, lean_bones. */
static const solver_desc SOLVERS[] = {
    {run_fabrik, 1, 1, 0, 0, 1, 1, 0, NULL, 0},                /* IK_SOLVER_FABRIK */
    {run_ccd, 0, 0, 0, 0, 0, 0, 0, NULL, 0},                   /* IK_SOLVER_CCD */
    {run_relax, 1, 1, 0, 0, 0, 0, 0, NULL, 0},                 /* IK_SOLVER_RELAX */
    {run_two_bone, 0, 1, 0, 1, 0, 0, 2, ik_two_bone_lean3, 2}, /* IK_SOLVER_TWO_BONE */
    {run_aim, 0, 0, 1, 0, 0, 0, 0, ik_aim_lean3, 1},           /* IK_SOLVER_AIM */
};

/* One solve in progress. */
typedef struct solve {
    const solver_desc *solver;
    int m;          /* the bones the solver moves: n, or n - 1 with an orientation goal */
    int oriented;   /* the tip bone takes the orientation goal */
    ik_vec3 aim;    /* where the solver takes joint m: the goal, or the point behind it,
                       softened */
    int run;        /* the solver runs (not met already, not stretched) */
    int iterations;
    ik_real aim_error;
    ik_real met;    /* the tip's distance when it met the goal already (nothing moved) */
    ik_real distance; /* FABRIK: the tip's from aim, before and after (NaN: not known); the
                         result's distance after, when aim is the goal and nothing moves
                         the tip on the way out */
    int aim_is_goal;  /* aim is the goal itself: no orientation goal, nothing softened */
} solve;


/*
 * The stretch factor that makes bones 0..m-1, straight, reach the point behind the tip
 * bone, whose own length stretches too: s with |g - s L u| = s R (g the goal from the base,
 * u the tip bone's goal direction, L its length, R the others' reach; L = 0 without an
 * orientation goal: s = |g| / R). The stable root, in units of max(L, R) so nothing
 * underflows; DBL_MAX when the factor itself would overflow; 0: no such factor.
 */
static ik_real stretch_factor(ik_vec3 g, ik_vec3 u, ik_real L, ik_real R)
{
    ik_real m = L > R ? L : R, len = ik_v3_len(g), gu, l, r, below, s;
    if (!(len > 0) || !(R > 0)) return 0;
    gu = ik_v3_dot(ik_v3_normalize_or(g, u), u);
    l = L / m, r = R / m;
    below = l * gu + sqrt(fmax(l * l * gu * gu + (r * r - l * l), 0));
    if (!(below > 0)) return 0;
    s = len / m / below;
    return s <= DBL_MAX ? s : DBL_MAX;
}

/* Every bone along the line to the point behind the tip bone, the tip bone along u. */
static void straighten(ik_chain *c, const solve *s, ik_vec3 u)
{
    ik_vec3 behind = ik_v3_sub(c->target, ik_v3_scale(u, c->length[c->n - 1] * c->scale));
    ik_vec3 line = ik_v3_normalize_or(ik_v3_sub(s->oriented ? behind : c->target, ik_joint_v3(c, 0)),
                                      ik_dir_v3(c, 0));
    int i;
    for (i = 0; i < s->m; i++) ik_pose_bone(c, i, c->length[i] > 0 ? line : ik_dir_v3(c, i));
    if (s->oriented) ik_pose_bone(c, c->n - 1, u);
    c->stale_from = c->n;
}

/* *aim eased towards reach from the base (softness > 0); 0 when it stays (on the base). */
static int soften(const ik_chain *c, ik_vec3 *aim, ik_real reach)
{
    ik_vec3 base = ik_joint_v3(c, 0);
    ik_real d = ik_v3_len(ik_v3_sub(*aim, base));
    if (!(d > 0)) return 0;
    *aim = ik_v3_add(base, ik_v3_scale(ik_v3_sub(*aim, base), ik_soft_distance(d, reach, c->settings.softness) / d));
    return 1;
}

/*
 * Prepares a solve of the kept goal with solver: the pose made the truth where the solver
 * or the way out needs it, the goal checked for being met, stretch done, the solver's aim
 * point set. The chain has followed its parent.
 */
static void way_in(ik_chain *c, ik_solver solver, solve *s)
{
    const ik_settings *set = &c->settings;
    const solver_desc *desc = &SOLVERS[solver];
    int aim = desc->aims;
    ik_real reach;
    ik_vec3 u = ik_v3(0, 0, 0), base;
    int measured = 0;
    s->solver = desc;
    s->oriented = c->has_orientation && !aim;
    s->m = s->oriented ? c->n - 1 : c->n;
    s->run = 0;
    s->iterations = 0;
    s->aim_error = 0;
    s->met = 0;
    s->distance = NAN;
    s->aim_is_goal = 0;
    c->kicked = 0;
    /* Only FABRIK and relaxation on a 2D chain without limits work on the joints alone. */
    if (c->limited || c->dim == 3 || !desc->on_points ||
        set->mix < 1 || set->max_turn < INFINITY || s->oriented || c->scale != 1 || set->stretch)
        ik_chain_settle(c);
    ik_chain_fk(c);

    /* The goal met already: nothing moves (limits still have their word on the way out). */
    if (aim) {
        s->aim_error = ik_aim_error(c, c->target);
        if (s->aim_error <= set->angle_tolerance && !c->limited) return;
    } else if (!desc->closed_form && c->scale == 1 && !c->limited) {
        s->met = ik_tip_distance(c);
        measured = 1;
        if (s->met <= set->tolerance && (!s->oriented || ik_orientation_error(c) <= set->angle_tolerance))
            return;
    }
    if (c->dim == 3 || set->mix < 1 || set->max_turn < INFINITY) ik_save_pose(c);
    if (aim) {
        s->run = 1;
        return;
    }

    base = ik_joint_v3(c, 0);
    reach = ik_chain_reach_to(c, s->m, NULL);
    if (s->oriented) u = ik_goal_direction(c);
    if (set->stretch) {
        ik_real factor = stretch_factor(ik_v3_sub(c->target, base), u,
                                        s->oriented ? c->length[c->n - 1] : 0, reach);
        if (factor > 1) {
            /* A stretched bone stays within the range of ik.h (see chain.c). */
            ik_real most = c->longest > 0 ? IK_MAX_COORD / c->longest : DBL_MAX;
            if (!(factor <= most)) factor = most <= DBL_MAX ? most : DBL_MAX;
            c->scale = factor;
            straighten(c, s, u);
            s->iterations = 1;
            return;
        }
    }
    if (c->scale != 1) { /* back to the bones' own lengths */
        c->scale = 1;
        c->stale_from = 0;
        ik_chain_fk(c);
    }
    s->aim = s->oriented ? ik_v3_sub(c->target, ik_v3_scale(u, c->length[c->n - 1])) : c->target;
    s->aim_is_goal = !s->oriented;
    if (!set->stretch && set->softness > 0 && soften(c, &s->aim, reach)) s->aim_is_goal = 0;
    if (measured && s->aim_is_goal) s->distance = s->met; /* at scale 1, as the solver starts */
    s->run = 1;
}

static void run_solver(ik_chain *c, solve *s)
{
    s->iterations = s->solver->run(c, s->aim, s->m, &s->distance, &s->aim_error);
}

/* ---- the way out ---- */

/*
 * 3D position-based solves promise that each bone's new world rotation is the smallest
 * turn from its direction before the call to its new one, applied to its world rotation
 * before the call. An escape bend in between would leave the bend's own turn in the
 * twist, so after one the rotations of bones 0..m-1 are rebuilt from the remembered pose
 * that way (within the limits, which win).
 */
static void restore_twist(ik_chain *c, int m)
{
    ik_quat before_parent = c->base_rot, parent = c->base_rot;
    int i;
    ik_chain_settle(c);
    ik_chain_fk(c);
    for (i = 0; i < m; i++) {
        ik_quat before = ik_q_mul(before_parent, c->prev_rot[i]);
        ik_quat world = ik_q_mul(ik_q_from_to(ik_q_x_axis(before), ik_dir3(c, i)), before);
        ik_quat local = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
        c->rot[i] = ik_limit_rotation(&c->limit[i], local);
        parent = ik_q_normalize(ik_q_mul(parent, c->rot[i]));
        before_parent = before;
    }
    c->stale_from = 0;
}

/*
 * Whether the tip's distance FABRIK ended on is the result's: the aim was the goal, and the
 * way out moved no joint (no limits, mix, max_turn, nor a 3D escape's twist rebuilt).
 */
static int tip_known(const ik_chain *c, const solve *s)
{
    const ik_settings *set = &c->settings;
    return s->solver->measures && s->aim_is_goal && s->distance == s->distance && !c->limited &&
           set->mix == 1 &&
           set->max_turn == INFINITY && !(c->kicked && c->dim == 3);
}

static void way_out(ik_chain *c, solve *s, ik_result *out)
{
    const ik_settings *set = &c->settings;
    int moved = s->run || s->iterations > 0;
    if (moved && c->kicked && c->dim == 3 && s->solver->keeps_twist)
        restore_twist(c, s->m);
    if (moved && s->oriented) ik_orient_tip(c);
    if (c->limited) {
        ik_chain_settle(c);
        ik_chain_clamp_limits(c);
    }
    if (moved && (set->mix < 1 || set->max_turn < INFINITY)) {
        ik_chain_settle(c);
        if (set->mix < 1) ik_mix_pose(c, set->mix);
        if (set->max_turn < INFINITY) ik_hold_turns(c, set->max_turn);
        /* The pose before may have been beyond the limits: they win over both. */
        ik_chain_clamp_limits(c);
    }
    ik_chain_fk(c);
    if (moved) ik_chain_changed(c);
    /* What tracking's prediction reads at the next solve (joint_space.c). */
    c->track_have = c->track_recorded;
    c->track_recorded = 0;
    c->track_seen = ik_chain_pose_version(c);

    out->iterations = s->iterations;
    if (s->solver->aims) {
        out->angle_error = moved ? ik_aim_error(c, c->target) : s->aim_error;
        out->distance = out->angle_error;
        out->reached = out->angle_error <= set->angle_tolerance;
        return;
    }
    out->distance = !moved ? s->met : tip_known(c, s) ? s->distance : ik_tip_distance(c);
    out->angle_error = s->oriented ? ik_orientation_error(c) : 0;
    out->reached = out->distance <= set->tolerance &&
                   (!s->oriented || out->angle_error <= set->angle_tolerance);
}

/* ---- other tries ---- */

/*
 * With limits, an iterative solve (not two_bone nor aim) can end in a minimum the limits
 * make, short of a goal its chain can reach. One that ends short with iterations to spare
 * tries again from fixed poses within the limits (their ranges at the fractions below), each
 * with what is left of the budget; a try's pose replaces the best so far only when it
 * reaches or halves its miss (a smaller gain is not worth the jump). bench/limits.lua, 500
 * trials, 64 iterations, 3D 3 bones with limits and an orientation goal, from straight /
 * from random: CCD 95.6 / 93.2% -> 96.0 / 94.6%, FABRIK 94.2 / 92.6 -> 96.8 / 96.2, relax
 * 94.2 / 92.2 -> 96.6 / 96.0. Not after a solver that took no iteration (its goal was met,
 * only the limits moved the tip), nor after a stretch, nor with mix or max_turn (they hold
 * the pose to the one before), nor with escape off (the textbook solvers); while tracking
 * (the tip within IK_TRACK_NEAR of the reach from the goal when the solve began) only when
 * the solve gained nothing (a chain stuck where its goal stays).
 */
#define TRIES 3
static const ik_real TRY_AT[TRIES][3] = {{0.5, 0.7, 0.5}, {0.15, 0.7, 0.15}, {0.85, 0.7, 0.85}};

/* How far a pose is from its goal: a radian weighs an eighth of the reach, as in the
   joint-space steps. */
static ik_real miss_of(const ik_chain *c, ik_real distance, ik_real angle_error)
{
    return distance + angle_error * c->reach / 8;
}

static ik_real miss(const ik_chain *c, const ik_result *r)
{
    return miss_of(c, r->distance, r->angle_error);
}

/* Whether a solve of c with solver may try again at all (what the pose does not decide). */
static int may_try(const ik_chain *c, ik_solver solver)
{
    const ik_settings *set = &c->settings;
    const solver_desc *desc = &SOLVERS[solver];
    return c->limited && set->escape && !desc->closed_form && !desc->aims && set->mix == 1 &&
           set->max_turn == INFINITY;
}

/* The miss before a solve that may try again (may_try), and whether it tracks. */
static ik_real miss_before(ik_chain *c, int *tracking)
{
    ik_real distance;
    ik_chain_settle(c);
    ik_chain_fk(c);
    distance = ik_tip_distance(c);
    *tracking = distance < IK_TRACK_NEAR * c->reach;
    return miss_of(c, distance, c->has_orientation ? ik_orientation_error(c) : 0);
}

/* Whether a solve that may try again (may_try) tries: it fell short with iterations left. */
static int tries_wanted(const ik_chain *c, const ik_result *out, ik_real before, int tracking)
{
    return !out->reached && out->iterations > 0 &&
           out->iterations < ik_iteration_budget(c->settings.iterations) && c->scale == 1 &&
           (!tracking || miss(c, out) >= before);
}

/*
 * A tip bone with an orientation goal and a limit: the solvers reach for the point behind
 * it, blind to whether the tip's limit lets it take its goal from there, so one start can
 * spend the whole budget closing in where the tip cannot be (a 3D 3-bone chain's tip went
 * from 2.3 to 4.3 away over 28 iterations while the point behind closed in; with 200
 * iterations instead of 64, the tries reached 98% of bench/limits.lua's goals, not 95%).
 * Such a solve, when it may try again (may_try) and is not tracking, gives its first start a
 * quarter of the budget and the tries from other poses the rest. Measured with 64
 * iterations, from straight / from random, before -> after: bench/limits.lua 3D CCD 96.4 /
 * 94.8 -> 97.4 / 97.3%, FABRIK 97.2 / 95.8 -> 97.8 / 97.1, relax 97.1 / 95.9 -> 97.8 /
 * 97.0; 2D CCD 95.8 / 95.7 -> 98.0 / 97.8, FABRIK and relax 96.1 -> 96.6 / 97.1; and on
 * bench/limits_fresh.lua's chains (other limits, lengths and poses) every row gained (2D
 * 93.1-93.9 -> 94.4-96.8%, 3D 95.6-97.2 -> 97.4-98.4%). A third of the budget gave about
 * the same; a half lost 2 points on FABRIK and relaxation.
 */
#define FIRST_SHARE 4

static int first_budget(const ik_chain *c, int tracking)
{
    int share = ik_iteration_budget(c->settings.iterations) / FIRST_SHARE;
    if (tracking || !ik_limits_oriented(c, c->n - 1)) return c->settings.iterations;
    return share > 0 ? share : 1;
}

/* The local pose kept as the best so far, and put back from it. */
static void keep_best(ik_chain *c)
{
    size_t n = (size_t)c->n;
    if (c->dim == 2) {
        memcpy(c->best_turn, c->turn, n * sizeof *c->turn);
        memcpy(c->best_angle, c->angle, n * sizeof *c->angle);
    } else {
        memcpy(c->best_rot, c->rot, n * sizeof *c->rot);
    }
}

static void put_back_best(ik_chain *c)
{
    size_t n = (size_t)c->n;
    if (c->dim == 2) {
        memcpy(c->turn, c->best_turn, n * sizeof *c->turn);
        memcpy(c->angle, c->best_angle, n * sizeof *c->angle);
    } else {
        memcpy(c->rot, c->best_rot, n * sizeof *c->rot);
    }
    ik_chain_mark_stale(c, 0);
    ik_chain_fk(c);
    ik_chain_changed(c);
}

static void try_pose(ik_chain *c, int k)
{
    const ik_real *u = TRY_AT[k];
    int i;
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) ik_chain_set_turn_angle(c, i, ik_limit_sample_angle(&c->limit[i], u[0]));
        else c->rot[i] = ik_limit_sample_rotation(&c->limit[i], u[0], u[1], u[2]);
    }
    ik_chain_mark_stale(c, 0);
    ik_chain_fk(c);
    c->track_have = 0; /* a jump, not a motion: nothing to carry on (joint_space.c, predict) */
}

/*
 * The other tries, after the first ended in *out: each within the budget that is left,
 * which the solvers read from the settings (set for the try, then put back).
 */
static void try_again(ik_chain *c, ik_solver solver, ik_result *out)
{
    int iterations = c->settings.iterations, budget = ik_iteration_budget(iterations);
    int used = out->iterations, k, best_is_last = 1;
    ik_result best = *out, r;
    keep_best(c);
    for (k = 0; k < TRIES && used < budget && !best.reached; k++) {
        solve s;
        try_pose(c, k);
        c->settings.iterations = budget - used;
        way_in(c, solver, &s);
        if (s.run) run_solver(c, &s);
        way_out(c, &s, &r);
        c->settings.iterations = iterations;
        used += r.iterations;
        best_is_last = r.reached || miss(c, &r) < 0.5 * miss(c, &best);
        if (best_is_last) {
            best = r;
            keep_best(c);
        }
    }
    if (!best_is_last) put_back_best(c);
    c->track_have = 0; /* the pose came from a try: its start is no motion to carry on */
    *out = best;
    out->iterations = used;
}

/* ---- the entry points ---- */

/* Whether solver can solve chain c with its goals as they are. */
static ik_status check_solver(const ik_chain *c, ik_solver solver)
{
    int bones = SOLVERS[solver].bones;
    if (bones > 0 && c->n != bones + (c->has_orientation ? 1 : 0)) return IK_ERR_NOT_TWO_BONE;
    return IK_OK;
}

/* The checks of a solve of c towards target (NULL: the kept goal); nothing changes. */
static ik_status check_solve(const ik_chain *c, ik_solver solver, const ik_real *target)
{
    if (target) {
        ik_status st = c->tip_parent ? IK_ERR_HELD : ik_check_coords(target, c->dim);
        if (st != IK_OK) return st;
    } else if (!c->has_target) {
        return IK_ERR_NO_TARGET;
    }
    return check_solver(c, solver);
}

/*
 * Whether the lean solve of solver takes c: a 3D chain of its bones with nothing around the
 * solver (no limits, no orientation goal, mix 1, no max_turn, no stretch) at its own
 * lengths. Way in and way out then have nothing to do but soften the goal, keep it and
 * report.
 */
static int lean(const ik_chain *c, const solver_desc *desc)
{
    const ik_settings *s = &c->settings;
    return desc->lean && c->dim == 3 && c->n == desc->lean_bones && !c->limited && !c->has_orientation &&
           s->mix == 1 && s->max_turn == INFINITY && !s->stretch && c->scale == 1;
}

static void solve_lean(ik_chain *c, const solver_desc *desc, ik_result *out)
{
    ik_vec3 aim = c->target;
    ik_chain_settle(c);
    ik_chain_fk(c);
    c->kicked = 0;
    c->track_have = 0; /* not a tracked solve (joint_space.c, predict) */
    if (!desc->aims && c->settings.softness > 0) soften(c, &aim, ik_chain_reach_to(c, c->n, NULL));
    if (desc->lean(c, aim, out)) ik_chain_changed(c);
}

static ik_status solve_with(ik_chain *c, ik_solver solver, const ik_real *target, ik_result *out)
{
    solve s;
    ik_real before = 0;
    int tracking = 0, iterations, may;
    ik_status st = check_solve(c, solver, target);
    if (st != IK_OK) return st;
    if (target) ik_chain_keep_target(c, target); /* checked above */
    else ik_chain_read_hold(c);
    ik_chain_follow(c);
    if (lean(c, &SOLVERS[solver])) {
        solve_lean(c, &SOLVERS[solver], out);
        return IK_OK;
    }
    /* Whether other tries may follow, asked once: the three steps of the tries (the miss
     * before, the first start's budget, whether to try again) are taken only then. */
    may = may_try(c, solver);
    if (may) before = miss_before(c, &tracking);
    iterations = c->settings.iterations;
    if (may) c->settings.iterations = first_budget(c, tracking); /* read back by the solvers */
    way_in(c, solver, &s);
    if (s.run) run_solver(c, &s);
    way_out(c, &s, out);
    c->settings.iterations = iterations;
    if (may && tries_wanted(c, out, before, tracking)) try_again(c, solver, out);
    return IK_OK;
}

ik_status ik_chain_solve(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, c->settings.solver, target, out);
}

ik_status ik_chain_solve_fabrik(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_FABRIK, target, out);
}

ik_status ik_chain_solve_ccd(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_CCD, target, out);
}

ik_status ik_chain_solve_relax(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_RELAX, target, out);
}

ik_status ik_chain_solve_two_bone(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_TWO_BONE, target, out);
}

ik_status ik_chain_solve_aim(ik_chain *c, const ik_real *target, ik_result *out)
{
    return solve_with(c, IK_SOLVER_AIM, target, out);
}

/* ---- many chains ---- */

/* Whether the batch may take c: FABRIK with nothing around it but the plain passes. */
static int batchable(const ik_chain *c)
{
    const ik_settings *s = &c->settings;
    return SOLVERS[s->solver].batches && !c->limited && !c->has_orientation && s->mix == 1 &&
           s->max_turn == INFINITY;
}

typedef struct batch {
    int count;
    ik_chain *chain[IK_BATCH];
    int index[IK_BATCH];
    solve s[IK_BATCH];
    ik_vec3 aim[IK_BATCH];
    int iterations[IK_BATCH];
    ik_real distance[IK_BATCH];
} batch;

/* Whether c is in the batch, or hangs below a chain that is. */
static int depends(const ik_chain *c)
{
    for (; c; c = c->parent)
        if (c->batched) return 1;
    return 0;
}

static int flush(batch *b, ik_result *results, ik_result *scratch)
{
    int k, reached = 0;
    if (b->count == 0) return 0;
    for (k = 0; k < b->count; k++) b->distance[k] = b->s[k].distance;
    ik_fabrik_batch(b->chain, b->aim, b->count, b->iterations, b->distance);
    for (k = 0; k < b->count; k++) {
        ik_result *r = results ? &results[b->index[k]] : scratch;
        b->chain[k]->batched = 0;
        b->s[k].iterations = b->iterations[k];
        b->s[k].distance = b->distance[k];
        way_out(b->chain[k], &b->s[k], r);
        reached += r->reached;
    }
    b->count = 0;
    return reached;
}

ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, ik_result *results, int *failed)
{
    int k, reached = 0, dim = count > 0 ? chains[0]->dim : 2;
    ik_result scratch;
    batch b;
    for (k = 0; k < count; k++) {
        const ik_chain *c = chains[k];
        ik_status st = c->dim != dim ? IK_ERR_DIMENSION
                                     : check_solve(c, c->settings.solver,
                                                   targets ? targets + (size_t)k * (size_t)dim : NULL);
        if (st != IK_OK) {
            if (failed) *failed = k;
            return st;
        }
    }
    b.count = 0;
    for (k = 0; k < count; k++) {
        ik_chain *c = chains[k];
        ik_result *r = results ? &results[k] : &scratch;
        solve *s = &b.s[b.count];
        if (!batchable(c)) {
            reached += flush(&b, results, &scratch);
            solve_with(c, c->settings.solver, targets ? targets + (size_t)k * (size_t)dim : NULL, r);
            reached += r->reached;
            continue;
        }
        /* In the array's order: a chain waits for its parents (and itself) in the batch, a
           held one for the chain holding its tip. */
        if (depends(c) || (targets == NULL && c->tip_parent && depends(c->tip_parent))) {
            reached += flush(&b, results, &scratch);
            s = &b.s[0];
        }
        if (targets) ik_chain_keep_target(c, targets + (size_t)k * (size_t)dim); /* checked first */
        else ik_chain_read_hold(c);
        ik_chain_follow(c);
        way_in(c, c->settings.solver, s);
        if (!s->run) {
            way_out(c, s, r);
            reached += r->reached;
            continue;
        }
        b.chain[b.count] = c;
        c->batched = 1;
        b.index[b.count] = k;
        b.aim[b.count] = s->aim;
        if (++b.count == IK_BATCH) reached += flush(&b, results, &scratch);
    }
    reached += flush(&b, results, &scratch);
    if (reached_count) *reached_count = reached;
    return IK_OK;
}

/* ---- src/rig.c ---- */
/*
 * rig.c - several chains, attached to each other as one tree, solved together so every
 * goal in it is reached: the multi-effector solves. This file keeps the tree (the rig's
 * block, its checks, what each solve sets up) and runs a solve in its order: the rig
 * solver's passes on the tree's points (rig_fabrik.c: FABRIK; rig_relax.c: relaxation),
 * the bones posed from them, then the stages on the bones' rotations (rig_joint.c: the
 * joint-space stage, or the tree sweeps), then each limb's own finish. A goal set that
 * moved little since the last solve (tracking) goes to the joint-space stage at once.
 *
 * Both solvers keep the rig's joints as working points and pose the bones from them at the
 * end, in order from the root (each bone within its limits, its twist kept as a single
 * chain's solve keeps it); orientation goals, then each chain's max_turn and limits, have
 * the last word. The root's base never moves: a root that hangs on a chain outside the rig
 * is held where that chain puts it. Chain settings a rig does not use: mix and softness
 * (a rig's goals are met exactly, together; a blend or a softened goal of one chain would
 * move the joints its siblings share), stretch, and each chain's own solver and iterations
 * (the rig's settings say them).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

ik_rig_settings ik_rig_default_settings(void)
{
    ik_rig_settings s;
    s.solver = IK_SOLVER_FABRIK;
    s.iterations = IK_DEFAULT_ITERATIONS;
    s.tolerance = IK_DEFAULT_TOLERANCE;
    s.angle_tolerance = IK_DEFAULT_ANGLE_TOLERANCE;
    return s;
}

/* ---- the block ---- */

#define ALIGN16(x) (((x) + 15u) / 16u * 16u)

static size_t rig_size(int count, size_t joints)
{
    size_t size = ALIGN16(sizeof(struct ik_rig));
    if (count < 1 || joints > (SIZE_MAX / 4) / (17 * sizeof(ik_real) + sizeof(ik_vec3) + sizeof(int) + 1))
        return 0;
    size += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    size += ALIGN16(joints * sizeof(int));
    size += ALIGN16(joints * 16 * sizeof(ik_real));
    size += ALIGN16(joints);
    size += ALIGN16((size_t)count * sizeof(rig_node));
    size += ALIGN16((7 * (size_t)count + 1) * sizeof(int));
    return size;
}

static size_t total_joints(int count, ik_chain *const *chains)
{
    size_t joints = 0;
    int k;
    for (k = 0; k < count; k++) {
        if ((size_t)chains[k]->n + 1 > SIZE_MAX / 4 - joints) return SIZE_MAX;
        joints += (size_t)chains[k]->n + 1;
    }
    return joints;
}

size_t ik_rig_size(int count, ik_chain *const *chains)
{
    if (count < 1 || count > IK_MAX_BONES) return 0;
    return rig_size(count, total_joints(count, chains));
}

/*
 * Sorting the rig's chains, in its own block, so that making a rig costs O(count log count)
 * (finding each parent among the chains by comparing with every one was quadratic: 40,000
 * chains took seconds). A heap sort: no recursion, no memory of its own.
 */
typedef struct sorting {
    ik_chain *const *chains;
    const rig_node *node; /* BY_JOINT: the nodes' parent_joint */
    int by_joint;         /* 0: by address; 1: by parent joint, highest first */
} sorting;

/* Whether index a sorts before index b (equal keys: the lower index first). */
static int before(const sorting *by, int a, int b)
{
    if (by->by_joint) {
        int ja = by->node[a].parent_joint, jb = by->node[b].parent_joint;
        if (ja != jb) return ja > jb;
    } else {
        uintptr_t pa = (uintptr_t)by->chains[a], pb = (uintptr_t)by->chains[b];
        if (pa != pb) return pa < pb;
    }
    return a < b;
}

static void sift_down(const sorting *by, int *v, int at, int count)
{
    for (;;) {
        int child = 2 * at + 1, t;
        if (child >= count) return;
        if (child + 1 < count && before(by, v[child], v[child + 1])) child++;
        if (!before(by, v[at], v[child])) return;
        t = v[at], v[at] = v[child], v[child] = t;
        at = child;
    }
}

static void sort_indices(const sorting *by, int *v, int count)
{
    int k, t;
    for (k = count / 2 - 1; k >= 0; k--) sift_down(by, v, k, count);
    for (k = count - 1; k > 0; k--) {
        t = v[0], v[0] = v[k], v[k] = t;
        sift_down(by, v, 0, k);
    }
}

/* The lowest index of chain c among the chains (sorted: their indices by address), or -1. */
static int find(ik_chain *const *chains, const int *sorted, int count, const ik_chain *c)
{
    int lo = 0, hi = count; /* the first sorted position whose chain is not below c */
    if (c == NULL) return -1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)chains[sorted[mid]] < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && chains[sorted[lo]] == c ? sorted[lo] : -1;
}

/* The node of chain c in the rig (by rig->sorted), or -1. */
static int node_of(const ik_rig *rig, const ik_chain *c)
{
    int lo = 0, hi = rig->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)rig->node[rig->sorted[mid]].chain < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    return lo < rig->count && rig->node[rig->sorted[lo]].chain == c ? rig->sorted[lo] : -1;
}

/*
 * Whether root node k hangs, through chains outside the rig, below a chain of the rig: its
 * base would move when the rig moves (a rig with several roots; O(depth log count)).
 */
static int root_carried(const ik_rig *rig, int k)
{
    const ik_chain *x;
    for (x = rig->node[k].chain->parent; x; x = x->parent)
        if (node_of(rig, x) >= 0) return 1;
    return 0;
}

/* The representative of k's set (union-find in set[], paths halved on the way). */
static int set_of(int *set, int k)
{
    while (set[k] != k) set[k] = set[set[k]], k = set[k];
    return k;
}

/*
 * The tree's checks, in the chains' order, the first failure to blame: one dimension, no
 * chain twice, one root, or several that tip holds join into one structure (every chain
 * then reaches every other through attachments and holds). Sets each node's parent and
 * hold; sorted, twice and set are scratch [count].
 */
static ik_status check_tree(ik_rig *rig, ik_chain *const *chains, int count, int *sorted,
                            int *twice, int *set, int *culprit)
{
    sorting by;
    int k, roots = 0;
    by.chains = chains, by.node = NULL, by.by_joint = 0;
    for (k = 0; k < count; k++) sorted[k] = k, twice[k] = 0;
    sort_indices(&by, sorted, count);
    for (k = 1; k < count; k++) /* a chain's later places are the repeats */
        if (chains[sorted[k]] == chains[sorted[k - 1]]) twice[sorted[k]] = 1;
    for (k = 0; k < count; k++) {
        *culprit = k;
        if (chains[k]->dim != chains[0]->dim) return IK_ERR_DIMENSION;
        if (twice[k]) return IK_ERR_NOT_A_TREE;
        rig->node[k].parent = find(chains, sorted, count, chains[k]->parent);
        rig->node[k].hold = find(chains, sorted, count, chains[k]->tip_parent);
        roots += rig->node[k].parent < 0;
    }
    /* Attachment never makes a cycle, so one root with every other parent inside is a tree;
       several must be joined by the holds: the structure is one piece. */
    *culprit = -1;
    if (roots == 1) return IK_OK;
    for (k = 0; k < count; k++) set[k] = k;
    for (k = 0; k < count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->parent >= 0) set[set_of(set, k)] = set_of(set, nd->parent);
        if (nd->hold >= 0) set[set_of(set, k)] = set_of(set, nd->hold);
    }
    for (k = 1; k < count; k++)
        if (set_of(set, k) != set_of(set, 0)) {
            *culprit = k;
            return IK_ERR_NOT_A_TREE;
        }
    /* Every root's base stays: none may hang below the rig through chains outside it. */
    for (k = 0; k < count; k++) rig->node[k].chain = chains[k];
    for (k = 0; k < count; k++)
        if (rig->node[k].parent < 0 && root_carried(rig, k)) {
            *culprit = k;
            return IK_ERR_NOT_A_TREE;
        }
    return IK_OK;
}

ik_status ik_rig_init(void *memory, size_t size, ik_chain *const *chains, int count,
                      ik_rig **out, int *culprit)
{
    ik_rig *rig = (ik_rig *)memory;
    unsigned char *p;
    ik_real *beyond;
    ik_vec3 *relaxed;
    int *above;
    ik_real *saved;
    signed char *mode;
    size_t joints;
    int k, j, done, next;
    sorting by;
    ik_status st;
    int scratch;
    if (culprit == NULL) culprit = &scratch;
    *culprit = -1;
    if (count < 1) return IK_ERR_COUNT;
    if (count > IK_MAX_BONES) return IK_ERR_TOO_LARGE;
    /* The tree is checked in the block: without room for the rig, nothing else is said. */
    joints = total_joints(count, chains);
    if (memory == NULL || rig_size(count, joints) == 0 || size < rig_size(count, joints))
        return IK_ERR_TOO_LARGE;

    memset(rig, 0, rig_size(count, joints));
    rig->count = count;
    rig->dim = chains[0]->dim;
    rig->settings = ik_rig_default_settings();
    p = (unsigned char *)rig + ALIGN16(sizeof(struct ik_rig));
    beyond = (ik_real *)p;
    relaxed = (ik_vec3 *)(beyond + joints);
    p += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    above = (int *)p;
    p += ALIGN16(joints * sizeof(int));
    saved = (ik_real *)p;
    p += ALIGN16(joints * 16 * sizeof(ik_real));
    mode = (signed char *)p;
    p += ALIGN16(joints);
    rig->node = (rig_node *)p;
    p += ALIGN16((size_t)count * sizeof(rig_node));
    rig->order = (int *)p;
    rig->kid = rig->order + count;
    rig->dfs = rig->kid + count;
    rig->goals = rig->dfs + count;
    rig->goal_at = rig->goals + count;
    rig->loops = rig->goal_at + count + 1;
    rig->sorted = rig->loops + count;

    st = check_tree(rig, chains, count, rig->sorted, rig->kid, rig->goals, culprit);
    if (st != IK_OK) return st;
    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        nd->chain = chains[k];
        nd->parent_chain = chains[k]->parent;
        nd->links = chains[k]->links;
        nd->parent_joint = chains[k]->parent_joint;
        nd->tip_parent = chains[k]->tip_parent;
        nd->tip_joint = chains[k]->tip_joint;
        nd->holds = chains[k]->holds;
        if (nd->hold >= 0) rig->loops[rig->loop_count++] = k;
        nd->beyond = beyond, beyond += chains[k]->n + 1;
        nd->relaxed = relaxed, relaxed += chains[k]->n + 1;
        nd->above = above, above += chains[k]->n + 1;
        nd->saved = saved, saved += 16 * ((size_t)chains[k]->n + 1);
        nd->mode = mode, mode += chains[k]->n + 1;
        if (nd->parent >= 0) rig->node[nd->parent].kids++;
    }
    /* Children grouped by parent (counted, then placed), each group by joint, highest first. */
    for (k = 0, next = 0; k < count; k++) {
        rig->node[k].first = next;
        next += rig->node[k].kids;
        rig->node[k].kids = 0;
    }
    for (k = 0; k < count; k++) {
        rig_node *parent = rig->node[k].parent >= 0 ? &rig->node[rig->node[k].parent] : NULL;
        if (parent) rig->kid[parent->first + parent->kids++] = k;
    }
    by.chains = chains, by.node = rig->node, by.by_joint = 1;
    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        int at = 0;
        sort_indices(&by, rig->kid + nd->first, nd->kids);
        for (j = nd->chain->n; j >= 0; j--) {
            while (at < nd->kids && rig->node[rig->kid[nd->first + at]].parent_joint > j) at++;
            nd->above[j] = at;
        }
    }
    /* Parents before children: the roots, then each placed node's children, breadth first. */
    for (k = 0, next = 0; k < count; k++)
        if (rig->node[k].parent < 0) rig->order[next++] = k;
    for (done = 0; done < next; done++) {
        const rig_node *nd = &rig->node[rig->order[done]];
        for (j = 0; j < nd->kids; j++) rig->order[next++] = rig->kid[nd->first + j];
    }
    /* Depth first, children in their order: subtree sizes from the leaves in, then places. */
    for (k = count - 1; k >= 0; k--) {
        rig_node *nd = &rig->node[rig->order[k]];
        nd->size = 1;
        for (j = 0; j < nd->kids; j++) nd->size += rig->node[rig->kid[nd->first + j]].size;
    }
    for (k = 0, next = 0; k < count && rig->node[rig->order[k]].parent < 0; k++) /* each root's run */
        rig->node[rig->order[k]].pre = next, next += rig->node[rig->order[k]].size;
    for (k = 0; k < count; k++) {
        const rig_node *nd = &rig->node[rig->order[k]];
        next = nd->pre + 1;
        rig->dfs[nd->pre] = rig->order[k];
        for (j = 0; j < nd->kids; j++) {
            rig->node[rig->kid[nd->first + j]].pre = next;
            next += rig->node[rig->kid[nd->first + j]].size;
        }
    }
    *out = rig;
    return IK_OK;
}

ik_rig *ik_rig_create(ik_chain *const *chains, int count, ik_status *status, int *culprit)
{
    ik_rig *rig = NULL;
    size_t size = ik_rig_size(count, chains);
    void *memory = size ? malloc(size) : NULL;
    ik_status st = size && memory == NULL ? IK_ERR_NO_MEMORY
                                          : ik_rig_init(memory, size, chains, count, &rig, culprit);
    if (st != IK_OK) {
        free(memory);
        rig = NULL;
    }
    if (status) *status = st;
    return rig;
}

void ik_rig_destroy(ik_rig *rig) { free(rig); }

int ik_rig_chain_count(const ik_rig *rig) { return rig->count; }
int ik_rig_count(const ik_rig *rig) { return rig->count; }

ik_chain *ik_rig_chain(const ik_rig *rig, int k)
{
    return k >= 0 && k < rig->count ? rig->node[k].chain : NULL;
}

const ik_rig_settings *ik_rig_settings_of(const ik_rig *rig) { return &rig->settings; }

ik_status ik_rig_configure(ik_rig *rig, const ik_rig_settings *s)
{
    if (s->solver != IK_SOLVER_FABRIK && s->solver != IK_SOLVER_RELAX) return IK_ERR_RIG_SOLVER;
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return IK_ERR_TOLERANCE;
    if (!(isfinite(s->angle_tolerance) && s->angle_tolerance >= 0)) return IK_ERR_ANGLE_TOLERANCE;
    rig->settings = *s;
    rig->settings.tolerance += 0.0;
    rig->settings.angle_tolerance += 0.0;
    return IK_OK;
}

/* ---- a solve's set-up ---- */

static ik_vec3 goal_of(const rig_node *nd);

/*
 * Each chain's goal, and which joints the passes move: children first, so each chain sees
 * its children's subtrees. Returns the number of goals.
 */
static int set_up(ik_rig *rig)
{
    int o, j, k, goals = 0;
    ik_real largest = 0, longest, kids;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->chain->has_target) {
            goals++;
            if (nd->chain->settings.effector_weight > largest) largest = nd->chain->settings.effector_weight;
        }
    }
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int oriented = c->has_target && c->has_orientation;
        nd->moves = -1;
        nd->last = oriented ? c->n - 1 : c->n;
        nd->end = c->has_target ? nd->last : -1;
        nd->top = nd->end;
        /* In units of the largest, so weights near 1e308, and their sums, stay finite. */
        nd->weight = !c->has_target ? 0 : largest > 0 ? c->settings.effector_weight / largest : 1;
        if (c->has_target) nd->goal = goal_of(nd);
        nd->reach = ik_chain_reach_to(c, nd->end, &longest);
        nd->inner = 2 * longest - nd->reach;
        nd->subtree = nd->weight;
        /* From the tip down, the children's goals summed as their joints are passed (the
           children come highest joint first): O(n + kids). */
        for (j = c->n, k = 0, kids = 0; j >= 0; j--) {
            for (; k < nd->kids && rig->node[rig->kid[nd->first + k]].parent_joint > j; k++) {
                int kid = rig->kid[nd->first + k], at = rig->node[kid].parent_joint;
                if (!pulls(rig, nd, kid)) continue;
                if (at > nd->top) nd->top = at;
                kids += rig->node[kid].subtree;
                nd->subtree += rig->node[kid].subtree;
            }
            nd->beyond[j] = (nd->end > j ? nd->weight : 0) + kids;
        }
        for (; k < nd->kids; k++) { /* those on joint 0: beyond no joint */
            int kid = rig->kid[nd->first + k];
            if (!pulls(rig, nd, kid)) continue;
            if (nd->top < 0) nd->top = 0;
            nd->subtree += rig->node[kid].subtree;
        }
    }
    /* What the joint-space stage turns: a loop's held point bends its chain up to it, and
       every chain on the way to a root (children first, so a parent sees its children's). */
    for (o = 0; o < rig->loop_count; o++) {
        const rig_node *nd = &rig->node[rig->loops[o]];
        rig_node *held = &rig->node[nd->hold];
        if (nd->chain->tip_joint > held->moves) held->moves = nd->chain->tip_joint;
    }
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->top > nd->moves) nd->moves = nd->top;
        if (nd->moves >= 0 && nd->parent >= 0 && nd->parent_joint > rig->node[nd->parent].moves)
            rig->node[nd->parent].moves = nd->parent_joint;
    }
    return goals;
}

/* Where node nd's goal puts joint end: the target, or behind it with an orientation goal. */
static ik_vec3 goal_of(const rig_node *nd)
{
    const ik_chain *c = nd->chain;
    if (nd->last < c->n) return ik_v3_sub(c->target, ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1]));
    return c->target;
}

/*
 * The point held at joint j of c as the passes' points put it: the joint, and the offset
 * turned with the bone that ends there (in 3D by the least turn from its direction at the
 * solve's start, so its twist as it was). The stages on the bones read it exactly.
 */
static ik_vec3 held_on_points(const ik_chain *c, int j, ik_vec3 offset)
{
    ik_vec3 at = joint_at(c, j), d;
    if ((offset.x == 0 && offset.y == 0 && offset.z == 0) || j == 0) return ik_hold_point(c, j, offset);
    d = ik_v3_sub(at, joint_at(c, j - 1));
    if (c->dim == 2) {
        ik_real size = sqrt(d.x * d.x + d.y * d.y);
        ik_vec2 u = size > 0 ? ik_v2(d.x / size, d.y / size) : ik_dir2(c, j - 1);
        ik_vec2 v = ik_v2_rotate(ik_v2(offset.x, offset.y), u);
        return ik_v3(at.x + v.x, at.y + v.y, 0);
    } else {
        ik_quat w = c->wrot[j - 1];
        ik_vec3 u = ik_v3_normalize_or(d, ik_q_x_axis(w));
        return ik_v3_add(at, ik_q_rotate(ik_q_mul(ik_q_from_to(ik_q_x_axis(w), u), w), offset));
    }
}

void rig_read_loops(ik_rig *rig, int points)
{
    int k;
    for (k = 0; k < rig->loop_count; k++) {
        rig_node *nd = &rig->node[rig->loops[k]];
        ik_chain *c = nd->chain;
        const ik_chain *held = rig->node[nd->hold].chain;
        c->target = points ? held_on_points(held, c->tip_joint, c->tip_offset)
                           : ik_hold_point(held, c->tip_joint, c->tip_offset);
        if (nd->end >= 0) nd->goal = goal_of(nd);
    }
}

/* After a forward pass: an oriented chain's tip along its goal's direction. */
void rig_place_tip(rig_node *nd)
{
    ik_chain *c = nd->chain;
    if (nd->last < c->n && nd->end >= 0)
        set_joint(c, c->n, ik_v3_add(joint_at(c, c->n - 1), ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1])));
}

/* The largest distance of a goal's joint from its goal now. */
ik_real rig_worst(const ik_rig *rig)
{
    ik_real largest = 0;
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end >= 0) {
            ik_real d = ik_v3_len(ik_v3_sub(nd->chain->target, joint_at(nd->chain, nd->chain->n)));
            if (d > largest) largest = d;
        }
    }
    return largest;
}

/* ---- the way out ---- */

static ik_real goal_distance(const rig_node *nd)
{
    return ik_v3_len(ik_v3_sub(nd->goal, joint_at(nd->chain, nd->end)));
}

/*
 * The last word on chain nd's pose: its orientation goal, max_turn, then every bone's limits,
 * those the passes did not pose too (a chain only carried by its parent, or the bones past
 * its goal): a solve leaves none outside.
 */
void rig_finish_chain(rig_node *nd)
{
    ik_chain *c = nd->chain;
    if (nd->end >= 0 && c->has_orientation) ik_orient_tip(c);
    if (c->settings.max_turn < INFINITY) ik_hold_turns(c, c->settings.max_turn);
    ik_chain_clamp_limits(c);
    ik_chain_fk(c);
}

/* Chain nd posed from its joints (bones 0..hi-1), then finished. */
static void pose_chain(rig_node *nd)
{
    ik_chain *c = nd->chain;
    int hi = nd->top < nd->last ? nd->top : nd->last;
    c->pose_behind = 0; /* the joints were working points: the pose comes from them now */
    if (hi > 0) ik_pose_points(c, c->joint, 0, hi);
    else c->stale_from = 0;
    ik_chain_fk(c);
    rig_finish_chain(nd);
}

/*
 * Poses every chain from the rig's joints, parents first: the bones the passes moved along
 * their new segments (within limits), the rest carried; then orientation goals, max_turn
 * and limits. Each chain is then current, its children's bases follow from it. A parent
 * that max_turn or a limit held back moves the limbs hanging on it off the points the
 * passes gave them: such a limb that now misses its goal is solved again from where it
 * hangs (limb_forward), then posed.
 */
static void pose_all(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_vec3 was = joint_at(c, 0);
        int moved = 0;
        if (nd->parent >= 0) {
            ik_vec3 now;
            ik_chain_take_base(c);
            now = joint_at(c, 0);
            moved = now.x != was.x || now.y != was.y || now.z != was.z;
        }
        pose_chain(nd);
        if (moved && is_limb(nd) && goal_distance(nd) > rig->settings.tolerance) {
            rig_limb_forward(rig, nd);
            pose_chain(nd);
        }
        ik_chain_changed(c);
        if (nd->parent >= 0) c->parent_seen = c->parent->version;
    }
    rig_read_loops(rig, 0);
}

void rig_keep_pose(rig_node *nd, int bones, int back, int which)
{
    ik_chain *c = nd->chain;
    ik_real *v = nd->saved + (size_t)which * 4 * ((size_t)c->n + 1);
    int i;
    for (i = 0; i < bones; i++, v += 4) {
        if (c->dim == 2) {
            if (back) c->turn[i] = ik_v2(v[0], v[1]), c->angle[i] = v[2];
            else v[0] = c->turn[i].x, v[1] = c->turn[i].y, v[2] = c->angle[i];
        } else if (back) {
            c->rot[i] = ik_q(v[0], v[1], v[2], v[3]);
        } else {
            v[0] = c->rot[i].w, v[1] = c->rot[i].x, v[2] = c->rot[i].y, v[3] = c->rot[i].z;
        }
    }
    if (back && bones > 0) ik_chain_mark_stale(c, 0);
}

/*
 * Limbs with limits that the passes left short of their goals: joint limits make minima of
 * their own, which a single chain's solve leaves by CCD sweeps within the limits
 * (ik_escape_finish, to the chain's own tolerance); a limb does the same from where it hangs,
 * with the iterations the rig has left. The sweeps' kicks turn a limb far, and may leave it
 * farther from its goal than it was: then its pose from before them stands (tracking, a
 * humanoid's neck kicked 0.25 rad a frame, its miss 0.01 -> 0.37, and back the next frame;
 * bench/limits.lua's rigs tracking 20 animations each, humanoid 2D / 3D, quadruped 2D / 3D,
 * the frames where a joint turned more than 0.2 rad: 1.26 / 1.42 / 0.49 / 0.65% -> 0.60 /
 * 1.00 / 0.33 / 0.37%, at 1.0 / 0.2 / 0.2 / 0.1% fewer frames met, 98.3 -> 97.3% in the 2D
 * humanoid: a kick that left a limb farther sometimes put it where the next frames reached).
 * Returns the most sweeps a limb took.
 */
static int finish_limbs(ik_rig *rig, int iterations)
{
    ik_real before;
    int o, most = 0;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int sweeps;
        if (!is_limb(nd) || !c->limited || goal_distance(nd) <= rig->settings.tolerance) continue;
        before = goal_distance(nd);
        rig_keep_pose(nd, c->n, 0, 0);
        sweeps = ik_escape_finish(c, nd->goal, nd->end, iterations, 0);
        if (sweeps > most) most = sweeps;
        rig_finish_chain(nd);
        if (!(goal_distance(nd) < before)) { /* farther: the pose before (finished) stands */
            rig_keep_pose(nd, c->n, 1, 0);
            ik_chain_fk(c);
        }
        ik_chain_changed(c);
    }
    return most;
}

/* ---- the goals, and the chains brought up to date ---- */

/* Lists the nodes with a goal in dfs order (after set_up). */
static void index_goals(ik_rig *rig)
{
    int p;
    rig->goal_count = 0;
    for (p = 0; p < rig->count; p++) {
        rig->goal_at[p] = rig->goal_count;
        if (rig->node[rig->dfs[p]].end >= 0) rig->goals[rig->goal_count++] = rig->dfs[p];
    }
    rig->goal_at[rig->count] = rig->goal_count;
}

/* Every chain's world data from its local pose, parents first. */
void rig_fk(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_chain_follow_parent(c);
        ik_chain_fk(c);
        ik_chain_changed(c);
        if (nd->end >= 0) nd->eff = joint_at(c, nd->end);
    }
    rig_read_loops(rig, 0);
}

/* Every chain finished (orientation goals, max_turn, limits), parents first. */
void rig_finish_all(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain_follow_parent(nd->chain);
        rig_finish_chain(nd);
        ik_chain_changed(nd->chain);
    }
    rig_read_loops(rig, 0);
}

/* ---- the solve ---- */

/*
 * How a solve shares its iterations between the passes and the joint-space stage (when the
 * goals fit in its rows). The passes move far in few iterations but creep near the goals,
 * and with limits they park sub-bases where the limbs cannot reach; joint space converges
 * fast near the goals and takes the limits as bounds. So the passes run while an iteration
 * brings the goals in by more than a tenth (DLS_CREEP) and joint space takes over; goals
 * within DLS_NEAR mean bone lengths of their joints (a rig tracking moving goals from last
 * frame's pose) go to joint space at once, which moves the pose smoothly. Measured
 * (bench/limits.lua, 200 goal sets from random poses, from straight, 100 iterations; then
 * tracking at 10 iterations a frame), humanoid and quadruped, 2D and 3D, FABRIK, before and
 * after: with limits 22.5, 5.0, 32.0, 27.5% reached, then 100, 97.5, 100, 97.0%; without
 * limits 87.5, 98.5, 98.5, 100%, then 100% each; tracking without limits 37, 15, 77.5, 67%
 * of frames with every goal met, then 100% each.
 */
#define DLS_CREEP 0.9
#define DLS_NEAR 1.0

/*
 * Whether every goal lies within the reach of the bones from the root's base to it (only
 * then do the passes hand over when they creep: a goal beyond reach is met by straightening,
 * which the passes do and joint space, on a long chain, does slowly). O(bones on the way)
 * per goal; called with at most DLS_ROWS goals.
 */
static int within_reach(const ik_rig *rig)
{
    int k, x;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real reach;
        if (nd->end < 0) continue;
        reach = nd->reach;
        for (x = k; rig->node[x].parent >= 0; x = rig->node[x].parent)
            reach += ik_chain_reach_to(rig->node[rig->node[x].parent].chain, rig->node[x].parent_joint, NULL);
        if (!(ik_v3_len(ik_v3_sub(nd->goal, rig->node[x].chain->base)) <= reach)) return 0;
    }
    return 1;
}

/*
 * The tree as it was made: every chain on the same parent and joint (an attachment undone
 * and made again as it was is the same tree). A parent inside the rig outlives it, so its
 * address names it; the chain outside that the root may hang on does not: it may have
 * been freed and a new chain made at its address. So a root that hangs on a chain outside
 * after any attach or detach since is a change, whatever the address.
 */
static ik_status check_unchanged(const ik_rig *rig)
{
    int k, roots = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_chain *c = nd->chain;
        if (c->parent != nd->parent_chain || c->parent_joint != nd->parent_joint ||
            (nd->parent < 0 && c->parent && c->links != nd->links))
            return IK_ERR_RIG_CHANGED;
        if (c->tip_parent != nd->tip_parent || c->tip_joint != nd->tip_joint ||
            (nd->hold < 0 && c->tip_parent && c->holds != nd->holds))
            return IK_ERR_RIG_CHANGED;
        roots += nd->parent < 0;
    }
    /* Several roots: a chain outside may have been attached below the rig since. */
    for (k = 0; k < rig->count && roots > 1; k++) {
        if (rig->node[k].parent < 0 && root_carried(rig, k)) return IK_ERR_RIG_CHANGED;
    }
    return IK_OK;
}

/*
 * A rig solver: its passes on the tree's points (an iteration), what they need first, and
 * how the over-relaxation at sub-bases follows an iteration's gain. Adding one is a file of
 * its own (rig_fabrik.c, rig_relax.c) and a row here.
 */
typedef struct rig_solver {
    void (*start)(ik_rig *rig); /* or NULL */
    void (*iteration)(ik_rig *rig);
    ik_real (*omega)(ik_real omega, ik_real before, ik_real distance);
} rig_solver;

static const rig_solver FABRIK = {NULL, rig_fabrik_iteration, rig_fabrik_omega};
static const rig_solver RELAX = {rig_relax_start, rig_relax_iteration, rig_relax_omega};

static const rig_solver *solver_of(const ik_rig *rig)
{
    return rig->settings.solver == IK_SOLVER_RELAX ? &RELAX : &FABRIK;
}

/*
 * The solver's passes on the goals' points, at most `iterations`; with hand_over they stop
 * where they creep (DLS_CREEP). Returns the iterations used.
 */
static int passes(ik_rig *rig, int iterations, ik_progress *progress, int hand_over)
{
    const rig_solver *solver = solver_of(rig);
    ik_real distance = rig_worst(rig);
    int iter = 0;
    if (solver->start) solver->start(rig);
    while (distance > rig->settings.tolerance && iter < iterations) {
        ik_real before = distance;
        solver->iteration(rig);
        iter++;
        rig_read_loops(rig, 1);
        distance = rig_worst(rig);
        rig->omega = solver->omega(rig->omega, before, distance);
        if (ik_progress_next(rig->node[0].chain, progress, distance) == IK_STOP) break;
        /* Creeping: the passes have done what they do fast, joint space does the rest. */
        if (hand_over && distance > DLS_CREEP * before) break;
    }
    return iter;
}

/*
 * A tracked frame's calm retry. Tracking's stage pushes bounded joints off their bounds
 * and nudges a stalled pose, and a limb's sweeps may kick it (finish_limbs): each gets
 * a rig out of a corner, but sometimes turns a joint far in one frame where a small turn
 * would have met the goals (spec/rig_limits_spec.lua replays such a frame of bench/limits.lua's
 * 2D humanoid: its neck turned 0.648 rad where the steps alone turn none more than 0.2). So
 * a frame whose answer turned a joint more than TRACK_JUMP from where the frame began is
 * tried again from there by the steps alone (RIG_CALM), with the iterations it has left;
 * their answer stands where it meets every goal (as `reached` counts it) and turns no joint
 * more than TRACK_JUMP, else the first answer does; the call stays within its iterations.
 * bench/limits.lua, rigs with limits tracking 20 animations of 600 frames (humanoid 2D / 3D,
 * quadruped 2D / 3D): frames where a joint turned more than 0.2 rad 0.60 / 1.00 / 0.33 /
 * 0.37% -> 0.40 / 0.96 / 0.14 / 0.37%, frames with every goal met 97.3 / 98.0 / 99.4 / 98.9
 * -> 97.8 / 98.0 / 99.3 / 98.9%; with the animations of seeds it was not made on
 * (IK_ANIM_SEED 777, 4242, 2026), in 2D 0.31-0.55% -> 0.13-0.37% of frames over 0.2 rad,
 * every goal met in as many frames or more, or at most 0.1 point fewer (97.3 -> 98.0% at
 * best, 99.1 -> 99.0% at worst); in 3D about as before (the steps alone mostly turn as
 * far); rigs without limits as before.
 */
#define TRACK_JUMP 0.2
#define TRACK_JUMP_COS 0.98006657784124163      /* cos(TRACK_JUMP) */
#define TRACK_JUMP_COS_HALF 0.99500416527802582 /* cos(TRACK_JUMP / 2): a quaternion's w */

/* Whether some bone turned more than TRACK_JUMP from the frame's start (place 2). */
static int jumped(const ik_rig *rig)
{
    int k, i;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_chain *c = nd->chain;
        const ik_real *v = nd->saved + 2 * 4 * ((size_t)c->n + 1);
        for (i = 0; i < c->n; i++, v += 4) {
            if (c->dim == 2) {
                if (!(v[0] * c->turn[i].x + v[1] * c->turn[i].y >= TRACK_JUMP_COS)) return 1;
            } else {
                ik_quat q = c->rot[i];
                if (!(fabs(v[0] * q.w + v[1] * q.x + v[2] * q.y + v[3] * q.z) >= TRACK_JUMP_COS_HALF)) return 1;
            }
        }
    }
    return 0;
}

static void keep_all(ik_rig *rig, int back, int which)
{
    int k;
    for (k = 0; k < rig->count; k++) rig_keep_pose(&rig->node[k], rig->node[k].chain->n, back, which);
    if (back) rig_fk(rig);
}

/* A solve's answer as it stands: the largest tip and orientation errors of the chains with a
   goal, and whether every goal is met (out's iterations untouched). */
static void measure(const ik_rig *rig, ik_result *out)
{
    int k;
    out->distance = 0;
    out->angle_error = 0;
    for (k = 0; k < rig->count; k++) {
        const ik_chain *c = rig->node[k].chain;
        ik_real distance;
        if (!c->has_target) continue;
        distance = ik_tip_distance(c);
        if (distance > out->distance) out->distance = distance;
        if (c->has_orientation) {
            ik_real e = ik_orientation_error(c);
            if (e > out->angle_error) out->angle_error = e;
        }
    }
    out->reached = out->distance <= rig->settings.tolerance && out->angle_error <= rig->settings.angle_tolerance;
}

/* The retry, with `iterations` left; returns the steps it took. */
static int calm_retry(ik_rig *rig, int iterations, ik_real reach, int bones, int m)
{
    ik_result now;
    int steps;
    keep_all(rig, 0, 3);
    keep_all(rig, 1, 2);
    steps = rig_joint_space(rig, iterations, reach, bones, m, RIG_CALM);
    measure(rig, &now);
    if (!now.reached || jumped(rig)) keep_all(rig, 1, 3);
    return steps;
}

ik_status ik_rig_solve(ik_rig *rig, ik_result *out)
{
    const ik_rig_settings *s = &rig->settings;
    ik_progress progress;
    ik_real distance, reach = 0;
    int o, iter = 0, goals = 0, bones = 0, m, near, hand_over;
    int budget = ik_iteration_budget(s->iterations);
    ik_status st = check_unchanged(rig);
    if (st != IK_OK) return st;

    rig->limited = 0;
    for (o = 0; o < rig->count; o++) {
        goals += rig->node[o].chain->has_target;
        rig->limited += rig->node[o].chain->limited > 0;
    }
    /* Every chain current, its base where its parent (or the chain outside) puts it: the root
       follows the chains above it, every other chain its parent, which is current by then. */
    for (o = 0; o < rig->count; o++) {
        ik_chain *c = rig->node[rig->order[o]].chain;
        if (rig->node[rig->order[o]].parent < 0) ik_chain_follow(c);
        else ik_chain_follow_parent(c);
        ik_chain_settle(c);
        ik_chain_fk(c);
        c->kicked = 0;
        if (goals > 0 && c->scale != 1) { /* rigs do not stretch: back to the bones' own lengths */
            c->scale = 1;
            c->stale_from = 0;
            ik_chain_fk(c);
        }
        reach += c->reach;
        bones += c->n;
    }
    /* Each held tip's goal where its held point is now (a chain outside: a fixed goal). */
    for (o = 0; o < rig->count; o++) ik_chain_read_hold(rig->node[o].chain);
    out->iterations = 0;
    out->angle_error = 0;
    if (set_up(rig) == 0) {
        out->reached = 1;
        out->distance = 0;
        return IK_OK;
    }
    index_goals(rig);
    for (o = 0; o < rig->count; o++)
        if (rig->node[o].chain->settings.max_turn < INFINITY) ik_save_pose(rig->node[o].chain);

    for (o = 0; o < rig->count; o++) rig_place_tip(&rig->node[o]);
    distance = rig_worst(rig);
    progress = ik_progress_plain(distance, reach);
    rig->omega = 2;
    m = rig_dls_rows(rig, reach);
    near = m > 0 && distance > s->tolerance && distance < DLS_NEAR * reach / bones;
    hand_over = m > 0 && !near && distance > s->tolerance && within_reach(rig);
    if (near) { /* tracking: joint space from last frame's pose, which moves it smoothly */
        keep_all(rig, 0, 2);
        iter = rig_joint_space(rig, budget, reach, bones, m, RIG_TRACK);
    } else if (rig->loop_count > 0 && hand_over) {
        /* Loops, every goal within reach: joint space at once, where both sides of a loop
           bend together (the passes move only the held chain, towards a point that does
           not come to meet it). */
        iter = rig_joint_space(rig, budget, reach, bones, m, RIG_SOLVE);
    } else {
        iter = passes(rig, budget, &progress, hand_over);
        pose_all(rig);
        /* Measured again: posing within the limits may have moved what the passes placed. */
        if (iter < budget && rig_worst(rig) > s->tolerance) {
            if (m > 0) iter += rig_joint_space(rig, budget - iter, reach, bones, m, RIG_SOLVE);
            else if (rig->limited && rig_dls_in_range(rig, reach)) iter += rig_tree_sweeps(rig, budget - iter, reach);
        }
    }
    if (iter < budget && rig_worst(rig) > s->tolerance) iter += finish_limbs(rig, budget - iter);
    if (near && iter < budget && jumped(rig)) iter += calm_retry(rig, budget - iter, reach, bones, m);
    rig_read_loops(rig, 0); /* where the last word left the held points */

    out->iterations = iter;
    measure(rig, out);
    return IK_OK;
}

/* ---- src/rig_fabrik.c ---- */
/*
 * rig_fabrik.c - FABRIK on a rig: Aristidou and Lasenby, "FABRIK: A fast, iterative solver
 * for the Inverse Kinematics problem" (2011), section 5.2, multiple end effectors. The
 * backward pass runs from every goal towards the root; where branches meet (a sub-base: the
 * joint a child hangs on, or the joint of a chain's own goal with more of the tree beyond
 * it), the joint is put at the weighted centroid of the positions the branches ask for,
 * each branch weighed by the sum of the effector_weight of the goals in it (all equal when
 * every weight is 0); the walk then goes on to the root. The forward pass runs from the root
 * out to every goal, each child starting on its parent's new joint. A chain whose subtree
 * holds no goal is carried, keeping its local pose; bones of a chain beyond its last goal or
 * child with a goal are carried the same way. The merge at sub-bases is relaxation's too.
 */

#include <string.h>

/*
 * Whether FABRIK leaves child kid, hanging on sub-base s, out of the centroid there: a limb
 * without limits whose goal lies inside its reach ring from s, with a margin of 1/200 of its
 * reach (and the tolerance). Its own passes reach the goal from s or from near it, so it has
 * no say in where s goes; counted, it asked for s to stay about where it is and held back
 * the branches that need s to move (with 4 content legs and one that cannot reach, s moved
 * a fifth of the way an iteration). The centroid's fixed points are the same (a content
 * branch asks for s itself).
 *
 * Measured (bench/rates.lua: 1000 goal sets from random poses of the whole tree, straight
 * start, 100 iterations), reached and mean iterations, 2D and 3D, before and after: the
 * humanoid 99.4% and 99.5% in 12.1 and 14.7, then 99.5% and 99.6% in 6.8 and 8.1; the spider
 * 91.1% and 95.5% in 30.4 and 32.3, then 96.8% and 98.4% in 17.0 and 20.2. Tracking
 * bench/rigs.lua's animation for 1000 frames (64 iterations; IK_RIG_WINDOW=1000 lua5.4
 * bench/lua_bench.lua), frames with every goal met:
 * the spider 88.5% and 82.1% in 24.5 and 32.5 iterations, then 97.2% and 91.4% in 10.3 and
 * 17.4; the humanoid in 3D 100% then 99.9% (one frame). Over the first 250 frames (make
 * bench's window) the spider in 3D meets 82.0% then 80.0%: its legs there are all nearly
 * straight, where a 3-bone limb's own passes converge slowly either way. No margin did
 * worse (the spider in 3D from straight), and so did relaxation (its limbs relax a step at
 * a time: tracking, the spider lost ground), which keeps every branch in the centroid.
 */
static int content(const ik_rig *rig, const rig_node *kid, ik_vec3 s)
{
    ik_real d, margin = rig->settings.tolerance + kid->reach / 200;
    if (rig->settings.solver != IK_SOLVER_FABRIK || kid->chain->limited) return 0;
    if (!is_limb(kid)) return 0;
    d = ik_v3_len(ik_v3_sub(kid->goal, s));
    return d <= kid->reach - margin && d >= kid->inner + margin;
}

/*
 * Joint j of node nd to the weighted centroid of what asks for it: the chain beyond j (its
 * position now, weighed by beyond[j]) when `continues`, the chain's own goal when it ends
 * there, and the children hanging there (their joint 0) but for content limbs (see
 * content). A lone request is taken as it is; with none, the joint stays.
 *
 * FABRIK (before: the joints before the backward pass) over-relaxes a sub-base: it moves
 * omega times as far as the centroid. A branch that is content anchors the sub-base where
 * it is, so the plain centroid moves it only part of the way a branch that is not content
 * asks, and the goals creep in. omega starts at 2; an iteration that gains less than 10%
 * raises it by a fifth (up to 4), one that loses ground halves it (down to 1, plain
 * FABRIK). Measured (bench/rates.lua, 1000 random goals of a humanoid and a spider from a
 * straight start, 100 iterations): 2D 97.6% and 89.6% reached with omega 2 then 1, 99.4% and
 * 91.3% adapting; a humanoid tracking an animation (bench/rigs.lua) missed 35 of 250 frames
 * at 64 iterations, and misses none. Relaxation's sub-bases move 2 times as far at first, as
 * far once an iteration loses ground (adapting made its spider miss more).
 */
void rig_merge(const ik_rig *rig, rig_node *nd, int j, int continues, const ik_vec3 *before)
{
    ik_chain *c = nd->chain;
    ik_vec3 sum = ik_v3(0, 0, 0), plain = sum, only = sum;
    ik_real weight = 0, most = continues ? nd->beyond[j] : 0;
    int k, from, to, n = 0;
    /*
     * The weights in units of the largest asking here, so their sum is at least 1: goals
     * whose weights are subnormal next to another goal's elsewhere in the rig summed to a
     * subnormal, and 1 / weight overflowed (0 * inf: FE_INVALID, a NaN centre).
     */
    if (nd->end == j && nd->weight > most) most = nd->weight;
    kid_range(nd, j, &from, &to);
    for (k = from; k < to; k++) {
        int kid = rig->kid[k];
        if (pulls(rig, nd, kid) && rig->node[kid].subtree > most) most = rig->node[kid].subtree;
    }
    if (!(most > 0)) most = 1;
#define ASK(point, w)                                            \
    do {                                                         \
        ik_vec3 at_ = (point);                                   \
        ik_real w_ = (w) / most;                                 \
        sum = ik_v3_add(sum, ik_v3_scale(at_, w_));              \
        plain = ik_v3_add(plain, at_), only = at_;               \
        weight += w_, n++;                                       \
    } while (0)
    if (continues) ASK(joint_at(c, j), nd->beyond[j]);
    if (nd->end == j) ASK(nd->goal, nd->weight);
    for (k = from; k < to; k++) {
        const rig_node *kid = &rig->node[rig->kid[k]];
        if (pulls(rig, nd, rig->kid[k]) && !(before && content(rig, kid, before[j])))
            ASK(joint_at(kid->chain, 0), kid->subtree);
    }
#undef ASK
    if (n == 1) set_joint(c, j, only);
    else if (n > 1) {
        ik_vec3 centre = weight > 0 ? ik_v3_scale(sum, 1 / weight) : ik_v3_scale(plain, 1.0 / n);
        if (before) centre = ik_v3_add(before[j], ik_v3_scale(ik_v3_sub(centre, before[j]), rig->omega));
        set_joint(c, j, centre);
    }
}

/*
 * The next joint below hi (>= 1) where something joins node nd (its goal, or a child), or 0.
 * The children below hi, highest first, up to the first that pulls: a pass down a chain
 * looks at each child once.
 */
static int next_event(const ik_rig *rig, const rig_node *nd, int hi)
{
    int k, at = nd->end < hi ? nd->end : -1;
    for (k = nd->first + nd->above[hi - 1]; k < nd->first + nd->kids; k++) {
        int kid = rig->kid[k], j = rig->node[kid].parent_joint;
        if (j <= at) break;
        if (pulls(rig, nd, kid)) {
            at = j;
            break;
        }
    }
    return at > 0 ? at : 0;
}

/*
 * A limb of two bones without limits is placed exactly from where it hangs (the vector
 * form of the two-bone solve, bending on the side, or in the plane, it bends in now): its
 * FABRIK passes would only approach that, and slowly near full extension. Returns 0 for
 * anything else.
 */
static int two_bone_limb(rig_node *nd)
{
    ik_chain *c = nd->chain;
    ik_vec3 base = joint_at(c, 0), to = ik_v3_sub(nd->goal, base), middle, tip;
    ik_real j[3];
    int reached;
    if (nd->kids != 0 || nd->end != 2 || nd->top != 2 || c->limited) return 0;
    if (c->dim == 2) {
        /* tamed (scaled exactly) so the cross product cannot overflow to inf - inf */
        ik_vec3 now = ik_v3_tame(ik_v3_sub(joint_at(c, 1), base)), line = ik_v3_tame(to);
        int bend = line.x * now.y - line.y * now.x > 0 ? -1 : 1; /* 1: clockwise of the line */
        if (ik_two_bone_joint(to.x, to.y, c->length[0], c->length[1], bend, &j[0], &j[1], &reached) != IK_OK)
            return 0;
        j[2] = 0;
    } else {
        ik_vec3 now = ik_v3_sub(joint_at(c, 1), base);
        ik_real t[3], pole[3];
        t[0] = to.x, t[1] = to.y, t[2] = to.z;
        pole[0] = now.x, pole[1] = now.y, pole[2] = now.z;
        if (ik_two_bone_joint3(t, c->length[0], c->length[1], pole, j, &reached) != IK_OK) return 0;
    }
    middle = ik_v3_add(base, ik_v3(j[0], j[1], j[2]));
    tip = ik_v3_add(middle, ik_v3_scale(ik_v3_normalize_or(ik_v3_sub(nd->goal, middle), ik_dir_v3(c, 1)),
                                        c->length[1]));
    set_joint(c, 1, middle);
    set_joint(c, 2, tip);
    c->pose_behind = 1;
    return 1;
}

void rig_limb_forward(const ik_rig *rig, rig_node *nd)
{
    ik_chain *c = nd->chain;
    ik_real end[3], tolerance = rig->settings.tolerance;
    int pass;
    end[0] = nd->goal.x, end[1] = nd->goal.y, end[2] = nd->goal.z;
    if (nd->end == 1 || ik_v3_len(ik_v3_sub(nd->goal, joint_at(c, 0))) >= nd->reach - tolerance) {
        ik_fabrik_straighten(c, nd->goal, nd->end);
        return;
    }
    if (two_bone_limb(nd)) return;
    ik_fabrik_forward(c, 0, nd->end);
    for (pass = 1; pass < LIMB_PASSES; pass++) {
        ik_vec3 base = joint_at(c, 0);
        if (ik_v3_len(ik_v3_sub(nd->goal, joint_at(c, nd->end))) <= tolerance) break;
        ik_fabrik_backward(c, 0, nd->end, end);
        set_joint(c, 0, base);
        ik_fabrik_forward(c, 0, nd->end);
    }
}

/* ---- FABRIK ---- */

static void fabrik_backward(ik_rig *rig)
{
    int o;
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int hi = nd->top, lo;
        ik_real end[3];
        if (hi < 0) continue;
        for (lo = 0; lo <= c->n; lo++) nd->relaxed[lo] = joint_at(c, lo);
        rig_merge(rig, nd, hi, 0, nd->relaxed);
        while (hi > 0) {
            ik_vec3 at = joint_at(c, hi);
            lo = next_event(rig, nd, hi);
            end[0] = at.x, end[1] = at.y, end[2] = at.z;
            ik_fabrik_backward(c, lo, hi, end);
            rig_merge(rig, nd, lo, 1, nd->relaxed);
            hi = lo;
        }
    }
}

static void fabrik_forward(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int hi = nd->top < nd->last ? nd->top : nd->last;
        if (nd->top < 0) continue;
        if (nd->parent >= 0) ik_chain_take_base(c);
        else set_joint(c, 0, c->base);
        if (nd->kids == 0 && nd->end >= 1 && nd->end == nd->top) rig_limb_forward(rig, nd);
        else ik_fabrik_forward(c, 0, hi);
        rig_place_tip(nd);
    }
}

void rig_fabrik_iteration(ik_rig *rig)
{
    fabrik_backward(rig);
    fabrik_forward(rig);
}

/* The over-relaxation at sub-bases after an iteration: back towards plain FABRIK when it
   went too far, further when it creeps (see rig_merge). */
ik_real rig_fabrik_omega(ik_real omega, ik_real before, ik_real distance)
{
    if (distance > before) return omega / 2 > 1 ? omega / 2 : 1;
    if (distance > 0.9 * before) return omega * 1.2 < 4 ? omega * 1.2 : 4;
    return omega;
}

/* ---- src/rig_relax.c ---- */
/*
 * rig_relax.c - relaxation on a rig: Juckett's constraint relaxation (relax.c) on the same
 * tree of points as FABRIK's: each chain's end joint is snapped towards its goal, its
 * distance constraints are resolved from the tip down with the joints' weights, and a
 * sub-base takes the weighted centroid of where each branch's constraints put it, as FABRIK
 * does (rig_merge); the root's first child joint is pulled back to its length from the
 * fixed base.
 */

#include <string.h>

/* ---- relaxation ---- */

/* Joint j of node nd's relaxed points takes what asks for it there (see merge). */
static void merge_point(const ik_rig *rig, rig_node *nd, int j, int continues)
{
    set_joint(nd->chain, j, nd->relaxed[j]);
    rig_merge(rig, nd, j, continues, nd->relaxed);
    nd->relaxed[j] = joint_at(nd->chain, j);
}

/*
 * Node nd's constraints relaxed from its top down, as relax.c does for one chain: joint top
 * (its goal, or where its children ask for it) is the target its end bone is snapped to,
 * the interior constraints move both ends by the joints' weights, each sub-base taking the
 * centroid of what asks for it; joint 0 ends as the chain's request to its parent. The
 * root's bone 0 is left to relax_iteration, which pulls it back from the fixed base.
 */
static void relax_chain(const ik_rig *rig, rig_node *nd, int root)
{
    ik_chain *c = nd->chain;
    const ik_real *len = c->length, *weight = c->weight;
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_vec3 *b = nd->relaxed;
    int i, top = nd->top;
    merge_point(rig, nd, top, 0);
    if (top >= 1) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(b[top], b[top - 1]), zero);
        b[top - 1] = ik_v3_sub(b[top], ik_v3_scale(u, len[top - 1]));
    }
    for (i = top - 2; i >= 0; i--) {
        ik_real larger = weight[i] > weight[i + 1] ? weight[i] : weight[i + 1];
        ik_vec3 v, u;
        merge_point(rig, nd, i + 1, 1);
        if (root && i == 0) break; /* the pinned base: its bone is pulled back afterwards */
        v = ik_v3_sub(b[i + 1], b[i]);
        u = ik_v3_normalize_or(v, zero);
        if ((u.x != 0 || u.y != 0 || u.z != 0) && larger > 0) {
            /* Each end by its weight's share, as in relax.c (only the ratio matters). */
            ik_real share = weight[i] / larger, share_next = weight[i + 1] / larger;
            ik_real total = share + share_next;
            ik_vec3 fix = ik_v3_scale(u, len[i] - ik_v3_len(v));
            b[i] = ik_v3_sub(b[i], ik_v3_scale(fix, share / total));
            b[i + 1] = ik_v3_add(b[i + 1], ik_v3_scale(fix, share_next / total));
        }
    }
    if (!root) merge_point(rig, nd, 0, 1);
}

/* Node nd's first relaxed point pulled back to its length from its base (the article). */
static void pull_first(rig_node *nd, int hi)
{
    ik_vec3 *b = nd->relaxed;
    if (hi >= 1) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(b[1], b[0]), ik_v3(0, 0, 0));
        if (u.x != 0 || u.y != 0 || u.z != 0) b[1] = ik_v3_add(b[0], ik_v3_scale(u, nd->chain->length[0]));
    }
}

/*
 * One relaxation iteration: every chain from the leaves in, then from the root out each
 * chain's base put back on its parent's point and its first point pulled to its length from
 * it, and the points mapped onto bones of exact length (the rig's joints): each bone along
 * its relaxed segment, the end bone pointed at its goal.
 */
void rig_relax_iteration(ik_rig *rig)
{
    int o, i;
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->top >= 0) relax_chain(rig, nd, nd->parent < 0);
    }
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_vec3 *b = nd->relaxed, joint, relaxed;
        int hi = nd->top < nd->last ? nd->top : nd->last;
        if (nd->top < 0) continue;
        /*
         * A sub-base is one point of two chains: where the parent's bones, exact lengths,
         * really put it, in both (the parent's relaxed point may be beyond their reach).
         */
        if (nd->parent >= 0) {
            ik_chain_take_base(c);
            rig->node[nd->parent].relaxed[nd->chain->parent_joint] = joint_at(c, 0);
        }
        b[0] = nd->parent >= 0 ? joint_at(c, 0) : c->base;
        pull_first(nd, hi);
        if (nd->kids == 0 && nd->end >= 2 && nd->end == nd->top) {
            /* A limb: from where it hangs now, a few passes of its own, as for one chain. */
            int pass;
            for (pass = 1; pass < LIMB_PASSES; pass++) {
                relax_chain(rig, nd, 1);
                pull_first(nd, hi);
            }
        }
        if (nd->parent < 0) set_joint(c, 0, c->base);
        joint = joint_at(c, 0), relaxed = b[0];
        for (i = 0; i < hi; i++) {
            ik_vec3 u = i + 1 == nd->end ? ik_v3_sub(nd->goal, joint) : ik_v3_sub(b[i + 1], relaxed);
            relaxed = b[i + 1];
            joint = ik_v3_add(joint, ik_v3_scale(ik_v3_normalize_or(u, ik_dir_v3(c, i)), c->length[i]));
            set_joint(c, i + 1, joint);
        }
        rig_place_tip(nd);
    }
}

/* Relaxation's points where the joints are, before its passes. */
void rig_relax_start(ik_rig *rig)
{
    int k, j;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        for (j = 0; j <= nd->chain->n; j++) nd->relaxed[j] = joint_at(nd->chain, j);
    }
}

/* Over-relaxing at sub-bases stops once it no longer pays. */
ik_real rig_relax_omega(ik_real omega, ik_real before, ik_real distance)
{
    return distance > before ? 1 : omega;
}

/* ---- src/rig_joint.c ---- */
/*
 * rig_joint.c - the stages of a rig solve after the passes, on the bones' rotations: the
 * tree sweeps (CCD over the whole tree) and the joint-space stage (damped least squares on
 * every bone at once), which get a rig out of the minima joint limits make and track
 * moving goals smoothly. One bone's part of a step is joint_space.c's, as for single chains.
 */

#include <string.h>

/*
 * The way out of the minima joint limits make, for the whole tree at once: the passes above
 * work on points, and with limits they can park a sub-base where its limbs' limits cannot
 * reach their goals; a limb's own sweeps (finish_limbs) cannot move the body it hangs on.
 * A tree sweep is CCD over every bone of the rig that bends for a goal, from the leaves in
 * and each chain from its tip down (so the bones nearer the root, not yet turned in the
 * sweep, hold their world data): each bone turns, within its limits, by the rotation that
 * best brings the goals beyond it to their places, each weighed as in merge. For one goal
 * that is the CCD turn; for several, the turn about the summed torque by the angle whose
 * tangent is the summed cross over the summed dot products (exact in 2D: the least-squares
 * turn). Each goal's joint is carried along (eff); forward kinematics at the end.
 */

/* Turns node nd's bone i, about joint p, by the world turn that the goals beyond it ask for. */
static void sweep_bone(ik_rig *rig, rig_node *nd, int i)
{
    ik_chain *c = nd->chain;
    ik_vec3 p = joint_at(c, i), torque = ik_v3(0, 0, 0);
    ik_real dot = 0;
    rig_node *g;
    int k, from = nd->end > i ? nd->pre : nd->pre + 1, to = beyond_end(rig, nd, i);
#define PULL(g)                                                                             \
    do {                                                                                    \
        const rig_node *g_ = (g);                                                           \
        ik_real w_ = g_->weight;                                                            \
        ik_vec3 r_ = ik_v3_sub(g_->eff, p), t_ = ik_v3_sub(g_->goal, p);                    \
        torque = ik_v3_add(torque, ik_v3_scale(ik_v3_cross(r_, t_), w_));                   \
        dot += w_ * ik_v3_dot(r_, t_);                                                      \
    } while (0)
    FOR_GOALS(rig, g, k, from, to) PULL(g); /* dfs[pre] is nd itself */
#undef PULL
    if (c->dim == 2) {
        ik_real turn = atan2(torque.z, dot), angle, held;
        ik_vec2 r;
        if (turn == 0) return;
        angle = ik_turn_angle(c, i);
        held = c->limit[i].flags ? ik_limit_angle(&c->limit[i], ik_wrap_angle(angle + turn)) : angle + turn;
        turn = ik_wrap_angle(held - angle);
        if (turn == 0) return;
        ik_chain_set_turn_angle(c, i, held);
        r = ik_v2(cos(turn), sin(turn));
        FOR_GOALS(rig, g, k, from, to) {
            ik_vec2 v = ik_v2_rotate(ik_v2(g->eff.x - p.x, g->eff.y - p.y), r);
            if (g->end >= 0) g->eff = ik_v3(p.x + v.x, p.y + v.y, 0);
        }
    } else {
        ik_real size = ik_v3_len(torque), angle = atan2(size, dot);
        ik_vec3 unit = ik_v3_normalize_or(torque, ik_v3(0, 0, 0));
        ik_quat r, parent, local;
        if (!(size > 0) || angle == 0 || ik_v3_dot(unit, unit) == 0) return;
        r = ik_q_axis_angle(unit, angle);
        /* As in sweep.c: the world turn r as a change of the local rotation, within limits. */
        parent = i == 0 ? c->base_rot : c->wrot[i - 1];
        local = ik_q_normalize(ik_q_mul(ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent), c->rot[i]));
        if (c->limit[i].flags) {
            local = ik_limit_rotation(&c->limit[i], local);
            r = ik_q_normalize(ik_q_mul(ik_q_mul(parent, local), ik_q_conj(ik_q_mul(parent, c->rot[i]))));
        }
        c->rot[i] = local;
        FOR_GOALS(rig, g, k, from, to) {
            g->eff = ik_v3_add(p, ik_q_rotate(r, ik_v3_sub(g->eff, p)));
        }
    }
    ik_chain_mark_stale(c, i);
}

/* The largest distance of a goal's joint from its goal, as the sweeps have carried it. */
static ik_real sweep_distance(const ik_rig *rig)
{
    ik_real largest = 0;
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end >= 0) {
            ik_real d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
            if (d > largest) largest = d;
        }
    }
    return largest;
}

/*
 * Tree sweeps while the goals are missed and they gain, at most `iterations`; then every
 * chain finished (orientation goals, max_turn, limits). The chains are current and
 * settled. Returns the sweeps made.
 */
int rig_tree_sweeps(ik_rig *rig, int iterations, ik_real reach)
{
    ik_progress progress;
    ik_real distance;
    int o, i, sweeps = 0;
    rig_fk(rig);
    distance = sweep_distance(rig);
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && sweeps < iterations) {
        for (o = rig->count - 1; o >= 0; o--) {
            rig_node *nd = &rig->node[rig->order[o]];
            int hi = nd->top < nd->last ? nd->top : nd->last;
            for (i = hi - 1; i >= 0; i--) sweep_bone(rig, nd, i);
        }
        rig_fk(rig);
        sweeps++;
        distance = sweep_distance(rig);
        if (ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP) break;
    }
    rig_finish_all(rig);
    return sweeps;
}


/* ---- the joint-space stage ---- */

/*
 * Damped least squares (Levenberg-Marquardt) on every rotation of the rig that bends for a
 * goal, all at once: the passes work on points and, with limits, park sub-bases where the
 * limbs' limits cannot reach; a step in joint space moves the body and its limbs together,
 * each bone within its limits. The unknowns are each bone's turn about the world axes at
 * its joint (one about the hinge's axis for a 3D hinge, one about z in 2D); the residuals
 * are the goals' joints' offsets from their goals, each weighed by the square root of its
 * effector weight (a goal of weight 0 has no pull). With J the Jacobian of the residuals,
 * a step solves (J J^T + lambda^2 I) y = e and turns the bones by J^T y: the normal
 * equations have one row per goal coordinate (at most DLS_ROWS), whatever the number of
 * bones, and J is never stored (each bone's columns are made when needed). A step that
 * does not lower the weighted squared error is undone and lambda grows; one that does is
 * kept and lambda shrinks. S. Buss, "Introduction to inverse kinematics with Jacobian
 * transpose, pseudoinverse and damped least squares methods" (2004), section 5.
 */

/* A goal weighed less than this, in units of the largest, has no pull here: its rounding
   (a subnormal weight's few bits) would decide the step's last bits. */
#define DLS_LEAST 1e-200

static ik_real dls_weight(const rig_node *nd) { return nd->weight >= DLS_LEAST ? nd->weight : 0; }

/*
 * The scale the stage works at: the joints and goals within DLS_RANGE of the origin and the
 * reach within [1 / DLS_RANGE, DLS_RANGE], so no product it forms overflows or loses all
 * its bits (inf - inf would make a NaN). Beyond that the passes' answer stands.
 */
#define DLS_RANGE 1e100

int rig_dls_in_range(const ik_rig *rig, ik_real reach)
{
    int k, j;
    if (!(reach <= DLS_RANGE && reach >= 1 / DLS_RANGE)) return 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_real *p = nd->chain->joint;
        if (nd->end >= 0 && !(fabs(nd->goal.x) <= DLS_RANGE && fabs(nd->goal.y) <= DLS_RANGE &&
                              fabs(nd->goal.z) <= DLS_RANGE))
            return 0;
        for (j = 0; j < (nd->chain->n + 1) * rig->dim; j++)
            if (!(fabs(p[j]) <= DLS_RANGE)) return 0;
    }
    return 1;
}

/* The goals' rows (nd->row); 0 when they need more than DLS_ROWS, or are out of range. */
int rig_dls_rows(ik_rig *rig, ik_real reach)
{
    int k, m = 0;
    if (!rig_dls_in_range(rig, reach)) return 0;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        nd->row = -1;
        if (nd->end < 0) continue;
        if (m + rig->dim > DLS_ROWS) return 0;
        nd->row = m;
        m += rig->dim;
    }
    return m;
}

/* One column of J: how the goals beyond bone i of nd move as it turns about axis. */
typedef struct dls_column {
    int count;
    int row[2 * DLS_ROWS]; /* a loop's rows may come twice: its two sides */
    ik_real value[2 * DLS_ROWS];
} dls_column;

static void column_add(const ik_rig *rig, dls_column *col, int row, ik_vec3 v)
{
    int d;
    for (d = 0; d < rig->dim; d++) {
        col->row[col->count] = row + d;
        col->value[col->count++] = d == 0 ? v.x : d == 1 ? v.y : v.z;
    }
}

/*
 * A loop's residual is its held point less its tip (the goal less the joint, as for any
 * goal), so a bone that moves the held point counts in its rows with the opposite sign: both
 * sides of the loop bend to close it.
 */
static void dls_column_of(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis, dls_column *col)
{
    ik_vec3 p = joint_at(nd->chain, i);
    int k, to = beyond_end(rig, nd, i);
    col->count = 0;
    const rig_node *g;
    FOR_GOALS(rig, g, k, nd->end > i ? nd->pre : nd->pre + 1, to) {
        if (g->end < 0 || dls_weight(g) == 0) continue;
        column_add(rig, col, g->row, ik_v3_scale(ik_v3_cross(axis, ik_v3_sub(g->eff, p)), sqrt(dls_weight(g))));
    }
    for (k = 0; k < rig->loop_count; k++) {
        g = &rig->node[rig->loops[k]];
        if (g->row < 0 || dls_weight(g) == 0 || !moves_hold(rig, nd, i, &rig->node[g->hold], g->chain->tip_joint))
            continue;
        column_add(rig, col, g->row, ik_v3_scale(ik_v3_cross(axis, ik_v3_sub(g->chain->target, p)), -sqrt(dls_weight(g))));
    }
}

/* The weighted squared error; *largest: the largest distance of a goal's joint. */
static ik_real dls_cost(const ik_rig *rig, ik_real *largest)
{
    ik_real cost = 0;
    int k;
    *largest = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real d;
        if (nd->end < 0) continue;
        d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
        if (d > *largest) *largest = d;
        cost += dls_weight(nd) * d * d;
    }
    return cost;
}

/* The largest turn of one bone in one step (radians): the linear model holds near it. */
#define DLS_MAX_TURN 0.5

/* Bone i's turn in the step (the convention of ik_joint_turn) from its turns about its axes. */
static ik_vec3 dls_turn(const rig_node *nd, int i, const ik_vec3 *axis, int axes, const ik_real *delta)
{
    ik_vec3 v = ik_v3(0, 0, 0);
    int a;
    if (nd->chain->dim == 2 || (nd->chain->limit[i].flags & IK_LIMIT_HINGE)) return ik_v3(delta[0], 0, 0);
    for (a = 0; a < axes; a++) v = ik_v3_add(v, ik_v3_scale(axis[a], delta[a]));
    return v;
}

/* Keeps (back = 0) or puts back (1) the local pose of every chain that bends: in the first
   place (which = 0: before a step) or the second (1: the best before a kick). */
static void dls_pose(ik_rig *rig, int back, int which)
{
    int k;
    for (k = 0; k < rig->count; k++) rig_keep_pose(&rig->node[k], turns(&rig->node[k]), back, which);
}

/* The turns J^T y of bone i of nd about its axes (delta[axes]). */
static int dls_delta(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis[3], ik_real delta[3])
{
    dls_column col;
    int o, a, axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
    for (o = 0; o < axes; o++) {
        dls_column_of(rig, nd, i, axis[o], &col);
        delta[o] = 0;
        for (a = 0; a < col.count; a++) delta[o] += col.value[a] * rig->y[col.row[a]];
    }
    return axes;
}

/*
 * While tracking, a bounded joint (2D range, 3D hinge) within REST_MARGIN of a bound is
 * pushed off it by up to REST_PUSH radians a step, in the null space of the goals' rows
 * (they see the push as an error of their own, e - J z, and the step is J^T y + z): the goals
 * are met as before, and a rig's spare freedom keeps its joints out of the corners of
 * their ranges, from which a goal's next move is reached only by a jump (a 2D body whose
 * two 3-bone arms had slid to straight elbows and wrists at their bounds missed 32 frames
 * running). The margin and push were chosen on bench/limits.lua's rows (0.2 to 0.5 and
 * 0.05 to 0.2 tried) and hold on the spec's body, which they were not chosen on.
 */
#define REST_MARGIN 0.3
#define REST_PUSH 0.1

/*
 * A free 2D joint of a chain with a goal, but its first, within SINGULAR_MARGIN of straight
 * (0) or folded (pi) is pushed away from it the same way, by up to SINGULAR_PUSH radians a
 * step, to the side it is on. There the bones beyond it cannot come nearer its joint or go
 * farther in a step (the steps' model is linear), so tracking, which takes the smallest
 * turns that meet the goals, lets such a joint drift there over a few strides, and the goal
 * that then turns back is followed by a fold that grows as the square root of its move
 * (bench/limits.lua's walk, quadruped 2D without limits: knees straightened from 0.6 to 0.08
 * rad, then an ankle folded 0.24 to 0.29 rad in a frame; its 20 animations: an elbow through
 * straight 0.259 rad, a knee off it 0.356). The root and chains without a goal, bent only for
 * others, are left as they are (pushed too, a quadruped's back made its legs jump 0.37 rad);
 * 3D joints are not pushed (3D rigs without limits turn at most 0.2 rad in the same rows).
 * The push is taken out of the goals' rows with a damping of SINGULAR_DAMPING (squared, in
 * mean bone lengths), not the step's: with the step's damping it moved the goals by up to
 * a tenth of itself, and the frame took another step to put them back (0.9 more a frame on
 * bench/rigs.lua's spider). Margin and push chosen on the 20 animations of 4 seeds
 * (IK_ANIM_SEED 555, 777, 4242, 31337) in commit cf9958a; see docs/performance.md.
 */
#define SINGULAR_MARGIN 0.5
#define SINGULAR_PUSH 0.05
#define SINGULAR_DAMPING 1e-6

static ik_real off_singular(const ik_chain *c, int i)
{
    ik_real angle = ik_turn_angle(c, i), size = fabs(angle), side;
    side = angle > 0 ? 1 : angle < 0 ? -1 : c->settings.bend >= 0 ? 1 : -1;
    if (size > IK_PI - SINGULAR_MARGIN) return -side * SINGULAR_PUSH * (size - (IK_PI - SINGULAR_MARGIN)) / SINGULAR_MARGIN;
    if (size < SINGULAR_MARGIN) return side * SINGULAR_PUSH * (SINGULAR_MARGIN - size) / SINGULAR_MARGIN;
    return 0;
}

static ik_real off_bounds(const ik_chain *c, int i)
{
    const ik_limit *l = &c->limit[i];
    ik_real angle;
    if (c->dim == 2 && !l->flags) return i > 0 && c->has_target ? off_singular(c, i) : 0;
    if (!ik_joint_has_bounds(c, i) || l->max - l->min < 4 * REST_MARGIN) return 0;
    angle = ik_joint_bound_angle(c, i);
    if (angle - l->min < REST_MARGIN) return REST_PUSH * (REST_MARGIN - (angle - l->min)) / REST_MARGIN;
    if (l->max - angle < REST_MARGIN) return -REST_PUSH * (REST_MARGIN - (l->max - angle)) / REST_MARGIN;
    return 0;
}

/* Whether bone i of c is pushed off straight and folded (off_singular), not off bounds. */
static int singular_push(const ik_chain *c, int i) { return c->dim == 2 && !c->limit[i].flags; }

/*
 * The normal equations of the bones not pinned, solved into rig->y. 0: no solution. The
 * pushes z (off_bounds) come out of the goals' rows: the bounds' from the error, solved
 * with the step's damping, e - J z; the free joints' (off_singular) alone, J z, with
 * SINGULAR_DAMPING, taken off y. Not while the step's damping is above PUSH_MOST_DAMPING
 * times that (steps refused again and again): the push's diagonal, the step's less its
 * damping, would keep the sums only to a rounding of the damping, which is then near
 * SINGULAR_DAMPING itself.
 */
#define PUSH_MOST_DAMPING 1e12

static int dls_solve(ik_rig *rig, int m, ik_real lambda2)
{
    dls_column col;
    ik_vec3 axis[3];
    int k, i, a, b, o, pushed = 0;
    for (k = 0; k < m * m; k++) rig->normal[k] = 0;
    for (k = 0; k < m; k++) rig->normal[k * m + k] = lambda2, rig->push[k] = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->row >= 0) {
            ik_vec3 e = ik_v3_scale(ik_v3_sub(nd->goal, nd->eff), sqrt(dls_weight(nd)));
            rig->error[nd->row] = e.x, rig->error[nd->row + 1] = e.y;
            if (rig->dim == 3) rig->error[nd->row + 2] = e.z;
        }
        for (i = 0; i < turns(nd); i++) {
            int axes;
            if (nd->mode[i] < 0) continue;
            axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
            for (o = 0; o < axes; o++) {
                dls_column_of(rig, nd, i, axis[o], &col);
                for (a = 0; a < col.count; a++)
                    for (b = 0; b < col.count; b++)
                        rig->normal[col.row[a] * m + col.row[b]] += col.value[a] * col.value[b];
            }
        }
    }
    if (rig->rest) { /* the pushes, in the null space of the goals' rows */
        for (k = 0; k < rig->count; k++) {
            const rig_node *nd = &rig->node[k];
            for (i = 0; i < turns(nd); i++) {
                ik_real z = nd->mode[i] < 0 ? 0 : off_bounds(nd->chain, i);
                int singular = singular_push(nd->chain, i);
                if (z == 0 || (singular && !(lambda2 <= PUSH_MOST_DAMPING * rig->push_lambda2))) continue;
                ik_joint_axes(nd->chain, i, nd->mode[i], axis);
                dls_column_of(rig, nd, i, axis[0], &col);
                if (singular) {
                    for (a = 0; a < col.count; a++) rig->push[col.row[a]] += col.value[a] * z;
                    pushed = 1;
                } else {
                    for (a = 0; a < col.count; a++) rig->error[col.row[a]] -= col.value[a] * z;
                }
            }
        }
    }
    rig->pushing = 0;
    if (pushed) { /* (a push that cannot be solved for is left out of the step: dls_step) */
        for (k = 0; k < m * m; k++) rig->push_normal[k] = rig->normal[k];
        for (k = 0; k < m; k++) rig->push_normal[k * m + k] = rig->normal[k * m + k] - lambda2 + rig->push_lambda2;
        rig->pushing = ik_solve_spd(rig->push_normal, m, m, rig->push, rig->push_y);
    }
    if (!ik_solve_spd(rig->normal, m, m, rig->error, rig->y)) return 0;
    if (rig->pushing) for (k = 0; k < m; k++) rig->y[k] -= rig->push_y[k];
    for (k = 0; k < m; k++)
        if (!isfinite(rig->y[k])) return 0; /* out of the range the model holds in */
    return 1;
}

/*
 * Whether a 2D bone or a 3D hinge would be held back by its bounds from more than half of
 * a turn (at most DLS_MAX_TURN): counted in, it makes the others' turns too small.
 */
static int held_back(const ik_chain *c, int i, ik_real turn)
{
    const ik_limit *l = &c->limit[i];
    ik_real angle, to;
    if (!ik_joint_has_bounds(c, i)) return 0;
    turn = ik_clamp(turn, -DLS_MAX_TURN, DLS_MAX_TURN);
    angle = ik_joint_bound_angle(c, i);
    to = ik_limit_angle(l, ik_wrap_angle(angle + turn));
    return fabs(ik_wrap_angle(to - angle)) < 0.5 * fabs(turn);
}

/*
 * One step: solved, then solved again without the ways out the limits block (an active
 * set: a 2D range or hinge at a bound the step pushes beyond leaves the step, a cone or
 * twist at its bound loses only the way out of it; counted in, a bone held at its limit
 * makes the others' turns too small), then every bone turned from the pose before the
 * step, each by at most DLS_MAX_TURN, within its limits. 0: no step.
 */
#define DLS_PASSES 3

static int dls_step(ik_rig *rig, int m, ik_real lambda2)
{
    ik_vec3 axis[3];
    ik_real delta[3];
    int k, i, pass, axes;
    for (k = 0; k < rig->count; k++) memset(rig->node[k].mode, 0, (size_t)rig->node[k].chain->n + 1);
    for (pass = 0; pass < DLS_PASSES; pass++) {
        int more = 0;
        if (!dls_solve(rig, m, lambda2)) return 0;
        if (!rig->limited || pass == DLS_PASSES - 1) break;
        for (k = 0; k < rig->count; k++) {
            rig_node *nd = &rig->node[k];
            if (!nd->chain->limited) continue;
            for (i = 0; i < turns(nd); i++) {
                int blocked;
                if (nd->mode[i] < 0 || !nd->chain->limit[i].flags) continue;
                axes = dls_delta(rig, nd, i, axis, delta);
                blocked = ik_joint_blocked(nd->chain, i, dls_turn(nd, i, axis, axes, delta));
                if (blocked == 0 && held_back(nd->chain, i, delta[0])) blocked = -1;
                if (blocked < 0) nd->mode[i] = -1, more = 1;
                else if ((blocked | nd->mode[i]) != nd->mode[i]) nd->mode[i] = (signed char)(nd->mode[i] | blocked), more = 1;
            }
        }
        if (!more) break;
    }
    /* Every column from the pose before the step: each chain's bones from its tip down. */
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        ik_chain *c = nd->chain;
        for (i = turns(nd) - 1; i >= 0; i--) {
            ik_vec3 t;
            ik_real size;
            if (nd->mode[i] < 0) continue;
            axes = dls_delta(rig, nd, i, axis, delta);
            t = dls_turn(nd, i, axis, axes, delta);
            if (rig->rest && (rig->pushing || !singular_push(c, i))) t.x += off_bounds(c, i);
            size = c->dim == 2 || (c->limit[i].flags & IK_LIMIT_HINGE) ? fabs(t.x) : ik_v3_len(t);
            if (!(size > 0 && isfinite(size))) continue;
            if (size > DLS_MAX_TURN) t = ik_v3_scale(t, DLS_MAX_TURN / size);
            ik_joint_turn(c, i, t);
            ik_chain_mark_stale(c, i);
        }
    }
    return 1;
}

/*
 * A kick out of a minimum the limits make: the limited bones of every chain on the way from
 * a missed goal (and a missed loop's held point) to the root turn towards the middle of their ranges (2D range, 3D hinge;
 * other 3D limits: towards straight along the parent, then within them), the start the
 * limits leave most room around, by at most `most` radians each; the rest of the pose stays.
 */
static void dls_kick(ik_rig *rig, ik_real most)
{
    int k, i, x, way;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end < 0 || ik_v3_len(ik_v3_sub(nd->goal, nd->eff)) <= rig->settings.tolerance) continue;
        /* a loop's way to the root, and its held point's */
        for (way = 0; way <= (nd->hold >= 0); way++)
        for (x = way ? nd->hold : k; x >= 0; x = rig->node[x].parent) {
            rig_node *on = &rig->node[x];
            ik_chain *c = on->chain;
            if (!c->limited && most == INFINITY) continue;
            for (i = 0; i < turns(on); i++) {
                const ik_limit *l = &c->limit[i];
                ik_quat to;
                if (ik_joint_has_bounds(c, i)) {
                    ik_real now = ik_joint_bound_angle(c, i);
                    ik_real turn = ik_clamp((l->min + l->max) / 2 - now, -most, most);
                    if (c->dim == 2) ik_chain_set_turn_angle(c, i, now + turn);
                    else c->rot[i] = ik_limit_rotation(l, ik_q_axis_angle(l->axis, now + turn));
                } else if (most < INFINITY) {
                    /* A nudge while tracking: a bone nearly in line with its parent bends a
                       little to the chain's side, so the steps can shorten what is straight
                       (a straight run of bones cannot come nearer its base in a step). */
                    ik_vec3 line = ik_v3_normalize_or(ik_v3_sub(nd->goal, c->base), ik_v3(1, 0, 0));
                    ik_vec3 side = ik_chain_bend_side(c, line), d, p;
                    if (c->dim == 2) {
                        ik_real now = ik_turn_angle(c, i);
                        if (fabs(now) >= most) continue;
                        ik_joint_turn(c, i, ik_v3((c->settings.bend >= 0 ? most : -most) - now, 0, 0));
                    } else {
                        d = ik_dir3(c, i);
                        p = ik_q_x_axis(i == 0 ? c->base_rot : c->wrot[i - 1]);
                        if (ik_v3_dot(p, d) < cos(most)) continue;
                        ik_joint_turn(c, i, ik_v3_scale(ik_v3_normalize_or(ik_v3_cross(d, side), ik_v3(0, 0, 0)), most));
                    }
                } else if (l->flags) {
                    to = ik_limit_rotation(l, ik_q_identity());
                    c->rot[i] = to;
                } else {
                    continue;
                }
                ik_chain_mark_stale(c, i);
            }
        }
    }
}

/* Kicks a stalled joint-space stage may make after the passes; while tracking, nudges of
   at most DLS_NUDGE radians a bone (a kick turns bones far in one frame). */
#define DLS_KICKS 2

/*
 * Steps that did not halve the error, with limits, that are a stall too: a rig whose bones
 * press on their limits can creep, a step refused and taken again with more damping every
 * other time, each gaining a few percent (a 3D figure with both hands on a staff spent its
 * 100 iterations creeping at 0.01 from its goals). 8, 12 and 20 gave the same rates on
 * bench/loops.lua, and left bench/limits.lua's unchanged.
 */
#define DLS_SLOW 12
#define DLS_NUDGE 0.1

/*
 * Steps while the goals are missed and they gain, at most `iterations` (a stall with limits
 * kicks, at most kicks_allowed times, and the best pose is kept); then every chain
 * finished. m: the rows (dls_rows). The chains are settled. Returns the steps tried.
 */
int rig_joint_space(ik_rig *rig, int iterations, ik_real reach, int bones, int m, int mode)
{
    ik_progress progress;
    ik_real distance, cost, best = INFINITY, unit = reach / bones, lambda2 = 0.01 * unit * unit, halved;
    int tracking = mode != RIG_SOLVE, calm = mode == RIG_CALM;
    int steps = 0, kicks = 0, kicks_allowed = calm ? 0 : tracking ? 1 : DLS_KICKS, creeping = 0, since = 0;
    rig->rest = tracking && !calm;
    rig->push_lambda2 = SINGULAR_DAMPING * unit * unit;
    rig_fk(rig);
    cost = dls_cost(rig, &distance);
    halved = cost;
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && steps < iterations) {
        ik_real now, largest;
        int stalled;
        dls_pose(rig, 0, 0);
        stalled = !dls_step(rig, m, lambda2);
        if (!stalled) {
            steps++;
            rig_fk(rig);
            now = dls_cost(rig, &largest);
            if (now < cost) {
                /* gains of less than a percent twice running: a minimum the limits made */
                creeping = now > 0.99 * cost ? creeping + 1 : 0;
                stalled = creeping >= 2;
                if (now < 0.5 * halved) halved = now, since = 0;
                cost = now, distance = largest;
                lambda2 *= 0.25;
                if (lambda2 < 1e-12 * unit * unit) lambda2 = 1e-12 * unit * unit;
            } else {
                dls_pose(rig, 1, 0);
                rig_fk(rig);
                lambda2 *= 8;
                stalled = !(lambda2 < 1e12 * unit * unit);
            }
            since++;
            stalled = stalled || ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP;
        }
        /* Tracking: three steps that did not halve the error are a stall worth a nudge (a
           straight run of bones, which the steps approach ever more slowly). With none
           left, a rig with limits hands what remains to its limbs' sweeps (finish_limbs
           in rig.c), one without goes on stepping. Otherwise, with limits, DLS_SLOW steps
           that did not halve it are a stall worth a kick while kicks are left. */
        if (!stalled && !(tracking && !calm && since >= 3 && (kicks < kicks_allowed || rig->limited)) &&
            !(!tracking && rig->limited && since >= DLS_SLOW && kicks < kicks_allowed))
            continue;
        if ((!rig->limited && !tracking) || kicks == kicks_allowed) break;
        if (cost < best) {
            best = cost;
            dls_pose(rig, 0, 1);
        }
        dls_kick(rig, tracking ? DLS_NUDGE : INFINITY);
        kicks++;
        rig_fk(rig);
        cost = dls_cost(rig, &distance);
        progress = ik_progress_plain(distance, reach);
        lambda2 = 0.01 * unit * unit;
        creeping = 0;
        halved = cost, since = 0;
    }
    if (best < cost) {
        dls_pose(rig, 1, 1);
        rig_fk(rig);
    }
    rig_finish_all(rig);
    return steps;
}

/* ---- src/motion.c ---- */
/*
 * motion.c - chains moved over time: follow-the-leader (drag) and secondary motion
 * (simulate). Both end in the local pose, posed bone by bone from the base (ik_pose_bone),
 * so lengths are exact and every limit holds after each call, as after a solve.
 */

#include <string.h>

/* ---- drag ---- */

/* A point of dim numbers as a 3D vector (z = 0 in 2D), and back. */
static ik_vec3 point_load(const ik_chain *c, const ik_real *p)
{
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

static void point_store(const ik_chain *c, ik_real *p, ik_vec3 v)
{
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/* Point i of the scratch points. */
static ik_vec3 work_point(const ik_chain *c, int i) { return point_load(c, c->work + (size_t)i * (size_t)c->dim); }
static void set_work_point(ik_chain *c, int i, ik_vec3 v) { point_store(c, c->work + (size_t)i * (size_t)c->dim, v); }

/* Joint 0 on the base. */
static void store_joint0(ik_chain *c)
{
    ik_real *p = ik_joint(c, 0);
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}

/*
 * Poses bones first..n-1 from the base out, each pointing from its joint as posed towards
 * point i + 1 of the scratch points (within its limits; a zero-length bone, or no
 * direction, keeps its world direction). The world data is current afterwards.
 */
static void pose_towards_work(ik_chain *c, int first)
{
    int i;
    for (i = first; i < c->n; i++) {
        ik_vec3 before = ik_dir_v3(c, i);
        ik_vec3 to = ik_v3_sub(work_point(c, i + 1), ik_joint_v3(c, i));
        ik_pose_bone(c, i, c->length[i] > 0 ? ik_v3_normalize_or(to, before) : before);
    }
    c->stale_from = c->n;
}

ik_status ik_chain_drag(ik_chain *c, const ik_real *point)
{
    ik_status st = ik_check_coords(point, c->dim);
    ik_vec3 next, dir0;
    int i;
    if (st != IK_OK) return st;
    if (c->parent) return IK_ERR_ATTACHED;
    ik_chain_settle(c);
    ik_chain_fk(c);

    /* Backward from the tip: bone i points from where joint i is towards the new joint
       i + 1, held within what bone i + 1's limit allows. */
    set_work_point(c, c->n, ik_v3(point[0] + 0.0, point[1] + 0.0, c->dim == 3 ? point[2] + 0.0 : 0));
    next = ik_dir_v3(c, c->n - 1);
    for (i = c->n - 1; i >= 0; i--) {
        ik_vec3 to = work_point(c, i + 1), dir = ik_dir_v3(c, i);
        if (c->length[i] > 0) dir = ik_v3_normalize_or(ik_v3_sub(to, ik_joint_v3(c, i)), dir);
        if (i < c->n - 1 && c->limited) dir = ik_limit_backward(c, i, dir, next);
        set_work_point(c, i, ik_v3_sub(to, ik_v3_scale(dir, c->length[i] * c->scale)));
        /* The new direction, which the bones are posed along below (a zero-length bone's
           too, which the points cannot tell): 2D in place of the old one (read above, and
           never again); 3D aside, the old one being what each bone turns from. */
        if (c->dim == 2) ik_v2_store(ik_dir(c, i), ik_v2(dir.x, dir.y));
        else ik_v3_store(c->sim_scratch + 3 * (size_t)i, dir);
        next = dir;
    }
    dir0 = next;

    /* The base moves to joint 1's new place, its frame turned with bone 1, which keeps its
       local angle; the other bones are posed along the points from it. */
    c->base = work_point(c, 0);
    if (c->dim == 2) {
        c->base_turn = ik_v2_renorm(ik_v2_unrotate(ik_v2(dir0.x, dir0.y), c->turn[0]));
        c->base_angle = atan2(c->base_turn.y, c->base_turn.x);
    } else {
        ik_quat world = ik_q_normalize(ik_q_mul(ik_q_from_to(ik_dir3(c, 0), dir0), c->wrot[0]));
        c->base_rot = ik_q_normalize(ik_q_mul(world, ik_q_conj(c->rot[0])));
    }
    store_joint0(c);
    ik_chain_fk_bone(c, 0);
    for (i = 1; i < c->n; i++) {
        if (c->dim == 2) ik_pose_bone_turn(c, i, ik_dir2(c, i));
        else ik_pose_bone(c, i, ik_v3_load(c->sim_scratch + 3 * (size_t)i));
    }
    c->stale_from = c->n;
    ik_chain_changed(c);
    return IK_OK;
}

/* ---- simulate ---- */

/* The longest time one call simulates, and the sub-steps per second. */
#define SIM_MAX_TIME 1.0
#define SIM_RATE 240
/* Newton steps on the lengths before the exact posing (a second one leaves a residual of
   the fourth order in the step, which the posing takes up). */
#define SIM_PASSES 2

static ik_real *sim_now(const ik_chain *c, int i) { return c->sim + (size_t)i * (size_t)c->dim; }
static ik_real *sim_before(const ik_chain *c, int i)
{
    return c->sim + ((size_t)(c->n + 1) + (size_t)i) * (size_t)c->dim;
}

/* Whether the joints simulate kept still move on: the pose is the one it left. */
static int sim_continues(const ik_chain *c)
{
    size_t bytes = (size_t)c->n * (c->dim == 2 ? sizeof(ik_vec2) : sizeof(ik_quat));
    if (!c->sim_live || c->sim_scale != c->scale) return 0;
    return c->dim == 2 ? memcmp(c->sim_turn, c->turn, bytes) == 0 : memcmp(c->sim_rot, c->rot, bytes) == 0;
}

/* The joints at rest in the world where the chain is now: no speed. */
static void sim_start(ik_chain *c)
{
    int i;
    for (i = 0; i <= c->n; i++) {
        point_store(c, sim_now(c, i), ik_joint_v3(c, i));
        point_store(c, sim_before(c, i), ik_joint_v3(c, i));
    }
    c->sim_base = c->base;
    c->sim_base_before = c->base;
    c->sim_time = 0;
    c->sim_base_angle = c->base_angle;
    c->sim_base_rot = c->base_rot;
}

/*
 * The base frame the fraction t of the way from the last call's to the current one (time
 * seconds later): its place on the parabola through the bases of the two calls before and
 * this one (a body's path sampled once a frame is smooth: a straight line between frames
 * would make the motion depend on the frame rate), or on the straight line when the call
 * before is missing or took a time far from this one's; the turn of its frame in between.
 */
static void sim_base_at(ik_chain *c, ik_vec3 base, ik_real angle, ik_quat rot, ik_real t, ik_real time)
{
    ik_real r = c->sim_time / time;
    if (r >= 0.25 && r <= 4) {
        ik_real before = t * (t - 1) / (r * (r + 1)), last = -(t + r) * (t - 1) / r, now = t * (t + r) / (1 + r);
        c->base = ik_v3_add(ik_v3_add(ik_v3_scale(c->sim_base_before, before), ik_v3_scale(c->sim_base, last)),
                            ik_v3_scale(base, now));
    } else {
        c->base = ik_v3_add(c->sim_base, ik_v3_scale(ik_v3_sub(base, c->sim_base), t));
    }
    if (c->dim == 2) {
        c->base_angle = ik_wrap_angle(c->sim_base_angle + t * ik_wrap_angle(angle - c->sim_base_angle));
        c->base_turn = ik_v2_turn(c->base_angle);
    } else {
        c->base_rot = ik_q_slerp(c->sim_base_rot, rot, t);
    }
}

/* Bone i's rest direction in the world, from its parent's frame as it is now. */
static ik_vec3 rest_dir(const ik_chain *c, int i)
{
    if (c->dim == 2) {
        ik_vec2 parent = i == 0 ? c->base_turn : ik_dir2(c, i - 1);
        ik_vec2 d = ik_v2_rotate(c->rest_turn[i], parent);
        return ik_v3(d.x, d.y, 0);
    }
    return ik_q_x_axis(ik_q_mul(i == 0 ? c->base_rot : c->wrot[i - 1], c->rest_rot[i]));
}

/* Bone i's direction at the last sub-step (unit; zero for a zero-length bone), kept for the
   sub-step by sim_keep_dirs. */
static ik_vec3 sim_dir(const ik_chain *c, int i)
{
    const ik_real *u = c->sim_scratch + (size_t)i * (size_t)c->dim;
    return ik_v3(u[0], u[1], c->dim == 3 ? u[2] : 0);
}

static void sim_keep_dirs(ik_chain *c)
{
    int i;
    for (i = 0; i < c->n; i++) {
        ik_vec3 u = ik_v3_sub(point_load(c, sim_now(c, i + 1)), point_load(c, sim_now(c, i)));
        point_store(c, c->sim_scratch + (size_t)i * (size_t)c->dim, ik_v3_normalize_or(u, ik_v3(0, 0, 0)));
    }
}

/*
 * One Newton step on the lengths of the bones between the scratch points (SHAKE): joint i
 * moves along the directions of the bones beside it at the last sub-step, by multipliers
 * (one per bone) that solve the lengths to first order, the base held and the other joints
 * of equal mass. The system is tridiagonal: one sweep down and one up, O(n). 0 when it is
 * degenerate (a step so large the bones folded): the posing from the base then does it.
 */
static int sim_constrain(ik_chain *c)
{
    ik_real *sweep = c->sim_scratch + (size_t)c->n * (size_t)c->dim;
    int i, n = c->n;
    ik_real lower = 0;
    for (i = 0; i < n; i++) {
        ik_vec3 d = ik_v3_sub(work_point(c, i + 1), work_point(c, i));
        ik_real len = ik_v3_len(d), wi = i == 0 ? 0 : 1, diag, upper = 0, pivot;
        ik_vec3 e, u = sim_dir(c, i);
        if (!(len > 0) || !isfinite(len)) return 0;
        e = len > 1e-150 && len < 1e150 ? ik_v3_scale(d, 1 / len) : ik_v3_normalize_or(d, u);
        diag = (wi + 1) * ik_v3_dot(e, u);
        if (i + 1 < n) upper = -ik_v3_dot(e, sim_dir(c, i + 1));
        if (i > 0) lower = -wi * ik_v3_dot(e, sim_dir(c, i - 1));
        pivot = diag - (i > 0 ? lower * sweep[2 * (i - 1)] : 0);
        if (!(fabs(pivot) > 1e-9)) return 0;
        pivot = 1 / pivot;
        sweep[2 * i] = upper * pivot;
        sweep[2 * i + 1] = (c->length[i] * c->scale - len - (i > 0 ? lower * sweep[2 * i - 1] : 0)) * pivot;
    }
    for (i = n - 2; i >= 0; i--) sweep[2 * i + 1] -= sweep[2 * i] * sweep[2 * i + 3];
    for (i = 1; i <= n; i++) {
        ik_vec3 move = ik_v3_scale(sim_dir(c, i - 1), sweep[2 * (i - 1) + 1]);
        if (i < n) move = ik_v3_sub(move, ik_v3_scale(sim_dir(c, i), sweep[2 * i + 1]));
        set_work_point(c, i, ik_v3_add(work_point(c, i), move));
    }
    return 1;
}

/* Moves scratch point i by v (joint 0, the base, holds). */
static void sim_push(ik_chain *c, int i, ik_vec3 v)
{
    if (i > 0) set_work_point(c, i, ik_v3_add(work_point(c, i), v));
}

/*
 * Bone i's spring towards its rest direction, for a sub-step: the turn it asks for, the
 * angle off rest times pull (stiffness h^2, at most 1) times the bone's length, moves its
 * end joint across the bone and its start joint back; its parent bone takes the opposite
 * torque (so the springs are conservative: a turn asked of a bone does not push the whole
 * chain round). A parent far shorter than the bone passes on at most 1000 times its share.
 */
static void sim_spring(ik_chain *c, int i, ik_real pull)
{
    ik_vec3 d = sim_dir(c, i), r = rest_dir(c, i), axis, across;
    ik_real len = c->length[i] * c->scale, angle, s;
    if (!(len > 0) || (d.x == 0 && d.y == 0 && d.z == 0)) return;
    axis = ik_v3_cross(d, r);
    s = ik_v3_len(axis);
    angle = atan2(s, ik_v3_dot(d, r));
    if (!(angle > 0)) return; /* at rest */
    /* turned half round: any axis across the bone */
    axis = ik_v3_normalize_or(axis, c->dim == 2 ? ik_v3(0, 0, 1) : ik_v3_any_perpendicular(d));
    /* The torque angle * len^2 about axis, as a move of the bone's end across it. */
    across = ik_v3_scale(ik_v3_cross(axis, d), pull * angle * len);
    sim_push(c, i + 1, across);
    sim_push(c, i, ik_v3_scale(across, -1));
    if (i > 0) {
        ik_vec3 p = sim_dir(c, i - 1);
        ik_real plen = c->length[i - 1] * c->scale, ratio;
        if (!(plen > 0) || (p.x == 0 && p.y == 0 && p.z == 0)) return;
        ratio = len / plen < 1000 ? len / plen : 1000;
        across = ik_v3_scale(ik_v3_cross(axis, p), -pull * angle * len * ratio);
        sim_push(c, i, across);
        sim_push(c, i - 1, ik_v3_scale(across, -1));
    }
}

/*
 * A scratch point that left the finite numbers (joints near the range's end, moving fast:
 * now + speed overflows) stays where its joint is: the sub-step is lost for it, never the
 * chain's numbers.
 */
static void sim_keep_finite(ik_chain *c)
{
    int i;
    for (i = 1; i <= c->n; i++) {
        ik_vec3 v = work_point(c, i);
        if (!(isfinite(v.x) && isfinite(v.y) && isfinite(v.z))) set_work_point(c, i, point_load(c, sim_now(c, i)));
    }
}

/*
 * One sub-step of h seconds: each joint moves on with its speed (times keep) and gravity,
 * and the fraction pull of the way towards its place at rest; the distance constraints
 * between equal masses pull the joints together (the base holds), and the bones are posed
 * along them from the base, which makes the lengths exact and holds the limits.
 */
static void sim_step(ik_chain *c, ik_real h, ik_real keep, ik_real pull)
{
    const ik_settings *s = &c->settings;
    /* The forces act in the middle of the sub-step, where the speed has decayed by half
       of keep: the scheme stays second order with damping. */
    ik_real half = sqrt(keep);
    ik_vec3 fall = ik_v3_scale(ik_v3(s->gravity[0], s->gravity[1], c->dim == 3 ? s->gravity[2] : 0), h * h * half);
    int i, pass;
    sim_keep_dirs(c);
    set_work_point(c, 0, c->base);
    for (i = 1; i <= c->n; i++) {
        ik_vec3 now = point_load(c, sim_now(c, i)), before = point_load(c, sim_before(c, i));
        set_work_point(c, i, ik_v3_add(now, ik_v3_add(ik_v3_scale(ik_v3_sub(now, before), keep), fall)));
    }
    sim_keep_finite(c);
    if (pull > 0) {
        for (i = 0; i < c->n; i++) sim_spring(c, i, pull * half);
        sim_keep_finite(c);
    }
    for (pass = 0; pass < SIM_PASSES; pass++)
        if (!sim_constrain(c)) break;
    sim_keep_finite(c);
    store_joint0(c);
    pose_towards_work(c, 0);
    for (i = 0; i <= c->n; i++) {
        ik_real *now = sim_now(c, i), *before = sim_before(c, i);
        point_store(c, before, point_load(c, now));
        point_store(c, now, ik_joint_v3(c, i));
    }
}

ik_status ik_chain_simulate(ik_chain *c, ik_real dt)
{
    ik_vec3 base;
    ik_vec2 turn;
    ik_real angle, time, h, keep, pull;
    ik_quat rot;
    int steps, k;
    if (isnan(dt) || !(dt > 0) || !isfinite(dt)) return IK_ERR_TIME_STEP;
    ik_chain_follow(c);
    ik_chain_settle(c);
    ik_chain_fk(c);
    if (!sim_continues(c)) sim_start(c);

    /* A longer dt (a hitch) counts as SIM_MAX_TIME: the work per call is bounded. */
    time = dt < SIM_MAX_TIME ? dt : SIM_MAX_TIME;
    steps = (int)ceil(time * SIM_RATE);
    if (steps < 1) steps = 1;
    h = time / steps;
    keep = exp(-c->settings.damping * h);
    pull = c->settings.stiffness * h * h;
    if (pull > 1) pull = 1;
    base = c->base, angle = c->base_angle, turn = c->base_turn, rot = c->base_rot;
    for (k = 1; k <= steps; k++) {
        if (k < steps) sim_base_at(c, base, angle, rot, (ik_real)k / steps, time);
        else c->base = base, c->base_angle = angle, c->base_turn = turn, c->base_rot = rot;
        sim_step(c, h, keep, pull);
    }

    c->sim_live = 1;
    c->sim_scale = c->scale;
    c->sim_base_before = c->sim_base, c->sim_time = time;
    c->sim_base = base, c->sim_base_angle = angle, c->sim_base_rot = rot;
    if (c->dim == 2) memcpy(c->sim_turn, c->turn, (size_t)c->n * sizeof(ik_vec2));
    else memcpy(c->sim_rot, c->rot, (size_t)c->n * sizeof(ik_quat));
    ik_chain_changed(c);
    return IK_OK;
}

ik_status ik_chain_set_rest(ik_chain *c)
{
    int i;
    ik_chain_follow(c);
    ik_chain_settle(c);
    for (i = 0; i < c->n; i++) {
        if (c->dim == 2) c->rest_turn[i] = c->turn[i];
        else c->rest_rot[i] = c->rot[i];
    }
    return IK_OK;
}

/* ---- src/gait.c ---- */
/*
 * gait.c - a stepping controller: feet planted on the ground that step, in groups that take
 * turns, to keep under a moving body (ik_gait_*). It moves no bone itself: each update
 * sets every leg's goal to its foot, and the caller solves the legs (a rig, or each chain).
 *
 * Up is +y (or -y, for a y-down screen: the option up). Each leg's home is where its tip was when the gait was made, kept in its base
 * frame (for a leg attached to a body, the frame of the body's bone it hangs on). A
 * planted foot stays where it is; once it is farther than stride from its home (measured
 * across the ground: x in 2D, x and z in 3D), its group steps when its turn comes: the
 * feet rise on an arc to a landing point lead * stride past the home along the home's
 * motion, which follows the home until they land, at the ground's height there.
 */

#include <stdlib.h>
#include <string.h>

typedef struct ik_gait_leg {
    ik_chain *chain;
    ik_vec3 home_local; /* the home in the leg's base frame */
    ik_vec3 home;       /* in the world, at the last update */
    ik_vec3 foot;       /* in the world */
    ik_vec3 from, to;   /* a step's lift-off and landing points */
    ik_real progress;   /* 0 to 1 through a step */
    int stepping;
    int group;
} ik_gait_leg;

/* "ikgt": the first word of every gait. */
#define IK_GAIT_MAGIC 0x696b6774u

struct ik_gait {
    unsigned magic;
    int count, groups, dim;
    ik_gait_options options;
    ik_gait_leg *leg;  /* [count] */
    ik_gait_leg *next; /* [count]: an update's new state, kept only when all of it is good */
    ik_real *far;      /* [count]: per group, its farthest foot's distance from home */
    ik_real *since;    /* [count]: per group, how long its farthest foot has been past stride */
    ik_real *room;     /* [count]: how long each free place in the air has been free */
};

#define GAIT_HEADER ((sizeof(struct ik_gait) + 15u) / 16u * 16u)

ik_gait_options ik_gait_default_options(ik_real stride)
{
    ik_gait_options o;
    memset(&o, 0, sizeof o);
    o.stride = stride;
    o.step_time = IK_DEFAULT_STEP_TIME;
    o.lift = IK_DEFAULT_LIFT * stride;
    o.lead = IK_DEFAULT_LEAD;
    o.max_groups = 1;
    o.up = 1;
    o.ground = NULL;
    o.user = NULL;
    return o;
}

size_t ik_gait_size(int count)
{
    if (count < 1 || (size_t)count > ((size_t)-1 - GAIT_HEADER) / (2 * sizeof(ik_gait_leg) + 3 * sizeof(ik_real)))
        return 0;
    return GAIT_HEADER + (size_t)count * (2 * sizeof(ik_gait_leg) + 3 * sizeof(ik_real));
}

static int in_range(ik_real v) { return isfinite(v) && fabs(v) <= IK_MAX_COORD; }

ik_status ik_gait_validate(const ik_gait_options *o)
{
    if (!(in_range(o->stride) && o->stride > 0)) return IK_ERR_STRIDE;
    if (!(in_range(o->step_time) && o->step_time > 0)) return IK_ERR_STEP_TIME;
    if (!(in_range(o->lift) && o->lift >= 0)) return IK_ERR_LIFT;
    if (!(isfinite(o->lead) && o->lead >= 0 && o->lead * o->stride <= IK_MAX_COORD)) return IK_ERR_LEAD;
    if (o->max_groups < 1) return IK_ERR_MAX_GROUPS;
    if (o->up != 1 && o->up != -1) return IK_ERR_UP;
    return IK_OK;
}

/* The leg's base frame applied to a local point, and undone. */
static ik_vec3 to_world(const ik_chain *c, ik_vec3 p)
{
    if (c->dim == 2) {
        ik_vec2 r = ik_v2_rotate(ik_v2(p.x, p.y), c->base_turn);
        return ik_v3(c->base.x + r.x, c->base.y + r.y, 0);
    }
    return ik_v3_add(c->base, ik_q_rotate(c->base_rot, p));
}

static ik_vec3 to_local(const ik_chain *c, ik_vec3 p)
{
    ik_vec3 d = ik_v3_sub(p, c->base);
    if (c->dim == 2) {
        ik_vec2 r = ik_v2_unrotate(ik_v2(d.x, d.y), c->base_turn);
        return ik_v3(r.x, r.y, 0);
    }
    return ik_q_rotate(ik_q_conj(c->base_rot), d);
}

/* The leg's home in the world now (its base brought up to date with its parents). */
static ik_vec3 home_now(ik_gait_leg *leg)
{
    ik_chain_follow(leg->chain);
    return to_world(leg->chain, leg->home_local);
}

ik_status ik_gait_init(void *memory, size_t size, ik_chain *const *legs, int count, const int *groups,
                       const ik_gait_options *options, ik_gait **out)
{
    ik_gait *g = (ik_gait *)memory;
    ik_status st;
    int k, j, most = -1;
    if (count < 1) return IK_ERR_COUNT;
    if (memory == NULL || ik_gait_size(count) == 0 || size < ik_gait_size(count)) return IK_ERR_TOO_LARGE;
    st = ik_gait_validate(options);
    if (st != IK_OK) return st;
    for (k = 0; k < count; k++) {
        if (legs[k]->dim != legs[0]->dim) return IK_ERR_DIMENSION;
        for (j = 0; j < k; j++)
            if (legs[j] == legs[k]) return IK_ERR_GROUPS; /* a leg twice */
        if (groups) {
            if (groups[k] < 0 || groups[k] >= count) return IK_ERR_GROUPS;
            if (groups[k] > most) most = groups[k];
        }
    }
    if (groups) { /* every group from 0 to the last has a leg */
        for (j = 0; j <= most; j++) {
            for (k = 0; k < count && groups[k] != j; k++) {}
            if (k == count) return IK_ERR_GROUPS;
        }
    }

    memset(g, 0, ik_gait_size(count));
    g->magic = IK_GAIT_MAGIC;
    g->count = count;
    g->groups = groups ? most + 1 : count;
    g->dim = legs[0]->dim;
    g->options = *options;
    g->leg = (ik_gait_leg *)((unsigned char *)g + GAIT_HEADER);
    g->next = g->leg + count;
    g->far = (ik_real *)(g->next + count);
    g->since = g->far + count;
    g->room = g->since + count;
    for (k = 0; k < count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        ik_chain *c = legs[k];
        leg->chain = c;
        leg->group = groups ? groups[k] : k;
        ik_chain_update(c);
        leg->home_local = to_local(c, ik_joint_v3(c, c->n));
    }
    ik_gait_reset(g);
    *out = g;
    return IK_OK;
}

ik_gait *ik_gait_create(ik_chain *const *legs, int count, const int *groups, const ik_gait_options *options,
                        ik_status *status)
{
    size_t size = ik_gait_size(count);
    void *memory = size ? malloc(size) : NULL;
    ik_gait *g = NULL;
    ik_status st = count < 1 ? IK_ERR_COUNT : size == 0 ? IK_ERR_TOO_LARGE : memory ? IK_OK : IK_ERR_NO_MEMORY;
    if (st == IK_OK) st = ik_gait_init(memory, size, legs, count, groups, options, &g);
    if (st != IK_OK) {
        free(memory);
        g = NULL;
    }
    if (status) *status = st;
    return g;
}

void ik_gait_destroy(ik_gait *gait) { free(gait); }

int ik_gait_count(const ik_gait *gait) { return gait->count; }

void ik_gait_set_ground(ik_gait *gait, ik_ground_fn ground, void *user)
{
    gait->options.ground = ground;
    gait->options.user = user;
}

int ik_gait_check(const void *memory, size_t size)
{
    const ik_gait *g = (const ik_gait *)memory;
    return memory && size >= GAIT_HEADER && g->magic == IK_GAIT_MAGIC && g->count >= 1 &&
           size >= ik_gait_size(g->count) && g->leg == (const ik_gait_leg *)((const unsigned char *)g + GAIT_HEADER);
}

void ik_gait_reset(ik_gait *g)
{
    int k;
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        leg->home = home_now(leg);
        leg->foot = leg->from = leg->to = leg->home;
        leg->progress = 0;
        leg->stepping = 0;
    }
}

/* The distance across the ground (x in 2D; x and z in 3D) from a to b. */
static ik_real across(const ik_gait *g, ik_vec3 a, ik_vec3 b)
{
    ik_real dx = b.x - a.x, dz = g->dim == 3 ? b.z - a.z : 0;
    return g->dim == 3 ? hypot(dx, dz) : fabs(dx);
}

/* Where a step lands with the home at `at`: lead * stride past it along the home's motion
   across the ground since the last update (from before to home), at the ground's height. */
static int landing(const ik_gait *g, ik_vec3 at, ik_vec3 home, ik_vec3 before, ik_vec3 *out)
{
    const ik_gait_options *o = &g->options;
    ik_vec3 move = ik_v3(home.x - before.x, 0, g->dim == 3 ? home.z - before.z : 0);
    ik_vec3 to = ik_v3_add(at, ik_v3_scale(ik_v3_normalize_or(move, ik_v3(0, 0, 0)), o->lead * o->stride));
    if (o->ground) {
        ik_real y = 0;
        if (!o->ground(o->user, to.x, g->dim == 3 ? to.z : 0, &y) || !in_range(y)) return 0;
        to.y = y + 0.0;
    }
    *out = to;
    return 1;
}

/* The foot through a step: along the line from lift-off to landing, raised lift at the
   middle (a parabola). */
static ik_vec3 on_arc(const ik_gait *g, const ik_gait_leg *leg)
{
    ik_real s = leg->progress;
    ik_vec3 p = ik_v3_add(leg->from, ik_v3_scale(ik_v3_sub(leg->to, leg->from), s));
    p.y += g->options.up * g->options.lift * 4 * s * (1 - s);
    return p;
}

static int within(const ik_gait *g, ik_vec3 p)
{
    return in_range(p.x) && in_range(p.y) && (g->dim == 2 || in_range(p.z));
}

/*
 * Events between two updates happen at their own time, not at the update's: a foot that
 * lands early in the frame frees its place in the air then, and a group that steps starts
 * from when its foot passed stride (the home's motion across the ground tells when) or its
 * place came free, whichever is later. So the walk is the same at 30 Hz as at 144.
 */
ik_status ik_gait_update(ik_gait *g, ik_real dt)
{
    const ik_gait_options *o = &g->options;
    ik_gait_leg *next = g->next;
    ik_real advance;
    int k, j, in_air = 0, rooms = 0;
    if (isnan(dt) || !(dt > 0) || !isfinite(dt)) return IK_ERR_TIME_STEP;
    for (k = 0; k < g->count; k++) /* a held tip's goal is its hold: no foot to set */
        if (g->leg[k].chain->tip_parent) return IK_ERR_HELD;
    advance = dt / o->step_time;
    memcpy(next, g->leg, (size_t)g->count * sizeof *next);

    /* Places in the air free for the whole update. */
    for (j = 0; j < g->groups; j++) g->far[j] = 0;
    for (k = 0; k < g->count; k++)
        if (next[k].stepping) g->far[next[k].group] = -1;
    for (j = 0; j < g->groups; j++) in_air += g->far[j] < 0;
    for (; rooms < o->max_groups - in_air && rooms < g->count; rooms++) g->room[rooms] = dt;

    /* The feet in the air move on; those at the end of their step land, freeing a place. */
    for (j = 0; j < g->groups; j++) g->since[j] = -1; /* a group's landing time, once */
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &next[k];
        ik_vec3 before = leg->home;
        leg->home = home_now(leg);
        if (!within(g, leg->home)) return IK_ERR_RANGE;
        if (!leg->stepping) continue;
        leg->progress += advance;
        if (leg->progress >= 1) { /* down `ago` seconds ago, where the home was then */
            ik_real ago = fmin((leg->progress - 1) * o->step_time, dt);
            ik_vec3 then = ik_v3_sub(leg->home, ik_v3_scale(ik_v3_sub(leg->home, before), ago / dt));
            if (!landing(g, then, leg->home, before, &leg->to)) return IK_ERR_GROUND;
            leg->foot = leg->to;
            leg->progress = 0;
            leg->stepping = 0;
            if (g->since[leg->group] < 0) g->since[leg->group] = ago;
        } else {
            if (!landing(g, leg->home, leg->home, before, &leg->to)) return IK_ERR_GROUND;
            leg->foot = on_arc(g, leg);
        }
    }
    for (j = 0; j < g->groups; j++)
        if (g->since[j] >= 0 && rooms < g->count) g->room[rooms++] = g->since[j];

    /* How far each group on the ground is from home, and since when past stride. */
    for (j = 0; j < g->groups; j++) g->far[j] = 0, g->since[j] = 0;
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &next[k];
        ik_real d = across(g, leg->foot, leg->home);
        if (leg->stepping) {
            g->far[leg->group] = -1;
        } else if (g->far[leg->group] >= 0 && d > g->far[leg->group]) {
            ik_real speed = across(g, g->leg[k].home, leg->home) / dt;
            g->far[leg->group] = d;
            g->since[leg->group] = speed > 0 ? fmin((d - o->stride) / speed, dt) : dt;
        }
    }

    /* While a place is free, the group whose foot is farthest past stride steps, from the
       later of when it passed stride and when the place (the longest free) came free. */
    while (rooms > 0) {
        int best = -1, oldest = 0;
        ik_real credit;
        /* (farther by more than rounding: feet as far as each other go in the groups' order,
           the same at every frame rate) */
        for (j = 0; j < g->groups; j++)
            if (g->far[j] > o->stride && (best < 0 || g->far[j] > g->far[best] + 1e-9 * o->stride)) best = j;
        if (best < 0) break;
        for (j = 1; j < rooms; j++)
            if (g->room[j] > g->room[oldest]) oldest = j;
        credit = fmin(g->since[best], g->room[oldest]);
        g->room[oldest] = g->room[--rooms];
        for (k = 0; k < g->count; k++) {
            ik_gait_leg *leg = &next[k];
            if (leg->group != best) continue;
            leg->stepping = 1;
            leg->progress = fmin(credit / o->step_time, 1);
            leg->from = leg->foot;
            if (!landing(g, leg->home, leg->home, g->leg[k].home, &leg->to)) return IK_ERR_GROUND;
            if (leg->progress >= 1) { /* a step shorter than the time since: it is down */
                leg->foot = leg->to;
                leg->progress = 0;
                leg->stepping = 0;
            } else {
                leg->foot = on_arc(g, leg);
            }
        }
        g->far[best] = -1;
    }
    for (k = 0; k < g->count; k++)
        if (!within(g, next[k].foot) || !within(g, next[k].to)) return IK_ERR_RANGE;

    /* All of it is good: kept, and every leg's goal is its foot. */
    memcpy(g->leg, next, (size_t)g->count * sizeof *next);
    for (k = 0; k < g->count; k++) {
        ik_gait_leg *leg = &g->leg[k];
        ik_real t[3];
        t[0] = leg->foot.x, t[1] = leg->foot.y, t[2] = leg->foot.z;
        ik_chain_set_target(leg->chain, t);
    }
    return IK_OK;
}

ik_status ik_gait_foot(const ik_gait *g, int k, ik_real out[3], int *stepping, ik_real *progress)
{
    const ik_gait_leg *leg;
    if (k < 0 || k >= g->count) return IK_ERR_INDEX;
    leg = &g->leg[k];
    out[0] = leg->foot.x, out[1] = leg->foot.y, out[2] = g->dim == 3 ? leg->foot.z : 0;
    if (stepping) *stepping = leg->stepping;
    if (progress) *progress = leg->stepping ? leg->progress : 0;
    return IK_OK;
}

ik_chain *ik_gait_leg_chain(const ik_gait *g, int k)
{
    return k >= 0 && k < g->count ? g->leg[k].chain : NULL;
}
