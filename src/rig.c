/*
 * rig.c - several chains, attached to each other as one tree, solved together so every
 * goal in it is reached: the multi-effector solves.
 *
 * FABRIK: Aristidou and Lasenby, "FABRIK: A fast, iterative solver for the Inverse
 * Kinematics problem" (2011), section 5.2, multiple end effectors. The backward pass runs
 * from every goal towards the root; where branches meet (a sub-base: the joint a child hangs
 * on, or the joint of a chain's own goal with more of the tree beyond it), the joint is put
 * at the weighted centroid of the positions the branches ask for, each branch weighed by
 * the sum of the effector_weight of the goals in it (all equal when every weight is 0); the
 * walk then goes on to the root. The forward pass runs from the root out to every goal, each
 * child starting on its parent's new joint. A chain whose subtree holds no goal is carried,
 * keeping its local pose; bones of a chain beyond its last goal or child with a goal are
 * carried the same way.
 *
 * Relaxation: Juckett's constraint relaxation (relax.c) on the same tree of points: each
 * chain's end joint is snapped towards its goal, its distance constraints are resolved
 * from the tip down with the joints' weights, and a sub-base takes the weighted centroid of
 * where each branch's constraints put it, as FABRIK does; the root's first child joint is
 * pulled back to its length from the fixed base.
 *
 * Both keep the rig's joints as working points and pose the bones from them at the end,
 * in order from the root (each bone within its limits, its twist kept as a single chain's
 * solve keeps it); orientation goals, then each chain's max_turn and limits, have the last
 * word. The root's base never moves: a root that hangs on a chain outside the rig is held
 * where that chain puts it.
 */
#include "chain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct rig_node {
    ik_chain *chain;
    ik_chain *parent_chain; /* at ik_rig_init: the tree must not change */
    int parent_joint;
    int parent;   /* index in the rig; -1 for the root */
    int first;    /* its children: kids[first .. first + kids - 1], by joint, highest first */
    int kids;
    /* set up by each solve */
    int end;      /* the joint the chain's goal drives (n, or n - 1 with an orientation
                     goal); -1 without a goal */
    int top;      /* the highest joint the passes move; -1: the chain is carried */
    int last;     /* the passes move bones 0..last-1 (n - 1 with an orientation goal) */
    ik_vec3 goal; /* where joint end goes */
    ik_real weight;  /* its own goal's */
    ik_real subtree; /* the goals' in its subtree */
    ik_real *beyond; /* [n + 1]: the goals' beyond joint k along this chain (its own, and
                        those of children at joints above k) */
    ik_vec3 *relaxed; /* relaxation's points, or FABRIK's joints before the pass, [n + 1] */
    ik_real reach;    /* of bones 0..end-1 */
    ik_real inner;    /* the inner radius of their reach ring: 2 * longest - reach, or less */
} rig_node;

struct ik_rig {
    int count;
    int dim;
    ik_rig_settings settings;
    ik_real omega; /* FABRIK's over-relaxation at sub-bases now (see merge) */
    rig_node *node; /* [count], in the order given */
    int *order;     /* [count]: node indices, parents before children */
    int *kid;       /* [count]: node indices, grouped by parent */
};

ik_rig_settings ik_rig_default_settings(void)
{
    ik_rig_settings s;
    s.solver = IK_SOLVER_FABRIK;
    s.iterations = IK_DEFAULT_ITERATIONS;
    s.tolerance = IK_DEFAULT_TOLERANCE;
    s.angle_tolerance = IK_DEFAULT_ANGLE_TOLERANCE;
    return s;
}

/* ---- the block ---- */

#define ALIGN16(x) (((x) + 15u) / 16u * 16u)

static size_t rig_size(int count, size_t joints)
{
    size_t size = ALIGN16(sizeof(struct ik_rig));
    if (count < 1 || joints > (SIZE_MAX / 4) / (sizeof(ik_real) + sizeof(ik_vec3))) return 0;
    size += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    size += ALIGN16((size_t)count * sizeof(rig_node));
    size += ALIGN16(2 * (size_t)count * sizeof(int));
    return size;
}

static size_t total_joints(int count, ik_chain *const *chains)
{
    size_t joints = 0;
    int k;
    for (k = 0; k < count; k++) {
        if ((size_t)chains[k]->n + 1 > SIZE_MAX / 4 - joints) return SIZE_MAX;
        joints += (size_t)chains[k]->n + 1;
    }
    return joints;
}

size_t ik_rig_size(int count, ik_chain *const *chains)
{
    if (count < 1 || count > IK_MAX_BONES) return 0;
    return rig_size(count, total_joints(count, chains));
}

