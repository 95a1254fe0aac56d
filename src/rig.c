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

/* The most goal coordinates the joint-space stage takes (16 goals in 3D, 24 in 2D). */
#define DLS_ROWS 48

typedef struct rig_node {
    ik_chain *chain;
    ik_chain *parent_chain;   /* at ik_rig_init: the tree must not change */
    int parent_joint;
    unsigned long long links; /* the chain's count of attach and detach calls then */
    int parent;   /* index in the rig; -1 for the root */
    int first;    /* its children: kids[first .. first + kids - 1], by joint, highest first */
    int kids;
    int *above;   /* [n + 1]: how many of its children hang above joint k (kid_range) */
    int pre, size; /* its place in rig->dfs, and its subtree's number of chains there */
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
    ik_vec3 eff;      /* the tree sweeps: joint end as the turns of the sweep so far put it */
    int row;          /* the joint-space stage: its goal's first row, -1 without a goal */
    ik_real *saved;   /* [8 n]: the joint-space stage's poses to go back to: before the
                         step, and the best before a kick */
    signed char *mode; /* [n + 1]: how bone i takes part in a joint-space step: the ways
                          its limits block (ik_joint_axes), -1 left out */
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
    int *dfs;       /* [count]: node indices, each subtree in one run, its root first */
    int *goals;     /* [count]: the nodes with a goal, in dfs order (set by each solve) */
    int *goal_at;   /* [count + 1]: for a place in dfs, the first of goals at or after it */
    int goal_count;
    int limited;    /* chains with limits (set by each solve) */
    /* The joint-space stage's normal equations (see dls_step), rows up to DLS_ROWS. */
    ik_real normal[DLS_ROWS * DLS_ROWS], error[DLS_ROWS], y[DLS_ROWS];
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
    if (count < 1 || joints > (SIZE_MAX / 4) / (9 * sizeof(ik_real) + sizeof(ik_vec3) + sizeof(int) + 1))
        return 0;
    size += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    size += ALIGN16(joints * sizeof(int));
    size += ALIGN16(joints * 8 * sizeof(ik_real));
    size += ALIGN16(joints);
    size += ALIGN16((size_t)count * sizeof(rig_node));
    size += ALIGN16((5 * (size_t)count + 1) * sizeof(int));
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

/*
 * Sorting the rig's chains, in its own block, so that making a rig costs O(count log count)
 * (finding each parent among the chains by comparing with every one was quadratic: 40,000
 * chains took seconds). A heap sort: no recursion, no memory of its own.
 */
typedef struct sorting {
    ik_chain *const *chains;
    const rig_node *node; /* BY_JOINT: the nodes' parent_joint */
    int by_joint;         /* 0: by address; 1: by parent joint, highest first */
} sorting;

/* Whether index a sorts before index b (equal keys: the lower index first). */
static int before(const sorting *by, int a, int b)
{
    if (by->by_joint) {
        int ja = by->node[a].parent_joint, jb = by->node[b].parent_joint;
        if (ja != jb) return ja > jb;
    } else {
        uintptr_t pa = (uintptr_t)by->chains[a], pb = (uintptr_t)by->chains[b];
        if (pa != pb) return pa < pb;
    }
    return a < b;
}

static void sift_down(const sorting *by, int *v, int at, int count)
{
    for (;;) {
        int child = 2 * at + 1, t;
        if (child >= count) return;
        if (child + 1 < count && before(by, v[child], v[child + 1])) child++;
        if (!before(by, v[at], v[child])) return;
        t = v[at], v[at] = v[child], v[child] = t;
        at = child;
    }
}

static void sort_indices(const sorting *by, int *v, int count)
{
    int k, t;
    for (k = count / 2 - 1; k >= 0; k--) sift_down(by, v, k, count);
    for (k = count - 1; k > 0; k--) {
        t = v[0], v[0] = v[k], v[k] = t;
        sift_down(by, v, 0, k);
    }
}

/* The lowest index of chain c among the chains (sorted: their indices by address), or -1. */
static int find(ik_chain *const *chains, const int *sorted, int count, const ik_chain *c)
{
    int lo = 0, hi = count; /* the first sorted position whose chain is not below c */
    if (c == NULL) return -1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)chains[sorted[mid]] < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && chains[sorted[lo]] == c ? sorted[lo] : -1;
}

/*
 * The tree's checks, in the chains' order, the first failure to blame: one dimension, no
 * chain twice, exactly one root. Sets each node's parent; sorted and twice are scratch
 * [count].
 */
