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
#include "chain.h"

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
