/*
 * ik.h - inverse kinematics for bone chains: the public C API of the core.
 *
 * The core knows nothing of Lua; an engine links it directly (libik.a).
 *
 * Conventions (the same as the Lua API, but 0-based):
 *   - Radians everywhere; 2D angles are counter-clockwise from +x in a y-up frame.
 *   - 3D rotations are unit quaternions stored w, x, y, z; a * b rotates by b, then by a.
 *   - A chain of n bones has joints 0..n: joint i is the base of bone i, joint n is the
 *     tip (the end effector). Joint 0 is the base and never moves in a solve.
 *   - Bone i points along the local +x axis of its frame; local angles are relative to
 *     the parent bone (bone 0: relative to the base frame).
 *   - Functions that can be misused validate their input and return an ik_status; a call
 *     that returns anything but IK_OK has changed nothing. Not reaching a target is not
 *     an error: it is a result (ik_result.reached == 0).
 *   - Solves and getters allocate nothing.
 */
#ifndef IK_H
#define IK_H

#include <stddef.h>

#define IK_VERSION "0.1.0"

/* The number type. double matches lua_Number. */
typedef double ik_real;

typedef enum ik_status {
    IK_OK = 0,
    IK_ERR_COUNT,        /* a chain needs at least one bone */
    IK_ERR_TOO_LARGE,    /* the chain's size does not fit in memory sizes */
    IK_ERR_NO_MEMORY,    /* allocation failed (ik_chain2d_create only) */
    IK_ERR_NOT_FINITE,   /* a number is NaN or infinite */
    IK_ERR_NEGATIVE,     /* a length or weight is below zero */
    IK_ERR_INDEX,        /* a bone or joint index is out of range */
    IK_ERR_ITERATIONS,   /* settings: iterations must be >= 1 */
    IK_ERR_TOLERANCE,    /* settings: tolerance must be finite and >= 0 */
    IK_ERR_GREED,        /* settings: greed must be in (0, 1] */
    IK_ERR_BEND,         /* bend must be 1 or -1 */
    IK_ERR_SOLVER,       /* settings: unknown solver */
    IK_ERR_NOT_TWO_BONE, /* the two-bone solver needs a chain of exactly 2 bones */
    IK_ERR_DIMENSION,    /* the call is for a chain of the other dimension */
    IK_ERR_ZERO_ROTATION, /* a quaternion of length zero has no rotation */
    IK_ERR_POLE,         /* settings: a pole must be a nonzero direction, on a 3D chain */
    IK_ERR_MIX,          /* settings: mix must be in [0, 1] */
    IK_ERR_SOFTNESS,     /* settings: softness must be finite and >= 0 */
    IK_ERR_LIMIT_RANGE,  /* a limit's min must not exceed its max, both in [-pi, pi] */
    IK_ERR_AXIS,         /* a hinge axis must be a nonzero finite direction */
    IK_ERR_CONE,         /* a cone's half angle must be in [0, pi] */
    IK_ERR_RANGE         /* a coordinate or bone length of magnitude above IK_MAX_COORD */
} ik_status;

/*
 * The range of a chain. Base and target coordinates and bone lengths are at most
 * IK_MAX_COORD in magnitude, and a chain has at most IK_MAX_BONES bones, so every joint lies
 * within 2^24 * 1e300 < 1.7e307 of the origin: positions, distances and every difference of
 * two points the solvers take stay finite (DBL_MAX is 1.8e308). The stateless two-bone
 * solves rescale their inputs and take any finite number.
 */
#define IK_MAX_COORD 1e300
#define IK_MAX_BONES 16777216 /* 2^24 */

/* A short lowercase message for a status, suitable for an argument error. */
const char *ik_status_string(ik_status status);