static ik_status check_tree(ik_rig *rig, ik_chain *const *chains, int count, int *sorted,
                            int *twice, int *culprit)
{
    sorting by;
    int k, root = -1;
    by.chains = chains, by.node = NULL, by.by_joint = 0;
    for (k = 0; k < count; k++) sorted[k] = k, twice[k] = 0;
    sort_indices(&by, sorted, count);
    for (k = 1; k < count; k++) /* a chain's later places are the repeats */
        if (chains[sorted[k]] == chains[sorted[k - 1]]) twice[sorted[k]] = 1;
    for (k = 0; k < count; k++) {
        *culprit = k;
        if (chains[k]->dim != chains[0]->dim) return IK_ERR_DIMENSION;
        if (twice[k]) return IK_ERR_NOT_A_TREE;
        rig->node[k].parent = find(chains, sorted, count, chains[k]->parent);
        if (rig->node[k].parent < 0) {
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
    int *above;
    ik_real *saved;
    signed char *mode;
    size_t joints;
    int k, j, done, next;
    sorting by;
    ik_status st;
    int scratch;
    if (culprit == NULL) culprit = &scratch;
    *culprit = -1;
    if (count < 1) return IK_ERR_COUNT;
    if (count > IK_MAX_BONES) return IK_ERR_TOO_LARGE;
    /* The tree is checked in the block: without room for the rig, nothing else is said. */
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
    above = (int *)p;
    p += ALIGN16(joints * sizeof(int));
    saved = (ik_real *)p;
    p += ALIGN16(joints * 8 * sizeof(ik_real));
    mode = (signed char *)p;
    p += ALIGN16(joints);
    rig->node = (rig_node *)p;
    p += ALIGN16((size_t)count * sizeof(rig_node));
    rig->order = (int *)p;
    rig->kid = rig->order + count;
    rig->dfs = rig->kid + count;
    rig->goals = rig->dfs + count;
    rig->goal_at = rig->goals + count;

    st = check_tree(rig, chains, count, rig->order, rig->kid, culprit);
    if (st != IK_OK) return st;
    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        nd->chain = chains[k];
        nd->parent_chain = chains[k]->parent;
        nd->links = chains[k]->links;
        nd->parent_joint = chains[k]->parent_joint;
        nd->beyond = beyond, beyond += chains[k]->n + 1;
        nd->relaxed = relaxed, relaxed += chains[k]->n + 1;
        nd->above = above, above += chains[k]->n + 1;
        nd->saved = saved, saved += 8 * ((size_t)chains[k]->n + 1);
        nd->mode = mode, mode += chains[k]->n + 1;
        if (nd->parent >= 0) rig->node[nd->parent].kids++;
    }
    /* Children grouped by parent (counted, then placed), each group by joint, highest first. */
    for (k = 0, next = 0; k < count; k++) {
        rig->node[k].first = next;
        next += rig->node[k].kids;
        rig->node[k].kids = 0;
    }
    for (k = 0; k < count; k++) {
        rig_node *parent = rig->node[k].parent >= 0 ? &rig->node[rig->node[k].parent] : NULL;
        if (parent) rig->kid[parent->first + parent->kids++] = k;
    }
    by.chains = chains, by.node = rig->node, by.by_joint = 1;
    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        int at = 0;
        sort_indices(&by, rig->kid + nd->first, nd->kids);
        for (j = nd->chain->n; j >= 0; j--) {
            while (at < nd->kids && rig->node[rig->kid[nd->first + at]].parent_joint > j) at++;
            nd->above[j] = at;
        }
    }
    /* Parents before children: the root, then each placed node's children, breadth first. */
    for (k = 0; k < count; k++)
        if (rig->node[k].parent < 0) rig->order[0] = k;
    for (done = 0, next = 1; done < next; done++) {
        const rig_node *nd = &rig->node[rig->order[done]];
        for (j = 0; j < nd->kids; j++) rig->order[next++] = rig->kid[nd->first + j];
    }
    /* Depth first, children in their order: subtree sizes from the leaves in, then places. */
    for (k = count - 1; k >= 0; k--) {
        rig_node *nd = &rig->node[rig->order[k]];
        nd->size = 1;
        for (j = 0; j < nd->kids; j++) nd->size += rig->node[rig->kid[nd->first + j]].size;
    }
    rig->node[rig->order[0]].pre = 0;
    for (k = 0; k < count; k++) {
        const rig_node *nd = &rig->node[rig->order[k]];
        next = nd->pre + 1;
        rig->dfs[nd->pre] = rig->order[k];
        for (j = 0; j < nd->kids; j++) {
            rig->node[rig->kid[nd->first + j]].pre = next;
            next += rig->node[rig->kid[nd->first + j]].size;
        }
    }
    *out = rig;
    return IK_OK;
}

