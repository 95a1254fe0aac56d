/*
 * rig_relax.c - relaxation on a rig: Juckett's constraint relaxation (relax.c) on the same
 * tree of points as FABRIK's: each chain's end joint is snapped towards its goal, its
 * distance constraints are resolved from the tip down with the joints' weights, and a
 * sub-base takes the weighted centroid of where each branch's constraints put it, as FABRIK
 * does (rig_merge); the root's first child joint is pulled back to its length from the
 * fixed base.
 */
#include "rig_tree.h"

#include <string.h>

/* ---- relaxation ---- */

/* Joint j of node nd's relaxed points takes what asks for it there (see merge). */
static void merge_point(const ik_rig *rig, rig_node *nd, int j, int continues)
{
    set_joint(nd->chain, j, nd->relaxed[j]);
    rig_merge(rig, nd, j, continues, nd->relaxed);
    nd->relaxed[j] = joint_at(nd->chain, j);
}

/*
 * Node nd's constraints relaxed from its top down, as relax.c does for one chain: joint top
 * (its goal, or where its children ask for it) is the target its end bone is snapped to,
 * the interior constraints move both ends by the joints' weights, each sub-base taking the
 * centroid of what asks for it; joint 0 ends as the chain's request to its parent. The
 * root's bone 0 is left to relax_iteration, which pulls it back from the fixed base.
 */
static void relax_chain(const ik_rig *rig, rig_node *nd, int root)
{
    ik_chain *c = nd->chain;
    const ik_real *len = c->length, *weight = c->weight;
    const ik_vec3 zero = ik_v3(0, 0, 0);
    ik_vec3 *b = nd->relaxed;
    int i, top = nd->top;
    merge_point(rig, nd, top, 0);
    if (top >= 1) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(b[top], b[top - 1]), zero);
        b[top - 1] = ik_v3_sub(b[top], ik_v3_scale(u, len[top - 1]));
    }
    for (i = top - 2; i >= 0; i--) {
        ik_real larger = weight[i] > weight[i + 1] ? weight[i] : weight[i + 1];
        ik_vec3 v, u;
        merge_point(rig, nd, i + 1, 1);
        if (root && i == 0) break; /* the pinned base: its bone is pulled back afterwards */
        v = ik_v3_sub(b[i + 1], b[i]);
        u = ik_v3_normalize_or(v, zero);
        if ((u.x != 0 || u.y != 0 || u.z != 0) && larger > 0) {
            /* Each end by its weight's share, as in relax.c (only the ratio matters). */
            ik_real share = weight[i] / larger, share_next = weight[i + 1] / larger;
            ik_real total = share + share_next;
            ik_vec3 fix = ik_v3_scale(u, len[i] - ik_v3_len(v));
            b[i] = ik_v3_sub(b[i], ik_v3_scale(fix, share / total));
            b[i + 1] = ik_v3_add(b[i + 1], ik_v3_scale(fix, share_next / total));
        }
    }
    if (!root) merge_point(rig, nd, 0, 1);
}

/* Node nd's first relaxed point pulled back to its length from its base (the article). */
static void pull_first(rig_node *nd, int hi)
{
    ik_vec3 *b = nd->relaxed;
    if (hi >= 1) {
        ik_vec3 u = ik_v3_normalize_or(ik_v3_sub(b[1], b[0]), ik_v3(0, 0, 0));
        if (u.x != 0 || u.y != 0 || u.z != 0) b[1] = ik_v3_add(b[0], ik_v3_scale(u, nd->chain->length[0]));
    }
}

/*
 * One relaxation iteration: every chain from the leaves in, then from the root out each
 * chain's base put back on its parent's point and its first point pulled to its length from
 * it, and the points mapped onto bones of exact length (the rig's joints): each bone along
 * its relaxed segment, the end bone pointed at its goal.
 */
void rig_relax_iteration(ik_rig *rig)
{
    int o, i;
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->top >= 0) relax_chain(rig, nd, nd->parent < 0);
    }
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_vec3 *b = nd->relaxed, joint, relaxed;
        int hi = nd->top < nd->last ? nd->top : nd->last;
        if (nd->top < 0) continue;
        /*
         * A sub-base is one point of two chains: where the parent's bones, exact lengths,
         * really put it, in both (the parent's relaxed point may be beyond their reach).
         */
        if (nd->parent >= 0) {
            ik_chain_take_base(c);
            rig->node[nd->parent].relaxed[nd->chain->parent_joint] = joint_at(c, 0);
        }
        b[0] = nd->parent >= 0 ? joint_at(c, 0) : c->base;
        pull_first(nd, hi);
        if (nd->kids == 0 && nd->end >= 2 && nd->end == nd->top) {
            /* A limb: from where it hangs now, a few passes of its own, as for one chain. */
            int pass;
            for (pass = 1; pass < LIMB_PASSES; pass++) {
                relax_chain(rig, nd, 1);
                pull_first(nd, hi);
            }
        }
        if (nd->parent < 0) set_joint(c, 0, c->base);
        joint = joint_at(c, 0), relaxed = b[0];
        for (i = 0; i < hi; i++) {
            ik_vec3 u = i + 1 == nd->end ? ik_v3_sub(nd->goal, joint) : ik_v3_sub(b[i + 1], relaxed);
            relaxed = b[i + 1];
            joint = ik_v3_add(joint, ik_v3_scale(ik_v3_normalize_or(u, ik_dir_v3(c, i)), c->length[i]));
            set_joint(c, i + 1, joint);
        }
        rig_place_tip(nd);
    }
}

/* Relaxation's points where the joints are, before its passes. */
void rig_relax_start(ik_rig *rig)
{
    int k, j;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        for (j = 0; j <= nd->chain->n; j++) nd->relaxed[j] = joint_at(nd->chain, j);
    }
}

/* Over-relaxing at sub-bases stops once it no longer pays. */
ik_real rig_relax_omega(ik_real omega, ik_real before, ik_real distance)
{
    return distance > before ? 1 : omega;
}
