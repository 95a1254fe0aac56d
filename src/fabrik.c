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
 * in one step, as in the paper; so does a target within tolerance of full reach, which
 * the straight chain reaches and FABRIK's passes approach only very slowly. A solve that stops making progress on a target within
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

/* One solve in progress; the single and the batched solve share every step of it. */
typedef struct run {
    ik_chain *c;
    ik_vec3 target;
    ik_escape escape;
    int iter;
    int active;  /* iterating */
    int settled; /* the pose is final (the limited escape finished it) */
} run;

/*
 * Starts a solve: 0 when it is finished already (within tolerance, or out of reach and
 * straightened: out is filled), else 1 with the points in c->work ready to iterate.
 */
static int start(run *r, ik_chain *c, ik_vec3 target, ik_result *out)
{
    ik_vec3 *p = c->work, base = c->joint[0];
    ik_real total = 0;
    int i;
    if (ik_chain_tip_distance(c, target) <= c->settings.tolerance) {
        ik_chain_finish(c, target, 0, out);
        return 0;
    }
    for (i = 0; i < c->n; i++) total += c->length[i];
    /* Out of reach, or within tolerance of full reach (where FABRIK crawls): straight. */
    if (ik_v3_len(ik_v3_sub(target, base)) >= total - c->settings.tolerance) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, base), c->dir[0]);
        p[0] = base;
        for (i = 0; i < c->n; i++) p[i + 1] = ik_v3_add(p[i], ik_v3_scale(u, c->length[i]));
        ik_chain_apply_points(c, p);
        ik_chain_finish(c, target, 1, out);
        return 0;
    }
    r->c = c;
    r->target = target;
    r->escape = ik_escape_start(c, target);
    r->iter = 0;
    r->active = 1;
    r->settled = 0;
    for (i = 0; i <= c->n; i++) p[i] = c->joint[i];
    return 1;
}

/* After an iteration's passes: stop at tolerance or at the last iteration; escape. */
static void after_iteration(run *r)
{
    ik_chain *c = r->c;
    ik_vec3 *p = c->work;
    ik_real distance = ik_v3_len(ik_v3_sub(r->target, p[c->n]));
    int i;
    r->iter++;
    if (distance <= c->settings.tolerance) {
        r->active = 0;
        return;
    }
    if (ik_escape_stuck(c, &r->escape, distance)) {
        settle(c, p);
        if (c->limited) {
            r->iter += ik_escape_finish(c, r->target, c->settings.iterations - r->iter, 0);
            r->active = 0;
            r->settled = 1;
            return;
        }
        ik_escape_kick(c, r->target, &r->escape, 0);
        for (i = 0; i <= c->n; i++) p[i] = c->joint[i];
    }
    if (r->iter >= c->settings.iterations) r->active = 0;
}

static void end(run *r, ik_result *out)
{
    if (!r->settled) settle(r->c, r->c->work);
    ik_chain_finish(r->c, r->target, r->iter, out);
}

void ik_fabrik(ik_chain *c, ik_vec3 target, ik_result *out)
{
    run r;
    if (!start(&r, c, target, out)) return;
    while (r.active) {
        backward(c, c->work, target);
        if (c->limited) forward_limited(c, c->work);
        else forward(c, c->work);
        after_iteration(&r);
    }
    end(&r, out);
}

/*
 * The batch: each chain's steps are exactly those of backward() and forward() without
 * limits, in the same order; only the chains' steps are interleaved, step s of every
 * active chain before step s + 1 of any, so the processor can overlap them.
 */
void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, ik_result *out)
{
    run runs[IK_BATCH];
    int started[IK_BATCH], live[IK_BATCH], n[IK_BATCH], k, j, s, m, longest;
    ik_vec3 *p[IK_BATCH];
    const ik_vec3 *dir[IK_BATCH];
    const ik_real *length[IK_BATCH];
    for (k = 0; k < count; k++) started[k] = start(&runs[k], chains[k], targets[k], &out[k]);
    for (;;) {
        /* The chains still iterating, gathered so the passes below only compute. */
        for (k = 0, m = 0, longest = 0; k < count; k++) {
            if (!started[k] || !runs[k].active) continue;
            live[m] = k;
            n[m] = chains[k]->n;
            p[m] = chains[k]->work;
            dir[m] = chains[k]->dir;
            length[m] = chains[k]->length;
            if (n[m] > longest) longest = n[m];
            p[m][n[m]] = targets[k];
            m++;
        }
        if (m == 0) break;
        for (s = 0; s < longest; s++) {
            for (j = 0; j < m; j++) {
                int i = n[j] - 1 - s;
                if (i < 0) continue;
                p[j][i] = ik_v3_sub(p[j][i + 1],
                                    ik_v3_resize_or(ik_v3_sub(p[j][i + 1], p[j][i]), length[j][i], dir[j][i]));
            }
        }
        for (j = 0; j < m; j++) p[j][0] = chains[live[j]]->joint[0];
        for (s = 0; s < longest; s++) {
            for (j = 0; j < m; j++) {
                if (s >= n[j]) continue;
                p[j][s + 1] = ik_v3_add(p[j][s],
                                        ik_v3_resize_or(ik_v3_sub(p[j][s + 1], p[j][s]), length[j][s], dir[j][s]));
            }
        }
        for (j = 0; j < m; j++) after_iteration(&runs[live[j]]);
    }
    for (k = 0; k < count; k++)
        if (started[k]) end(&runs[k], &out[k]);
}
