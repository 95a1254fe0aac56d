/*
 * rig_fabrik.c - FABRIK on a rig: Aristidou and Lasenby, "FABRIK: A fast, iterative solver
 * for the Inverse Kinematics problem" (2011), section 5.2, multiple end effectors. The
 * backward pass runs from every goal towards the root; where branches meet (a sub-base: the
 * joint a child hangs on, or the joint of a chain's own goal with more of the tree beyond
 * it), the joint is put at the weighted centroid of the positions the branches ask for,
 * each branch weighed by the sum of the effector_weight of the goals in it (all equal when
 * every weight is 0); the walk then goes on to the root. The forward pass runs from the root
 * out to every goal, each child starting on its parent's new joint. A chain whose subtree
 * holds no goal is carried, keeping its local pose; bones of a chain beyond its last goal or
 * child with a goal are carried the same way. The merge at sub-bases is relaxation's too.
 */
#include "rig_tree.h"

#include <string.h>

/*
 * Whether FABRIK leaves child kid, hanging on sub-base s, out of the centroid there: a limb
 * without limits whose goal lies inside its reach ring from s, with a margin of 1/200 of its
 * reach (and the tolerance). Its own passes reach the goal from s or from near it, so it has
 * no say in where s goes; counted, it asked for s to stay about where it is and held back
 * the branches that need s to move (with 4 content legs and one that cannot reach, s moved
 * a fifth of the way an iteration). The centroid's fixed points are the same (a content
 * branch asks for s itself).
 *
 * Measured (bench/rates.lua: 1000 goal sets from random poses of the whole tree, straight
 * start, 100 iterations), reached and mean iterations, 2D and 3D, before and after: the
 * humanoid 99.4% and 99.5% in 12.1 and 14.7, then 99.5% and 99.6% in 6.8 and 8.1; the spider
 * 91.1% and 95.5% in 30.4 and 32.3, then 96.8% and 98.4% in 17.0 and 20.2. Tracking
 * bench/rigs.lua's animation for 1000 frames (64 iterations; IK_RIG_WINDOW=1000 lua5.4
 * bench/lua_bench.lua), frames with every goal met:
 * the spider 88.5% and 82.1% in 24.5 and 32.5 iterations, then 97.2% and 91.4% in 10.3 and
 * 17.4; the humanoid in 3D 100% then 99.9% (one frame). Over the first 250 frames (make
 * bench's window) the spider in 3D meets 82.0% then 80.0%: its legs there are all nearly
 * straight, where a 3-bone limb's own passes converge slowly either way. No margin did
 * worse (the spider in 3D from straight), and so did relaxation (its limbs relax a step at
 * a time: tracking, the spider lost ground), which keeps every branch in the centroid.
 */
static int content(const ik_rig *rig, const rig_node *kid, ik_vec3 s)
{
    ik_real d, margin = rig->settings.tolerance + kid->reach / 200;
    if (rig->settings.solver != IK_SOLVER_FABRIK || kid->chain->limited) return 0;
    if (!is_limb(kid)) return 0;
    d = ik_v3_len(ik_v3_sub(kid->goal, s));
    return d <= kid->reach - margin && d >= kid->inner + margin;
}

/*
 * Joint j of node nd to the weighted centroid of what asks for it: the chain beyond j (its
 * position now, weighed by beyond[j]) when `continues`, the chain's own goal when it ends
 * there, and the children hanging there (their joint 0) but for content limbs (see
 * content). A lone request is taken as it is; with none, the joint stays.
 *
 * FABRIK (before: the joints before the backward pass) over-relaxes a sub-base: it moves
 * omega times as far as the centroid. A branch that is content anchors the sub-base where
 * it is, so the plain centroid moves it only part of the way a branch that is not content
 * asks, and the goals creep in. omega starts at 2; an iteration that gains less than 10%
 * raises it by a fifth (up to 4), one that loses ground halves it (down to 1, plain
 * FABRIK). Measured (bench/rates.lua, 1000 random goals of a humanoid and a spider from a
 * straight start, 100 iterations): 2D 97.6% and 89.6% reached with omega 2 then 1, 99.4% and
 * 91.3% adapting; a humanoid tracking an animation (bench/rigs.lua) missed 35 of 250 frames
 * at 64 iterations, and misses none. Relaxation's sub-bases move 2 times as far at first, as
 * far once an iteration loses ground (adapting made its spider miss more).
 */