ik_rig *ik_rig_create(ik_chain *const *chains, int count, ik_status *status, int *culprit)
{
    ik_rig *rig = NULL;
    size_t size = ik_rig_size(count, chains);
    void *memory = size ? malloc(size) : NULL;
    ik_status st = size && memory == NULL ? IK_ERR_NO_MEMORY
                                          : ik_rig_init(memory, size, chains, count, &rig, culprit);
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

/* Node nd's children hanging on joint j: kid[*from .. *to - 1]. */
static void kid_range(const rig_node *nd, int j, int *from, int *to)
{
    *from = nd->first + nd->above[j];
    *to = nd->first + (j > 0 ? nd->above[j - 1] : nd->kids);
}

/*
 * Each chain's goal, and which joints the passes move: children first, so each chain sees
 * its children's subtrees. Returns the number of goals.
 */
static int set_up(ik_rig *rig)
{
    int o, j, k, goals = 0;
    ik_real largest = 0, longest, kids;
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
        nd->reach = ik_chain_reach_to(c, nd->end, &longest);
        nd->inner = 2 * longest - nd->reach;
        nd->subtree = nd->weight;
        /* From the tip down, the children's goals summed as their joints are passed (the
           children come highest joint first): O(n + kids). */
        for (j = c->n, k = 0, kids = 0; j >= 0; j--) {
            for (; k < nd->kids && rig->node[rig->kid[nd->first + k]].parent_joint > j; k++) {
                int kid = rig->kid[nd->first + k], at = rig->node[kid].parent_joint;
                if (!pulls(rig, nd, kid)) continue;
                if (at > nd->top) nd->top = at;
                kids += rig->node[kid].subtree;
                nd->subtree += rig->node[kid].subtree;
            }
            nd->beyond[j] = (nd->end > j ? nd->weight : 0) + kids;
        }
        for (; k < nd->kids; k++) { /* those on joint 0: beyond no joint */
            int kid = rig->kid[nd->first + k];
            if (!pulls(rig, nd, kid)) continue;
            if (nd->top < 0) nd->top = 0;
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

/* ---- the tree sweeps ---- */

/*
 * The way out of the minima joint limits make, for the whole tree at once: the passes above
 * work on points, and with limits they can park a sub-base where its limbs' limits cannot
 * reach their goals; a limb's own sweeps (finish_limbs) cannot move the body it hangs on.
 * A tree sweep is CCD over every bone of the rig that bends for a goal, from the leaves in
 * and each chain from its tip down (so the bones nearer the root, not yet turned in the
 * sweep, hold their world data): each bone turns, within its limits, by the rotation that
 * best brings the goals beyond it to their places, each weighed as in merge. For one goal
 * that is the CCD turn; for several, the turn about the summed torque by the angle whose
 * tangent is the summed cross over the summed dot products (exact in 2D: the least-squares
 * turn). Each goal's joint is carried along (eff); forward kinematics at the end.
 */

/* The nodes with a goal at places from..to-1 of rig->dfs, in O(their number). */
#define FOR_GOALS(rig, g, k, from, to)                                                       \
    for ((k) = (rig)->goal_at[from];                                                         \
         (k) < (rig)->goal_count && ((g) = &(rig)->node[(rig)->goals[k]])->pre < (to); (k)++)

/* Lists the nodes with a goal in dfs order (after set_up). */
static void index_goals(ik_rig *rig)
{
    int p;
    rig->goal_count = 0;
    for (p = 0; p < rig->count; p++) {
        rig->goal_at[p] = rig->goal_count;
        if (rig->node[rig->dfs[p]].end >= 0) rig->goals[rig->goal_count++] = rig->dfs[p];
    }
    rig->goal_at[rig->count] = rig->goal_count;
}

/* The first place in rig->dfs past the chains hanging beyond joint j of node nd. */
static int beyond_end(const ik_rig *rig, const rig_node *nd, int j)
{
    return nd->above[j] < nd->kids ? rig->node[rig->kid[nd->first + nd->above[j]]].pre : nd->pre + nd->size;
}

/* Turns node nd's bone i, about joint p, by the world turn that the goals beyond it ask for. */
static void sweep_bone(ik_rig *rig, rig_node *nd, int i)
{
    ik_chain *c = nd->chain;
    ik_vec3 p = joint_at(c, i), torque = ik_v3(0, 0, 0);
    ik_real dot = 0;
    rig_node *g;
    int k, from = nd->end > i ? nd->pre : nd->pre + 1, to = beyond_end(rig, nd, i);
#define PULL(g)                                                                             \
    do {                                                                                    \
        const rig_node *g_ = (g);                                                           \
        ik_real w_ = g_->weight;                                                            \
        ik_vec3 r_ = ik_v3_sub(g_->eff, p), t_ = ik_v3_sub(g_->goal, p);                    \
        torque = ik_v3_add(torque, ik_v3_scale(ik_v3_cross(r_, t_), w_));                   \
        dot += w_ * ik_v3_dot(r_, t_);                                                      \
    } while (0)
    FOR_GOALS(rig, g, k, from, to) PULL(g); /* dfs[pre] is nd itself */
#undef PULL
    if (c->dim == 2) {
        ik_real turn = atan2(torque.z, dot), angle, held;
        ik_vec2 r;
        if (turn == 0) return;
        angle = ik_turn_angle(c, i);
        held = c->limit[i].flags ? ik_limit_angle(&c->limit[i], ik_wrap_angle(angle + turn)) : angle + turn;
        turn = ik_wrap_angle(held - angle);
        if (turn == 0) return;
        ik_chain_set_turn_angle(c, i, held);
        r = ik_v2(cos(turn), sin(turn));
        FOR_GOALS(rig, g, k, from, to) {
            ik_vec2 v = ik_v2_rotate(ik_v2(g->eff.x - p.x, g->eff.y - p.y), r);
            if (g->end >= 0) g->eff = ik_v3(p.x + v.x, p.y + v.y, 0);
        }
    } else {
        ik_real size = ik_v3_len(torque), angle = atan2(size, dot);
        ik_vec3 unit = ik_v3_normalize_or(torque, ik_v3(0, 0, 0));
        ik_quat r, parent, local;
        if (!(size > 0) || angle == 0 || ik_v3_dot(unit, unit) == 0) return;
        r = ik_q_axis_angle(unit, angle);
        /* As in sweep.c: the world turn r as a change of the local rotation, within limits. */
        parent = i == 0 ? c->base_rot : c->wrot[i - 1];
        local = ik_q_normalize(ik_q_mul(ik_q_mul(ik_q_mul(ik_q_conj(parent), r), parent), c->rot[i]));
        if (c->limit[i].flags) {
            local = ik_limit_rotation(&c->limit[i], local);
            r = ik_q_normalize(ik_q_mul(ik_q_mul(parent, local), ik_q_conj(ik_q_mul(parent, c->rot[i]))));
        }
        c->rot[i] = local;
        FOR_GOALS(rig, g, k, from, to) {
            g->eff = ik_v3_add(p, ik_q_rotate(r, ik_v3_sub(g->eff, p)));
        }
    }
    ik_chain_mark_stale(c, i);
}

/* Every chain's world data from its local pose, parents first. */
static void rig_fk(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        ik_chain_follow_parent(c);
        ik_chain_fk(c);
        ik_chain_changed(c);
        if (nd->end >= 0) nd->eff = joint_at(c, nd->end);
    }
}

/* Every chain finished (orientation goals, max_turn, limits), parents first. */
static void finish_all(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain_follow_parent(nd->chain);
        finish_chain(nd);
        ik_chain_changed(nd->chain);
    }
}

/* The largest distance of a goal's joint from its goal, as the sweeps have carried it. */
static ik_real sweep_distance(const ik_rig *rig)
{
    ik_real largest = 0;
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end >= 0) {
            ik_real d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
            if (d > largest) largest = d;
        }
    }
    return largest;
}

