/*
 * chain.h - the chain's layout and the internal interface of the core's layers (private).
 *
 * The core reads bottom-up; each section below belongs to one file, and a file only calls
 * the sections above its own:
 *   ik_math.h    vectors, complex numbers (2D turns), quaternions
 *   chain.c      the chain: layout, settings, pose, forward kinematics, attachment
 *   limits.c     joint limits, and posing a bone along a direction within them
 *   joint_space.c  damped least-squares steps on joint rotations, limits as bounds: the
 *                finish of every single-chain solver and, bone by bone, of rigs
 *   sweep.c      one CCD sweep: the CCD solver's iteration, and the escape's last resort
 *   escape.c     progress of an iterative solve: lock-ups (the escape) and stalls
 *   two_bone.c fabrik.c ccd.c relax.c aim.c   the solvers, one file each
 *   batch.c      FABRIK on many chains at once, in lanes on the vector units
 *                (batch_lanes.h: its passes, written once per instruction set)
 *   goal.c       a chain's goal and the finish around a solve: distance, angle, the pose
 *                before, orientation, mix, max_turn (for solve.c and the rig)
 *   solve.c      the dispatcher: the solvers' table, goals, stretch, softness, solve_many
 *   rig.c        several chains solved together: the tree and the solve's order, with
 *                rig_fabrik.c and rig_relax.c (each rig solver's passes) and rig_joint.c
 *                (the stages on rotations); rig_tree.h is what the four share
 *   motion.c     chains moved over time: follow-the-leader (drag), secondary motion
 *                (simulate)
 *   gait.c       a stepping controller: feet that plant and step, setting legs' goals
 *   ik_lua.c     the Lua binding (the only file that includes lua.h)
 *
 * A chain is one block: this header followed by its arrays. Two things can be the truth
 * about where the bones are:
 *   - the local pose (2D: unit complex numbers (cos, sin) with the exact angle when one was
 *     set; 3D: unit quaternions), from which forward kinematics (ik_chain_update) derives
 *     the world data: joint positions, bone directions, 3D world rotations. Setters mark it
 *     stale from the first changed bone;
 *   - or the joint positions themselves, after a position-based solve (FABRIK, relaxation):
 *     the solve leaves its points as they are (pose_behind), and the local pose is derived
 *     from them when it is read (ik_chain_derive_*, pure) or needed by a change
 *     (ik_chain_settle). The world directions (and 3D world rotations) then still hold
 *     the pose before that solve: zero-length bones keep that direction, and 3D bones turn
 *     from it by the smallest rotation (which keeps their twist).
 * Either way joint positions are dim numbers each (2D chains carry no z).
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

/* "ikch": the first word of every chain, checked by the binding against type confusion. */
#define IK_CHAIN_MAGIC 0x696b6368u

struct ik_chain {
    unsigned magic;
    int n;           /* bones */
    int dim;         /* 2 or 3 */
    int stale_from;  /* first bone whose world data is out of date; n when all fresh */
    int pose_behind; /* the joints moved in a solve; the local pose is derived from them */
    int limited;     /* how many bones have limits: 0 takes the solvers' fast paths */
    int kicked;      /* the escape bent the chain during the current solve */
    int batched;     /* ik_solve_many: the chain waits in the batch being gathered */
    ik_settings settings;
    ik_real scale;     /* stretch factor: world bone length = length * scale */
    ik_real reach;     /* the sum of the lengths */
    ik_real longest;   /* the longest bone */

    /* The base: the world frame of joint 0 (for an attached chain, derived from the parent). */
    ik_vec3 base;       /* z = 0 in 2D */
    ik_real base_angle; /* 2D: world angle of the base frame, wrapped */
    ik_vec2 base_turn;  /* 2D: (cos, sin) of base_angle */
    ik_quat base_rot;   /* 3D: world rotation of the base frame */

    /* Attachment (see ik_chain_follow). */
    ik_chain *parent;   /* NULL for a free chain */
    int parent_joint;   /* the parent's joint the base follows, 0..parent->n */
    ik_real offset_angle;  /* 2D: the base frame's turn from the parent bone's frame */
    ik_vec2 offset_turn;
    ik_quat offset_rot;    /* 3D */
    unsigned long long version;     /* counts changes of this chain's world data */
    unsigned long long parent_seen; /* the parent's version the base was derived from */
    unsigned long long links;       /* counts this chain's attach and detach calls: a rig
                                       compares it, as an address can be reused */
    ik_chain *down; /* ik_chain_follow's scratch: the child on the way down to the chain
                       being brought up to date */
    unsigned long long base_moves; /* counts the changes of version that only moved the base
                                      (ik_chain_pose_version) */

    /* Tracking's prediction (joint_space.c, predict): track_turn / track_rot hold the local
       pose a tracked solve started from; track_have says the last solve was such a one, and
       track_seen is the pose version it left. */
    int track_recorded;  /* the solve under way kept its start */
    int track_have;
    unsigned long long track_seen;

