/*
 * goal.c - a chain's goal and the finish around every solve, shared by single solves and
 * ik_solve_many (solve.c) and rigs (rig.c): how far the tip is from its goal, in distance
 * and angle; the pose before a solve kept, and the tip bone turned to its orientation goal,
 * the pose blended with the one before (mix) and each bone's turn held to max_turn after it.
 */
#include "chain.h"

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
