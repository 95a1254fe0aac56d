/*
 * rig.c - several chains, attached to each other as one tree, solved together so every
 * goal in it is reached: the multi-effector solves. This file keeps the tree (the rig's
 * block, its checks, what each solve sets up) and runs a solve in its order: the rig
 * solver's passes on the tree's points (rig_fabrik.c: FABRIK; rig_relax.c: relaxation),
 * the bones posed from them, then the stages on the bones' rotations (rig_joint.c: the
 * joint-space stage, or the tree sweeps), then each limb's own finish. A goal set that
 * moved little since the last solve (tracking) goes to the joint-space stage at once.
 *
 * Both solvers keep the rig's joints as working points and pose the bones from them at the
 * end, in order from the root (each bone within its limits, its twist kept as a single
 * chain's solve keeps it); orientation goals, then each chain's max_turn and limits, have
 * the last word. The root's base never moves: a root that hangs on a chain outside the rig
 * is held where that chain puts it. Chain settings a rig does not use: mix and softness
 * (a rig's goals are met exactly, together; a blend or a softened goal of one chain would
 * move the joints its siblings share), stretch, and each chain's own solver and iterations
 * (the rig's settings say them).
 */
#include "rig_tree.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    if (count < 1 || joints > (SIZE_MAX / 4) / (17 * sizeof(ik_real) + sizeof(ik_vec3) + sizeof(int) + 1))
        return 0;
    size += ALIGN16(joints * (sizeof(ik_real) + sizeof(ik_vec3)));
    size += ALIGN16(joints * sizeof(int));
    size += ALIGN16(joints * 16 * sizeof(ik_real));
    size += ALIGN16(joints);
    size += ALIGN16((size_t)count * sizeof(rig_node));
    size += ALIGN16((7 * (size_t)count + 1) * sizeof(int));
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

/* The node of chain c in the rig (by rig->sorted), or -1. */
static int node_of(const ik_rig *rig, const ik_chain *c)
{
    int lo = 0, hi = rig->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)rig->node[rig->sorted[mid]].chain < (uintptr_t)c) lo = mid + 1;
        else hi = mid;
    }
    return lo < rig->count && rig->node[rig->sorted[lo]].chain == c ? rig->sorted[lo] : -1;
}

/*
 * Whether root node k hangs, through chains outside the rig, below a chain of the rig: its
 * base would move when the rig moves (a rig with several roots; O(depth log count)).
 */
static int root_carried(const ik_rig *rig, int k)
{
    const ik_chain *x;
    for (x = rig->node[k].chain->parent; x; x = x->parent)
        if (node_of(rig, x) >= 0) return 1;
    return 0;
}

/* The representative of k's set (union-find in set[], paths halved on the way). */
static int set_of(int *set, int k)
{
    while (set[k] != k) set[k] = set[set[k]], k = set[k];
    return k;
}

/*
 * The tree's checks, in the chains' order, the first failure to blame: one dimension, no
 * chain twice, one root, or several that tip holds join into one structure (every chain
 * then reaches every other through attachments and holds). Sets each node's parent and
 * hold; sorted, twice and set are scratch [count].
 */