    /* The tip hold: a closed loop (ik_chain_attach_tip). While held, has_target is set and
       target is the held point as last read (ik_chain_read_hold). */
    ik_chain *tip_parent;  /* NULL: the tip is free */
    int tip_joint;         /* 0..tip_parent->n */
    ik_vec3 tip_offset;    /* in the frame of tip_parent's bone that ends at tip_joint */
    unsigned long long holds; /* counts attach_tip and detach_tip calls: a rig compares it */

    /* Goals kept on the chain. */
    int has_target, has_orientation;
    ik_vec3 target;        /* z = 0 in 2D */
    ik_real target_angle;  /* 2D, wrapped */
    ik_vec2 target_turn;   /* 2D: (cos, sin) of target_angle */
    ik_quat target_rot;    /* 3D */

    /* Secondary motion (motion.c): the state simulate keeps between calls. */
    int sim_live;          /* sim holds the joints of the last two sub-steps, and the local
                              pose has not changed since (sim_pose): the joints keep their speed */
    ik_real sim_scale;     /* the stretch factor then */
    ik_vec3 sim_base;      /* the base then, which the next call's sub-steps move from */
    ik_vec3 sim_base_before; /* the base a call earlier, and that call's time (0: none): the
                                base's path through the three is a parabola */
    ik_real sim_time;
    ik_real sim_base_angle; /* 2D */
    ik_quat sim_base_rot;   /* 3D */

    ik_real *length;    /* [n] */
    ik_real *weight;    /* [n + 1] relaxation weight per joint, aim weight per bone */
    ik_real *joint;     /* [(n + 1) * dim] world positions */
    ik_real *dir;       /* [n * dim] world unit direction of each bone */
    ik_real *work;      /* [(n + 1) * dim] scratch points for the solvers */
    ik_vec2 *turn;      /* 2D [n]: (cos, sin) of bone i's local angle: the 2D pose */
    ik_real *angle;     /* 2D [n]: bone i's local angle, wrapped, when known exactly (the
                           value set_angle was given); IK_ANGLE_UNKNOWN once a solve turned
                           the bone: it is then derived from turn */
    ik_quat *rot;       /* 3D [n]: local rotation of bone i relative to its parent */
    ik_quat *wrot;      /* 3D [n]: world rotation of bone i */
    ik_vec2 *prev_turn;  /* 2D [n]: the local pose before the solve, for mix and max_turn */
    ik_real *prev_angle; /* 2D [n] */
    ik_quat *prev_rot;   /* 3D [n] */
    ik_vec2 *best_turn;  /* 2D [n]: the best pose of a solve's tries so far (solve.c) */
    ik_real *best_angle; /* 2D [n] */
    ik_quat *best_rot;   /* 3D [n] */
    ik_quat *points_rot; /* 3D [n]: the world rotations a solver on points (FABRIK,
                            relaxation) derives its pose from, kept over joint-space steps
                            (joint_space.c) */
    ik_real *sim;        /* [2 (n + 1) dim]: the joints after the last sub-step of simulate,
                            then the ones a sub-step before: their speed */
    ik_real *sim_scratch; /* [n (dim + 2)]: a sub-step's bone directions before it (dim
                             each), and its tridiagonal sweep (2 each) */
    ik_vec2 *rest_turn;  /* 2D [n]: the rest pose simulate's stiffness pulls towards */
    ik_quat *rest_rot;   /* 3D [n] */
    ik_vec2 *sim_turn;   /* 2D [n]: the local pose simulate left (a change gives no speed) */
    ik_quat *sim_rot;    /* 3D [n] */
    ik_vec2 *track_turn; /* 2D [n]: the local pose the last tracked solve started from */
    ik_quat *track_rot;  /* 3D [n] */
    ik_limit *limit;     /* [n] */
};

/* The marker of an angle that must be derived from its turn (see struct ik_chain). */
#define IK_ANGLE_UNKNOWN NAN

/* ---- chain.c ---- */

static inline ik_real *ik_joint(const ik_chain *c, int i) { return c->joint + (size_t)i * (size_t)c->dim; }
static inline ik_real *ik_dir(const ik_chain *c, int i) { return c->dir + (size_t)i * (size_t)c->dim; }
static inline ik_vec2 ik_joint2(const ik_chain *c, int i) { return ik_v2_load(c->joint + 2 * (size_t)i); }
static inline ik_vec3 ik_joint3(const ik_chain *c, int i) { return ik_v3_load(c->joint + 3 * (size_t)i); }
static inline ik_vec2 ik_dir2(const ik_chain *c, int i) { return ik_v2_load(c->dir + 2 * (size_t)i); }
static inline ik_vec3 ik_dir3(const ik_chain *c, int i) { return ik_v3_load(c->dir + 3 * (size_t)i); }
/* Any joint as a 3D point (z = 0 in 2D). */
static inline ik_vec3 ik_joint_v3(const ik_chain *c, int i)
{
    const ik_real *p = ik_joint(c, i);
    return ik_v3(p[0], p[1], c->dim == 3 ? p[2] : 0);
}

