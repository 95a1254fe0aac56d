/*
 * chain.h - the chain's layout and the helpers the solvers share (private to the core).
 *
 * A chain is one block: this header followed by its arrays. The local pose is the truth
 * (2D: unit complex numbers (cos, sin); 3D: unit quaternions), so bone lengths are exact by
 * construction and forward kinematics needs no trigonometry. World data (joint positions,
 * bone directions, 3D world rotations) is a cache of forward kinematics: setters mark it
 * stale from the first changed bone and ik_chain_update() refreshes it. 2D angles are
 * derived (atan2) when asked for, except that an angle given to set_angle is kept exactly. World positions and directions are ik_vec3 in both
 * dimensions (z = 0 in 2D), so the position-based solvers run one loop for both.
 */
#ifndef IK_CHAIN_H
#define IK_CHAIN_H

#include "ik.h"
#include "ik_math.h"

/* Which limits a bone has (bit flags). */
enum {
    IK_LIMIT_RANGE = 1, /* 2D: local angle in [min, max] */
    IK_LIMIT_HINGE = 2, /* 3D: a turn about axis by an angle in [min, max] */
    IK_LIMIT_CONE = 4,  /* 3D: direction within cone of the parent's +x */
    IK_LIMIT_TWIST = 8  /* 3D: turn about the bone's own axis in [twist_min, twist_max] */
};

typedef struct ik_limit {
    int flags;
    ik_real min, max; /* RANGE and HINGE */
    ik_vec3 axis;     /* HINGE: unit, in the parent frame */
    ik_real cone;     /* CONE: half angle */
    ik_real twist_min, twist_max;
} ik_limit;

struct ik_chain {
    int n;          /* bones */
    int dim;        /* 2 or 3 */
    int stale_from; /* first bone whose world data is out of date; n when all fresh */
    ik_settings settings;
    int limited;    /* how many bones have limits: 0 takes the solvers' fast paths */
    int kicked;     /* the escape bent the chain during the current solve */
    ik_real scale;  /* stretch factor: world bone length = length * scale */
    ik_vec3 base;       /* world position of joint 0 (z = 0 in 2D) */
    ik_real base_angle; /* 2D: world angle of the base frame, wrapped */
    ik_vec2 base_turn;  /* 2D: (cos, sin) of base_angle */
    ik_quat base_rot;   /* 3D: world rotation of the base frame */
    ik_real *length;    /* [n] */
    ik_real *weight;    /* [n + 1] relaxation weight per joint */
    ik_vec2 *turn;      /* 2D [n]: (cos, sin) of bone i's local angle: the 2D pose */
    ik_real *angle;     /* 2D [n]: bone i's local angle, wrapped, when known exactly (the
                           value set_angle was given); IK_ANGLE_UNKNOWN after a solve turned
                           the bone: ik_chain_angle then derives it from turn */
    ik_quat *rot;       /* 3D [n]: local rotation of bone i relative to its parent */
    ik_quat *wrot;      /* 3D [n]: world rotation of bone i */
    ik_vec3 *dir;       /* [n] world unit direction of bone i */
    ik_vec3 *joint;     /* [n + 1] world positions */
    ik_vec3 *work;      /* [n + 1] scratch points for the solvers */
    ik_vec2 *prev_turn;  /* 2D [n]: the local pose before the solve, for mix */
    ik_real *prev_angle; /* 2D [n] */
    ik_quat *prev_rot;   /* 3D [n] */
    ik_limit *limit;     /* [n] */
};

/* The marker of an angle that must be derived from its turn (see struct ik_chain). */
#define IK_ANGLE_UNKNOWN NAN

/* Bone i's local angle (2D), wrapped: the exact one set_angle was given, or atan2. */
static inline ik_real ik_chain_angle(const ik_chain *chain, int i)
{
    ik_real a = chain->angle[i];
    return a == a ? a : atan2(chain->turn[i].y, chain->turn[i].x);
}

/* Sets bone i's local angle (2D): the turn, and the exact angle. */
static inline void ik_chain_set_turn_angle(ik_chain *chain, int i, ik_real angle)
{
    chain->angle[i] = ik_wrap_angle(angle);
    chain->turn[i] = ik_v2(cos(angle), sin(angle));
}

/* count user numbers: finite (IK_ERR_NOT_FINITE) and within IK_MAX_COORD (IK_ERR_RANGE). */
ik_status ik_check_coords(const ik_real *v, int count);

/* Brings the world cache up to date with the local pose. */
void ik_chain_update(ik_chain *chain);

