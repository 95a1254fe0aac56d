/*
 * relax.c - constraint relaxation, after Ryan Juckett, "Constraint Relaxation IK in 2D",
 * ../shared/seeds/constraint-relaxation-ik-2d.txt.
 *
 * The joints are points b[0..n-1] (the bases of the bones; the tip is implicit) held
 * together by distance constraints. One iteration: snap the end bone's base to its length
 * from the target; resolve each interior constraint (bones n-2 down to 1) by moving both
 * ends, in proportion to their joints' weights; then pull b[1] back to its length from the
 * fixed base b[0]. The points persist across iterations, as in the article. Finally the
 * points are mapped back onto bones of exact length by extracting angles, and the end bone
 * is pointed at the target from where its base really is (the article points it from the
 * relaxed point, which may not be where the exact-length bones put it).
 *
 * Stopping: after each iteration the solve measures where the mapped chain's tip would
 * be, with unit vectors instead of angles (no trigonometry), and stops once it is within
 * tolerance.
 *
 * The article skips a constraint whose points coincide or whose weights sum to zero; so do
 * we (testing for exact zero: the article's epsilon of 1e-4 would be a length in world units).
 */
#include "chain.h"

/*
 * The tip-to-target distance of the chain the points map to: exact-length bones along the
 * segments (a segment with no direction keeps its bone's direction, as the mapping does),
 * the end bone pointed at the target.
 */
static ik_real mapped_distance(const ik_chain *c, const ik_vec2 *b, ik_vec2 target)
{
    int i, n = c->n;
    ik_vec2 joint = b[0];
    for (i = 0; i + 1 < n; i++) {
        ik_vec2 u = ik_v2_normalize_or(ik_v2_sub(b[i + 1], b[i]), c->dir[i]);
        joint = ik_v2_add(joint, ik_v2_scale(u, c->length[i]));
    }
    return fabs(ik_v2_len(ik_v2_sub(target, joint)) - c->length[n - 1]);
}

void ik_relax2d(ik_chain *c, ik_vec2 target, ik_result *out)
{
    const int n = c->n;
    const ik_real *len = c->length, *weight = c->weight;
    ik_vec2 *b = c->work;
    int i, iter = 0;

    if (ik_chain_tip_distance(c, target) <= c->settings.tolerance) {
        ik_chain_finish(c, target, 0, out);
        return;
    }
    for (i = 0; i < n; i++) b[i] = c->joint[i];
    /* A single bone has no constraint to relax: it is pointed at the target below. */
    while (n > 1 && iter < c->settings.iterations) {
        ik_vec2 zero = ik_v2(0, 0), u = ik_v2_normalize_or(ik_v2_sub(target, b[n - 1]), zero);
        b[n - 1] = ik_v2_sub(target, ik_v2_scale(u, len[n - 1]));

        for (i = n - 2; i >= 1; i--) {
            ik_real total = weight[i] + weight[i + 1];
            ik_vec2 v = ik_v2_sub(b[i + 1], b[i]);
            u = ik_v2_normalize_or(v, zero);
            if ((u.x != 0 || u.y != 0) && total > 0) {
                /* u * (l - d) moves the ends apart (or together) to distance l. */
                ik_vec2 fix = ik_v2_scale(u, (len[i] - ik_v2_len(v)) / total);
                b[i] = ik_v2_sub(b[i], ik_v2_scale(fix, weight[i]));
                b[i + 1] = ik_v2_add(b[i + 1], ik_v2_scale(fix, weight[i + 1]));
            }
        }

        u = ik_v2_normalize_or(ik_v2_sub(b[1], b[0]), zero);
        if (u.x != 0 || u.y != 0) b[1] = ik_v2_add(b[0], ik_v2_scale(u, len[0]));

        iter++;
        if (mapped_distance(c, b, target) <= c->settings.tolerance) break;
    }
    ik_chain2d_apply_points(c, b, n - 1);
    ik_chain2d_point_bone_at(c, n - 1, target);
    ik_chain_finish(c, target, iter, out);
}
