/*
 * ik.h - inverse kinematics for bone chains and rigs: the public C API of the core.
 *
 * The core knows nothing of Lua; an engine links it directly (libik.a, or the files of
 * `make lib`).
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
 *   - Solves and getters allocate nothing; every block is sized once (ik_*_size).
 *
 * Threads: the core has no global state. A chain, and a rig with its chains, may be used by
 * one thread at a time. Reading a chain brings its caches up to date, which writes; once
 * ik_chain_update() has returned (for an attached chain: after every change to it or to
 * the chains it hangs on), reading functions write nothing, and any number of threads may
 * read that chain at once, as long as none changes it.
 *
 * Work per call: a solve does at most `iterations` iterations of O(bones) work each (a rig:
 * O(bones of all its chains)), never more than IK_MAX_ITERATIONS, and stops early once the
 * goal is met or iterations no longer bring the tip closer (see IK_STALL_ITERATIONS).
 */
#ifndef IK_H
#define IK_H

#include <stddef.h>

#define IK_VERSION "0.2.0"

/* The number type. double matches lua_Number. */
typedef double ik_real;

typedef enum ik_status {
    IK_OK = 0,
    IK_ERR_COUNT,          /* a chain needs at least one bone */
    IK_ERR_TOO_LARGE,      /* the chain's size does not fit in memory sizes */
    IK_ERR_NO_MEMORY,      /* allocation failed (the *_create functions only) */
    IK_ERR_NOT_FINITE,     /* a number is NaN or infinite */
    IK_ERR_NEGATIVE,       /* a length or weight is below zero */
    IK_ERR_INDEX,          /* a bone or joint index is out of range */
    IK_ERR_ITERATIONS,     /* settings: iterations must be >= 1 */
    IK_ERR_TOLERANCE,      /* settings: tolerance must be finite and >= 0 */
    IK_ERR_GREED,          /* settings: greed must be in (0, 1] */
    IK_ERR_BEND,           /* bend must be 1 or -1 */
    IK_ERR_SOLVER,         /* settings: unknown solver */
    IK_ERR_NOT_TWO_BONE,   /* the two-bone solver needs 2 bones (3 with an orientation goal) */
    IK_ERR_DIMENSION,      /* the call is for a chain of the other dimension */
    IK_ERR_ZERO_ROTATION,  /* a quaternion of length zero has no rotation */
    IK_ERR_POLE,           /* settings: a pole must be a nonzero direction, on a 3D chain */
    IK_ERR_MIX,            /* settings: mix must be in [0, 1] */
    IK_ERR_SOFTNESS,       /* settings: softness must be finite and >= 0 */
    IK_ERR_LIMIT_RANGE,    /* a limit's min must not exceed its max, both in [-pi, pi] */
    IK_ERR_AXIS,           /* a hinge axis must be a nonzero finite direction */
    IK_ERR_CONE,           /* a cone's half angle must be in [0, pi] */
    IK_ERR_RANGE,          /* a coordinate or bone length of magnitude above IK_MAX_COORD */
    IK_ERR_ANGLE_TOLERANCE, /* settings: angle_tolerance must be finite and >= 0 */
    IK_ERR_MAX_TURN,       /* settings: max_turn must be > 0 (infinity: no limit) */
    IK_ERR_EFFECTOR_WEIGHT, /* settings: effector_weight must be finite and >= 0 */
    IK_ERR_NO_TARGET,      /* a solve without a target on a chain that keeps none */
    IK_ERR_ATTACHED,       /* the chain hangs on a parent (set_base; attach: detach first) */
    IK_ERR_CYCLE,          /* attaching would make a chain its own ancestor */
    IK_ERR_NOT_A_TREE,     /* a rig's chains do not form one tree */
    IK_ERR_RIG_CHANGED,    /* a rig's chains were attached or detached since it was made */
    IK_ERR_RIG_SOLVER,     /* rig settings: the solver must be fabrik or relax */
    IK_ERR_GRAVITY,        /* settings: gravity's components must be finite, within IK_MAX_COORD */
    IK_ERR_STIFFNESS,      /* settings: stiffness must be finite and >= 0 */
    IK_ERR_DAMPING,        /* settings: damping must be finite and >= 0 */
    IK_ERR_TIME_STEP,      /* simulate, gait update: dt must be finite and > 0 */
    IK_ERR_STRIDE,         /* gait: stride must be finite and > 0 */
    IK_ERR_STEP_TIME,      /* gait: step_time must be finite and > 0 */
    IK_ERR_LIFT,           /* gait: lift must be finite and >= 0 */
    IK_ERR_LEAD,           /* gait: lead must be finite and >= 0 (lead * stride within IK_MAX_COORD) */
    IK_ERR_GROUPS,         /* gait: every leg in exactly one group, each group a leg or more */
    IK_ERR_MAX_GROUPS,     /* gait: max_groups must be >= 1 */
    IK_ERR_GROUND,         /* gait update: the ground gave no finite height */
    IK_ERR_UP,             /* gait: up must be 1 or -1 */
    IK_ERR_HELD,           /* the tip is held (attach_tip): its goal is the held point */
    IK_ERR_TIP_HELD,       /* attach_tip: the tip is held already (detach_tip first) */
    IK_ERR_SELF            /* attach_tip: a chain cannot hold its own tip */
} ik_status;