/*
 * Tree sweeps while the goals are missed and they gain, at most `iterations`; then every
 * chain finished (orientation goals, max_turn, limits). The chains are current and
 * settled. Returns the sweeps made.
 */
static int tree_sweeps(ik_rig *rig, int iterations, ik_real reach)
{
    ik_progress progress;
    ik_real distance;
    int o, i, sweeps = 0;
    rig_fk(rig);
    distance = sweep_distance(rig);
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && sweeps < iterations) {
        for (o = rig->count - 1; o >= 0; o--) {
            rig_node *nd = &rig->node[rig->order[o]];
            int hi = nd->top < nd->last ? nd->top : nd->last;
            for (i = hi - 1; i >= 0; i--) sweep_bone(rig, nd, i);
        }
        rig_fk(rig);
        sweeps++;
        distance = sweep_distance(rig);
        if (ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP) break;
    }
    finish_all(rig);
    return sweeps;
}


/* ---- the joint-space stage ---- */

/*
 * Damped least squares (Levenberg-Marquardt) on every rotation of the rig that bends for a
 * goal, all at once: the passes work on points and, with limits, park sub-bases where the
 * limbs' limits cannot reach; a step in joint space moves the body and its limbs together,
 * each bone within its limits. The unknowns are each bone's turn about the world axes at
 * its joint (one about the hinge's axis for a 3D hinge, one about z in 2D); the residuals
 * are the goals' joints' offsets from their goals, each weighed by the square root of its
 * effector weight (a goal of weight 0 has no pull). With J the Jacobian of the residuals,
 * a step solves (J J^T + lambda^2 I) y = e and turns the bones by J^T y: the normal
 * equations have one row per goal coordinate (at most DLS_ROWS), whatever the number of
 * bones, and J is never stored (each bone's columns are made when needed). A step that
 * does not lower the weighted squared error is undone and lambda grows; one that does is
 * kept and lambda shrinks. S. Buss, "Introduction to inverse kinematics with Jacobian
 * transpose, pseudoinverse and damped least squares methods" (2004), section 5.
 */

/* A goal weighed less than this, in units of the largest, has no pull here: its rounding
   (a subnormal weight's few bits) would decide the step's last bits. */
#define DLS_LEAST 1e-200

static ik_real dls_weight(const rig_node *nd) { return nd->weight >= DLS_LEAST ? nd->weight : 0; }

/*
 * The scale the stage works at: the joints and goals within DLS_RANGE of the origin and the
 * reach within [1 / DLS_RANGE, DLS_RANGE], so no product it forms overflows or loses all
 * its bits (inf - inf would make a NaN). Beyond that the passes' answer stands.
 */
#define DLS_RANGE 1e100

static int dls_in_range(const ik_rig *rig, ik_real reach)
{
    int k, j;
    if (!(reach <= DLS_RANGE && reach >= 1 / DLS_RANGE)) return 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_real *p = nd->chain->joint;
        if (nd->end >= 0 && !(fabs(nd->goal.x) <= DLS_RANGE && fabs(nd->goal.y) <= DLS_RANGE &&
                              fabs(nd->goal.z) <= DLS_RANGE))
            return 0;
        for (j = 0; j < (nd->chain->n + 1) * rig->dim; j++)
            if (!(fabs(p[j]) <= DLS_RANGE)) return 0;
    }
    return 1;
}

/* The goals' rows (nd->row); 0 when they need more than DLS_ROWS, or are out of range. */
static int dls_rows(ik_rig *rig, ik_real reach)
{
    int k, m = 0;
    if (!dls_in_range(rig, reach)) return 0;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        nd->row = -1;
        if (nd->end < 0) continue;
        if (m + rig->dim > DLS_ROWS) return 0;
        nd->row = m;
        m += rig->dim;
    }
    return m;
}

/* One column of J: how the goals beyond bone i of nd move as it turns about axis. */
typedef struct dls_column {
    int count;
    int row[DLS_ROWS];
    ik_real value[DLS_ROWS];
} dls_column;