/*
 * Poses every bone to point (world space) from points[i] to points[i + 1], then refreshes
 * the world cache. A zero-length bone, or a segment with no direction, keeps its world
 * orientation. In 3D each bone turns by the smallest rotation from its old direction, so
 * its twist is kept.
 */
void ik_chain_apply_points(ik_chain *chain, const ik_vec3 *points);

/* ---- limits.c ---- */

/* The local angle (2D) or rotation (3D) of bone i moved within its limits. */
ik_real ik_limit_angle(const ik_limit *limit, ik_real angle);
ik_quat ik_limit_rotation(const ik_limit *limit, ik_quat rotation);
/*
 * For the backward passes: bone i's new world direction (unit) held within what its
 * child's limit allows, given the child's new direction (2D: its range; 3D: its cone).
 */
ik_vec3 ik_limit_backward(const ik_chain *chain, int i, ik_vec3 dir, ik_vec3 child);
/* Brings every limited bone within its limits (the local pose; the cache goes stale). */
void ik_chain_clamp_limits(ik_chain *chain);

/*
 * Aims bone i along world direction dir (unit): its local pose becomes the one that points
 * it there, taken in 3D as the smallest turn from its world rotation in the cache, then
 * moved within its limits. parent: the world turn (2D) or rotation (3D) of the bone's
 * parent as now posed, updated to bone i's. Returns the direction it ends up with. The
 * cache is not refreshed: bones are aimed in order from the base.
 */
typedef struct ik_aim {
    ik_vec2 turn;
    ik_quat rot;
} ik_aim;
ik_aim ik_aim_start(const ik_chain *chain);
ik_vec3 ik_aim_bone(ik_chain *chain, int i, ik_vec3 dir, ik_aim *parent);

/* ---- solve.c ---- */

/*
 * The lock-up escape (see solve.c). An iterative solver starts it once, asks after each
 * iteration whether it is stuck, and if so brings the local pose up to date with its
 * working state, kicks (the chain bends; the cache is refreshed) and restarts its working
 * state from the cache.
 */
typedef struct ik_escape {
    ik_real last;  /* distance after the previous iteration */
    int kicks;     /* bends so far in this solve */
    int reachable; /* escape is on and the target is within the chain's reach */
    ik_real floor; /* distances below this are rounding, not a lock-up */
    ik_real slow;  /* an iteration gaining less than this fraction counts as stuck */
} ik_escape;
ik_escape ik_escape_start(const ik_chain *chain, ik_vec3 target);
int ik_escape_stuck(const ik_chain *chain, ik_escape *escape, ik_real distance);
/* Bends bones first..n-1 (the bones before first, and so joints 0..first, stay put). */
void ik_escape_kick(ik_chain *chain, ik_vec3 target, ik_escape *escape, int first);
/*
 * A stuck position-based solve on a chain with limits: the limits made the minimum, and a
 * bend rarely leaves it, so the solve spends the iterations it has left on CCD sweeps
 * (greed 1, joints first..n-1), whose every turn stays within the limits. The pose must
 * be current. Returns the iterations used.
 */
int ik_escape_finish(ik_chain *chain, ik_vec3 target, int iterations, int first);

/* Fills out from the current pose. */
void ik_chain_finish(ik_chain *chain, ik_vec3 target, int iterations, ik_result *out);

static inline ik_real ik_chain_tip_distance(const ik_chain *chain, ik_vec3 target)
{
    return ik_v3_len(ik_v3_sub(target, chain->joint[chain->n]));
}

/* The solvers proper, called with a checked target and an updated chain. */
void ik_fabrik(ik_chain *chain, ik_vec3 target, ik_result *out);

/*
 * FABRIK on count (<= IK_BATCH) different chains without limits at once, interleaved so
 * their dependent chains of square roots and divisions overlap; out[k] is exactly what
 * ik_fabrik would give chain k.
 */
#define IK_BATCH 8
void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, ik_result *out);
void ik_relax(ik_chain *chain, ik_vec3 target, ik_result *out);
void ik_ccd(ik_chain *chain, ik_vec3 target, ik_result *out);
void ik_two_bone_chain(ik_chain *chain, ik_vec3 target, ik_result *out);

/*
 * One CCD iteration over joints first..n-1 with the given greed, within limits; the cache
 * is refreshed. The escape uses it on chains with limits.
 */
void ik_ccd_sweep(ik_chain *chain, ik_vec3 target, ik_real greed, int first);

#endif /* IK_CHAIN_H */