static int index_of(ik_chain *const *chains, int count, const ik_chain *c)
{
    int k;
    for (k = 0; k < count; k++)
        if (chains[k] == c) return k;
    return -1;
}

/* The tree's checks: one dimension, no chain twice, exactly one root. */
static ik_status check_tree(ik_chain *const *chains, int count, int *culprit)
{
    int k, root = -1;
    *culprit = -1;
    for (k = 0; k < count; k++) {
        *culprit = k;
        if (chains[k]->dim != chains[0]->dim) return IK_ERR_DIMENSION;
        if (index_of(chains, k, chains[k]) >= 0) return IK_ERR_NOT_A_TREE;
        if (index_of(chains, count, chains[k]->parent) < 0) {
            if (root >= 0) return IK_ERR_NOT_A_TREE;
            root = k;
        }
    }
    /* Attachment never makes a cycle, so one root with every other parent inside is a tree. */
    *culprit = -1;
    return root >= 0 ? IK_OK : IK_ERR_NOT_A_TREE;
}

ik_status ik_rig_init(void *memory, size_t size, ik_chain *const *chains, int count,
                      ik_rig **out, int *culprit)
{
    ik_rig *rig = (ik_rig *)memory;
    unsigned char *p;
    ik_real *beyond;
    ik_vec3 *relaxed;
    size_t joints;
    int k, j, done, next;
    ik_status st;
    int scratch;
    if (culprit == NULL) culprit = &scratch;
    *culprit = -1;
    if (count < 1) return IK_ERR_COUNT;
    if (count > IK_MAX_BONES) return IK_ERR_TOO_LARGE;
    st = check_tree(chains, count, culprit);
    if (st != IK_OK) return st;
    joints = total_joints(count, chains);
    if (memory == NULL || rig_size(count, joints) == 0 || size < rig_size(count, joints))
        return IK_ERR_TOO_LARGE;

    memset(rig, 0, rig_size(count, joints));
    rig->count = count;
    rig->dim = chains[0]->dim;
    rig->settings = ik_rig_default_settings();
    p = (unsigned char *)rig + ALIGN16(sizeof(struct ik_rig));
    beyond = (ik_real *)p;
    relaxed = (ik_vec3 *)(beyond + joints);
    p += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    rig->node = (rig_node *)p;
    p += ALIGN16((size_t)count * sizeof(rig_node));
    rig->order = (int *)p;
    rig->kid = rig->order + count;

    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        nd->chain = chains[k];
        nd->parent_chain = chains[k]->parent;
        nd->parent_joint = chains[k]->parent_joint;
        nd->parent = index_of(chains, count, chains[k]->parent);
        nd->beyond = beyond, beyond += chains[k]->n + 1;
        nd->relaxed = relaxed, relaxed += chains[k]->n + 1;
    }
    /* Children grouped by parent, each group by joint, highest first. */
    for (k = 0, next = 0; k < count; k++) {
        rig->node[k].first = next;
        for (j = chains[k]->n; j >= 0; j--) {
            int c;
            for (c = 0; c < count; c++)
                if (rig->node[c].parent == k && rig->node[c].parent_joint == j) rig->kid[next++] = c;
        }
        rig->node[k].kids = next - rig->node[k].first;
    }
    /* Parents before children: the root, then each placed node's children, breadth first. */
    for (k = 0; k < count; k++)
        if (rig->node[k].parent < 0) rig->order[0] = k;
    for (done = 0, next = 1; done < next; done++) {
        const rig_node *nd = &rig->node[rig->order[done]];
        for (j = 0; j < nd->kids; j++) rig->order[next++] = rig->kid[nd->first + j];
    }
    *out = rig;
    return IK_OK;
}

ik_rig *ik_rig_create(ik_chain *const *chains, int count, ik_status *status, int *culprit)
{
    ik_rig *rig = NULL;
    size_t size = ik_rig_size(count, chains);
    void *memory = size ? malloc(size) : NULL;
    ik_status st = ik_rig_init(memory, size, chains, count, &rig, culprit);
    if (st == IK_OK && memory == NULL) st = IK_ERR_NO_MEMORY;
    if (st != IK_OK) {
        free(memory);
        rig = NULL;
    }
    if (status) *status = st;
    return rig;
}

void ik_rig_destroy(ik_rig *rig) { free(rig); }

int ik_rig_count(const ik_rig *rig) { return rig->count; }

ik_chain *ik_rig_chain(const ik_rig *rig, int k)
{
    return k >= 0 && k < rig->count ? rig->node[k].chain : NULL;
}

const ik_rig_settings *ik_rig_settings_of(const ik_rig *rig) { return &rig->settings; }