static void dls_column_of(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis, dls_column *col)
{
    ik_vec3 p = joint_at(nd->chain, i);
    int k, d, to = beyond_end(rig, nd, i);
    col->count = 0;
    const rig_node *g;
    FOR_GOALS(rig, g, k, nd->end > i ? nd->pre : nd->pre + 1, to) {
        ik_vec3 v;
        if (g->end < 0 || dls_weight(g) == 0) continue;
        v = ik_v3_scale(ik_v3_cross(axis, ik_v3_sub(g->eff, p)), sqrt(dls_weight(g)));
        for (d = 0; d < rig->dim; d++) {
            col->row[col->count] = g->row + d;
            col->value[col->count++] = d == 0 ? v.x : d == 1 ? v.y : v.z;
        }
    }
}

/* The weighted squared error; *largest: the largest distance of a goal's joint. */
static ik_real dls_cost(const ik_rig *rig, ik_real *largest)
{
    ik_real cost = 0;
    int k;
    *largest = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real d;
        if (nd->end < 0) continue;
        d = ik_v3_len(ik_v3_sub(nd->goal, nd->eff));
        if (d > *largest) *largest = d;
        cost += dls_weight(nd) * d * d;
    }
    return cost;
}

/* The largest turn of one bone in one step (radians): the linear model holds near it. */
#define DLS_MAX_TURN 0.5

/* Bone i's turn in the step (the convention of ik_joint_turn) from its turns about its axes. */
static ik_vec3 dls_turn(const rig_node *nd, int i, const ik_vec3 *axis, int axes, const ik_real *delta)
{
    ik_vec3 v = ik_v3(0, 0, 0);
    int a;
    if (nd->chain->dim == 2 || (nd->chain->limit[i].flags & IK_LIMIT_HINGE)) return ik_v3(delta[0], 0, 0);
    for (a = 0; a < axes; a++) v = ik_v3_add(v, ik_v3_scale(axis[a], delta[a]));
    return v;
}

/* The bones node nd's goals and children bend: 0..hi-1. */
static int bends(const rig_node *nd) { return nd->top < nd->last ? nd->top : nd->last; }

/* Keeps (back = 0) or puts back (1) the local pose of every chain that bends: in the first
   place (which = 0: before a step) or the second (1: the best before a kick). */
static void dls_pose(ik_rig *rig, int back, int which)
{
    int k, i;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        ik_chain *c = nd->chain;
        ik_real *v = nd->saved + (size_t)which * 4 * ((size_t)c->n + 1);
        for (i = 0; i < bends(nd); i++, v += 4) {
            if (c->dim == 2) {
                if (back) c->turn[i] = ik_v2(v[0], v[1]), c->angle[i] = v[2];
                else v[0] = c->turn[i].x, v[1] = c->turn[i].y, v[2] = c->angle[i];
            } else if (back) {
                c->rot[i] = ik_q(v[0], v[1], v[2], v[3]);
            } else {
                v[0] = c->rot[i].w, v[1] = c->rot[i].x, v[2] = c->rot[i].y, v[3] = c->rot[i].z;
            }
        }
        if (back && bends(nd) > 0) ik_chain_mark_stale(c, 0);
    }
}

/* The turns J^T y of bone i of nd about its axes (delta[axes]). */
static int dls_delta(const ik_rig *rig, const rig_node *nd, int i, ik_vec3 axis[3], ik_real delta[3])
{
    dls_column col;
    int o, a, axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
    for (o = 0; o < axes; o++) {
        dls_column_of(rig, nd, i, axis[o], &col);
        delta[o] = 0;
        for (a = 0; a < col.count; a++) delta[o] += col.value[a] * rig->y[col.row[a]];
    }
    return axes;
}

/* The normal equations of the bones not pinned, solved into rig->y. 0: no solution. */
static int dls_solve(ik_rig *rig, int m, ik_real lambda2)
{
    dls_column col;
    ik_vec3 axis[3];
    int k, i, a, b, o;
    for (k = 0; k < m * m; k++) rig->normal[k] = 0;
    for (k = 0; k < m; k++) rig->normal[k * m + k] = lambda2;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->row >= 0) {
            ik_vec3 e = ik_v3_scale(ik_v3_sub(nd->goal, nd->eff), sqrt(dls_weight(nd)));
            rig->error[nd->row] = e.x, rig->error[nd->row + 1] = e.y;
            if (rig->dim == 3) rig->error[nd->row + 2] = e.z;
        }
        for (i = 0; i < bends(nd); i++) {
            int axes;
            if (nd->mode[i] < 0) continue;
            axes = ik_joint_axes(nd->chain, i, nd->mode[i], axis);
            for (o = 0; o < axes; o++) {
                dls_column_of(rig, nd, i, axis[o], &col);
                for (a = 0; a < col.count; a++)
                    for (b = 0; b < col.count; b++)
                        rig->normal[col.row[a] * m + col.row[b]] += col.value[a] * col.value[b];
            }
        }
    }
    if (!ik_solve_spd(rig->normal, m, m, rig->error, rig->y)) return 0;
    for (k = 0; k < m; k++)
        if (!isfinite(rig->y[k])) return 0; /* out of the range the model holds in */
    return 1;
}