void rig_merge(const ik_rig *rig, rig_node *nd, int j, int continues, const ik_vec3 *before)
{
    ik_chain *c = nd->chain;
    ik_vec3 sum = ik_v3(0, 0, 0), plain = sum, only = sum;
    ik_real weight = 0, most = continues ? nd->beyond[j] : 0;
    int k, from, to, n = 0;
    /*
     * The weights in units of the largest asking here, so their sum is at least 1: goals
     * whose weights are subnormal next to another goal's elsewhere in the rig summed to a
     * subnormal, and 1 / weight overflowed (0 * inf: FE_INVALID, a NaN centre).
     */
    if (nd->end == j && nd->weight > most) most = nd->weight;
    kid_range(nd, j, &from, &to);
    for (k = from; k < to; k++) {
        int kid = rig->kid[k];
        if (pulls(rig, nd, kid) && rig->node[kid].subtree > most) most = rig->node[kid].subtree;
    }
    if (!(most > 0)) most = 1;
#define ASK(point, w)                                            \
    do {                                                         \
        ik_vec3 at_ = (point);                                   \
        ik_real w_ = (w) / most;                                 \
        sum = ik_v3_add(sum, ik_v3_scale(at_, w_));              \
        plain = ik_v3_add(plain, at_), only = at_;               \
        weight += w_, n++;                                       \
    } while (0)
    if (continues) ASK(joint_at(c, j), nd->beyond[j]);
    if (nd->end == j) ASK(nd->goal, nd->weight);
    for (k = from; k < to; k++) {
        const rig_node *kid = &rig->node[rig->kid[k]];
        if (pulls(rig, nd, rig->kid[k]) && !(before && content(rig, kid, before[j])))
            ASK(joint_at(kid->chain, 0), kid->subtree);
    }
#undef ASK
    if (n == 1) set_joint(c, j, only);
    else if (n > 1) {
        ik_vec3 centre = weight > 0 ? ik_v3_scale(sum, 1 / weight) : ik_v3_scale(plain, 1.0 / n);
        if (before) centre = ik_v3_add(before[j], ik_v3_scale(ik_v3_sub(centre, before[j]), rig->omega));
        set_joint(c, j, centre);
    }
}

/*
 * The next joint below hi (>= 1) where something joins node nd (its goal, or a child), or 0.
 * The children below hi, highest first, up to the first that pulls: a pass down a chain
 * looks at each child once.
 */
static int next_event(const ik_rig *rig, const rig_node *nd, int hi)
{
    int k, at = nd->end < hi ? nd->end : -1;
    for (k = nd->first + nd->above[hi - 1]; k < nd->first + nd->kids; k++) {
        int kid = rig->kid[k], j = rig->node[kid].parent_joint;
        if (j <= at) break;
        if (pulls(rig, nd, kid)) {
            at = j;
            break;
        }
    }
    return at > 0 ? at : 0;
}

/*
 * A limb of two bones without limits is placed exactly from where it hangs (the vector
 * form of the two-bone solve, bending on the side, or in the plane, it bends in now): its
 * FABRIK passes would only approach that, and slowly near full extension. Returns 0 for
 * anything else.
 */