typedef enum ik_solver {
    IK_SOLVER_FABRIK = 0, /* Aristidou and Lasenby 2011: backward and forward passes */
    IK_SOLVER_CCD,        /* cyclic coordinate descent with greed */
    IK_SOLVER_RELAX,      /* constraint relaxation with per-joint weights */
    IK_SOLVER_TWO_BONE    /* the analytic solve; chains of exactly 2 bones */
} ik_solver;

/* "fabrik", "ccd", "relax", "two_bone"; NULL for an unknown value. */
const char *ik_solver_name(ik_solver solver);
/* Parses a solver name; returns IK_ERR_SOLVER for an unknown one. */
ik_status ik_solver_parse(const char *name, ik_solver *out);

/* Solver settings of a chain. Start from ik_default_settings(). */
typedef struct ik_settings {
    ik_solver solver;  /* what ik_chain_solve uses; default IK_SOLVER_FABRIK */
    int iterations;    /* maximum iterations, >= 1; default IK_DEFAULT_ITERATIONS */
    ik_real tolerance; /* reached when tip-to-target distance <= tolerance, >= 0 (world units) */
    ik_real greed;     /* CCD: fraction of each joint's rotation applied, in (0, 1] */
    int greed_ramp;    /* CCD: nonzero raises greed linearly so it is 1 on the last iteration */
    int bend;          /* two-bone solve: 1 bends with a positive joint angle, -1 negative */
    int use_pole;      /* 3D: nonzero bends towards pole; 0 keeps the current bend plane */
    ik_real pole[3];   /* 3D: world-space direction; the chain bends to its side of the
                          base->target line (see ik_two_bone_joint3) */
    int escape;        /* nonzero: an iterative solve that stops making progress towards a
                          target within reach bends the chain (towards bend / pole) and goes
                          on; 0: the articles' plain behaviour, which can lock up */
    ik_real mix;       /* in [0, 1]: 1 gives the solved pose, 0 the pose before the solve;
                          in between, each bone's local rotation is interpolated */
    ik_real softness;  /* a distance >= 0: within softness of full extension the target is
                          eased towards the base, so the chain straightens smoothly instead of
                          snapping; 0 turns it off. Ignored while stretch is on. */
    int stretch;       /* nonzero: a target beyond the chain's length scales every bone by
                          one factor (ik_chain_stretch) so the tip reaches it */
} ik_settings;

#define IK_DEFAULT_ITERATIONS 64
#define IK_DEFAULT_TOLERANCE 1e-3
#define IK_DEFAULT_GREED 0.5
#define IK_DEFAULT_GREED_RAMP 1
#define IK_DEFAULT_BEND 1
#define IK_DEFAULT_ESCAPE 1
#define IK_DEFAULT_MIX 1.0
#define IK_DEFAULT_SOFTNESS 0.0
#define IK_DEFAULT_STRETCH 0

ik_settings ik_default_settings(void);
ik_status ik_settings_validate(const ik_settings *settings);

/* What a solve did. */
typedef struct ik_result {
    int reached;       /* distance <= tolerance */
    ik_real distance;  /* tip-to-target distance after the solve */
    int iterations;    /* iterations performed: 0 when the tip was already within tolerance;
                          always 1 for the two-bone solve */
} ik_result;

/* ---- Stateless analytic two-bone solves (root at the origin) ---- */

/*
 * Angle form (trigonometric), after Ryan Juckett's "Analytic Two-Bone IK in 2D".
 * Outputs a1, the world angle of bone 1, and a2, the angle of bone 2 relative to bone 1,
 * with a2 >= 0 for bend == 1 and a2 <= 0 for bend == -1. *reached is 1 when the target
 * lies in the reachable ring |l1 - l2| <= |p| <= l1 + l2 (up to rounding), else 0 and the
 * pose is the closest one. Errors: IK_ERR_NOT_FINITE, IK_ERR_NEGATIVE, IK_ERR_BEND.
 */
ik_status ik_two_bone(ik_real l1, ik_real l2, ik_real x, ik_real y, int bend, ik_real *a1,
                      ik_real *a2, int *reached);