/*
 * Whether a 2D bone or a 3D hinge would be held back by its bounds from more than half of
 * a turn (at most DLS_MAX_TURN): counted in, it makes the others' turns too small.
 */
static int held_back(const ik_chain *c, int i, ik_real turn)
{
    const ik_limit *l = &c->limit[i];
    ik_real angle, to;
    if (c->dim == 3 && !(l->flags & IK_LIMIT_HINGE)) return 0;
    if (c->dim == 2 && !(l->flags & IK_LIMIT_RANGE)) return 0;
    turn = ik_clamp(turn, -DLS_MAX_TURN, DLS_MAX_TURN);
    angle = c->dim == 2 ? ik_turn_angle(c, i) : ik_twist_angle(c->rot[i], l->axis);
    to = ik_limit_angle(l, ik_wrap_angle(angle + turn));
    return fabs(ik_wrap_angle(to - angle)) < 0.5 * fabs(turn);
}

/*
 * One step: solved, then solved again without the ways out the limits block (an active
 * set: a 2D range or hinge at a bound the step pushes beyond leaves the step, a cone or
 * twist at its bound loses only the way out of it; counted in, a bone held at its limit
 * makes the others' turns too small), then every bone turned from the pose before the
 * step, each by at most DLS_MAX_TURN, within its limits. 0: no step.
 */
#define DLS_PASSES 3

static int dls_step(ik_rig *rig, int m, ik_real lambda2)
{
    ik_vec3 axis[3];
    ik_real delta[3];
    int k, i, pass, axes;
    for (k = 0; k < rig->count; k++) memset(rig->node[k].mode, 0, (size_t)rig->node[k].chain->n + 1);
    for (pass = 0; pass < DLS_PASSES; pass++) {
        int more = 0;
        if (!dls_solve(rig, m, lambda2)) return 0;
        if (!rig->limited || pass == DLS_PASSES - 1) break;
        for (k = 0; k < rig->count; k++) {
            rig_node *nd = &rig->node[k];
            if (!nd->chain->limited) continue;
            for (i = 0; i < bends(nd); i++) {
                int blocked;
                if (nd->mode[i] < 0 || !nd->chain->limit[i].flags) continue;
                axes = dls_delta(rig, nd, i, axis, delta);
                blocked = ik_joint_blocked(nd->chain, i, dls_turn(nd, i, axis, axes, delta));
                if (blocked == 0 && held_back(nd->chain, i, delta[0])) blocked = -1;
                if (blocked < 0) nd->mode[i] = -1, more = 1;
                else if ((blocked | nd->mode[i]) != nd->mode[i]) nd->mode[i] = (signed char)(nd->mode[i] | blocked), more = 1;
            }
        }
        if (!more) break;
    }
    /* Every column from the pose before the step: each chain's bones from its tip down. */
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        ik_chain *c = nd->chain;
        for (i = bends(nd) - 1; i >= 0; i--) {
            ik_vec3 t;
            ik_real size;
            if (nd->mode[i] < 0) continue;
            axes = dls_delta(rig, nd, i, axis, delta);
            t = dls_turn(nd, i, axis, axes, delta);
            size = c->dim == 2 || (c->limit[i].flags & IK_LIMIT_HINGE) ? fabs(t.x) : ik_v3_len(t);
            if (!(size > 0 && isfinite(size))) continue;
            if (size > DLS_MAX_TURN) t = ik_v3_scale(t, DLS_MAX_TURN / size);
            ik_joint_turn(c, i, t);
            ik_chain_mark_stale(c, i);
        }
    }
    return 1;
}

/*
 * A kick out of a minimum the limits make: the limited bones of every chain on the way from
 * a missed goal to the root turn towards the middle of their ranges (2D range, 3D hinge;
 * other 3D limits: towards straight along the parent, then within them), the start the
 * limits leave most room around, by at most `most` radians each; the rest of the pose stays.
 */
static void dls_kick(ik_rig *rig, ik_real most)
{
    int k, i, x;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->end < 0 || ik_v3_len(ik_v3_sub(nd->goal, nd->eff)) <= rig->settings.tolerance) continue;
        for (x = k; x >= 0; x = rig->node[x].parent) {
            rig_node *on = &rig->node[x];
            ik_chain *c = on->chain;
            if (!c->limited && most == INFINITY) continue;
            for (i = 0; i < bends(on); i++) {
                const ik_limit *l = &c->limit[i];
                ik_quat to;
                if (c->dim == 2 ? (l->flags & IK_LIMIT_RANGE) : (l->flags & IK_LIMIT_HINGE)) {
                    ik_real now = c->dim == 2 ? ik_turn_angle(c, i) : ik_twist_angle(c->rot[i], l->axis);
                    ik_real turn = ik_clamp((l->min + l->max) / 2 - now, -most, most);
                    if (c->dim == 2) ik_chain_set_turn_angle(c, i, now + turn);
                    else c->rot[i] = ik_limit_rotation(l, ik_q_axis_angle(l->axis, now + turn));
                } else if (most < INFINITY) {
                    /* A nudge while tracking: a bone nearly in line with its parent bends a
                       little to the chain's side, so the steps can shorten what is straight
                       (a straight run of bones cannot come nearer its base in a step). */
                    ik_vec3 line = ik_v3_normalize_or(ik_v3_sub(nd->goal, c->base), ik_v3(1, 0, 0));
                    ik_vec3 side = ik_chain_bend_side(c, line), d, p;
                    if (c->dim == 2) {
                        ik_real now = ik_turn_angle(c, i);
                        if (fabs(now) >= most) continue;
                        ik_joint_turn(c, i, ik_v3((c->settings.bend >= 0 ? most : -most) - now, 0, 0));
                    } else {
                        d = ik_dir3(c, i);
                        p = ik_q_x_axis(i == 0 ? c->base_rot : c->wrot[i - 1]);
                        if (ik_v3_dot(p, d) < cos(most)) continue;
                        ik_joint_turn(c, i, ik_v3_scale(ik_v3_normalize_or(ik_v3_cross(d, side), ik_v3(0, 0, 0)), most));
                    }
                } else if (l->flags) {
                    to = ik_limit_rotation(l, ik_q_identity());
                    c->rot[i] = to;
                } else {
                    continue;
                }
                ik_chain_mark_stale(c, i);
            }
        }
    }
}