static int two_bone_limb(rig_node *nd)
{
    ik_chain *c = nd->chain;
    ik_vec3 base = joint_at(c, 0), to = ik_v3_sub(nd->goal, base), middle, tip;
    ik_real j[3];
    int reached;
    if (nd->kids != 0 || nd->end != 2 || nd->top != 2 || c->limited) return 0;
    if (c->dim == 2) {
        /* tamed (scaled exactly) so the cross product cannot overflow to inf - inf */
        ik_vec3 now = ik_v3_tame(ik_v3_sub(joint_at(c, 1), base)), line = ik_v3_tame(to);
        int bend = line.x * now.y - line.y * now.x > 0 ? -1 : 1; /* 1: clockwise of the line */
        if (ik_two_bone_joint(to.x, to.y, c->length[0], c->length[1], bend, &j[0], &j[1], &reached) != IK_OK)
            return 0;
        j[2] = 0;
    } else {
        ik_vec3 now = ik_v3_sub(joint_at(c, 1), base);
        ik_real t[3], pole[3];
        t[0] = to.x, t[1] = to.y, t[2] = to.z;
        pole[0] = now.x, pole[1] = now.y, pole[2] = now.z;
        if (ik_two_bone_joint3(t, c->length[0], c->length[1], pole, j, &reached) != IK_OK) return 0;
    }
    middle = ik_v3_add(base, ik_v3(j[0], j[1], j[2]));
    tip = ik_v3_add(middle, ik_v3_scale(ik_v3_normalize_or(ik_v3_sub(nd->goal, middle), ik_dir_v3(c, 1)),
                                        c->length[1]));
    set_joint(c, 1, middle);
    set_joint(c, 2, tip);
    c->pose_behind = 1;
    return 1;
}

void rig_limb_forward(const ik_rig *rig, rig_node *nd)
{
    ik_chain *c = nd->chain;
    ik_real end[3], tolerance = rig->settings.tolerance;
    int pass;
    end[0] = nd->goal.x, end[1] = nd->goal.y, end[2] = nd->goal.z;
    if (nd->end == 1 || ik_v3_len(ik_v3_sub(nd->goal, joint_at(c, 0))) >= nd->reach - tolerance) {
        ik_fabrik_straighten(c, nd->goal, nd->end);
        return;
    }
    if (two_bone_limb(nd)) return;
    ik_fabrik_forward(c, 0, nd->end);
    for (pass = 1; pass < LIMB_PASSES; pass++) {
        ik_vec3 base = joint_at(c, 0);
        if (ik_v3_len(ik_v3_sub(nd->goal, joint_at(c, nd->end))) <= tolerance) break;
        ik_fabrik_backward(c, 0, nd->end, end);
        set_joint(c, 0, base);
        ik_fabrik_forward(c, 0, nd->end);
    }
}

/* ---- FABRIK ---- */

static void fabrik_backward(ik_rig *rig)
{
    int o;
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int hi = nd->top, lo;
        ik_real end[3];
        if (hi < 0) continue;
        for (lo = 0; lo <= c->n; lo++) nd->relaxed[lo] = joint_at(c, lo);
        rig_merge(rig, nd, hi, 0, nd->relaxed);
        while (hi > 0) {
            ik_vec3 at = joint_at(c, hi);
            lo = next_event(rig, nd, hi);
            end[0] = at.x, end[1] = at.y, end[2] = at.z;
            ik_fabrik_backward(c, lo, hi, end);
            rig_merge(rig, nd, lo, 1, nd->relaxed);
            hi = lo;
        }
    }
}

static void fabrik_forward(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int hi = nd->top < nd->last ? nd->top : nd->last;
        if (nd->top < 0) continue;
        if (nd->parent >= 0) ik_chain_take_base(c);
        else set_joint(c, 0, c->base);
        if (nd->kids == 0 && nd->end >= 1 && nd->end == nd->top) rig_limb_forward(rig, nd);
        else ik_fabrik_forward(c, 0, hi);
        rig_place_tip(nd);
    }
}

void rig_fabrik_iteration(ik_rig *rig)
{
    fabrik_backward(rig);
    fabrik_forward(rig);
}

/* The over-relaxation at sub-bases after an iteration: back towards plain FABRIK when it
   went too far, further when it creeps (see rig_merge). */
ik_real rig_fabrik_omega(ik_real omega, ik_real before, ik_real distance)
{
    if (distance > before) return omega / 2 > 1 ? omega / 2 : 1;
    if (distance > 0.9 * before) return omega * 1.2 < 4 ? omega * 1.2 : 4;
    return omega;
}