ik_status ik_rig_configure(ik_rig *rig, const ik_rig_settings *s)
{
    if (s->solver != IK_SOLVER_FABRIK && s->solver != IK_SOLVER_RELAX) return IK_ERR_RIG_SOLVER;
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return IK_ERR_TOLERANCE;
    if (!(isfinite(s->angle_tolerance) && s->angle_tolerance >= 0)) return IK_ERR_ANGLE_TOLERANCE;
    rig->settings = *s;
    rig->settings.tolerance += 0.0;
    rig->settings.angle_tolerance += 0.0;
    return IK_OK;
}

/* ---- a solve's set-up ---- */

static ik_vec3 joint_at(const ik_chain *c, int j) { return ik_joint_v3(c, j); }

static void set_joint(ik_chain *c, int j, ik_vec3 v)
{
    ik_real *p = ik_joint(c, j);
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/* Whether node k's child kid takes part: it has a goal below it, and a chain with an
   orientation goal holds its tip, so a child there cannot pull on it. */
static int pulls(const ik_rig *rig, const rig_node *nd, int kid)
{
    const rig_node *child = &rig->node[kid];
    return child->top >= 0 && !(nd->end >= 0 && nd->last < nd->chain->n && child->parent_joint == nd->chain->n);
}

/* Whether node nd's child kid hangs on joint j and takes part (pulls). */
static int pulls_at(const ik_rig *rig, const rig_node *nd, int kid, int j)
{
    return rig->node[kid].parent_joint == j && pulls(rig, nd, kid);
}

/*
 * Each chain's goal, and which joints the passes move: children first, so each chain sees
 * its children's subtrees. Returns the number of goals.
 */
static int set_up(ik_rig *rig)
{
    int o, j, k, goals = 0;
    ik_real largest = 0, longest;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->chain->has_target) {
            goals++;
            if (nd->chain->settings.effector_weight > largest) largest = nd->chain->settings.effector_weight;
        }
    }
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int oriented = c->has_target && c->has_orientation;
        nd->last = oriented ? c->n - 1 : c->n;
        nd->end = c->has_target ? nd->last : -1;
        nd->top = nd->end;
        /* In units of the largest, so weights near 1e308, and their sums, stay finite. */
        nd->weight = !c->has_target ? 0 : largest > 0 ? c->settings.effector_weight / largest : 1;
        if (c->has_target) {
            nd->goal = c->target;
            if (oriented)
                nd->goal = ik_v3_sub(c->target, ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1]));
        }
        for (j = 0; j <= c->n; j++) nd->beyond[j] = nd->end > j ? nd->weight : 0;
        nd->reach = ik_chain_reach_to(c, nd->end, &longest);
        nd->inner = 2 * longest - nd->reach;
        nd->subtree = nd->weight;
        for (k = 0; k < nd->kids; k++) {
            int kid = rig->kid[nd->first + k], at = rig->node[kid].parent_joint;
            if (!pulls(rig, nd, kid)) continue;
            if (at > nd->top) nd->top = at;
            for (j = 0; j < at; j++) nd->beyond[j] += rig->node[kid].subtree;
            nd->subtree += rig->node[kid].subtree;
        }
    }
    return goals;
}

/* A limb: a chain with a goal and nothing that pulls hanging on it (see limb_forward). */
static int is_limb(const rig_node *nd)
{
    return nd->kids == 0 && nd->end >= 1 && nd->end == nd->top;
}

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
static void merge(const ik_rig *rig, rig_node *nd, int j, int continues, const ik_vec3 *before)
{
    ik_chain *c = nd->chain;
    ik_vec3 sum = ik_v3(0, 0, 0), plain = sum, only = sum;
    ik_real weight = 0, most = continues ? nd->beyond[j] : 0;
    int k, n = 0;
    /*
     * The weights in units of the largest asking here, so their sum is at least 1: goals
     * whose weights are subnormal next to another goal's elsewhere in the rig summed to a
     * subnormal, and 1 / weight overflowed (0 * inf: FE_INVALID, a NaN centre).
     */
    if (nd->end == j && nd->weight > most) most = nd->weight;
    for (k = 0; k < nd->kids; k++) {
        int kid = rig->kid[nd->first + k];
        if (pulls_at(rig, nd, kid, j) && rig->node[kid].subtree > most) most = rig->node[kid].subtree;
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
    for (k = 0; k < nd->kids; k++) {
        int at = rig->kid[nd->first + k];
        const rig_node *kid = &rig->node[at];
        if (pulls_at(rig, nd, at, j) && !(before && content(rig, kid, before[j])))
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

/* The next joint below hi where something joins node nd (its goal, or a child), or 0. */
static int next_event(const ik_rig *rig, const rig_node *nd, int hi)
{
    int k, at = nd->end < hi ? nd->end : -1;
    for (k = 0; k < nd->kids; k++) {
        int kid = rig->kid[nd->first + k], j = rig->node[kid].parent_joint;
        if (j < hi && j > at && pulls(rig, nd, kid)) at = j;
    }
    return at > 0 ? at : 0;
}

/* After a forward pass: an oriented chain's tip along its goal's direction. */
static void place_tip(rig_node *nd)
{
    ik_chain *c = nd->chain;
    if (nd->last < c->n && nd->end >= 0)
        set_joint(c, c->n, ik_v3_add(joint_at(c, c->n - 1), ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1])));
}

/* The largest distance of a goal's joint from its goal now. */
static ik_real worst(const ik_rig *rig)
{
    ik_real largest = 0;
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end >= 0) {
            ik_real d = ik_v3_len(ik_v3_sub(nd->chain->target, joint_at(nd->chain, nd->chain->n)));
            if (d > largest) largest = d;
        }
    }
    return largest;
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