/* Kicks a stalled joint-space stage may make after the passes; while tracking, nudges of
   at most DLS_NUDGE radians a bone (a kick turns bones far in one frame). */
#define DLS_KICKS 2
#define DLS_NUDGE 0.1

/*
 * Steps while the goals are missed and they gain, at most `iterations` (a stall with limits
 * kicks, at most kicks_allowed times, and the best pose is kept); then every chain
 * finished. m: the rows (dls_rows). The chains are settled. Returns the steps tried.
 */
static int joint_space(ik_rig *rig, int iterations, ik_real reach, int bones, int m, int tracking)
{
    ik_progress progress;
    ik_real distance, cost, best = INFINITY, unit = reach / bones, lambda2 = 0.01 * unit * unit, halved;
    int steps = 0, kicks = 0, kicks_allowed = tracking ? 1 : DLS_KICKS, creeping = 0, since = 0;
    rig_fk(rig);
    cost = dls_cost(rig, &distance);
    halved = cost;
    progress = ik_progress_plain(distance, reach);
    while (distance > rig->settings.tolerance && steps < iterations) {
        ik_real now, largest;
        int stalled;
        dls_pose(rig, 0, 0);
        stalled = !dls_step(rig, m, lambda2);
        if (!stalled) {
            steps++;
            rig_fk(rig);
            now = dls_cost(rig, &largest);
            if (now < cost) {
                /* gains of less than a percent twice running: a minimum the limits made */
                creeping = now > 0.99 * cost ? creeping + 1 : 0;
                stalled = creeping >= 2;
                if (now < 0.5 * halved) halved = now, since = 0;
                cost = now, distance = largest;
                lambda2 *= 0.25;
                if (lambda2 < 1e-12 * unit * unit) lambda2 = 1e-12 * unit * unit;
            } else {
                dls_pose(rig, 1, 0);
                rig_fk(rig);
                lambda2 *= 8;
                stalled = !(lambda2 < 1e12 * unit * unit);
            }
            /* Tracking: three steps that did not halve the error are a stall (a straight run
               of bones, which the steps approach ever more slowly). */
            stalled = stalled || (tracking && ++since >= 3);
            stalled = stalled || ik_progress_next(rig->node[0].chain, &progress, distance) == IK_STOP;
        }
        if (!stalled) continue;
        if (!rig->limited || kicks == kicks_allowed) break;
        if (cost < best) {
            best = cost;
            dls_pose(rig, 0, 1);
        }
        dls_kick(rig, tracking ? DLS_NUDGE : INFINITY);
        kicks++;
        rig_fk(rig);
        cost = dls_cost(rig, &distance);
        progress = ik_progress_plain(distance, reach);
        lambda2 = 0.01 * unit * unit;
        creeping = 0;
        halved = cost, since = 0;
    }
    if (best < cost) {
        dls_pose(rig, 1, 1);
        rig_fk(rig);
    }
    finish_all(rig);
    return steps;
}

/* ---- the solve ---- */

/*
 * How a solve shares its iterations between the passes and the joint-space stage (when the
 * goals fit in its rows). The passes move far in few iterations but creep near the goals,
 * and with limits they park sub-bases where the limbs cannot reach; joint space converges
 * fast near the goals and takes the limits as bounds. So the passes run while an iteration
 * brings the goals in by more than a tenth (DLS_CREEP) and joint space takes over; goals
 * within DLS_NEAR mean bone lengths of their joints (a rig tracking moving goals from last
 * frame's pose) go to joint space at once, which moves the pose smoothly. Measured
 * (bench/limits.lua, 200 goal sets from random poses, from straight, 100 iterations; then
 * tracking at 10 iterations a frame), humanoid and quadruped, 2D and 3D, FABRIK, before and
 * after: with limits 22.5, 5.0, 32.0, 27.5% reached, then 100, 97.5, 100, 97.0%; without
 * limits 87.5, 98.5, 98.5, 100%, then 100% each; tracking without limits 37, 15, 77.5, 67%
 * of frames with every goal met, then 100% each.
 */
#define DLS_CREEP 0.9
#define DLS_NEAR 1.0