/*
 * The range of a chain. Base and target coordinates and bone lengths are at most
 * IK_MAX_COORD in magnitude, a stretched bone at most IK_MAX_COORD long, and a chain has at
 * most IK_MAX_BONES bones, so every joint lies within 2^24 * 1e300 < 1.7e307 of its base:
 * positions, distances and every difference of two points the solvers take stay finite
 * (DBL_MAX is 1.8e308). An attached chain's base is its parent's joint: keep a rig's
 * total extent within the same range. The stateless two-bone solves rescale their inputs
 * and take any finite number.
 */
#define IK_MAX_COORD 1e300
#define IK_MAX_BONES 16777216 /* 2^24 */

/* A short lowercase message for a status, suitable for an argument error. */
const char *ik_status_string(ik_status status);

typedef enum ik_solver {
    IK_SOLVER_FABRIK = 0, /* Aristidou and Lasenby 2011: backward and forward passes */
    IK_SOLVER_CCD,        /* cyclic coordinate descent with greed */
    IK_SOLVER_RELAX,      /* constraint relaxation with per-joint weights */
    IK_SOLVER_TWO_BONE,   /* the analytic solve; chains of 2 bones (3 with an orientation) */
    IK_SOLVER_AIM         /* turn the bones so the tip bone points at the target */
} ik_solver;

/* "fabrik", "ccd", "relax", "two_bone", "aim"; NULL for an unknown value. */
const char *ik_solver_name(ik_solver solver);
/* Parses a solver name; returns IK_ERR_SOLVER for an unknown one. */
ik_status ik_solver_parse(const char *name, ik_solver *out);

/* Solver settings of a chain. Start from ik_default_settings(). */
typedef struct ik_settings {
    ik_solver solver;  /* what ik_chain_solve uses; default IK_SOLVER_FABRIK */
    int iterations;    /* maximum iterations, >= 1 (a solve stops at IK_MAX_ITERATIONS
                          whatever this says); default IK_DEFAULT_ITERATIONS */
    ik_real tolerance; /* reached when tip-to-target distance <= tolerance, >= 0 (world units) */
    ik_real angle_tolerance; /* radians >= 0: an orientation goal (or aim) is met within it */
    ik_real greed;     /* CCD: fraction of each joint's rotation applied, in (0, 1] */
    int greed_ramp;    /* CCD: nonzero raises greed linearly so it is 1 on the last iteration */
    int bend;          /* 2D: 1 bends with positive joint angles, -1 negative (two-bone, escape) */
    int use_pole;      /* 3D: nonzero bends towards pole; 0 keeps the current bend plane */
    ik_real pole[3];   /* 3D: world-space direction; the chain bends to its side of the
                          base->target line (see ik_two_bone_joint3). Stored normalised. */
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
    ik_real max_turn;  /* radians > 0: no bone's local rotation changes by more than this in
                          one solve (a rig's too); INFINITY (the default) turns it off */
    ik_real effector_weight; /* >= 0: how hard this chain's goal pulls on bones it shares
                                with other goals in a rig (default 1) */
    /* Secondary motion (ik_chain_simulate). */
    ik_real gravity[3]; /* world acceleration of every joint (z unused in 2D); default 0 */
    ik_real stiffness;  /* >= 0, in 1/s^2: how strongly each bone turns back to its rest pose */
    ik_real damping;    /* >= 0, in 1/s: speeds decay as exp(-damping t); default 0.5 */
} ik_settings;