static ik_status check_tree(ik_rig *rig, ik_chain *const *chains, int count, int *sorted,
                            int *twice, int *set, int *culprit)
{
    sorting by;
    int k, roots = 0;
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
        rig->node[k].hold = find(chains, sorted, count, chains[k]->tip_parent);
        roots += rig->node[k].parent < 0;
    }
    /* Attachment never makes a cycle, so one root with every other parent inside is a tree;
       several must be joined by the holds: the structure is one piece. */
    *culprit = -1;
    if (roots == 1) return IK_OK;
    for (k = 0; k < count; k++) set[k] = k;
    for (k = 0; k < count; k++) {
        const rig_node *nd = &rig->node[k];
        if (nd->parent >= 0) set[set_of(set, k)] = set_of(set, nd->parent);
        if (nd->hold >= 0) set[set_of(set, k)] = set_of(set, nd->hold);
    }
    for (k = 1; k < count; k++)
        if (set_of(set, k) != set_of(set, 0)) {
            *culprit = k;
            return IK_ERR_NOT_A_TREE;
        }
    /* Every root's base stays: none may hang below the rig through chains outside it. */
    for (k = 0; k < count; k++) rig->node[k].chain = chains[k];
    for (k = 0; k < count; k++)
        if (rig->node[k].parent < 0 && root_carried(rig, k)) {
            *culprit = k;
            return IK_ERR_NOT_A_TREE;
        }
    return IK_OK;
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
    p += ALIGN16(joints * 16 * sizeof(ik_real));
    mode = (signed char *)p;
    p += ALIGN16(joints);
    rig->node = (rig_node *)p;
    p += ALIGN16((size_t)count * sizeof(rig_node));
    rig->order = (int *)p;
    rig->kid = rig->order + count;
    rig->dfs = rig->kid + count;
    rig->goals = rig->dfs + count;
    rig->goal_at = rig->goals + count;
    rig->loops = rig->goal_at + count + 1;
    rig->sorted = rig->loops + count;

    st = check_tree(rig, chains, count, rig->sorted, rig->kid, rig->goals, culprit);
    if (st != IK_OK) return st;
    for (k = 0; k < count; k++) {
        rig_node *nd = &rig->node[k];
        nd->chain = chains[k];
        nd->parent_chain = chains[k]->parent;
        nd->links = chains[k]->links;
        nd->parent_joint = chains[k]->parent_joint;
        nd->tip_parent = chains[k]->tip_parent;
        nd->tip_joint = chains[k]->tip_joint;
        nd->holds = chains[k]->holds;
        if (nd->hold >= 0) rig->loops[rig->loop_count++] = k;
        nd->beyond = beyond, beyond += chains[k]->n + 1;
        nd->relaxed = relaxed, relaxed += chains[k]->n + 1;
        nd->above = above, above += chains[k]->n + 1;
        nd->saved = saved, saved += 16 * ((size_t)chains[k]->n + 1);
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
    /* Parents before children: the roots, then each placed node's children, breadth first. */
    for (k = 0, next = 0; k < count; k++)
        if (rig->node[k].parent < 0) rig->order[next++] = k;
    for (done = 0; done < next; done++) {
        const rig_node *nd = &rig->node[rig->order[done]];
        for (j = 0; j < nd->kids; j++) rig->order[next++] = rig->kid[nd->first + j];
    }
    /* Depth first, children in their order: subtree sizes from the leaves in, then places. */
    for (k = count - 1; k >= 0; k--) {
        rig_node *nd = &rig->node[rig->order[k]];
        nd->size = 1;
        for (j = 0; j < nd->kids; j++) nd->size += rig->node[rig->kid[nd->first + j]].size;
    }
    for (k = 0, next = 0; k < count && rig->node[rig->order[k]].parent < 0; k++) /* each root's run */
        rig->node[rig->order[k]].pre = next, next += rig->node[rig->order[k]].size;
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

int ik_rig_chain_count(const ik_rig *rig) { return rig->count; }
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

static ik_vec3 goal_of(const rig_node *nd);

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
        nd->moves = -1;
        nd->last = oriented ? c->n - 1 : c->n;
        nd->end = c->has_target ? nd->last : -1;
        nd->top = nd->end;
        /* In units of the largest, so weights near 1e308, and their sums, stay finite. */
        nd->weight = !c->has_target ? 0 : largest > 0 ? c->settings.effector_weight / largest : 1;
        if (c->has_target) nd->goal = goal_of(nd);
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
    /* What the joint-space stage turns: a loop's held point bends its chain up to it, and
       every chain on the way to a root (children first, so a parent sees its children's). */
    for (o = 0; o < rig->loop_count; o++) {
        const rig_node *nd = &rig->node[rig->loops[o]];
        rig_node *held = &rig->node[nd->hold];
        if (nd->chain->tip_joint > held->moves) held->moves = nd->chain->tip_joint;
    }
    for (o = rig->count - 1; o >= 0; o--) {
        rig_node *nd = &rig->node[rig->order[o]];
        if (nd->top > nd->moves) nd->moves = nd->top;
        if (nd->moves >= 0 && nd->parent >= 0 && nd->parent_joint > rig->node[nd->parent].moves)
            rig->node[nd->parent].moves = nd->parent_joint;
    }
    return goals;
}

