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
#include "chain.h"

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