/*
 * Whether every goal lies within the reach of the bones from the root's base to it (only
 * then do the passes hand over when they creep: a goal beyond reach is met by straightening,
 * which the passes do and joint space, on a long chain, does slowly). O(bones on the way)
 * per goal; called with at most DLS_ROWS goals.
 */
static int within_reach(const ik_rig *rig)
{
    ik_vec3 base = rig->node[rig->order[0]].chain->base;
    int k, x;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real reach;
        if (nd->end < 0) continue;
        reach = nd->reach;
        for (x = k; rig->node[x].parent >= 0; x = rig->node[x].parent)
            reach += ik_chain_reach_to(rig->node[rig->node[x].parent].chain, rig->node[x].parent_joint, NULL);
        if (!(ik_v3_len(ik_v3_sub(nd->goal, base)) <= reach)) return 0;
    }
    return 1;
}

/*
 * The tree as it was made: every chain on the same parent and joint (an attachment undone
 * and made again as it was is the same tree). A parent inside the rig outlives it, so its
 * address names it; the chain outside that the root may hang on does not: it may have
 * been freed and a new chain made at its address. So a root that hangs on a chain outside
 * after any attach or detach since is a change, whatever the address.
 */
static ik_status check_unchanged(const ik_rig *rig)
{
    int k;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->chain->parent != nd->parent_chain || nd->chain->parent_joint != nd->parent_joint ||
            (nd->parent < 0 && nd->chain->parent && nd->chain->links != nd->links))
            return IK_ERR_RIG_CHANGED;
    }
    return IK_OK;
}

/* Relaxation's points where the joints are, before its passes. */
static void start_passes(ik_rig *rig)
{
    int k, j;
    if (rig->settings.solver != IK_SOLVER_RELAX) return;
    for (k = 0; k < rig->count; k++) {
        rig_node *nd = &rig->node[k];
        for (j = 0; j <= nd->chain->n; j++) nd->relaxed[j] = joint_at(nd->chain, j);
    }
}

/*
 * The tree passes (FABRIK's or relaxation's) on the goals' points, at most `iterations`;
 * with hand_over they stop where they creep (DLS_CREEP). Returns the iterations used.
 */
static int passes(ik_rig *rig, int iterations, ik_progress *progress, int hand_over)
{
    const ik_rig_settings *s = &rig->settings;
    ik_real distance = worst(rig);
    int iter = 0;
    while (distance > s->tolerance && iter < iterations) {
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
        if (ik_progress_next(rig->node[0].chain, progress, distance) == IK_STOP) break;
        /* Creeping: the passes have done what they do fast, joint space does the rest. */
        if (hand_over && distance > DLS_CREEP * before) break;
    }
    return iter;
}

ik_status ik_rig_solve(ik_rig *rig, ik_result *out)
{
    const ik_rig_settings *s = &rig->settings;
    ik_progress progress;
    ik_real distance, reach = 0;
    int o, iter = 0, goals = 0, bones = 0, m, near, hand_over;
    int budget = ik_iteration_budget(s->iterations);
    ik_status st = check_unchanged(rig);
    if (st != IK_OK) return st;

    rig->limited = 0;
    for (o = 0; o < rig->count; o++) {
        goals += rig->node[o].chain->has_target;
        rig->limited += rig->node[o].chain->limited > 0;
    }
    /* Every chain current, its base where its parent (or the chain outside) puts it: the root
       follows the chains above it, every other chain its parent, which is current by then. */
    for (o = 0; o < rig->count; o++) {
        ik_chain *c = rig->node[rig->order[o]].chain;
        if (o == 0) ik_chain_follow(c);
        else ik_chain_follow_parent(c);
        ik_chain_settle(c);
        ik_chain_fk(c);
        c->kicked = 0;
        if (goals > 0 && c->scale != 1) { /* rigs do not stretch: back to the bones' own lengths */
            c->scale = 1;
            c->stale_from = 0;
            ik_chain_fk(c);
        }
        reach += c->reach;
        bones += c->n;
    }
    out->iterations = 0;
    out->angle_error = 0;
    if (set_up(rig) == 0) {
        out->reached = 1;
        out->distance = 0;
        return IK_OK;
    }
    index_goals(rig);
    for (o = 0; o < rig->count; o++)
        if (rig->node[o].chain->settings.max_turn < INFINITY) ik_save_pose(rig->node[o].chain);
    start_passes(rig);

    for (o = 0; o < rig->count; o++) place_tip(&rig->node[o]);
    distance = worst(rig);
    progress = ik_progress_plain(distance, reach);
    rig->omega = 2;
    m = dls_rows(rig, reach);
    near = m > 0 && distance > s->tolerance && distance < DLS_NEAR * reach / bones;
    hand_over = m > 0 && !near && distance > s->tolerance && within_reach(rig);
    if (near) { /* tracking: joint space from last frame's pose, which moves it smoothly */
        iter = joint_space(rig, budget, reach, bones, m, 1);
    } else {
        iter = passes(rig, budget, &progress, hand_over);
        pose_all(rig);
        /* Measured again: posing within the limits may have moved what the passes placed. */
        if (iter < budget && worst(rig) > s->tolerance) {
            if (m > 0) iter += joint_space(rig, budget - iter, reach, bones, m, 0);
            else if (rig->limited && dls_in_range(rig, reach)) iter += tree_sweeps(rig, budget - iter, reach);
        }
    }
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
