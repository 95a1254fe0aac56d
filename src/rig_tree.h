/*
 * rig_tree.h - what the files of the rig solve share (not installed): the tree as the
 * solve sees it, and the calls between rig.c (the tree's bookkeeping and the solve's
 * order), rig_fabrik.c and rig_relax.c (the passes of each rig solver on points) and
 * rig_joint.c (the tree sweeps and the joint-space stage).
 */
#ifndef IK_RIG_TREE_H
#define IK_RIG_TREE_H

#include "chain.h"

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
    ik_real *saved;   /* [16 (n + 1)]: poses to go back to (rig_keep_pose): the joint-space
                         stage's before the step (0) and its best before a kick (1); a
                         limb's before its last sweeps (finish_limbs, 0); a tracked frame's
                         start (2) and its first answer (3), for calm_retry */
    signed char *mode; /* [n + 1]: how bone i takes part in a joint-space step: the ways
                          its limits block (ik_joint_axes), -1 left out */
    /* A tip hold (a closed loop): the chain's goal is a point on another chain. */
    ik_chain *tip_parent;  /* at ik_rig_init, with tip_joint and holds: must not change */
    int tip_joint;
    unsigned long long holds;
    int hold;         /* the node holding the tip, when it is in the rig (a loop); else -1 */
    int moves;        /* the highest joint the joint-space stage moves: top, or higher where
                         a loop's held point is on the chain (or on chains hanging on it) */
    ik_real reach;    /* of bones 0..end-1 */
    ik_real inner;    /* the inner radius of their reach ring: 2 * longest - reach, or less */
} rig_node;

struct ik_rig {
    int count;
    int dim;
    ik_rig_settings settings;
    ik_real omega; /* FABRIK's over-relaxation at sub-bases now (see merge) */
    int rest;       /* the joint-space stage pushes bounded joints off their bounds, free 2D
                       ones off straight and folded (tracking) */
    rig_node *node; /* [count], in the order given */
    int *order;     /* [count]: node indices, parents before children */
    int *kid;       /* [count]: node indices, grouped by parent */
    int *dfs;       /* [count]: node indices, each subtree in one run, its root first */
    int *goals;     /* [count]: the nodes with a goal, in dfs order (set by each solve) */
    int *goal_at;   /* [count + 1]: for a place in dfs, the first of goals at or after it */
    int goal_count;
    int limited;    /* chains with limits (set by each solve) */
    int *loops;     /* [count]: the nodes whose tip another node holds */
    int *sorted;    /* [count]: the node indices by their chains' addresses (node_of) */
    int loop_count;
    /* The joint-space stage's normal equations (see dls_step), rows up to DLS_ROWS. */
    ik_real normal[DLS_ROWS * DLS_ROWS], error[DLS_ROWS], y[DLS_ROWS];
    /* The free joints' push off straight and folded in the goals' rows, solved apart. */
    ik_real push_normal[DLS_ROWS * DLS_ROWS], push[DLS_ROWS], push_y[DLS_ROWS], push_lambda2;
    int pushing; /* the last solve took that push */
};

/* The nodes with a goal at places from..to-1 of rig->dfs, in O(their number). */
#define FOR_GOALS(rig, g, k, from, to)                                                       \
    for ((k) = (rig)->goal_at[from];                                                         \
         (k) < (rig)->goal_count && ((g) = &(rig)->node[(rig)->goals[k]])->pre < (to); (k)++)

static inline ik_vec3 joint_at(const ik_chain *c, int j) { return ik_joint_v3(c, j); }

static inline void set_joint(ik_chain *c, int j, ik_vec3 v)
{
    ik_real *p = ik_joint(c, j);
    p[0] = v.x, p[1] = v.y;
    if (c->dim == 3) p[2] = v.z;
}

/* Whether node k's child kid takes part: it has a goal below it, and a chain with an
   orientation goal holds its tip, so a child there cannot pull on it. */
static inline int pulls(const ik_rig *rig, const rig_node *nd, int kid)
{
    const rig_node *child = &rig->node[kid];
    return child->top >= 0 && !(nd->end >= 0 && nd->last < nd->chain->n && child->parent_joint == nd->chain->n);
}

