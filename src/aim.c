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
#include "chain.h"

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