/* Where node nd's goal puts joint end: the target, or behind it with an orientation goal. */
static ik_vec3 goal_of(const rig_node *nd)
{
    const ik_chain *c = nd->chain;
    if (nd->last < c->n) return ik_v3_sub(c->target, ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1]));
    return c->target;
}

/*
 * The point held at joint j of c as the passes' points put it: the joint, and the offset
 * turned with the bone that ends there (in 3D by the least turn from its direction at the
 * solve's start, so its twist as it was). The stages on the bones read it exactly.
 */
static ik_vec3 held_on_points(const ik_chain *c, int j, ik_vec3 offset)
{
    ik_vec3 at = joint_at(c, j), d;
    if ((offset.x == 0 && offset.y == 0 && offset.z == 0) || j == 0) return ik_hold_point(c, j, offset);
    d = ik_v3_sub(at, joint_at(c, j - 1));
    if (c->dim == 2) {
        ik_real size = sqrt(d.x * d.x + d.y * d.y);
        ik_vec2 u = size > 0 ? ik_v2(d.x / size, d.y / size) : ik_dir2(c, j - 1);
        ik_vec2 v = ik_v2_rotate(ik_v2(offset.x, offset.y), u);
        return ik_v3(at.x + v.x, at.y + v.y, 0);
    } else {
        ik_quat w = c->wrot[j - 1];
        ik_vec3 u = ik_v3_normalize_or(d, ik_q_x_axis(w));
        return ik_v3_add(at, ik_q_rotate(ik_q_mul(ik_q_from_to(ik_q_x_axis(w), u), w), offset));
    }
}

void rig_read_loops(ik_rig *rig, int points)
{
    int k;
    for (k = 0; k < rig->loop_count; k++) {
        rig_node *nd = &rig->node[rig->loops[k]];
        ik_chain *c = nd->chain;
        const ik_chain *held = rig->node[nd->hold].chain;
        c->target = points ? held_on_points(held, c->tip_joint, c->tip_offset)
                           : ik_hold_point(held, c->tip_joint, c->tip_offset);
        if (nd->end >= 0) nd->goal = goal_of(nd);
    }
}

/* After a forward pass: an oriented chain's tip along its goal's direction. */
void rig_place_tip(rig_node *nd)
{
    ik_chain *c = nd->chain;
    if (nd->last < c->n && nd->end >= 0)
        set_joint(c, c->n, ik_v3_add(joint_at(c, c->n - 1), ik_v3_scale(ik_goal_direction(c), c->length[c->n - 1])));
}

/* The largest distance of a goal's joint from its goal now. */
ik_real rig_worst(const ik_rig *rig)
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
void rig_finish_chain(rig_node *nd)
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
    rig_finish_chain(nd);
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
            rig_limb_forward(rig, nd);
            pose_chain(nd);
        }
        ik_chain_changed(c);
        if (nd->parent >= 0) c->parent_seen = c->parent->version;
    }
    rig_read_loops(rig, 0);
}

void rig_keep_pose(rig_node *nd, int bones, int back, int which)
{
    ik_chain *c = nd->chain;
    ik_real *v = nd->saved + (size_t)which * 4 * ((size_t)c->n + 1);
    int i;
    for (i = 0; i < bones; i++, v += 4) {
        if (c->dim == 2) {
            if (back) c->turn[i] = ik_v2(v[0], v[1]), c->angle[i] = v[2];
            else v[0] = c->turn[i].x, v[1] = c->turn[i].y, v[2] = c->angle[i];
        } else if (back) {
            c->rot[i] = ik_q(v[0], v[1], v[2], v[3]);
        } else {
            v[0] = c->rot[i].w, v[1] = c->rot[i].x, v[2] = c->rot[i].y, v[3] = c->rot[i].z;
        }
    }
    if (back && bones > 0) ik_chain_mark_stale(c, 0);
}