/* Any bone's world direction as a 3D vector (z = 0 in 2D). */
static inline ik_vec3 ik_dir_v3(const ik_chain *c, int i)
{
    const ik_real *d = ik_dir(c, i);
    return ik_v3(d[0], d[1], c->dim == 3 ? d[2] : 0);
}

/* Bone i's local angle (2D), wrapped: the exact one set_angle was given, or atan2. */
static inline ik_real ik_turn_angle(const ik_chain *c, int i)
{
    ik_real a = c->angle[i];
    return a == a ? a : atan2(c->turn[i].y, c->turn[i].x);
}

/* Sets bone i's local angle (2D): the angle wrapped, and the turn of that same angle. */
static inline void ik_chain_set_turn_angle(ik_chain *c, int i, ik_real angle)
{
    c->angle[i] = ik_wrap_angle(angle);
    c->turn[i] = ik_v2_turn(c->angle[i]);
}

/* Joint m's distance from target (a 2D chain's z ignored: the same bits as with z = 0). */
static inline ik_real ik_joint_distance(const ik_chain *c, int m, ik_vec3 target)
{
    if (c->dim == 2) return ik_v2_len(ik_v2_sub(ik_v2(target.x, target.y), ik_joint2(c, m)));
    return ik_v3_len(ik_v3_sub(target, ik_joint3(c, m)));
}

/* The argument checks of the setters and getters: a status for the caller to return. */
#define IK_CHECK_BONE(c, i) \
    if ((i) < 0 || (i) >= (c)->n) return IK_ERR_INDEX
#define IK_CHECK_JOINT(c, i) \
    if ((i) < 0 || (i) > (c)->n) return IK_ERR_INDEX
#define IK_CHECK_DIM(c, d) \
    if ((c)->dim != (d)) return IK_ERR_DIMENSION

/* count user numbers: finite (IK_ERR_NOT_FINITE) and within IK_MAX_COORD (IK_ERR_RANGE). */
ik_status ik_check_coords(const ik_real *v, int count);

static inline void ik_chain_mark_stale(ik_chain *c, int bone)
{
    if (bone < c->stale_from) c->stale_from = bone;
}

/*
 * Brings an attached chain's base up to date with its parents (carrying it rigidly);
 * nothing for a free chain. Every entry point calls it first. O(depth), writing nothing
 * when no parent changed.
 */
void ik_chain_follow(ik_chain *c);
/* The same one level up: c's base from its parent, which must be up to date. */
void ik_chain_follow_parent(ik_chain *c);

/* World data of bone i and joint i + 1 from bone i - 1's (or the base's). */
void ik_chain_fk_bone(ik_chain *c, int i);
/*
 * Forward kinematics: world data up to date with the local pose (nothing while pose_behind:
 * the joints are the truth). Does not follow the parent.
 */
void ik_chain_fk(ik_chain *c);

/*
 * Derived from the joints while pose_behind (pure: callable by readers). The world
 * direction of bone i: its segment's, or its direction before the solve for a segment with
 * no direction (a zero-length bone). 2D: the local turn (kept unit to first order); 3D: the
 * world rotation, the smallest turn from its direction before, applied to its rotation
 * before.
 */
ik_vec2 ik_chain_derive_dir2(const ik_chain *c, int i);
ik_vec2 ik_chain_derive_turn(const ik_chain *c, int i);
ik_quat ik_chain_derive_wrot(const ik_chain *c, int i);
/* 2D local angle, world angle; 3D local, world rotation: current in either state. */
ik_real ik_chain_local_angle(const ik_chain *c, int i);
ik_real ik_chain_world_angle_of(const ik_chain *c, int i);
ik_quat ik_chain_local_rot(const ik_chain *c, int i);
ik_quat ik_chain_world_rot(const ik_chain *c, int i);

/*
 * Makes the local pose the truth again (and the world directions current), keeping the
 * joints as the solve left them. Nothing when the pose is not behind.
 */
void ik_chain_settle(ik_chain *c);

/* Marks a change of the chain's world data, for its children. */
static inline void ik_chain_changed(ik_chain *c) { c->version++; }
/* The same for a change that only moved the base (its own, or its parent's frame). */
static inline void ik_chain_base_moved(ik_chain *c)
{
    c->version++;
    c->base_moves++;
}
/* Counts every change but the base's moves: the local pose is as a solve left it while this
   stays the same (tracking's prediction asks it). */
static inline unsigned long long ik_chain_pose_version(const ik_chain *c)
{
    return c->version - c->base_moves;
}

