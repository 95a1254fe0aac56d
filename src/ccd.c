/*
 * ccd.c - cyclic coordinate descent with greed, 2D and 3D, after "IK Solver From Scratch
 * In Unity", ../shared/seeds/ccd-ik-unity.txt (PerformIK_Cascade).
 *
 * Each iteration visits the joints from the base to the last one, as the article's code
 * does. At joint j it takes the shortest rotation turning (tip - joint) into (target -
 * joint) and applies the fraction `greed` of it: the article interpolates from the
 * identity (Quaternion.Lerp); we scale the rotation's angle about the same axis (a slerp),
 * which is exactly "the fraction greed". With greed_ramp the fraction rises linearly from
 * greed on the first iteration to 1 on the last. The solve stops early once the tip is
 * within tolerance, checked before the first iteration and after each one.
 *
 * Turning joint j moves every joint after it rigidly. Rather than moving them all (O(n)
 * per joint), the turns are composed into one rigid map x -> R x + b that takes a joint's
 * position at the start of the iteration to its current one; each joint is mapped when its
 * turn comes, so an iteration costs O(n). The tip is carried along directly. The local
 * pose is the truth: the world cache is refreshed from it after every iteration.
 *
 * Joint limits: each joint's new local rotation is moved within its limits as soon as it
 * turns, and the turn it actually made is the one composed into the map. A solve that stops
 * making progress on a target within reach escapes (solve.c) unless settings.escape is off.
 *
 * Degenerate cases: a joint on the tip or on the target does not turn (atan2(0, 0) = 0 in
 * 2D, a zero direction in 3D); tip and target in exactly opposite directions turn by
 * (greed times) a half turn, in 3D about a fixed perpendicular (ik_q_from_to).
 */
#include "chain.h"

static ik_real greed_at(const ik_settings *s, int iter)
{
    if (!s->greed_ramp || s->iterations < 2) return s->greed;
    return s->greed + (1 - s->greed) * iter / (s->iterations - 1);
}

/* One iteration; c->joint holds the positions at its start. */
static void iterate2d(ik_chain *c, ik_vec2 target, ik_real g, int first)
{
    const ik_vec3 *p = c->joint;
    ik_vec2 rot = ik_v2(1, 0), shift = ik_v2(0, 0); /* R as (cos, sin), and b */
    ik_vec2 tip = ik_v2(p[c->n].x, p[c->n].y);
    int j;
    for (j = first; j < c->n; j++) {
        ik_vec2 pj = ik_v2_add(ik_v2_rotate(ik_v2(p[j].x, p[j].y), rot), shift);
        ik_vec2 to_tip = ik_v2_sub(tip, pj);
        ik_real delta = g * ik_v2_angle_between(to_tip, ik_v2_sub(target, pj));
        ik_real held = 0;
        if (delta != 0 && c->limit[j].flags) {
            /* Within the limits: the held angle is exact, and delta the turn it makes. */
            ik_real angle = ik_chain_angle(c, j);
            held = ik_limit_angle(&c->limit[j], ik_wrap_angle(angle + delta));
            delta = ik_wrap_angle(held - angle);
        }
        if (delta != 0) {
            ik_vec2 r = ik_v2(cos(delta), sin(delta));
            if (c->limit[j].flags) {
                ik_chain_set_turn_angle(c, j, held);
            } else {
                /* Turn by complex multiplication, kept unit to first order (no sqrt). */
                ik_vec2 t = ik_v2_rotate(c->turn[j], r);
                c->turn[j] = ik_v2_scale(t, (3 - ik_v2_dot(t, t)) / 2);
                c->angle[j] = IK_ANGLE_UNKNOWN;
            }
            /* Compose the turn about pj after the map: x -> r (R x + b - pj) + pj. */
            rot = ik_v2_rotate(rot, r);
            shift = ik_v2_add(ik_v2_rotate(ik_v2_sub(shift, pj), r), pj);
            tip = ik_v2_add(ik_v2_rotate(to_tip, r), pj);
        }
    }
}

static void iterate3d(ik_chain *c, ik_vec3 target, ik_real g, int first)
{
    const ik_vec3 *p = c->joint, zero = ik_v3(0, 0, 0);
    ik_quat rot = ik_q_identity();
    ik_vec3 shift = zero, tip = p[c->n];
    int j;
    for (j = first; j < c->n; j++) {
        ik_vec3 pj = ik_v3_add(ik_q_rotate(rot, p[j]), shift);
        ik_vec3 to_tip = ik_v3_sub(tip, pj);
        ik_vec3 u_tip = ik_v3_normalize_or(to_tip, zero);
        ik_vec3 u_target = ik_v3_normalize_or(ik_v3_sub(target, pj), zero);
        ik_quat r, parent, local;
        if (ik_v3_dot(u_tip, u_tip) == 0 || ik_v3_dot(u_target, u_target) == 0) continue;
        r = ik_q_fraction(ik_q_from_to(u_tip, u_target), g);
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

void ik_ccd_sweep(ik_chain *c, ik_vec3 target, ik_real greed, int first)
{
    if (c->dim == 2) iterate2d(c, ik_v2(target.x, target.y), greed, first);
    else iterate3d(c, target, greed, first);
    c->stale_from = 0;
    ik_chain_update(c);
}

void ik_ccd(ik_chain *c, ik_vec3 target, ik_result *out)
{
    const ik_settings *s = &c->settings;
    ik_escape escape = ik_escape_start(c, target);
    int iter = 0;
    while (ik_chain_tip_distance(c, target) > s->tolerance && iter < s->iterations) {
        ik_ccd_sweep(c, target, greed_at(s, iter), 0);
        iter++;
        if (ik_escape_stuck(c, &escape, ik_chain_tip_distance(c, target)))
            ik_escape_kick(c, target, &escape, 0);
    }
    ik_chain_finish(c, target, iter, out);
}