/*
 * Limbs with limits that the passes left short of their goals: joint limits make minima of
 * their own, which a single chain's solve leaves by CCD sweeps within the limits
 * (ik_escape_finish, to the chain's own tolerance); a limb does the same from where it hangs,
 * with the iterations the rig has left. The sweeps' kicks turn a limb far, and may leave it
 * farther from its goal than it was: then its pose from before them stands (tracking, a
 * humanoid's neck kicked 0.25 rad a frame, its miss 0.01 -> 0.37, and back the next frame;
 * bench/limits.lua's rigs tracking 20 animations each, humanoid 2D / 3D, quadruped 2D / 3D,
 * the frames where a joint turned more than 0.2 rad: 1.26 / 1.42 / 0.49 / 0.65% -> 0.60 /
 * 1.00 / 0.33 / 0.37%, at 1.0 / 0.2 / 0.2 / 0.1% fewer frames met, 98.3 -> 97.3% in the 2D
 * humanoid: a kick that left a limb farther sometimes put it where the next frames reached).
 * Returns the most sweeps a limb took.
 */
static int finish_limbs(ik_rig *rig, int iterations)
{
    ik_real before;
    int o, most = 0;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain *c = nd->chain;
        int sweeps;
        if (!is_limb(nd) || !c->limited || goal_distance(nd) <= rig->settings.tolerance) continue;
        before = goal_distance(nd);
        rig_keep_pose(nd, c->n, 0, 0);
        sweeps = ik_escape_finish(c, nd->goal, nd->end, iterations, 0);
        if (sweeps > most) most = sweeps;
        rig_finish_chain(nd);
        if (!(goal_distance(nd) < before)) { /* farther: the pose before (finished) stands */
            rig_keep_pose(nd, c->n, 1, 0);
            ik_chain_fk(c);
        }
        ik_chain_changed(c);
    }
    return most;
}

/* ---- the goals, and the chains brought up to date ---- */

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

/* Every chain's world data from its local pose, parents first. */
void rig_fk(ik_rig *rig)
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
    rig_read_loops(rig, 0);
}

/* Every chain finished (orientation goals, max_turn, limits), parents first. */
void rig_finish_all(ik_rig *rig)
{
    int o;
    for (o = 0; o < rig->count; o++) {
        rig_node *nd = &rig->node[rig->order[o]];
        ik_chain_follow_parent(nd->chain);
        rig_finish_chain(nd);
        ik_chain_changed(nd->chain);
    }
    rig_read_loops(rig, 0);
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
    int k, x;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        ik_real reach;
        if (nd->end < 0) continue;
        reach = nd->reach;
        for (x = k; rig->node[x].parent >= 0; x = rig->node[x].parent)
            reach += ik_chain_reach_to(rig->node[rig->node[x].parent].chain, rig->node[x].parent_joint, NULL);
        if (!(ik_v3_len(ik_v3_sub(nd->goal, rig->node[x].chain->base)) <= reach)) return 0;
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
    int k, roots = 0;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_chain *c = nd->chain;
        if (c->parent != nd->parent_chain || c->parent_joint != nd->parent_joint ||
            (nd->parent < 0 && c->parent && c->links != nd->links))
            return IK_ERR_RIG_CHANGED;
        if (c->tip_parent != nd->tip_parent || c->tip_joint != nd->tip_joint ||
            (nd->hold < 0 && c->tip_parent && c->holds != nd->holds))
            return IK_ERR_RIG_CHANGED;
        roots += nd->parent < 0;
    }
    /* Several roots: a chain outside may have been attached below the rig since. */
    for (k = 0; k < rig->count && roots > 1; k++) {
        if (rig->node[k].parent < 0 && root_carried(rig, k)) return IK_ERR_RIG_CHANGED;
    }
    return IK_OK;
}

/*
 * A rig solver: its passes on the tree's points (an iteration), what they need first, and
 * how the over-relaxation at sub-bases follows an iteration's gain. Adding one is a file of
 * its own (rig_fabrik.c, rig_relax.c) and a row here.
 */
