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
#include "chain.h"

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
