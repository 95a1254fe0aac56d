/*
 * relax.c - constraint relaxation, 2D and 3D, after Ryan Juckett, "Constraint Relaxation
 * IK in 2D", ../shared/seeds/constraint-relaxation-ik-2d.txt.
 *
 * The joints are points b[0..m-1] (the bases of the bones; the tip is implicit) held
 * together by distance constraints. One iteration: snap the end bone's base to its length
 * from the target; resolve each interior constraint (bones m-2 down to 1) by moving both
 * ends, in proportion to their joints' weights; then pull b[1] back to its length from the
 * fixed base b[0]. The points persist across iterations, as in the article.
 *
 * After each iteration the points are mapped onto bones of exact length: each bone along
 * its relaxed segment, and the end bone pointed at the target from where its base really
 * is (the article points it from the relaxed point, which may not be where the
 * exact-length bones put it). The mapped joints are the chain's (pose_behind), so the
 * distance the solve stops on is the one it reports. As the article notes, only this
 * mapping depends on the dimension.
 *
 * Joint limits: a chain with limits is posed from the mapped points after every iteration,
 * each bone within its limits (ik_pose_points), and relaxes on from the joints of that
 * pose, so the limits act during the passes and the points never drift into a pose the
 * limits forbid. A solve that stops making progress escapes or stops (escape.c); with
 * limits it first takes joint-space steps (ik_joint_finish, joint_space.c), as FABRIK does.
 *
 * A chain without limits or pinned joints and a target beyond its reach (or within tolerance of it) goes
 * straight at it in one step, as FABRIK does: that is the pose relaxation converges to, and
 * a long chain would crawl there (a 10-bone rope took more iterations than the default).
 *
 * The article skips a constraint whose points coincide or whose weights sum to zero; so do
 * we (testing for exact zero: the article's epsilon of 1e-4 would be a length in world units).
 */
#include "chain.h"

#include <string.h>

static ik_vec3 load(const ik_chain *c, const ik_real *points, int i)
{
    const ik_real *p = points + (size_t)i * (size_t)c->dim;
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

static void store(const ik_chain *c, ik_real *points, int i, ik_vec3 v)
{
    ik_real *p = points + (size_t)i * (size_t)c->dim;
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/*
 * Maps the relaxed points b[0..m-1] to exact-length bones into out[0..m] (may be b). A
 * segment with no direction keeps its bone's direction, as ik_pose_points does.
 */
static void map_points(const ik_chain *c, ik_real *b, ik_vec3 target, int m, ik_real *out)
{
    ik_vec3 joint = load(c, b, 0), relaxed = joint, u;
    int i;
    store(c, out, 0, joint);
    for (i = 0; i + 1 < m; i++) {
        u = ik_v3_normalize_or(ik_v3_sub(load(c, b, i + 1), relaxed), ik_dir_v3(c, i));
        relaxed = load(c, b, i + 1);
        joint = ik_v3_add(joint, ik_v3_scale(u, c->length[i]));
        store(c, out, i + 1, joint);
    }
    u = ik_v3_normalize_or(ik_v3_sub(target, joint), ik_dir_v3(c, m - 1));
    store(c, out, m, ik_v3_add(joint, ik_v3_scale(u, c->length[m - 1])));
}

/*
 * The mapped points become the chain's joints: as they are (pose_behind) without limits;
 * posed within the limits with them, and b then the joints of that pose.
 */
static void take_points(ik_chain *c, ik_real *b, ik_vec3 target, int m)
{
    if (!c->limited) {
        map_points(c, b, target, m, c->joint);
        c->pose_behind = 1;
        return;
    }
    map_points(c, b, target, m, b);
    ik_pose_points(c, b, 0, m);
    memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
}

/* One relaxation pass over the points (see the top of the file). */
static void relax_pass(ik_chain *c, ik_real *b, ik_vec3 target, int m)
{
    const ik_real *len = c->length, *weight = c->weight;
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, load(c, b, m - 1)), zero);
    int i;
    store(c, b, m - 1, ik_v3_sub(target, ik_v3_scale(u, len[m - 1])));

    for (i = m - 2; i >= 1; i--) {
        /*
         * Each end moves by its weight's share of the fix. Only the ratio matters: divided
         * by the larger weight first, the sum cannot overflow (weights near 1e308) nor the
         * fix divided by it (weights near 5e-324).
         */
        ik_real larger = weight[i] > weight[i + 1] ? weight[i] : weight[i + 1];
        ik_vec3 bi = load(c, b, i), bn = load(c, b, i + 1), v = ik_v3_sub(bn, bi);
        u = ik_v3_normalize_or(v, zero);
        if ((u.x != 0 || u.y != 0 || u.z != 0) && larger > 0) {
            ik_real share = weight[i] / larger, share_next = weight[i + 1] / larger;
            ik_real total = share + share_next;
            /* u * (l - d) moves the ends apart (or together) to distance l. */
            ik_vec3 fix = ik_v3_scale(u, len[i] - ik_v3_len(v));
            bi = ik_v3_sub(bi, ik_v3_scale(fix, share / total));
            bn = ik_v3_add(bn, ik_v3_scale(fix, share_next / total));
            store(c, b, i, bi);
            store(c, b, i + 1, bn);
        }
        /* Limits: turn b[i] about b[i + 1] so bone i keeps within its child's limit. */
        if (c->limited && weight[i] > 0 && len[i + 1] > 0) {
            ik_vec3 next = i + 2 < m ? load(c, b, i + 2) : target;
            ik_vec3 child = ik_v3_normalize_or(ik_v3_sub(next, bn), zero);
            ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(bn, bi), zero);
            if (ik_v3_dot(child, child) > 0 && ik_v3_dot(dir, dir) > 0) {
                dir = ik_limit_backward(c, i, dir, child);
                store(c, b, i, ik_v3_sub(bn, ik_v3_scale(dir, ik_v3_len(ik_v3_sub(bn, bi)))));
            }
        }
    }

    u = ik_v3_normalize_or(ik_v3_sub(load(c, b, 1), load(c, b, 0)), zero);
    if (u.x != 0 || u.y != 0 || u.z != 0)
        store(c, b, 1, ik_v3_add(load(c, b, 0), ik_v3_scale(u, len[0])));
}