typedef struct rig_solver {
    void (*start)(ik_rig *rig); /* or NULL */
    void (*iteration)(ik_rig *rig);
    ik_real (*omega)(ik_real omega, ik_real before, ik_real distance);
} rig_solver;

static const rig_solver FABRIK = {NULL, rig_fabrik_iteration, rig_fabrik_omega};
static const rig_solver RELAX = {rig_relax_start, rig_relax_iteration, rig_relax_omega};

static const rig_solver *solver_of(const ik_rig *rig)
{
    return rig->settings.solver == IK_SOLVER_RELAX ? &RELAX : &FABRIK;
}

/*
 * The solver's passes on the goals' points, at most `iterations`; with hand_over they stop
 * where they creep (DLS_CREEP). Returns the iterations used.
 */
static int passes(ik_rig *rig, int iterations, ik_progress *progress, int hand_over)
{
    const rig_solver *solver = solver_of(rig);
    ik_real distance = rig_worst(rig);
    int iter = 0;
    if (solver->start) solver->start(rig);
    while (distance > rig->settings.tolerance && iter < iterations) {
        ik_real before = distance;
        solver->iteration(rig);
        iter++;
        rig_read_loops(rig, 1);
        distance = rig_worst(rig);
        rig->omega = solver->omega(rig->omega, before, distance);
        if (ik_progress_next(rig->node[0].chain, progress, distance) == IK_STOP) break;
        /* Creeping: the passes have done what they do fast, joint space does the rest. */
        if (hand_over && distance > DLS_CREEP * before) break;
    }
    return iter;
}

/*
 * A tracked frame's calm retry. Tracking's stage pushes bounded joints off their bounds
 * and nudges a stalled pose, and a limb's sweeps may kick it (finish_limbs): each gets
 * a rig out of a corner, but sometimes turns a joint far in one frame where a small turn
 * would have met the goals (spec/rig_limits_spec.lua replays such a frame of bench/limits.lua's
 * 2D humanoid: its neck turned 0.648 rad where the steps alone turn none more than 0.2). So
 * a frame whose answer turned a joint more than TRACK_JUMP from where the frame began is
 * tried again from there by the steps alone (RIG_CALM), with the iterations it has left;
 * their answer stands where it meets every goal (as `reached` counts it) and turns no joint
 * more than TRACK_JUMP, else the first answer does; the call stays within its iterations.
 * bench/limits.lua, rigs with limits tracking 20 animations of 600 frames (humanoid 2D / 3D,
 * quadruped 2D / 3D): frames where a joint turned more than 0.2 rad 0.60 / 1.00 / 0.33 /
 * 0.37% -> 0.40 / 0.96 / 0.14 / 0.37%, frames with every goal met 97.3 / 98.0 / 99.4 / 98.9
 * -> 97.8 / 98.0 / 99.3 / 98.9%; with the animations of seeds it was not made on
 * (IK_ANIM_SEED 777, 4242, 2026), in 2D 0.31-0.55% -> 0.13-0.37% of frames over 0.2 rad,
 * every goal met in as many frames or more, or at most 0.1 point fewer (97.3 -> 98.0% at
 * best, 99.1 -> 99.0% at worst); in 3D about as before (the steps alone mostly turn as
 * far); rigs without limits as before.
 */
#define TRACK_JUMP 0.2
#define TRACK_JUMP_COS 0.98006657784124163      /* cos(TRACK_JUMP) */
#define TRACK_JUMP_COS_HALF 0.99500416527802582 /* cos(TRACK_JUMP / 2): a quaternion's w */

/* Whether some bone turned more than TRACK_JUMP from the frame's start (place 2). */
static int jumped(const ik_rig *rig)
{
    int k, i;
    for (k = 0; k < rig->count; k++) {
        const rig_node *nd = &rig->node[k];
        const ik_chain *c = nd->chain;
        const ik_real *v = nd->saved + 2 * 4 * ((size_t)c->n + 1);
        for (i = 0; i < c->n; i++, v += 4) {
            if (c->dim == 2) {
                if (!(v[0] * c->turn[i].x + v[1] * c->turn[i].y >= TRACK_JUMP_COS)) return 1;
            } else {
                ik_quat q = c->rot[i];
                if (!(fabs(v[0] * q.w + v[1] * q.x + v[2] * q.y + v[3] * q.z) >= TRACK_JUMP_COS_HALF)) return 1;
            }
        }
    }
    return 0;
}

