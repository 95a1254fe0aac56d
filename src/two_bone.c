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
#include "chain.h"

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