/* Node nd's children hanging on joint j: kid[*from .. *to - 1]. */
static inline void kid_range(const rig_node *nd, int j, int *from, int *to)
{
    *from = nd->first + nd->above[j];
    *to = nd->first + (j > 0 ? nd->above[j - 1] : nd->kids);
}

/* A limb: a chain with a goal and nothing that pulls hanging on it (see limb_forward). */
static inline int is_limb(const rig_node *nd)
{
    return nd->kids == 0 && nd->end >= 1 && nd->end == nd->top;
}

/* The first place in rig->dfs past the chains hanging beyond joint j of node nd. */
static inline int beyond_end(const ik_rig *rig, const rig_node *nd, int j)
{
    return nd->above[j] < nd->kids ? rig->node[rig->kid[nd->first + nd->above[j]]].pre : nd->pre + nd->size;
}

/* The bones node nd's goals and children bend: 0..hi-1. */
static inline int bends(const rig_node *nd) { return nd->top < nd->last ? nd->top : nd->last; }

/* The bones the joint-space stage turns: those, and those that move a loop's held point. */
static inline int turns(const rig_node *nd) { return nd->moves < nd->last ? nd->moves : nd->last; }

/* Whether the point held at joint j of node held moves when bone i of node nd turns. */
static inline int moves_hold(const ik_rig *rig, const rig_node *nd, int i, const rig_node *held, int j)
{
    return held == nd ? j > i : held->pre > nd->pre && held->pre < beyond_end(rig, nd, i);
}

/*
 * A limb (a chain with a goal and nothing hanging on it) has nothing to wait for once the
 * forward pass has put its base: it is solved from there as one chain would be, with up to
 * LIMB_PASSES passes of its own (a goal beyond its reach, or within tolerance of it, straight
 * at it; two bones without limits exactly). Its passes alone would approach that only one
 * step per iteration of the rig, and slowly where a limb is nearly straight.
 */
#define LIMB_PASSES 4

/* rig.c */
/* Joint end of node nd where its goal puts it: its own tip goal, as the passes start. */
void rig_place_tip(rig_node *nd);
/* The largest distance of a goal's joint from its goal. */
ik_real rig_worst(const ik_rig *rig);
/* Chain nd's tip bone posed to its orientation goal (and its max_turn and limits). */
void rig_finish_chain(rig_node *nd);
/* Keeps (back = 0) or puts back (1) the local pose of bones 0..bones-1 of node nd, in
   place `which` (0 to 3) of nd->saved. */
void rig_keep_pose(rig_node *nd, int bones, int back, int which);
/* Every chain's world data from its local pose, parents first. */
void rig_fk(ik_rig *rig);
/* Every chain with a goal finished (rig_finish_chain). */
void rig_finish_all(ik_rig *rig);
/* The loops' goals where their held points are: posed (points = 0; the chains current), or
   as the passes' points put them (1). */
void rig_read_loops(ik_rig *rig, int points);

/* rig_fabrik.c: a rig solver's passes, and the merge at sub-bases the passes share */
void rig_merge(const ik_rig *rig, rig_node *nd, int j, int continues, const ik_vec3 *before);
void rig_limb_forward(const ik_rig *rig, rig_node *nd);
void rig_fabrik_iteration(ik_rig *rig);
ik_real rig_fabrik_omega(ik_real omega, ik_real before, ik_real distance);

/* rig_relax.c */
void rig_relax_start(ik_rig *rig);
void rig_relax_iteration(ik_rig *rig);
ik_real rig_relax_omega(ik_real omega, ik_real before, ik_real distance);

/* rig_joint.c: the stages after the passes */
int rig_dls_in_range(const ik_rig *rig, ik_real reach);
int rig_dls_rows(ik_rig *rig, ik_real reach);
/* How rig_joint_space runs: a solve's stage, tracking's, or a tracked frame's calm retry
   (steps alone: no push off the bounds, no nudge; see calm_retry in rig.c). */
enum { RIG_SOLVE = 0, RIG_TRACK = 1, RIG_CALM = 2 };
int rig_joint_space(ik_rig *rig, int iterations, ik_real reach, int bones, int m, int mode);
int rig_tree_sweeps(ik_rig *rig, int iterations, ik_real reach);

#endif