static void keep_all(ik_rig *rig, int back, int which)
{
    int k;
    for (k = 0; k < rig->count; k++) rig_keep_pose(&rig->node[k], rig->node[k].chain->n, back, which);
    if (back) rig_fk(rig);
}

/* A solve's answer as it stands: the largest tip and orientation errors of the chains with a
   goal, and whether every goal is met (out's iterations untouched). */
static void measure(const ik_rig *rig, ik_result *out)
{
    int k;
    out->distance = 0;
    out->angle_error = 0;
    for (k = 0; k < rig->count; k++) {
        const ik_chain *c = rig->node[k].chain;
        ik_real distance;
        if (!c->has_target) continue;
        distance = ik_tip_distance(c);
        if (distance > out->distance) out->distance = distance;
        if (c->has_orientation) {
            ik_real e = ik_orientation_error(c);
            if (e > out->angle_error) out->angle_error = e;
        }
    }
    out->reached = out->distance <= rig->settings.tolerance && out->angle_error <= rig->settings.angle_tolerance;
}

/* The retry, with `iterations` left; returns the steps it took. */
static int calm_retry(ik_rig *rig, int iterations, ik_real reach, int bones, int m)
{
    ik_result now;
    int steps;
    keep_all(rig, 0, 3);
    keep_all(rig, 1, 2);
    steps = rig_joint_space(rig, iterations, reach, bones, m, RIG_CALM);
    measure(rig, &now);
    if (!now.reached || jumped(rig)) keep_all(rig, 1, 3);
    return steps;
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
        if (rig->node[rig->order[o]].parent < 0) ik_chain_follow(c);
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
    /* Each held tip's goal where its held point is now (a chain outside: a fixed goal). */
    for (o = 0; o < rig->count; o++) ik_chain_read_hold(rig->node[o].chain);
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

    for (o = 0; o < rig->count; o++) rig_place_tip(&rig->node[o]);
    distance = rig_worst(rig);
    progress = ik_progress_plain(distance, reach);
    rig->omega = 2;
    m = rig_dls_rows(rig, reach);
    near = m > 0 && distance > s->tolerance && distance < DLS_NEAR * reach / bones;
    hand_over = m > 0 && !near && distance > s->tolerance && within_reach(rig);
    if (near) { /* tracking: joint space from last frame's pose, which moves it smoothly */
        keep_all(rig, 0, 2);
        iter = rig_joint_space(rig, budget, reach, bones, m, RIG_TRACK);
    } else if (rig->loop_count > 0 && hand_over) {
        /* Loops, every goal within reach: joint space at once, where both sides of a loop
           bend together (the passes move only the held chain, towards a point that does
           not come to meet it). */
        iter = rig_joint_space(rig, budget, reach, bones, m, RIG_SOLVE);
    } else {
        iter = passes(rig, budget, &progress, hand_over);
        pose_all(rig);
        /* Measured again: posing within the limits may have moved what the passes placed. */
        if (iter < budget && rig_worst(rig) > s->tolerance) {
            if (m > 0) iter += rig_joint_space(rig, budget - iter, reach, bones, m, RIG_SOLVE);
            else if (rig->limited && rig_dls_in_range(rig, reach)) iter += rig_tree_sweeps(rig, budget - iter, reach);
        }
    }
    if (iter < budget && rig_worst(rig) > s->tolerance) iter += finish_limbs(rig, budget - iter);
    if (near && iter < budget && jumped(rig)) iter += calm_retry(rig, budget - iter, reach, bones, m);
    rig_read_loops(rig, 0); /* where the last word left the held points */

    out->iterations = iter;
    measure(rig, out);
    return IK_OK;
}