#define IK_DEFAULT_ITERATIONS 64
#define IK_DEFAULT_TOLERANCE 1e-3
#define IK_DEFAULT_ANGLE_TOLERANCE 1e-3
#define IK_DEFAULT_GREED 0.5
#define IK_DEFAULT_GREED_RAMP 1
#define IK_DEFAULT_BEND 1
#define IK_DEFAULT_ESCAPE 1
#define IK_DEFAULT_MIX 1.0
#define IK_DEFAULT_SOFTNESS 0.0
#define IK_DEFAULT_STRETCH 0
#define IK_DEFAULT_EFFECTOR_WEIGHT 1.0
#define IK_DEFAULT_DAMPING 0.5
/* IK_DEFAULT_MAX_TURN is INFINITY (from math.h): no limit. */

/*
 * An iterative solve stops when this many iterations together brought its tip (or its aim)
 * closer by less than a thousandth of what was left to gain (a hundredth for a target
 * outside the reach ring, where what is left is the way to the ring): on a goal it cannot
 * reach, or one it would crawl to over millions of iterations, it stops within a few
 * thousand at most, whatever `iterations` allows (the README, *Bounded work*, and escape.c
 * give the rule whole).
 */
#define IK_STALL_ITERATIONS 8

/*
 * No call does more iterations than this, whatever `iterations` allows (a rig: in all, its
 * limbs' finishing sweeps included). The stall ends the crawls the solvers make (a fold,
 * 8,000 iterations); this bounds what still gains a thousandth every 8 iterations, such as
 * a relaxation rig of 50 bones converging at tolerance 0 (118,000 iterations to 1e-11):
 * a call on 50 bones takes 0.2 s at most (3D CCD, 10 us an iteration).
 */
#define IK_MAX_ITERATIONS 16384

ik_settings ik_default_settings(void);
ik_status ik_settings_validate(const ik_settings *settings);