/*
 * A limb (a chain with a goal and nothing hanging on it) has nothing to wait for once the
 * forward pass has put its base: it is solved from there as one chain would be, with up to
 * LIMB_PASSES passes of its own (a goal beyond its reach, or within tolerance of it, straight
 * at it; two bones without limits exactly). Its passes alone would approach that only one
 * step per iteration of the rig, and slowly where a limb is nearly straight.
 */
#define LIMB_PASSES 4

static void limb_forward(const ik_rig *rig, rig_node *nd)
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
        merge(rig, nd, hi, 0, nd->relaxed);
        while (hi > 0) {
            ik_vec3 at = joint_at(c, hi);
            lo = next_event(rig, nd, hi);
            end[0] = at.x, end[1] = at.y, end[2] = at.z;
            ik_fabrik_backward(c, lo, hi, end);
            merge(rig, nd, lo, 1, nd->relaxed);
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
        if (nd->kids == 0 && nd->end >= 1 && nd->end == nd->top) limb_forward(rig, nd);
        else ik_fabrik_forward(c, 0, hi);
        place_tip(nd);
    }
}

/* ---- relaxation ---- */

/* Joint j of node nd's relaxed points takes what asks for it there (see merge). */
static void merge_point(const ik_rig *rig, rig_node *nd, int j, int continues)
{
    set_joint(nd->chain, j, nd->relaxed[j]);
    merge(rig, nd, j, continues, nd->relaxed);
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
static void relax_iteration(ik_rig *rig)
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
        place_tip(nd);
    }
}

/* ---- the way out ---- */

static ik_real goal_distance(const rig_node *nd)
{
    return ik_v3_len(ik_v3_sub(nd->goal, joint_at(nd->chain, nd->end)));
}

/*
 * The last word on chain nd's pose: its orientation goal, max_turn, then every bone's limits,
 * those the passes did not pose too (a chain only carried by its parent, or the bones past
 * its goal): a solve leaves none outside.
 */
static void finish_chain(rig_node *nd)
{
    ik_chain *c = nd->chain;
    if (nd->end >= 0 && c->has_orientation) ik_orient_tip(c);
    if (c->settings.max_turn < INFINITY) ik_hold_turns(c, c->settings.max_turn);
    ik_chain_clamp_limits(c);
    ik_chain_fk(c);
}

/* Chain nd posed from its joints (bones 0..hi-1), then finished. */
static void pose_chain(rig_node *nd)
{
    ik_chain *c = nd->chain;
    int hi = nd->top < nd->last ? nd->top : nd->last;
    c->pose_behind = 0; /* the joints were working points: the pose comes from them now */
    if (hi > 0) ik_pose_points(c, c->joint, 0, hi);
    else c->stale_from = 0;
    ik_chain_fk(c);
    finish_chain(nd);
}

/*
 * Poses every chain from the rig's joints, parents first: the bones the passes moved along
 * their new segments (within limits), the rest carried; then orientation goals, max_turn
 * and limits. Each chain is then current, its children's bases follow from it. A parent
 * that max_turn or a limit held back moves the limbs hanging on it off the points the
 * passes gave them: such a limb that now misses its goal is solved again from where it
 * hangs (limb_forward), then posed.
 */