/*
 * Vector form (no trigonometry), after Inigo Quilez's two-bone IK: the middle joint j for
 * a root at the origin, |j| = r1 always. Same bend meaning and same pose as ik_two_bone
 * for every target, reachable or not.
 */
ik_status ik_two_bone_joint(ik_real x, ik_real y, ik_real r1, ik_real r2, int bend,
                            ik_real *jx, ik_real *jy, int *reached);

/*
 * 3D vector form: the middle joint for a root at the origin, |joint| = r1 always. It lies in
 * the plane of target and pole, on the pole's side of the root->target line. When the pole
 * is zero or along that line, the fallback bend direction is world +y made perpendicular to
 * the line, or world +z when the line is along y. Unreachable: the closest pose (straight,
 * or folded back when r2 > r1), *reached == 0.
 */
ik_status ik_two_bone_joint3(const ik_real target[3], ik_real r1, ik_real r2,
                             const ik_real pole[3], ik_real joint[3], int *reached);

/*
 * Softness: the distance a target at distance d from the root is eased to, for a chain
 * that reaches `reach`. Beyond reach - softness the distance approaches reach smoothly
 * (an exponential ease), so a target moving out of reach never snaps the chain straight.
 * d itself when softness is 0 or d <= reach - softness.
 */
ik_real ik_soft_distance(ik_real d, ik_real reach, ik_real softness);

/* ---- Chains ---- */

typedef struct ik_chain ik_chain;

/* Bytes needed for a 2D (3D) chain of n bones; 0 when n < 1, n > IK_MAX_BONES or the size
   overflows. */
size_t ik_chain2d_size(int n);
size_t ik_chain3d_size(int n);

/*
 * Builds a 2D chain of n bones in caller memory (at least ik_chain2d_size(n) bytes,
 * aligned for double). lengths: n finite numbers in [0, IK_MAX_COORD]. The base is at the
 * origin with angle 0; every local angle is 0 (a straight chain along +x); every weight is 1;
 * the settings are the defaults. The chain holds pointers into its own block: it must not be
 * moved or copied byte-wise after init.
 */
ik_status ik_chain2d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out);

/*
 * The same for a 3D chain: base at the origin with the identity rotation, every local
 * rotation the identity, so every bone points along +x.
 */
ik_status ik_chain3d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out);

/* The same in memory from malloc; free it with ik_chain_destroy. NULL on error. */
ik_chain *ik_chain2d_create(int n, const ik_real *lengths, ik_status *status);
ik_chain *ik_chain3d_create(int n, const ik_real *lengths, ik_status *status);
void ik_chain_destroy(ik_chain *chain);

int ik_chain_count(const ik_chain *chain); /* bones */
int ik_chain_dim(const ik_chain *chain);   /* 2 or 3 */

/*
 * World positions of joints 0..n, three numbers each (x, y, z; z = 0 in 2D), brought up to
 * date by this call; read-only. Valid for the life of the chain.
 */
const ik_real *ik_chain_positions(ik_chain *chain);

ik_status ik_chain_length(const ik_chain *chain, int bone, ik_real *out);
ik_status ik_chain_set_length(ik_chain *chain, int bone, ik_real length);

/* Relaxation weight of joint 0..n (default 1); see the relaxation solver. */
ik_status ik_chain_weight(const ik_chain *chain, int joint, ik_real *out);
ik_status ik_chain_set_weight(ik_chain *chain, int joint, ik_real weight);

/* 2D pose. Angles are stored and read back wrapped to [-pi, pi]. */
ik_status ik_chain2d_base(const ik_chain *chain, ik_real *x, ik_real *y, ik_real *angle);
ik_status ik_chain2d_set_base(ik_chain *chain, ik_real x, ik_real y, ik_real angle);
ik_status ik_chain2d_angle(const ik_chain *chain, int bone, ik_real *out);
ik_status ik_chain2d_set_angle(ik_chain *chain, int bone, ik_real angle);
ik_status ik_chain2d_world_angle(ik_chain *chain, int bone, ik_real *out);