/* The goal kept on c: coordinates already checked (ik_check_coords); -0 taken as +0. */
static inline void ik_chain_keep_target(ik_chain *c, const ik_real *t)
{
    c->target = ik_v3(t[0] + 0.0, t[1] + 0.0, c->dim == 3 ? t[2] + 0.0 : 0);
    c->has_target = 1;
}

/* The world frame at joint j of c (j = 0: the base frame), as a child attached there sees it. */
ik_vec2 ik_chain_frame2(const ik_chain *c, int j);
ik_quat ik_chain_frame3(const ik_chain *c, int j);

/* The point held at joint j of c, moved by offset in the frame there; c's world data current. */
ik_vec3 ik_hold_point(const ik_chain *c, int j, ik_vec3 offset);

/* A held chain's goal (target) read where the held point is now: the chain holding it
   brought up to date (its world data; it does not move). Nothing for a chain not held. */
void ik_chain_read_hold(ik_chain *c);

/*
 * For the rig: c's base (and joint 0) put on its parent's joint as the parent is now, and
 * nothing else (the rig's passes use the joints as their working points).
 */
void ik_chain_take_base(ik_chain *c);

/*
 * The side a chain prefers to bend to, seen along the unit line (base to target): 2D, the
 * side bend asks for (1: positive joint angles, the joints clockwise of the line, as in the
 * two-bone solve); 3D, the pole made perpendicular to the line, or a fixed perpendicular of
 * the line without a pole (or with one along it). Unit.
 */
ik_vec3 ik_chain_bend_side(const ik_chain *c, ik_vec3 line);

/* The reach of bones 0..m-1 (and their longest): the cached sums for the whole chain. */
static inline ik_real ik_chain_reach_to(const ik_chain *c, int m, ik_real *longest)
{
    ik_real total = 0, most = 0;
    int i;
    if (m == c->n) {
        if (longest) *longest = c->longest;
        return c->reach;
    }
    for (i = 0; i < m; i++) {
        total += c->length[i];
        if (c->length[i] > most) most = c->length[i];
    }
    if (longest) *longest = most;
    return total;
}

/* The iterations a solve may do: the setting, at most IK_MAX_ITERATIONS. */
static inline int ik_iteration_budget(int iterations)
{
    return iterations < IK_MAX_ITERATIONS ? iterations : IK_MAX_ITERATIONS;
}

/* Recomputes reach and longest after a length changed; keeps scale * longest in range. */
void ik_chain_lengths_changed(ik_chain *c);

/* ---- limits.c ---- */

/* The local angle (2D) or rotation (3D) of a bone moved within its limits. */
ik_real ik_limit_angle(const ik_limit *limit, ik_real angle);
ik_quat ik_limit_rotation(const ik_limit *limit, ik_quat rotation);
/*
 * For the backward passes: bone i's new world direction (unit) held within what its
 * child's limit allows, given the child's new direction (2D: its range; 3D: its cone).
 */
ik_vec3 ik_limit_backward(const ik_chain *chain, int i, ik_vec3 dir, ik_vec3 child);
/* The angle of q's turn about unit axis (its twist about that axis), in [-pi, pi]. */
ik_real ik_twist_angle(ik_quat q, ik_vec3 axis);
/* Brings every limited bone within its limits (the local pose; the cache goes stale). */
void ik_chain_clamp_limits(ik_chain *chain);
/*
 * A local angle (2D) or rotation (3D) within limit at fractions u, v, w in [0, 1] of its
 * ranges (see limits.c): the starts of a solve's other tries.
 */
ik_real ik_limit_sample_angle(const ik_limit *limit, ik_real u);
ik_quat ik_limit_sample_rotation(const ik_limit *limit, ik_real u, ik_real v, ik_real w);
/* ---- joint_space.c ---- */

/*
 * A solve that crawls (a chain with limits stuck against them, or any chain creeping near
 * its goal): damped least-squares steps on the joint angles of bones first..m-1, the
 * limits as bounds, until joint m is within tolerance of target, the
 * steps gain nothing, or `iterations` steps are spent. The chain must be settled and
 * current; its world data is current afterwards. Returns the steps used. points: for a
 * solver on points (FABRIK, relaxation): on a 3D chain without limits, each bone's world
 * rotation is then derived from the one before the steps by the smallest turn of its
 * direction (pose_behind), as the passes derive it: the twist kept.
 */
int ik_joint_finish(ik_chain *chain, ik_vec3 target, int m, int iterations, int first, int points);
/*
 * One bone in a joint-space step. A turn is an angle (in .x) for a 2D bone or a 3D hinge,
 * else a rotation vector in the world frame. ik_joint_axes: the world axes bone j turns
 * about (2D: z; a hinge: its axis; else x, y, z, or, with mode, an orthonormal set without
 * the ways out its limits block: bit 1 the swing out of its cone, bit 2 its twist beyond a
 * bound), returns how many. ik_joint_blocked: what its limits block of a turn: -1 all (a
 * 2D range or hinge at the bound the turn pushes beyond), else the mode bits (a cone or
 * twist at its bound, or that the turn would carry across it by more than half: counted
 * in, a joint its limit holds back makes the others' turns too small). ik_joint_turn:
 * turns bone j (its local pose; the caller marks the chain stale) within its limits. Bones
 * 0..j-1 must be current.
 */
