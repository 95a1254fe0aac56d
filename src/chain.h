/*
 * chain.h - the chain's layout and the helpers the solvers share (private to the core).
 *
 * A chain is one block: this header followed by its arrays. World data (joint positions,
 * world angles and their cos/sin) is a cache of forward kinematics over the local pose;
 * setters mark it stale from the first changed bone and ik_chain_update() refreshes it.
 * The local pose (angles) is the truth, so bone lengths are exact by construction.
 */
#ifndef IK_CHAIN_H
#define IK_CHAIN_H

#include "ik.h"
#include "ik_math.h"

struct ik_chain {
    int n;              /* bones */
    int dim;            /* 2 */
    int stale_from;     /* first bone whose world data is out of date; n when all fresh */
    ik_settings settings;
    ik_real base_x, base_y; /* world position of joint 0 */
    ik_real base_angle;     /* world angle of the base frame, wrapped */
    ik_real *length;        /* [n] */
    ik_real *weight;        /* [n + 1] relaxation weight per joint */
    ik_real *angle;         /* [n] local angle of bone i relative to its parent, wrapped */
    ik_real *world;         /* [n] world angle of bone i, wrapped */
    ik_vec2 *dir;           /* [n] world unit direction of bone i: (cos, sin) of world[i] */
    ik_vec2 *joint;         /* [n + 1] world positions */
    ik_vec2 *work;          /* [n + 1] scratch points for the position-based solvers */
};

/* Brings the world cache up to date with the local pose. */
void ik_chain_update(ik_chain *chain);

/*
 * Sets bones 0..count-1 so that each points (world space) from points[i] to points[i+1];
 * a bone whose segment has no direction keeps its current world angle. Bones from count on
 * keep their local angles. Refreshes the world cache.
 */
void ik_chain2d_apply_points(ik_chain *chain, const ik_vec2 *points, int count);

/* Rotates bone i (world space) to point from its base at target, when that has a direction. */
void ik_chain2d_point_bone_at(ik_chain *chain, int bone, ik_vec2 target);

/* Fills out from the current (updated) pose. */
void ik_chain_finish(ik_chain *chain, ik_vec2 target, int iterations, ik_result *out);

static inline ik_real ik_chain_tip_distance(const ik_chain *chain, ik_vec2 target)
{
    return ik_v2_len(ik_v2_sub(target, chain->joint[chain->n]));
}

/* Shared entry checks for the solvers: a finite target; fills *t. */
ik_status ik_chain_check_target(const ik_chain *chain, const ik_real *target, ik_vec2 *t);

/* The solvers proper, called after the entry checks with an updated chain. */
void ik_fabrik2d(ik_chain *chain, ik_vec2 target, ik_result *out);
void ik_ccd2d(ik_chain *chain, ik_vec2 target, ik_result *out);
void ik_relax2d(ik_chain *chain, ik_vec2 target, ik_result *out);
void ik_two_bone2d(ik_chain *chain, ik_vec2 target, ik_result *out);

#endif /* IK_CHAIN_H */
