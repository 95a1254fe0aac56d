/*
 * chain.h - the chain's layout and the helpers the solvers share (private to the core).
 *
 * A chain is one block: this header followed by its arrays. The local pose is the truth
 * (2D: angles; 3D: unit quaternions), so bone lengths are exact by construction. World
 * data (joint positions, bone directions, 2D world angles, 3D world rotations) is a cache
 * of forward kinematics: setters mark it stale from the first changed bone and
 * ik_chain_update() refreshes it. World positions and directions are ik_vec3 in both
 * dimensions (z = 0 in 2D), so the position-based solvers run one loop for both.
 */
#ifndef IK_CHAIN_H
#define IK_CHAIN_H

#include "ik.h"
#include "ik_math.h"

struct ik_chain {
    int n;          /* bones */
    int dim;        /* 2 or 3 */
    int stale_from; /* first bone whose world data is out of date; n when all fresh */
    ik_settings settings;
    ik_vec3 base;       /* world position of joint 0 (z = 0 in 2D) */
    ik_real base_angle; /* 2D: world angle of the base frame, wrapped */
    ik_quat base_rot;   /* 3D: world rotation of the base frame */
    ik_real *length;    /* [n] */
    ik_real *weight;    /* [n + 1] relaxation weight per joint */
    ik_real *angle;     /* 2D [n]: local angle of bone i relative to its parent, wrapped */
    ik_real *world;     /* 2D [n]: world angle of bone i, wrapped */
    ik_quat *rot;       /* 3D [n]: local rotation of bone i relative to its parent */
    ik_quat *wrot;      /* 3D [n]: world rotation of bone i */
    ik_vec3 *dir;       /* [n] world unit direction of bone i */
    ik_vec3 *joint;     /* [n + 1] world positions */
    ik_vec3 *work;      /* [n + 1] scratch points for the solvers */
};

/* Brings the world cache up to date with the local pose. */
void ik_chain_update(ik_chain *chain);

/*
 * Poses every bone to point (world space) from points[i] to points[i + 1], then refreshes
 * the world cache. A zero-length bone, or a segment with no direction, keeps its world
 * orientation. In 3D each bone turns by the smallest rotation from its old direction, so
 * its twist is kept.
 */
void ik_chain_apply_points(ik_chain *chain, const ik_vec3 *points);

/* Fills out from the current pose. */
void ik_chain_finish(ik_chain *chain, ik_vec3 target, int iterations, ik_result *out);

static inline ik_real ik_chain_tip_distance(const ik_chain *chain, ik_vec3 target)
{
    return ik_v3_len(ik_v3_sub(target, chain->joint[chain->n]));
}

/* The solvers proper, called with a checked target and an updated chain. */
void ik_fabrik(ik_chain *chain, ik_vec3 target, ik_result *out);
void ik_relax(ik_chain *chain, ik_vec3 target, ik_result *out);
void ik_ccd(ik_chain *chain, ik_vec3 target, ik_result *out);
void ik_two_bone_chain(ik_chain *chain, ik_vec3 target, ik_result *out);

#endif /* IK_CHAIN_H */