/*
 * 3D pose. Quaternions are w, x, y, z. Setters normalise; a zero quaternion is
 * IK_ERR_ZERO_ROTATION. set_base with rotation NULL keeps the current rotation.
 */
ik_status ik_chain3d_base(const ik_chain *chain, ik_real position[3], ik_real rotation[4]);
ik_status ik_chain3d_set_base(ik_chain *chain, const ik_real position[3],
                              const ik_real *rotation);
ik_status ik_chain3d_rotation(const ik_chain *chain, int bone, ik_real out[4]);
ik_status ik_chain3d_set_rotation(ik_chain *chain, int bone, const ik_real rotation[4]);
ik_status ik_chain3d_world_rotation(ik_chain *chain, int bone, ik_real out[4]);

/*
 * Joint limits, local to the parent bone; every solve leaves every bone within its limits.
 * Setting a limit does not move the chain: the next solve brings the pose within it.
 *   2D: angle(bone) in [min, max], both in [-pi, pi].
 *   3D hinge: the bone only turns about axis (parent frame), by an angle in [min, max];
 *     replaces any cone or twist limit.
 *   3D cone: the bone's direction within half_angle (0..pi) of the parent's +x.
 *   3D twist: the turn about the bone's own axis in [min, max]; combines with a cone.
 */
ik_status ik_chain2d_set_limit(ik_chain *chain, int bone, ik_real min, ik_real max);
/* *has is 0 when bone has no limit (min and max are then -pi and pi). */
ik_status ik_chain2d_limit(const ik_chain *chain, int bone, int *has, ik_real *min,
                           ik_real *max);
ik_status ik_chain3d_set_hinge(ik_chain *chain, int bone, const ik_real axis[3], ik_real min,
                               ik_real max);
ik_status ik_chain3d_set_cone(ik_chain *chain, int bone, ik_real half_angle);
ik_status ik_chain3d_set_twist(ik_chain *chain, int bone, ik_real min, ik_real max);
ik_status ik_chain_clear_limit(ik_chain *chain, int bone);

/* The factor the last solve scaled every bone by (stretch); 1 when not stretched. */
ik_real ik_chain_stretch(const ik_chain *chain);

const ik_settings *ik_chain_settings(const ik_chain *chain);
/* Validates every field (and the solver against the chain), then copies. */
ik_status ik_chain_configure(ik_chain *chain, const ik_settings *settings);

/*
 * Solves from the current pose (warm start) so the tip reaches target (dim numbers, world
 * space). Bone lengths are kept exactly and the base never moves. Errors (nothing
 * changed): IK_ERR_NOT_FINITE or IK_ERR_RANGE for the target, IK_ERR_NOT_TWO_BONE.
 *
 * 3D, position-based solves (FABRIK, relaxation, two-bone): each bone's new world rotation
 * is the smallest rotation taking its direction before the call to its new one, applied to
 * its world rotation before the call, so the twist about the bone is kept. CCD turns each
 * joint by (a fraction of) the smallest rotation taking joint->tip to joint->target.
 */
ik_status ik_chain_solve(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_fabrik(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_ccd(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_relax(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_two_bone(ik_chain *chain, const ik_real *target, ik_result *out);

/*
 * Solves count chains of one dimension, chain k towards targets[k*dim ..], each exactly
 * as ik_chain_solve would (bit for bit). All targets are checked first: on an error nothing
 * changes and *failed is the index of the offending chain. *reached_count counts the
 * reached ones. FABRIK chains without limits are solved up to 8 at a time with their
 * passes interleaved, so the independent chains' square roots and divisions overlap: about
 * twice the throughput of one chain at a time (see `make bench`).
 */
ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, int *failed);

#endif /* IK_H */