/* Whether bone j has bounds on one angle (a 2D range, a 3D hinge), and that angle now. */
int ik_joint_has_bounds(const ik_chain *chain, int j);
ik_real ik_joint_bound_angle(const ik_chain *chain, int j);
int ik_joint_axes(const ik_chain *chain, int j, int mode, ik_vec3 axes[3]);
int ik_joint_blocked(const ik_chain *chain, int j, ik_vec3 turn);
void ik_joint_turn(ik_chain *chain, int j, ik_vec3 turn);
/*
 * Solves the symmetric positive definite k x k system a y = e by Cholesky (a: rows of
 * `stride` numbers; its lower half is overwritten by the factor); 0 when a is not positive
 * definite (or a pivot is not finite). The joint-space steps of chains and rigs.
 */
int ik_solve_spd(ik_real *a, int stride, int k, const ik_real *e, ik_real *y);
/*
 * Whether a solve of bones 0..m-1 is for the point behind a tip bone with an orientation
 * goal and a limit (m = n - 1): ik_joint_finish then also turns bone m - 1 so that the tip
 * bone can take its goal within its limit. The solvers end with it on chains with limits.
 */
int ik_limits_oriented(const ik_chain *chain, int m);
/* A goal within this fraction of the reach from the tip is tracked (moved a little since
   the last frame): ik_joint_track, and solve.c's other tries. 0.15: an animation moves a
   tip up to 5.5% of the reach a frame (bench/track_limits.lua), and at 0.05 the frames that
   moved more were solved afresh by the passes, which jumped (with limits: up to 1.4 rad). */
#define IK_TRACK_NEAR 0.15
/* Whether a solve of bones 0..m-1 may track at all: escape on, and not one free bone (the
   solver points it at the goal, the smallest turn there is). */
static inline int ik_may_track(const ik_chain *c, int m)
{
    return c->settings.escape && m > 0 && (m > 1 || c->limited);
}
/*
 * A solve whose joint m is already near target (a goal tracked frame by frame):
 * joint-space steps first, as ik_joint_finish. Returns 1 when they met the goal (the solve
 * is done), with the steps taken in *used; 0 otherwise (nothing done when the chain is not
 * near, or escape is off). *distance (unless NULL): joint m's from target after steps taken.
 */
int ik_joint_track(ik_chain *chain, ik_vec3 target, int m, int first, int points, int *used,
                   ik_real *distance);

/* No joint turns more than this (radians) in one joint-space step: the linearisation holds
   for small turns. */
#define IK_STEP_MAX_TURN 0.4
/*
 * The rows of a step: the tip's position (2 or 3), and with an oriented tip bone (below)
 * the turn its parent still needs (1 or 3), scaled by `scale` (a length) so both kinds of
 * row weigh alike. At most 6.
 */
typedef struct ik_rows {
    int k;             /* rows */
    int oriented;      /* the tip bone (bone m) has an orientation goal and a limit */
    ik_real unit;      /* 1 / the reach: the steps measure lengths in reaches */
    ik_real scale;     /* of the orientation rows (in reaches) */
    ik_real e[6];      /* the error: (target - tip) * unit, then the turn needed (times scale) */
    ik_vec3 gap_axis;  /* oriented: 3D the tip bone's hinge axis, or the gap's direction
                          (world); 2D (1, 0, 0) while there is a gap, else 0 (see gap_turn) */
    int hinge_tip;     /* the tip bone's limit is a hinge */
    ik_real distance;  /* the tip's from the target (world units) */
} ik_rows;

/*
 * ik_joint_track in phases, so the batch (batch.c) can take the tracking steps of many chains
 * side by side: ik_steps_track does what ik_joint_track does before its first step (0: the
 * chain is not tracked, nothing done); while ik_steps_going, ik_steps_keep, one step (the
 * solve's own, or, where ik_steps_free2 says it is the closed-form 2D step, the batch's with
 * the same arithmetic), then ik_steps_after, given whether it stepped; ik_steps_end returns
 * what ik_joint_track would.
 */
typedef struct ik_steps {
    ik_chain *c;
    ik_vec3 target;
    int m, first, points, iterations, iter, unbends, stuck, done, stopped;
    ik_real lambda2, size;
    ik_rows rows;
} ik_steps;
int ik_steps_track(ik_steps *s, ik_chain *chain, ik_vec3 target, int m, int first, int points,
                   ik_real distance); /* joint m's from target; NaN: measured */
