/*
 * relax.c - constraint relaxation, 2D and 3D, after Ryan Juckett, "Constraint Relaxation
 * IK in 2D", ../shared/seeds/constraint-relaxation-ik-2d.txt.
 *
 * The joints are points b[0..n-1] (the bases of the bones; the tip is implicit) held
 * together by distance constraints. One iteration: snap the end bone's base to its length
 * from the target; resolve each interior constraint (bones n-2 down to 1) by moving both
 * ends, in proportion to their joints' weights; then pull b[1] back to its length from the
 * fixed base b[0]. The points persist across iterations, as in the article.
 *
 * Finally the points are mapped back onto bones of exact length: each bone along its
 * relaxed segment, and the end bone pointed at the target from where its base really is
 * (the article points it from the relaxed point, which may not be where the exact-length
 * bones put it). As the article notes, only this mapping depends on the dimension: the
 * loop runs on vec3 points, z = 0 in 2D.
 *
 * Stopping: after each iteration the solve measures where the mapped chain's tip would be
 * (unit vectors, no trigonometry) and stops once it is within tolerance.
 *
 * Joint limits: a chain with limits maps its points onto the pose after every iteration,
 * moving each bone within its limits (ik_aim_bone), and relaxes on from the points of that
 * pose, so the limits act during the passes and the points never drift into a pose the
 * limits forbid. A solve that stops making progress on a target within reach escapes
 * (solve.c) unless settings.escape is off.
 *
 * The article skips a constraint whose points coincide or whose weights sum to zero; so do
 * we (testing for exact zero: the article's epsilon of 1e-4 would be a length in world units).
 */
#include "chain.h"

/*
 * Maps the relaxed points b[0..n-1] to exact-length bones: the mapped joints go to out
 * (may be b itself, or NULL to only measure). Returns the mapped tip's distance to target.
 * A segment with no direction keeps its bone's direction, as ik_chain_apply_points does.
 */
static ik_real map_points(const ik_chain *c, ik_vec3 *b, ik_vec3 target, ik_vec3 *out)
{
    const int n = c->n;
    ik_vec3 joint = b[0], relaxed = b[0], u;
    int i;
    for (i = 0; i + 1 < n; i++) {
        u = ik_v3_normalize_or(ik_v3_sub(b[i + 1], relaxed), c->dir[i]);
        relaxed = b[i + 1];
        joint = ik_v3_add(joint, ik_v3_scale(u, c->length[i]));
        if (out) out[i + 1] = joint;
    }
    u = ik_v3_normalize_or(ik_v3_sub(target, joint), c->dir[n - 1]);
    if (out) out[n] = ik_v3_add(joint, ik_v3_scale(u, c->length[n - 1]));
    return fabs(ik_v3_len(ik_v3_sub(target, joint)) - c->length[n - 1]);
}

/*
 * Limited chains: the mapped points b[0..n] become the pose, each bone within its limits,
 * and b the points of that pose. The cache is left stale. Returns the tip's distance.
 */
static ik_real project(ik_chain *c, ik_vec3 *b, ik_vec3 target)
{
    ik_aim parent = ik_aim_start(c);
    ik_vec3 from = b[0];
    int i;
    for (i = 0; i < c->n; i++) {
        ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(b[i + 1], from), c->dir[i]);
        from = b[i + 1];
        if (c->length[i] == 0) dir = c->dir[i];
        b[i + 1] = ik_v3_add(b[i], ik_v3_scale(ik_aim_bone(c, i, dir, &parent), c->length[i]));
    }
    return ik_v3_len(ik_v3_sub(target, b[c->n]));
}

void ik_relax(ik_chain *c, ik_vec3 target, ik_result *out)
{
    const int n = c->n;
    const ik_real *len = c->length, *weight = c->weight;
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_vec3 *b = c->work;
    ik_escape escape = ik_escape_start(c, target);
    int i, iter = 0, pinned = 0;

    if (ik_chain_tip_distance(c, target) <= c->settings.tolerance) {
        ik_chain_finish(c, target, 0, out);
        return;
    }
    for (i = 0; i < n; i++) b[i] = c->joint[i];
    /* A weight of 0 pins an interior joint: the escape bends only the bones after it. */
    for (i = 1; i < n; i++)
        if (weight[i] == 0) pinned = i;
    /* A single bone has no constraint to relax: the mapping points it at the target. */
    while (n > 1 && iter < c->settings.iterations) {
        ik_real distance;
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(target, b[n - 1]), zero);
        b[n - 1] = ik_v3_sub(target, ik_v3_scale(u, len[n - 1]));

        for (i = n - 2; i >= 1; i--) {
            /*
             * Each end moves by its weight's share of the fix. Only the ratio matters: divided
             * by the larger weight first, the sum cannot overflow (weights near 1e308) nor the
             * fix divided by it (weights near 5e-324).
             */
            ik_real larger = weight[i] > weight[i + 1] ? weight[i] : weight[i + 1];
            ik_vec3 v = ik_v3_sub(b[i + 1], b[i]);
            u = ik_v3_normalize_or(v, zero);
            if ((u.x != 0 || u.y != 0 || u.z != 0) && larger > 0) {
                ik_real share = weight[i] / larger, share_next = weight[i + 1] / larger;
                ik_real total = share + share_next;
                /* u * (l - d) moves the ends apart (or together) to distance l. */
                ik_vec3 fix = ik_v3_scale(u, len[i] - ik_v3_len(v));
                b[i] = ik_v3_sub(b[i], ik_v3_scale(fix, share / total));
                b[i + 1] = ik_v3_add(b[i + 1], ik_v3_scale(fix, share_next / total));
            }
            /* Limits: turn b[i] about b[i + 1] so bone i keeps within its child's limit. */
            if (c->limited && weight[i] > 0 && len[i + 1] > 0) {
                ik_vec3 next = i + 2 < n ? b[i + 2] : target;
                ik_vec3 child = ik_v3_normalize_or(ik_v3_sub(next, b[i + 1]), zero);
                ik_vec3 dir = ik_v3_normalize_or(ik_v3_sub(b[i + 1], b[i]), zero);
                if (ik_v3_dot(child, child) > 0 && ik_v3_dot(dir, dir) > 0) {
                    dir = ik_limit_backward(c, i, dir, child);
                    b[i] = ik_v3_sub(b[i + 1], ik_v3_scale(dir, ik_v3_len(ik_v3_sub(b[i + 1], b[i]))));
                }
            }
        }

        u = ik_v3_normalize_or(ik_v3_sub(b[1], b[0]), zero);
        if (u.x != 0 || u.y != 0 || u.z != 0) b[1] = ik_v3_add(b[0], ik_v3_scale(u, len[0]));

        iter++;
        if (c->limited) {
            map_points(c, b, target, b);
            distance = project(c, b, target);
        } else {
            distance = map_points(c, b, target, NULL);
        }
        if (distance <= c->settings.tolerance) break;
        if (ik_escape_stuck(c, &escape, distance)) {
            map_points(c, b, target, b);
            ik_chain_apply_points(c, b);
            if (c->limited) {
                iter += ik_escape_finish(c, target, c->settings.iterations - iter, pinned);
                ik_chain_finish(c, target, iter, out);
                return;
            }
            ik_escape_kick(c, target, &escape, pinned);
            for (i = 0; i < n; i++) b[i] = c->joint[i];
        }
    }
    map_points(c, b, target, b);
    ik_chain_apply_points(c, b);
    ik_chain_finish(c, target, iter, out);
}
