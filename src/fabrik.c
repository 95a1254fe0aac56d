/*
 * fabrik.c - Forward And Backward Reaching Inverse Kinematics, 2D and 3D.
 *
 * A. Aristidou and J. Lasenby, "FABRIK: A fast, iterative solver for the Inverse
 * Kinematics problem", Graphical Models 73(5), 2011. On world-space joint points: the
 * backward pass puts the tip on the target and walks to the base, placing each joint at
 * its bone's length from the child along the line to its old position; the forward pass
 * puts joint 0 back on the base and walks out again. After a forward pass every bone has
 * its exact length, so the tip's distance is the real one. The points are then mapped back
 * onto the pose (ik_chain_apply_points). The loop is the same in 2D and 3D: 2D points
 * have z = 0, which every step keeps.
 *
 * Unreachable (|target - base| >= total length): the chain straightens towards the target
 * in one step, as in the paper.
 */
#include "chain.h"

void ik_fabrik(ik_chain *c, ik_vec3 target, ik_result *out)
{
    const int n = c->n;
    const ik_real tolerance = c->settings.tolerance;
    const ik_real *len = c->length;
    const ik_vec3 *dir = c->dir; /* directions before the solve: fallbacks for */
    ik_vec3 *p = c->work;         /* segments that collapse to a point          */
    ik_vec3 base = c->joint[0];
    ik_real total = 0;
    int i, iter = 0;

    if (ik_chain_tip_distance(c, target) <= tolerance) {
        ik_chain_finish(c, target, 0, out);
        return;
    }
    for (i = 0; i < n; i++) total += len[i];

    if (ik_v3_len(ik_v3_sub(target, base)) >= total) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, base), dir[0]);
        p[0] = base;
        for (i = 0; i < n; i++) p[i + 1] = ik_v3_add(p[i], ik_v3_scale(u, len[i]));
        ik_chain_apply_points(c, p);
        ik_chain_finish(c, target, 1, out);
        return;
    }

    for (i = 0; i <= n; i++) p[i] = c->joint[i];
    while (iter < c->settings.iterations) {
        p[n] = target;
        for (i = n - 1; i >= 0; i--) {
            ik_vec3 back = ik_v3_normalize_or(ik_v3_sub(p[i], p[i + 1]),
                                              ik_v3_scale(dir[i], -1));
            p[i] = ik_v3_add(p[i + 1], ik_v3_scale(back, len[i]));
        }
        p[0] = base;
        for (i = 0; i < n; i++) {
            ik_vec3 fwd = ik_v3_normalize_or(ik_v3_sub(p[i + 1], p[i]), dir[i]);
            p[i + 1] = ik_v3_add(p[i], ik_v3_scale(fwd, len[i]));
        }
        iter++;
        if (ik_v3_len(ik_v3_sub(target, p[n])) <= tolerance) break;
    }
    ik_chain_apply_points(c, p);
    ik_chain_finish(c, target, iter, out);
}