int ik_steps_going(const ik_steps *s);
void ik_steps_keep(ik_steps *s);
int ik_steps_free2(const ik_steps *s);
void ik_steps_after(ik_steps *s, int stepped);
int ik_steps_step(ik_steps *s); /* the solve's own step: whether it stepped */
void ik_steps_run(ik_steps *s); /* the steps while going, each the solve's own */
int ik_steps_end(ik_steps *s, int *used, ik_real *distance);

/*
 * Poses bone i along world direction dir (unit): its local pose becomes the one that points
 * it there, taken in 3D as the smallest turn from its current world rotation (which keeps
 * its twist), then moved within its limits; then its world data and joint i + 1 follow by
 * forward kinematics. Bones 0..i-1 must be current (bones are posed in order from the
 * base); the chain must not be pose_behind.
 */
void ik_pose_bone(ik_chain *chain, int i, ik_vec3 dir);
/* Bone i takes the world turn (2D) or rotation (3D) given, within its limits; as above. */
void ik_pose_bone_turn(ik_chain *chain, int i, ik_vec2 world);
void ik_pose_bone_rot(ik_chain *chain, int i, ik_quat world);

/*
 * Poses bones first..last-1 to point from points[i] to points[i + 1] (dim numbers each, world
 * space), within limits, in order; a zero-length bone, or a segment with no direction,
 * keeps its world direction. The world data of those bones is current afterwards; bones
 * from last on are left stale.
 */
void ik_pose_points(ik_chain *chain, const ik_real *points, int first, int last);
/*
 * Bone i of a 3D chain, unlimited, turned onto direction u by the smallest turn from its
 * direction now (its twist kept), as ik_pose_bone does with fewer roundings and products:
 * the world rotation normalised once and kept as the bone's, the local one derived from it
 * and pulled back to unit length to first order (as ik_chain_fk_bone does); the direction
 * and joint i + 1 from the world rotation. The world data of the bones before it must be
 * current. For the lean solves of plain chains (solve.c).
 */
static IK_ALWAYS_INLINE void ik_turn_bone3(ik_chain *c, int i, ik_vec3 u)
{
    ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
    ik_quat world = ik_q_normalize(ik_q_mul(ik_q_turn(ik_dir3(c, i), u), c->wrot[i]));
    ik_quat local = ik_q_mul(ik_q_conj(parent), world);
    ik_real k = (3 - (local.w * local.w + local.x * local.x + local.y * local.y + local.z * local.z)) / 2;
    ik_vec3 dir = ik_q_x_axis(world);
    c->rot[i] = ik_q(local.w * k, local.x * k, local.y * k, local.z * k);
    c->wrot[i] = world;
    ik_v3_store(ik_dir(c, i), dir);
    ik_v3_store(ik_joint(c, i + 1), ik_v3_add(ik_joint3(c, i), ik_v3_scale(dir, c->length[i] * c->scale)));
}

/* ---- sweep.c ---- */

/*
 * One CCD iteration over joints first..m-1 towards target (the tip is joint m), each joint
 * turned by greed times the angle that points the tip at the target, within limits; the
 * world data is current afterwards. The chain must not be pose_behind.
 */
void ik_ccd_sweep(ik_chain *chain, ik_vec3 target, int m, ik_real greed, int first);

/* ---- escape.c ---- */

/*
 * The progress of an iterative solve towards a target (bones 0..m-1, the tip joint m): after
 * each iteration the solver asks what to do next.
 */
typedef struct ik_progress {
    ik_real last;      /* distance after the previous iteration */
    ik_real reach;     /* of bones 0..m-1 */
    ik_real least;     /* no pose can come closer: the distance to the reach ring, or 0 */
    ik_real mark;      /* the distance IK_STALL_ITERATIONS iterations ago (or since a kick) */
    ik_real middle;    /* the distance IK_STALL_ITERATIONS / 2 iterations after mark */
    ik_real stall;     /* a window gaining less than this fraction of distance - least stalls */
    int kicks;         /* bends so far in this solve */
    int since;         /* iterations since mark */
    int reachable;     /* escape is on and the target is within the chain's reach */
    int limited;       /* the chain has limits: a stall there is a minimum they made */
    ik_real floor;     /* distances below this are rounding, not a lock-up */
    ik_real slow;      /* an iteration gaining less than this fraction counts as stuck */
    int crawl;         /* a chain without limits not yet handed to joint-space steps */
    int m;
} ik_progress;

typedef enum ik_next {
    IK_GO_ON = 0, /* iterate again */
    IK_KICK,      /* stuck on a target within reach: bend the chain (ik_escape_kick) */
    IK_STOP,      /* stalled: no iteration gains anything any more */
    IK_CRAWL      /* creeping (a chain without limits, once a solve): joint-space steps */
} ik_next;

