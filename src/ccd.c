/*
 * ccd.c - cyclic coordinate descent with greed, after "IK Solver From Scratch In Unity",
 * ../shared/seeds/ccd-ik-unity.txt (PerformIK_Cascade).
 *
 * Each iteration visits the joints from the base to the last one, as the article's code
 * does, and turns joint j by the fraction `greed` of the angle between (tip - joint) and
 * (target - joint). The article interpolates quaternions from identity; in 2D we scale the
 * angle itself, which is what that interpolation approximates. With greed_ramp the fraction
 * rises linearly from greed on the first iteration to 1 on the last. The solve stops early
 * once the tip is within tolerance.
 *
 * Turning joint j moves every joint after it rigidly. Rather than moving them all (O(n)
 * per joint), the rotations are composed into one rigid map x -> R x + b that takes a
 * joint's position at the start of the iteration to its current one; each joint is mapped
 * when its turn comes, so an iteration costs O(n). The tip is carried along directly.
 */
#include "chain.h"

void ik_ccd2d(ik_chain *c, ik_vec2 target, ik_result *out)
{
    const int n = c->n, iterations = c->settings.iterations;
    const ik_real tolerance = c->settings.tolerance, greed = c->settings.greed;
    const int ramp = c->settings.greed_ramp && iterations > 1;
    ik_vec2 *p = c->work; /* joint positions at the start of the current iteration */
    ik_vec2 tip = c->joint[n];
    int i, j, iter = 0;

    for (i = 0; i <= n; i++) p[i] = c->joint[i];
    while (ik_v2_len(ik_v2_sub(target, tip)) > tolerance && iter < iterations) {
        ik_real g = ramp ? greed + (1 - greed) * iter / (iterations - 1) : greed;
        ik_vec2 rot = ik_v2(1, 0), shift = ik_v2(0, 0); /* R as (cos, sin), and b */
        for (j = 0; j < n; j++) {
            ik_vec2 pj = ik_v2_add(ik_v2_rotate(p[j], rot), shift);
            ik_vec2 to_tip = ik_v2_sub(tip, pj), to_target = ik_v2_sub(target, pj);
            /* atan2(0, 0) = 0: a joint on the tip or on the target does not turn. */
            ik_real delta = g * ik_v2_angle_between(to_tip, to_target);
            p[j] = pj;
            if (delta != 0) {
                ik_vec2 r = ik_v2(cos(delta), sin(delta));
                c->angle[j] = ik_wrap_angle(c->angle[j] + delta);
                /* Compose the turn about pj after the map: x -> r (R x + b - pj) + pj. */
                rot = ik_v2_rotate(rot, r);
                shift = ik_v2_add(ik_v2_rotate(ik_v2_sub(shift, pj), r), pj);
                tip = ik_v2_add(ik_v2_rotate(to_tip, r), pj);
            }
        }
        p[n] = tip;
        iter++;
    }
    /* The angles are the truth: refresh the positions from them, dropping any drift. */
    c->stale_from = 0;
    ik_chain_finish(c, target, iter, out);
}