static int relax_run(ik_chain *c, ik_vec3 target, int m, int iter)
{
    const ik_settings *s = &c->settings;
    ik_real *b = c->work;
    ik_progress progress;
    int i, pinned = 0, budget = ik_iteration_budget(s->iterations);

    /* No bone before the tip bone (a 1-bone chain with an orientation goal): nothing to
       relax, the tip bone takes its goal afterwards (solve.c). */
    if (m == 0 || ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) return iter;
    /* A weight of 0 pins an interior joint: the escape bends only the bones after it. */
    for (i = 1; i < m; i++)
        if (c->weight[i] == 0) pinned = i;
    if (!c->limited && !pinned &&
        ik_v3_len(ik_v3_sub(target, ik_joint_v3(c, 0))) >= ik_chain_reach_to(c, m, NULL) - s->tolerance) {
        ik_fabrik_straighten(c, target, m);
        return iter + 1;
    }
    memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
    progress = ik_progress_start(c, target, m);
    /* A single bone has no constraint to relax: the mapping points it at the target. */
    if (m == 1) {
        take_points(c, b, target, m);
        return iter;
    }
    for (;;) {
        ik_real distance;
        relax_pass(c, b, target, m);
        take_points(c, b, target, m);
        iter++;
        distance = ik_joint_distance(c, m, target);
        if (distance <= s->tolerance || iter >= budget) break;
        switch (ik_progress_next(c, &progress, distance)) {
        case IK_GO_ON: continue;
        case IK_STOP: return iter;
        case IK_KICK: break;
        case IK_CRAWL:
            /* Creeping without limits: joint-space steps (joint_space.c), the pinned joints
               kept, then passes again if they leave anything. */
            iter += ik_joint_finish(c, target, m, budget - iter, pinned, 1);
            if (ik_joint_distance(c, m, target) <= s->tolerance || iter >= budget) return iter;
            memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
            continue;
        }
        ik_chain_settle(c);
        if (c->limited) {
            /* Joint-space steps first (joint_space.c); what they leave, the CCD sweeps. */
            iter += ik_joint_finish(c, target, m, budget - iter, pinned, 1);
            return iter + ik_escape_finish(c, target, m, budget - iter, pinned);
        }
        ik_escape_kick(c, target, &progress, pinned);
        memcpy(b, c->joint, (size_t)m * (size_t)c->dim * sizeof *b);
    }
    return iter;
}

int ik_relax(ik_chain *c, ik_vec3 target, int m)
{
    int iter = 0, i, pinned = 0;
    for (i = 1; i < m; i++)
        if (c->weight[i] == 0) pinned = i;
    /* Tracking a goal with limits: joint-space steps first (joint_space.c), the pinned joints
       kept. */
    if (ik_joint_track(c, target, m, pinned, 1, &iter, NULL)) return iter;
    iter = relax_run(c, target, m, iter);
    /* The point behind an oriented tip bone reached: its parent turned so the tip bone's
       limit lets it take its goal (joint_space.c), the pinned joints kept. */
    if (c->limited && ik_limits_oriented(c, m) && iter < ik_iteration_budget(c->settings.iterations))
        iter += ik_joint_finish(c, target, m, ik_iteration_budget(c->settings.iterations) - iter, pinned, 1);
    return iter;
}