ik_progress ik_progress_start(const ik_chain *chain, ik_vec3 target, int m);
/* The same, given the tip's distance from the target and the base's. */
ik_progress ik_progress_from(const ik_chain *chain, int m, ik_real distance, ik_real base_distance);
/* Progress with no escape, for an error of the given scale (aiming: an angle, scale pi). */
ik_progress ik_progress_plain(ik_real error, ik_real scale);
/* distance: the tip's after this iteration (above tolerance, which the caller checks). */
ik_next ik_progress_next(const ik_chain *chain, ik_progress *progress, ik_real distance);
/*
 * Bends bones first..m-1 (the bones before first, and so joints 0..first, stay put) towards
 * the bend side (2D) or the pole (3D); the chain must be settled; its world data is current
 * afterwards.
 */
void ik_escape_kick(ik_chain *chain, ik_vec3 target, ik_progress *progress, int first);
/*
 * A stuck position-based solve on a chain with limits: the limits made the minimum, and a
 * bend rarely leaves it, so the solve spends the iterations it has left on CCD sweeps
 * (greed 1, joints first..m-1), whose every turn stays within the limits. The chain must be
 * settled and current. Returns the iterations used.
 */
int ik_escape_finish(ik_chain *chain, ik_vec3 target, int m, int iterations, int first);

/* ---- the solvers ---- */

/*
 * Each moves bones 0..m-1 (m <= n) so that joint m reaches target, from the chain's current
 * state, and returns the iterations it took. The chain has followed its parent; the world
 * data is current (or pose_behind, for FABRIK and relaxation, which start from the joints).
 * They leave it current or pose_behind. The target is within IK_MAX_COORD.
 */
/* FABRIK's *distance: joint m's from target before (NaN: to be measured), and after (NaN when
   not known: the chain was straightened, or finished by CCD sweeps). */
int ik_fabrik(ik_chain *chain, ik_vec3 target, int m, ik_real *distance);
int ik_ccd(ik_chain *chain, ik_vec3 target, int m);
int ik_relax(ik_chain *chain, ik_vec3 target, int m);
int ik_two_bone_chain(ik_chain *chain, ik_vec3 target); /* bones 0 and 1 */
/* Aim: the tip bone (bone n-1) points at target; returns iterations, *error the angle. */
int ik_aim(ik_chain *chain, ik_vec3 target, ik_real *error);
/* The angle between the tip bone and the line from its base to target (0 without one);
   the chain must not be pose_behind. */
ik_real ik_aim_error(const ik_chain *chain, ik_vec3 target);
/*
 * The lean solves of a plain 3D chain (solve.c says which: no limits, no orientation goal,
 * mix 1, no max_turn or stretch; current, at its own lengths): the whole solve in one pass
 * towards aim (the goal, softened), the same pose as the solver's to rounding. Each fills
 * out (iterations, distance from the goal or angle error, reached) and returns nonzero when
 * it moved the chain.
 */
int ik_two_bone_lean3(ik_chain *chain, ik_vec3 aim, ik_result *out); /* 2 bones */
int ik_aim_lean3(ik_chain *chain, ik_vec3 aim, ik_result *out);      /* 1 bone */

/*
 * FABRIK's passes, for the rig: backward over bones hi-1 down to lo with joint hi placed
 * at `end` first (dim numbers); forward over bones lo..hi-1 from joint lo as it is (the
 * caller puts it back where it belongs: the backward pass moved it). Chains
 * without limits work on the joints alone (pose_behind); with limits, the forward pass poses
 * each bone within them.
 */
void ik_fabrik_backward(ik_chain *chain, int lo, int hi, const ik_real *end);
/* Bones 0..m-1 along the line from joint 0 to target (within limits): FABRIK's (and
   relaxation's) answer to a target out of reach, or within tolerance of it. */
void ik_fabrik_straighten(ik_chain *chain, ik_vec3 target, int m);
void ik_fabrik_forward(ik_chain *chain, int lo, int hi);

/* Joint 0 back on the base (the backward pass moved it). */
void ik_fabrik_put_base(ik_chain *chain);

/*
 * FABRIK's step: w scaled to length len, or fallback (a unit direction) scaled to it when w
 * has none. The fast path needs |w|^2 in (1e-300, 1e300) and q = len / |w|^2 in [1e-150,
 * 1e300], which keeps |w q| = len / |w| within [1e-300, 1e300]: no product overflows or
 * underflows (a bone of 1e-246 next to joints near 1e150 lost its length to an underflow).
 * Anything else, zero-length bones included, normalises first (the _slow forms). The batch
 * (batch.c) computes exactly this on several chains at once.
 */
ik_vec2 ik_fab_step2_slow(ik_vec2 w, ik_real len, const ik_real *fallback);
ik_vec3 ik_fab_step3_slow(ik_vec3 w, ik_real len, const ik_real *fallback);

/* q = len / d is only taken for d in range: 0 / 0 (a zero-length bone between coinciding
   joints) would raise FE_INVALID. */
