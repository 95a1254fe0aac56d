/*
 * ccd.c - cyclic coordinate descent with greed, 2D and 3D, after "IK Solver From Scratch
 * In Unity", ../shared/seeds/ccd-ik-unity.txt (PerformIK_Cascade).
 *
 * Each iteration is one sweep over the joints from the base to the last (sweep.c). With
 * greed_ramp the fraction rises linearly from greed on the first iteration to 1 on the
 * last. The solve stops early once the tip is within tolerance, checked before the first
 * iteration and after each one; a solve that stops making progress escapes or stops
 * (escape.c).
 */
#include "chain.h"

static ik_real greed_at(const ik_settings *s, int iter)
{
    if (!s->greed_ramp || s->iterations < 2) return s->greed;
    return s->greed + (1 - s->greed) * iter / (s->iterations - 1);
}


int ik_ccd(ik_chain *c, ik_vec3 target, int m)
{
    const ik_settings *s = &c->settings;
    ik_progress progress = ik_progress_start(c, target, m);
    int iter = 0;
    if (ik_joint_distance(c, m, target) <= s->tolerance) return 0;
    for (;;) {
        ik_real distance;
        ik_next next;
        ik_ccd_sweep(c, target, m, greed_at(s, iter), 0);
        iter++;
        distance = ik_joint_distance(c, m, target);
        if (distance <= s->tolerance || iter >= ik_iteration_budget(s->iterations)) break;
        next = ik_progress_next(c, &progress, distance);
        if (next == IK_STOP) break;
        if (next == IK_KICK) ik_escape_kick(c, target, &progress, 0);
    }
    return iter;
}