/* What a solve did. */
typedef struct ik_result {
    int reached;         /* distance <= tolerance (and angle_error <= angle_tolerance when
                            the chain has an orientation goal; aim: angle_error alone) */
    ik_real distance;    /* tip-to-target distance after the solve (aim: angle_error) */
    ik_real angle_error; /* radians: the tip bone's orientation from its goal; 0 without one */
    int iterations;      /* iterations performed: 0 when the goal was already met; 1 for the
                            two-bone solve */
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
 * a root at the origin, |j| = l1 always, the arguments in ik_two_bone's order. Same bend
 * meaning and same pose as ik_two_bone for every target, reachable or not.
 */
ik_status ik_two_bone_middle(ik_real l1, ik_real l2, ik_real x, ik_real y, int bend,
                             ik_real *jx, ik_real *jy, int *reached);

/*
 * 3D vector form: the middle joint for a root at the origin, |joint| = l1 always. It lies in
 * the plane of target and pole, on the pole's side of the root->target line. When the pole
 * is zero or along that line, the fallback bend direction is world +y made perpendicular to
 * the line, or world +z when the line is along y. Unreachable: the closest pose (straight,
 * or folded back when l2 > l1), *reached == 0.
 */
ik_status ik_two_bone_middle3(ik_real l1, ik_real l2, const ik_real target[3],
                              const ik_real pole[3], ik_real joint[3], int *reached);

/* The old names of the two above, with the target before the lengths; kept for old code. */
ik_status ik_two_bone_joint(ik_real x, ik_real y, ik_real r1, ik_real r2, int bend,
                            ik_real *jx, ik_real *jy, int *reached);
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
 * the settings are the defaults; no goal. The chain holds pointers into its own block: it
 * must not be moved or copied byte-wise after init (ik_chain_copy copies one).
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
/* Frees a chain from *_create. A parent must outlive its children: detach them first. */
void ik_chain_destroy(ik_chain *chain);

/*
 * Copies everything of `from` (lengths, pose, base, weights, limits, settings, goals, its
 * parent link) into memory of ik_chain{2,3}d_size(n) bytes: a chain that behaves exactly as
 * `from` does, bit for bit. Children of `from` stay on `from`.
 */
ik_status ik_chain_copy(void *memory, size_t size, const ik_chain *from, ik_chain **out);

/*
 * Whether memory (size bytes) holds a chain made by ik_chain{2,3}d_init or ik_chain_copy:
 * a check against type confusion for bindings that hand out chains as opaque blocks.
 */
int ik_chain_check(const void *memory, size_t size);

int ik_chain_bone_count(const ik_chain *chain);
int ik_chain_count(const ik_chain *chain); /* the same: the old name, kept */
int ik_chain_dim(const ik_chain *chain);   /* 2 or 3 */
/* The sum of the bone lengths. */
ik_real ik_chain_reach(const ik_chain *chain);

/* Brings the chain's caches up to date (see Threads above). */
void ik_chain_update(ik_chain *chain);

/*
 * World positions of joints 0..n, dim numbers each (x, y in 2D; x, y, z in 3D), up to date
 * after this call; read-only, valid until the chain next changes.
 */
const ik_real *ik_chain_positions(ik_chain *chain);

ik_status ik_chain_length(const ik_chain *chain, int bone, ik_real *out);
ik_status ik_chain_set_length(ik_chain *chain, int bone, ik_real length);

/* Weight of joint 0..n (default 1): relaxation moves joint i by its weight's share; aiming
   turns bone i by it. */
ik_status ik_chain_weight(const ik_chain *chain, int joint, ik_real *out);
ik_status ik_chain_set_weight(ik_chain *chain, int joint, ik_real weight);

/*
 * 2D pose. Angles are stored and read back wrapped to [-pi, pi]. The base of an attached
 * chain is its parent's joint (read-only: set_base is IK_ERR_ATTACHED).
 */
ik_status ik_chain2d_base(ik_chain *chain, ik_real *x, ik_real *y, ik_real *angle);
ik_status ik_chain2d_set_base(ik_chain *chain, ik_real x, ik_real y, ik_real angle);
ik_status ik_chain2d_angle(ik_chain *chain, int bone, ik_real *out);
ik_status ik_chain2d_set_angle(ik_chain *chain, int bone, ik_real angle);
ik_status ik_chain2d_world_angle(ik_chain *chain, int bone, ik_real *out);

/*
 * 3D pose. Quaternions are w, x, y, z. Setters normalise; a zero quaternion is
 * IK_ERR_ZERO_ROTATION. set_base with rotation NULL keeps the current rotation.
 */
ik_status ik_chain3d_base(ik_chain *chain, ik_real position[3], ik_real rotation[4]);
ik_status ik_chain3d_set_base(ik_chain *chain, const ik_real position[3],
                              const ik_real *rotation);
ik_status ik_chain3d_rotation(ik_chain *chain, int bone, ik_real out[4]);
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
/* A 3D bone's limits, as set. */
typedef struct ik_limit3d {
    int hinge;               /* nonzero: a hinge about axis within [min, max] */
    ik_real axis[3], min, max;
    int cone;                /* nonzero: a cone of half_angle */
    ik_real half_angle;
    int twist;               /* nonzero: a twist within [twist_min, twist_max] */
    ik_real twist_min, twist_max;
} ik_limit3d;
ik_status ik_chain3d_limit(const ik_chain *chain, int bone, ik_limit3d *out);
ik_status ik_chain_clear_limit(ik_chain *chain, int bone);

/*
 * Poses the chain along joint positions (n + 1 points, dim numbers each, world space): the
 * base moves to the first (unless the chain is attached: then the points are taken from its
 * base as it is), and each bone points along its segment, turned by the smallest rotation
 * from where it points now, within its limits; lengths are kept. A segment with no
 * direction keeps its bone's. For animation data, and for ik.chain2d_points.
 */
ik_status ik_chain_set_points(ik_chain *chain, const ik_real *points);

/*
 * Motion over time (motion.c).
 * ik_chain_drag: follow-the-leader: the tip moves to point (dim numbers), then each bone
 *   from the tip down points from where its joint was towards the new joint after it, at
 *   its length, stopped at the bound where its angle to the bone after it would leave that
 *   bone's limit (a 2D range, a 3D cone; hinges and twists are held as the bones are posed
 *   again from the base, which may leave the tip short of the point). The base moves with
 *   the chain and its frame turns with bone 1, which keeps its local angle.
 *   IK_ERR_ATTACHED on an attached chain.
 * ik_chain_simulate: secondary motion: the joints as point masses of equal mass move on
 *   for dt seconds (> 0; at most 1 s is simulated per call) under the settings gravity,
 *   stiffness (each bone pulled back to its rest pose) and damping, in equal sub-steps of
 *   at most 1/240 s; the base follows its parent (or stays), moved along a straight line
 *   from where the previous call left it over the sub-steps; the joints keep their speed
 *   between calls unless the local pose changed (a pose set between calls gives no speed).
 *   Lengths are exact and limits hold after every sub-step.
 * ik_chain_set_rest: the current local pose becomes the rest pose (at first: every bone
 *   straight, as the chain was made).
 */
ik_status ik_chain_drag(ik_chain *chain, const ik_real *point);
ik_status ik_chain_simulate(ik_chain *chain, ik_real dt);
ik_status ik_chain_set_rest(ik_chain *chain);

/*
 * A stepping controller over legs (chains whose tips are feet; usually a rig's), up +y
 * (or -y: the option up).
 * Each leg's home is where its tip is when the gait is made, kept in the leg's base frame
 * (for an attached leg, the frame of the body's bone it hangs on: the home moves with the
 * body). A planted foot stays still in the world. When it is farther than stride from
 * its home across the ground (x in 2D; x and z in 3D) its group steps, when at most
 * max_groups - 1 other groups are in the air (the group whose foot is farthest first): in
 * step_time seconds, along an arc lift above the straight line, to a landing point
 * lead * stride past its home along the home's motion since the previous update, at the
 * height ground gives there (NULL: the home's own height); the landing point follows the
 * home until the foot lands. ik_gait_update sets every leg's goal (ik_chain_set_target)
 * to its foot: solve the legs after it. groups: leg k's group (0 to G - 1, every group a
 * leg or more), or NULL: every leg a group of its own. The gait holds pointers to the
 * legs: they must outlive it. Deterministic; nothing allocated after init.
 */
typedef struct ik_gait ik_gait;
/* The ground's height *y under (x, z) (2D: z is 0); 0 when there is none (the update then
   fails with IK_ERR_GROUND and changes nothing). */
typedef int (*ik_ground_fn)(void *user, ik_real x, ik_real z, ik_real *y);
typedef struct ik_gait_options {
    ik_real stride;    /* > 0 */
    ik_real step_time; /* > 0 seconds; default IK_DEFAULT_STEP_TIME */
    ik_real lift;      /* >= 0; default IK_DEFAULT_LIFT * stride */
    ik_real lead;      /* >= 0; default IK_DEFAULT_LEAD */
    int max_groups;    /* >= 1; default 1 */
    int up;            /* 1: +y is up (default); -1: -y is up (a y-down screen) */
    ik_ground_fn ground; /* NULL: the home's own height */
    void *user;          /* handed to ground */
} ik_gait_options;
#define IK_DEFAULT_STEP_TIME 0.25
#define IK_DEFAULT_LIFT 0.25
#define IK_DEFAULT_LEAD 0.5
ik_gait_options ik_gait_default_options(ik_real stride);
ik_status ik_gait_validate(const ik_gait_options *options);
/* Bytes for a gait of count legs; 0 when count < 1 or the size overflows. */
size_t ik_gait_size(int count);
ik_status ik_gait_init(void *memory, size_t size, ik_chain *const *legs, int count, const int *groups,
                       const ik_gait_options *options, ik_gait **out);
ik_gait *ik_gait_create(ik_chain *const *legs, int count, const int *groups, const ik_gait_options *options,
                        ik_status *status);
void ik_gait_destroy(ik_gait *gait);
/* Nonzero when memory holds a gait made by ik_gait_init (for bindings). */
int ik_gait_check(const void *memory, size_t size);
int ik_gait_count(const ik_gait *gait);
/* Replaces the ground (and its user pointer) the gait was made with. */
void ik_gait_set_ground(ik_gait *gait, ik_ground_fn ground, void *user);
ik_chain *ik_gait_leg_chain(const ik_gait *gait, int k); /* 0-based; NULL out of range */
/* Advances dt (> 0) seconds; on an error nothing changes (IK_ERR_HELD: a leg's tip is held). */
ik_status ik_gait_update(ik_gait *gait, ik_real dt);
/* Foot k (0-based): its point (out[2] = 0 in 2D), whether it is in the air, and how far
   through its step (0 when planted). */
ik_status ik_gait_foot(const ik_gait *gait, int k, ik_real out[3], int *stepping, ik_real *progress);
/* Plants every foot at its home now. */
void ik_gait_reset(ik_gait *gait);

/* The factor the last solve scaled every bone by (stretch); 1 when not stretched. */
ik_real ik_chain_stretch_factor(const ik_chain *chain);
ik_real ik_chain_stretch(const ik_chain *chain); /* the same: the old name, kept */

const ik_settings *ik_chain_settings(const ik_chain *chain);
/* Validates every field (and the solver against the chain), then copies. */
ik_status ik_chain_configure(ik_chain *chain, const ik_settings *settings);

/*
 * Goals kept on the chain. The position goal is the tip's target (world space, dim
 * numbers); the orientation goal is the tip bone's world angle (2D) or world rotation (3D,
 * normalised). With an orientation goal the tip bone takes that orientation (as far as its
 * limit allows) and the other bones reach for the point behind it, target - length(n-1) *
 * direction. *has is 0 when there is none. A held tip's goal is the held point, read where
 * it is now (ik_chain_attach_tip); ik_chain_set_target is then IK_ERR_HELD.
 */
ik_status ik_chain_set_target(ik_chain *chain, const ik_real *target);
ik_status ik_chain_target(ik_chain *chain, ik_real *out, int *has);
ik_status ik_chain2d_set_target_angle(ik_chain *chain, ik_real angle);
ik_status ik_chain2d_target_angle(const ik_chain *chain, ik_real *out, int *has);
ik_status ik_chain3d_set_target_rotation(ik_chain *chain, const ik_real rotation[4]);
ik_status ik_chain3d_target_rotation(const ik_chain *chain, ik_real out[4], int *has);
/* Removes both goals, and a tip hold (ik_chain_detach_tip). */
void ik_chain_clear_target(ik_chain *chain);
/*
 * How far the chain is from its kept goals as it stands (brought up to date first, as a
 * read is): *distance the tip's from the position goal, *angle_error (radians) the tip
 * bone's from the orientation goal, 0 without one: what a solve's reached is made of (for
 * each chain of a rig, say). *has is 0 when the chain keeps no position goal.
 */
void ik_chain_goal_error(ik_chain *chain, ik_real *distance, ik_real *angle_error, int *has);

/*
 * Solves from the current pose (warm start) so the tip reaches target (dim numbers, world
 * space), which becomes the chain's kept position goal; target NULL solves towards the kept
 * goal (IK_ERR_NO_TARGET when there is none). Bone lengths are kept exactly and the base
 * never moves. Errors (nothing changed): IK_ERR_NOT_FINITE or IK_ERR_RANGE for the target,
 * IK_ERR_NOT_TWO_BONE, IK_ERR_NO_TARGET.
 *
 * 3D, position-based solves (FABRIK, relaxation, two-bone): each bone's new world rotation
 * is the smallest rotation taking its direction before the call to its new one, applied to
 * its world rotation before the call, so the twist about the bone is kept. CCD turns each
 * joint by (a fraction of) the smallest rotation taking joint->tip to joint->target.
 *
 * ik_chain_solve_aim turns the bones so the tip bone points at target from where its base
 * ends up, the turn shared by the joints' weights (bone i by weight i), within limits;
 * result.distance is the angle error, reached is angle_error <= angle_tolerance.
 */
ik_status ik_chain_solve(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_fabrik(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_ccd(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_relax(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_two_bone(ik_chain *chain, const ik_real *target, ik_result *out);
ik_status ik_chain_solve_aim(ik_chain *chain, const ik_real *target, ik_result *out);

/*
 * Solves count chains of one dimension, chain k towards targets[k*dim ..] (targets NULL:
 * each towards its kept goal), in the array's order (parents before their children), each
 * exactly as ik_chain_solve would, bit for bit. All targets are checked first: on an error
 * nothing changes and *failed is the index of the offending chain. *reached_count counts
 * the reached ones; results (NULL, or count entries) receives each chain's result.
 * FABRIK chains without limits or goals beyond a point are solved several at a time on the
 * vector units (AVX2 where the processor has it, else SSE2; see `make bench`).
 */
ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, ik_result *results, int *failed);

/* ---- Attached chains ---- */

/*
 * child's base follows joint `joint` (0..n) of parent, and its base frame is the frame of
 * the parent's bone that ends at that joint (bone joint-1; the parent's base frame for joint
 * 0) turned by an offset: 2D an angle, 3D a rotation (NULL: none). Same dimension only;
 * a chain has at most one parent (IK_ERR_ATTACHED: detach it first); IK_ERR_CYCLE when
 * parent is child or hangs below it. From then on every change of the parent carries the
 * child rigidly: reading the child shows its place on the current parent.
 */
ik_status ik_chain2d_attach(ik_chain *child, ik_chain *parent, int joint, ik_real angle);
ik_status ik_chain3d_attach(ik_chain *child, ik_chain *parent, int joint,
                            const ik_real *rotation);
/* Keeps the child where it is in the world: its base becomes its current world base. */
void ik_chain_detach(ik_chain *child);
/* The parent (NULL for none) and the joint. */
ik_chain *ik_chain_parent(const ik_chain *child, int *joint);

/* ---- Closed loops: a chain's tip held on another chain ---- */

/*
 * Holds chain's tip at joint `joint` (0..other->n) of other, moved by offset (dim numbers in
 * the frame of other's bone that ends at that joint, as in attach; NULL: none). The held
 * point becomes the chain's position goal: ik_chain_target reads it where it is now, a solve
 * of the chain alone goes to it (other does not move), and a rig that holds both solves the
 * loop (both sides bend). ik_chain_set_target, and a solve given a target, are IK_ERR_HELD
 * while the hold lasts; ik_chain_clear_target releases it. Errors (nothing changed):
 * IK_ERR_DIMENSION, IK_ERR_SELF (other is chain), IK_ERR_INDEX, IK_ERR_TIP_HELD (held
 * already), IK_ERR_NOT_FINITE or IK_ERR_RANGE for the offset. other must outlive the hold.
 */
ik_status ik_chain_attach_tip(ik_chain *chain, ik_chain *other, int joint, const ik_real *offset);
/* Releases the hold: no position goal is left (an orientation goal stays). */
void ik_chain_detach_tip(ik_chain *chain);
/* The chain holding the tip (NULL for none), its joint, and the offset (dim numbers; NULL
   to skip). */
ik_chain *ik_chain_tip_parent(const ik_chain *chain, int *joint, ik_real *offset);

/* ---- Rigs: several chains solved together ---- */

typedef struct ik_rig ik_rig;

typedef struct ik_rig_settings {
    ik_solver solver;        /* IK_SOLVER_FABRIK (default) or IK_SOLVER_RELAX */
    int iterations;          /* >= 1, default IK_DEFAULT_ITERATIONS */
    ik_real tolerance;       /* every goal within it: reached (default IK_DEFAULT_TOLERANCE) */
    ik_real angle_tolerance; /* every orientation goal within it */
} ik_rig_settings;

ik_rig_settings ik_rig_default_settings(void);

/*
 * Bytes for a rig over count chains that form one tree: exactly one of them (the root) has
 * no parent among them (it may hang on a chain outside the rig, which the rig holds still),
 * every other one's parent is among them, no chain twice, one dimension. 0 when count < 1 or
 * the size overflows; ik_rig_init says what else is wrong (*culprit: the index of the chain
 * to blame, or -1), in the memory given: IK_ERR_TOO_LARGE first when it is NULL or smaller
 * than that. O(count log count + bones); it changes no chain.
 */
size_t ik_rig_size(int count, ik_chain *const *chains);
ik_status ik_rig_init(void *memory, size_t size, ik_chain *const *chains, int count,
                      ik_rig **out, int *culprit);
ik_rig *ik_rig_create(ik_chain *const *chains, int count, ik_status *status, int *culprit);
void ik_rig_destroy(ik_rig *rig);

int ik_rig_chain_count(const ik_rig *rig);
int ik_rig_count(const ik_rig *rig); /* the same: the old name, kept */
ik_chain *ik_rig_chain(const ik_rig *rig, int k); /* in the order given; NULL out of range */
const ik_rig_settings *ik_rig_settings_of(const ik_rig *rig);
ik_status ik_rig_configure(ik_rig *rig, const ik_rig_settings *settings);

/*
 * Moves the bones of all the rig's chains together so every chain that has a goal reaches
 * it (see the README, Rigs). out->distance is the largest tip-to-goal distance, out->
 * angle_error the largest orientation error; out->reached: every goal met. No goal at all:
 * nothing moves, reached, 0 iterations. IK_ERR_RIG_CHANGED (nothing moves) if a chain's
 * parent or joint changed since ik_rig_init, or the root hangs on a chain outside the rig
 * after an attach or detach since (that chain may be a new one made at a freed one's
 * address).
 * O(bones + chains) per iteration.
 */
ik_status ik_rig_solve(ik_rig *rig, ik_result *out);

#endif /* IK_H */