static inline int ik_fab_fast(ik_real d, ik_real len, ik_real *q)
{
    if (!(d > 1e-300 && d < 1e300)) return 0;
    *q = len / d;
    return *q >= 1e-150 && *q <= 1e300;
}

static IK_ALWAYS_INLINE ik_vec2 ik_fab_step2(ik_vec2 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y, q;
    if (ik_fab_fast(d, len, &q)) {
        ik_real s = sqrt(d);
        return ik_v2(w.x * q * s, w.y * q * s);
    }
    return ik_fab_step2_slow(w, len, fallback);
}

static IK_ALWAYS_INLINE ik_vec3 ik_fab_step3(ik_vec3 w, ik_real len, const ik_real *fallback)
{
    ik_real d = w.x * w.x + w.y * w.y + w.z * w.z, q;
    if (ik_fab_fast(d, len, &q)) {
        ik_real s = sqrt(d);
        return ik_v3(w.x * q * s, w.y * q * s, w.z * q * s);
    }
    return ik_fab_step3_slow(w, len, fallback);
}

/* One FABRIK solve in progress, which the single solve and the batch share. */
typedef struct ik_fab {
    ik_chain *c;
    ik_vec3 target;
    ik_real end[3];
    ik_real distance; /* the tip's from target now; NaN when not known */
    int m, iter;
    int crawl;        /* the kick asked for is joint-space steps (IK_CRAWL) */
    ik_progress progress;
} ik_fab;

enum { IK_FAB_DONE = 0, IK_FAB_GO_ON = 1, IK_FAB_KICK = 2 };

/*
 * Starts a solve of bones 0..m-1 towards target, given joint m's distance from it (NaN: to be
 * measured): the iterations it is done with (0: within tolerance already; 1: out of reach,
 * or one bone, straightened), or -1 when it is to iterate.
 */
int ik_fab_start(ik_fab *f, ik_chain *c, ik_vec3 target, int m, ik_real distance);
/*
 * ik_fab_start in two halves, with the tracking steps between them taken by the caller
 * (the batch takes many chains' steps side by side): ik_fab_open measures *distance (when
 * NaN) and says IK_FAB_DONE (within tolerance), IK_FAB_STEPS (steps started: take them while
 * ik_steps_going) or IK_FAB_PASSES; ik_fab_close, given that and the distance, returns
 * what ik_fab_start would.
 */
enum { IK_FAB_STEPS = 1, IK_FAB_PASSES = 2 };
int ik_fab_open(ik_fab *f, ik_steps *steps, ik_chain *c, ik_vec3 target, int m, ik_real *distance);
int ik_fab_close(ik_fab *f, ik_steps *steps, int opened, ik_real distance);
/*
 * After an iteration's two passes, given the tip's distance from the target: IK_FAB_DONE,
 * IK_FAB_GO_ON, or IK_FAB_KICK, when the chain is stuck and its joints must be current for
 * ik_fab_kick, which bends it (or finishes a limited chain) and says whether to go on.
 */
int ik_fab_next(ik_fab *f, ik_real distance);
int ik_fab_kick(ik_fab *f);
/* The rest of a solve in progress, one chain alone: what a single solve does after
   ik_fab_start, and what the batch does with a chain whose kick took joint-space steps
   (so the steps after them are the single solve's, to the bit, in every build). */
void ik_fab_finish(ik_fab *f);

/* ---- batch.c ---- */

/*
 * FABRIK on count (<= IK_BATCH) chains of one dimension without limits, pose_behind or
 * current, side by side: iterations[k] is what ik_fabrik would return for chain k (all its
 * bones), and every chain ends bit for bit as ik_fabrik leaves it. distances[k] as ik_fabrik's
 * distance: the tip's from targets[k] before (NaN: to be measured), and after.
 */
#define IK_BATCH 64
void ik_fabrik_batch(ik_chain *const *chains, const ik_vec3 *targets, int count, int *iterations,
                     ik_real *distances);

/* ---- goal.c: a chain's goal, and the finish around a solve (single, many, rigs) ---- */

/* The world direction the orientation goal gives the tip bone. */
ik_vec3 ik_goal_direction(const ik_chain *c);
/* The tip's distance from the kept target; the tip bone's angle from its orientation goal. */
ik_real ik_tip_distance(const ik_chain *c);
ik_real ik_orientation_error(const ik_chain *c);
/* The tip bone takes its orientation goal, within its limit (the chain is settled first). */
void ik_orient_tip(ik_chain *c);
/* Remembers the local pose (for mix and max_turn), and holds each bone's turn from it. */
void ik_save_pose(ik_chain *c);
void ik_hold_turns(ik_chain *c, ik_real max_turn);
/* The local pose moved the fraction mix of the way from the remembered pose to the new one. */
void ik_mix_pose(ik_chain *c, ik_real mix);

#endif /* IK_CHAIN_H */