static void pose_all(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_vec3 was = joint_at(c, 0);
        int moved = 0;
        if (nd->parent >= 0) {
            ik_vec3 now;
            ik_chain_take_base(c);
            now = joint_at(c, 0);
            moved = now.x != was.x || now.y != was.y || now.z != was.z;
        }
        pose_chain(nd);
        if (moved && is_limb(nd) && goal_distance(nd) > rig->settings.tolerance) {
            limb_forward(rig, nd);
            pose_chain(nd);
        }
        ik_chain_changed(c);
        if (nd->parent >= 0) c->parent_seen = c->parent->version;
    }
}

/*
 * Limbs with limits that the passes left short of their goals: joint limits make minima of
 * their own, which a single chain's solve leaves by CCD sweeps within the limits
 * (ik_escape_finish, to the chain's own tolerance); a limb does the same from where it hangs,
 * with the iterations the rig has left. Returns the most sweeps a limb took.
 */
static int finish_limbs(ik_rig *rig, int iterations)
{
    int o, most = 0;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int sweeps;
        if (!is_limb(nd) || !c->limited || goal_distance(nd) <= rig->settings.tolerance) continue;
        sweeps = ik_escape_finish(c, nd->goal, nd->end, iterations, 0);
        if (sweeps > most) most = sweeps;
        finish_chain(nd);
        ik_chain_changed(c);
    }
    return most;
}

/* ---- the solve ---- */

static ik_status check_unchanged(const ik_rig *rig)
{
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->chain->parent != nd->parent_chain || nd->chain->parent_joint != nd->parent_joint)
            return IK_ERR_RIG_CHANGED;
    }
    return IK_OK;
}

ik_status ik_rig_solve(ik_rig *rig, ik_result *out)
{
    const ik_rig_settings *s = &rig->settings;
    ik_progress progress;
    ik_real distance, reach = 0;
    int o, iter = 0, goals = 0, budget = ik_iteration_budget(s->iterations);
    ik_status st = check_unchanged(rig);
    if (st != IK_OK) return st;

    for (o = 0; o < rig->count; o++) goals += rig->node[o].chain->has_target;
    /* Every chain current, its base where its parent (or the chain outside) puts it. */
    for (o = 0; o < rig->count; o++) {
        ik_chain *c = rig->node[rig->order[o]].chain;
        ik_chain_follow(c);
        ik_chain_settle(c);
        ik_chain_fk(c);
        c->kicked = 0;
        if (goals > 0 && c->scale != 1) { /* rigs do not stretch: back to the bones' own lengths */
            c->scale = 1;
            c->stale_from = 0;
            ik_chain_fk(c);
        }
        reach += c->reach;
    }
    out->iterations = 0;
    out->angle_error = 0;
    if (set_up(rig) == 0) {
        out->reached = 1;
        out->distance = 0;
        return IK_OK;
    }
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[o];
        if (nd->chain->settings.max_turn < INFINITY) ik_save_pose(nd->chain);
        if (s->solver == IK_SOLVER_RELAX) {
            int j;
            for (j = 0; j <= nd->chain->n; j++) nd->relaxed[j] = joint_at(nd->chain, j);
        }
    }

    for (o = 0; o < rig->count; o++) place_tip(&rig->node[o]);
    distance = worst(rig);
    progress = ik_progress_plain(distance, reach);
    rig->omega = 2;
    while (distance > s->tolerance && iter < budget) {
        ik_real before = distance;
        if (s->solver == IK_SOLVER_RELAX) {
            relax_iteration(rig);
        } else {
            fabrik_backward(rig);
            fabrik_forward(rig);
        }
        iter++;
        distance = worst(rig);
        if (s->solver == IK_SOLVER_RELAX) {
            if (distance > before) rig->omega = 1; /* over-relaxing no longer pays */
        } else if (distance > before) { /* too far: back towards plain FABRIK */
            rig->omega = rig->omega / 2 > 1 ? rig->omega / 2 : 1;
        } else if (distance > 0.9 * before) { /* creeping: further */
            rig->omega = rig->omega * 1.2 < 4 ? rig->omega * 1.2 : 4;
        }
        if (ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP) break;
    }
    pose_all(rig);
    /* Measured again: posing within the limits may have moved what the passes placed. */
    if (iter < budget && worst(rig) > s->tolerance) iter += finish_limbs(rig, budget - iter);

    out->iterations = iter;
    out->distance = 0;
    for (o = 0; o < rig->count; o++) {
        ik_chain *c = rig->node[o].chain;
        if (!c->has_target) continue;
        distance = ik_tip_distance(c);
        if (distance > out->distance) out->distance = distance;
        if (c->has_orientation) {
            ik_real e = ik_orientation_error(c);
            if (e > out->angle_error) out->angle_error = e;
        }
    }
    out->reached = out->distance <= s->tolerance && out->angle_error <= s->angle_tolerance;
    return IK_OK;
}
