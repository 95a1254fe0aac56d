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
