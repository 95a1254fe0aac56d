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
 * Joint limits act inside both passes, as the paper suggests. Backward, a bone's direction
 * is held within what its child's limit allows relative to the child's new direction (the
 * child's 2D range, or its 3D cone, the angle between the two directions). Forward, each
 * bone is aimed along its new segment and moved within its own limits (ik_aim_bone) before
 * the next joint is placed, so every forward pass ends on a pose the limits allow. A chain
 * with no limits keeps the plain passes, which need no trigonometry.
 *
 * Unreachable (|target - base| >= total length): the chain straightens towards the target
 * in one step, as in the paper. A solve that stops making progress on a target within
 * reach escapes (solve.c) unless settings.escape is off.
 */
#include "chain.h"

/* The forward pass within limits: the pose is written as it goes, the cache left stale. */
static void forward_limited(ik_chain *c, ik_vec3 *p)
{
    ik_aim parent = ik_aim_start(c);
    int i;
    p[0] = c->joint[0];
    for (i = 0; i < c->n; i++) {
        ik_vec3 dir = c->length[i] > 0 ? ik_v3_normalize_or(ik_v3_sub(p[i + 1], p[i]), c->dir[i])
                                       : c->dir[i];
        dir = ik_aim_bone(c, i, dir, &parent);
        p[i + 1] = ik_v3_add(p[i], ik_v3_scale(dir, c->length[i]));
    }
}

static void forward(const ik_chain *c, ik_vec3 *p)
{
    int i;
    p[0] = c->joint[0];
    for (i = 0; i < c->n; i++)
        p[i + 1] = ik_v3_add(p[i], ik_v3_resize_or(ik_v3_sub(p[i + 1], p[i]), c->length[i], c->dir[i]));
}

static void backward(const ik_chain *c, ik_vec3 *p, ik_vec3 target)
{
    ik_vec3 child = ik_v3(0, 0, 0);
    int i;
    p[c->n] = target;
    if (!c->limited) { /* the plain pass: no directions kept */
        for (i = c->n - 1; i >= 0; i--)
            p[i] = ik_v3_sub(p[i + 1], ik_v3_resize_or(ik_v3_sub(p[i + 1], p[i]), c->length[i], c->dir[i]));
        return;
    }
    for (i = c->n - 1; i >= 0; i--) {
        ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(p[i + 1], p[i]), c->dir[i]);
        if (i + 1 < c->n && c->length[i + 1] > 0) dir = ik_limit_backward(c, i, dir, child);
        p[i] = ik_v3_sub(p[i + 1], ik_v3_scale(dir, c->length[i]));
        if (c->length[i] > 0) child = dir;
    }
}

/* Makes the pose the points' (limited chains wrote it already) and refreshes the cache. */
static void settle(ik_chain *c, const ik_vec3 *p)
{
    if (c->limited) {
        c->stale_from = 0;
        ik_chain_update(c);
    } else {
        ik_chain_apply_points(c, p);
    }
}

void ik_fabrik(ik_chain *c, ik_vec3 target, ik_result *out)
{
    const int n = c->n;
    ik_vec3 *p = c->work;
    ik_vec3 base = c->joint[0];
    ik_escape escape;
    ik_real total = 0;
    int i, iter = 0;

    if (ik_chain_tip_distance(c, target) <= c->settings.tolerance) {
        ik_chain_finish(c, target, 0, out);
        return;
    }
    for (i = 0; i < n; i++) total += c->length[i];

    if (ik_v3_len(ik_v3_sub(target, base)) >= total) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, base), c->dir[0]);
        p[0] = base;
        for (i = 0; i < n; i++) p[i + 1] = ik_v3_add(p[i], ik_v3_scale(u, c->length[i]));
        ik_chain_apply_points(c, p);
        ik_chain_finish(c, target, 1, out);
        return;
    }

    escape = ik_escape_start(c, target);
    for (i = 0; i <= n; i++) p[i] = c->joint[i];
    while (iter < c->settings.iterations) {
        ik_real distance;
        backward(c, p, target);
        if (c->limited) forward_limited(c, p);
        else forward(c, p);
        iter++;
        distance = ik_v3_len(ik_v3_sub(target, p[n]));
        if (distance <= c->settings.tolerance) break;
        if (ik_escape_stuck(c, &escape, distance)) {
            settle(c, p);
            if (c->limited) {
                iter += ik_escape_finish(c, target, c->settings.iterations - iter, 0);
                ik_chain_finish(c, target, iter, out);
                return;
            }
            ik_escape_kick(c, target, &escape, 0);
            for (i = 0; i <= n; i++) p[i] = c->joint[i];
        }
    }
    settle(c, p);
    ik_chain_finish(c, target, iter, out);
}
