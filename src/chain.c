/*
 * chain.c - the chain: statuses and settings, the block and its layout, the pose and its
 * forward kinematics, the pose derived from the joints after a position-based solve, goals,
 * and attachment to a parent chain.
 */
#include "chain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- statuses and settings ---- */

const char *ik_status_string(ik_status status)
{
    switch (status) {
    case IK_OK: return "ok";
    case IK_ERR_COUNT: return "at least one bone expected";
    case IK_ERR_TOO_LARGE: return "too many bones";
    case IK_ERR_NO_MEMORY: return "not enough memory";
    case IK_ERR_NOT_FINITE: return "number has no finite value";
    case IK_ERR_NEGATIVE: return "must not be negative";
    case IK_ERR_INDEX: return "index out of range";
    case IK_ERR_ITERATIONS: return "iterations must be an integer >= 1";
    case IK_ERR_TOLERANCE: return "tolerance must be a finite number >= 0";
    case IK_ERR_GREED: return "greed must be in (0, 1]";
    case IK_ERR_BEND: return "bend must be 1 or -1";
    case IK_ERR_SOLVER: return "solver must be 'fabrik', 'ccd', 'relax', 'two_bone' or 'aim'";
    case IK_ERR_NOT_TWO_BONE:
        return "the two-bone solver needs a chain of 2 bones (3 with an orientation goal)";
    case IK_ERR_DIMENSION: return "wrong dimension for this chain";
    case IK_ERR_ZERO_ROTATION: return "quaternion has zero length";
    case IK_ERR_POLE: return "pole must be a nonzero finite direction, on a 3D chain";
    case IK_ERR_MIX: return "mix must be in [0, 1]";
    case IK_ERR_SOFTNESS: return "softness must be a finite number >= 0";
    case IK_ERR_LIMIT_RANGE: return "limits must satisfy -pi <= min <= max <= pi";
    case IK_ERR_AXIS: return "axis must be a nonzero finite direction";
    case IK_ERR_CONE: return "half angle must be in [0, pi]";
    case IK_ERR_RANGE: return "number out of range (magnitude above 1e300)";
    case IK_ERR_ANGLE_TOLERANCE: return "angle_tolerance must be a finite number >= 0";
    case IK_ERR_MAX_TURN: return "max_turn must be a number > 0 (math.huge: no limit)";
    case IK_ERR_EFFECTOR_WEIGHT: return "effector_weight must be a finite number >= 0";
    case IK_ERR_NO_TARGET: return "no target: give one, or set_target first";
    case IK_ERR_ATTACHED: return "the chain is attached to a parent (detach it first)";
    case IK_ERR_CYCLE: return "attaching would make the chain its own ancestor";
    case IK_ERR_NOT_A_TREE: return "the chains do not form one tree";
    case IK_ERR_RIG_CHANGED: return "the rig's chains were attached or detached since it was made";
    case IK_ERR_RIG_SOLVER: return "a rig's solver must be 'fabrik' or 'relax'";
    case IK_ERR_GRAVITY: return "gravity must have finite components of magnitude at most 1e300";
    case IK_ERR_STIFFNESS: return "stiffness must be a finite number >= 0";
    case IK_ERR_DAMPING: return "damping must be a finite number >= 0";
    case IK_ERR_TIME_STEP: return "dt must be a finite number > 0";
    case IK_ERR_STRIDE: return "stride must be a finite number > 0";
    case IK_ERR_STEP_TIME: return "step_time must be a finite number > 0";
    case IK_ERR_LIFT: return "lift must be a finite number >= 0";
    case IK_ERR_LEAD: return "lead must be a finite number >= 0";
    case IK_ERR_GROUPS: return "groups must hold every leg exactly once, each group a leg or more";
    case IK_ERR_MAX_GROUPS: return "max_groups must be an integer >= 1";
    case IK_ERR_GROUND: return "ground must return a finite number (the height there)";
    case IK_ERR_UP: return "up must be 1 or -1";
    case IK_ERR_HELD: return "the tip is held (attach_tip): its goal is the held point (detach_tip first)";
    case IK_ERR_TIP_HELD: return "the tip is held already (detach_tip first)";
    case IK_ERR_SELF: return "a chain cannot hold its own tip";
    }
    return "unknown status";
}

static const char *const solver_names[] = {"fabrik", "ccd", "relax", "two_bone", "aim"};

const char *ik_solver_name(ik_solver solver)
{
    if ((int)solver < 0 || (int)solver > (int)IK_SOLVER_AIM) return NULL;
    return solver_names[solver];
}

ik_status ik_solver_parse(const char *name, ik_solver *out)
{
    int i;
    for (i = 0; name && i <= (int)IK_SOLVER_AIM; i++) {
        if (strcmp(name, solver_names[i]) == 0) {
            *out = (ik_solver)i;
            return IK_OK;
        }
    }
    return IK_ERR_SOLVER;
}

ik_settings ik_default_settings(void)
{
    ik_settings s;
    memset(&s, 0, sizeof s);
    s.solver = IK_SOLVER_FABRIK;
    s.iterations = IK_DEFAULT_ITERATIONS;
    s.tolerance = IK_DEFAULT_TOLERANCE;
    s.angle_tolerance = IK_DEFAULT_ANGLE_TOLERANCE;
    s.greed = IK_DEFAULT_GREED;
    s.greed_ramp = IK_DEFAULT_GREED_RAMP;
    s.bend = IK_DEFAULT_BEND;
    s.use_pole = 0;
    s.escape = IK_DEFAULT_ESCAPE;
    s.mix = IK_DEFAULT_MIX;
    s.softness = IK_DEFAULT_SOFTNESS;
    s.stretch = IK_DEFAULT_STRETCH;
    s.max_turn = INFINITY;
    s.effector_weight = IK_DEFAULT_EFFECTOR_WEIGHT;
    s.damping = IK_DEFAULT_DAMPING;
    return s;
}

static int finite_at_least_zero(ik_real v) { return isfinite(v) && v >= 0; }

ik_status ik_settings_validate(const ik_settings *s)
{
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!finite_at_least_zero(s->tolerance)) return IK_ERR_TOLERANCE;
    if (!finite_at_least_zero(s->angle_tolerance)) return IK_ERR_ANGLE_TOLERANCE;
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return IK_ERR_GREED;
    if (s->bend != 1 && s->bend != -1) return IK_ERR_BEND;
    if (ik_solver_name(s->solver) == NULL) return IK_ERR_SOLVER;
    if (!(isfinite(s->mix) && s->mix >= 0 && s->mix <= 1)) return IK_ERR_MIX;
    if (!finite_at_least_zero(s->softness)) return IK_ERR_SOFTNESS;
    /* NaN fails too (tested first: an ordered comparison with NaN raises FE_INVALID); infinity is "off" */
    if (isnan(s->max_turn) || !(s->max_turn > 0)) return IK_ERR_MAX_TURN;
    if (!finite_at_least_zero(s->effector_weight)) return IK_ERR_EFFECTOR_WEIGHT;
    if (ik_check_coords(s->gravity, 3) != IK_OK) return IK_ERR_GRAVITY;
    if (!finite_at_least_zero(s->stiffness)) return IK_ERR_STIFFNESS;
    if (!finite_at_least_zero(s->damping)) return IK_ERR_DAMPING;
    if (s->use_pole) {
        ik_vec3 p = ik_v3(s->pole[0], s->pole[1], s->pole[2]);
        if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) return IK_ERR_POLE;
        if (p.x == 0 && p.y == 0 && p.z == 0) return IK_ERR_POLE;
    }
    return IK_OK;
}

/* ---- the block ---- */

/* The header rounded up so the arrays after it are aligned for any scalar. */
#define HEADER_SIZE ((sizeof(struct ik_chain) + 15u) / 16u * 16u)

/*
 * Numbers a chain of n bones keeps past the header, as per_bone * n + extra. Both: length,
 * weight (n + 1), joint, dir and work (dim each; joint and work n + 1), sim (2 dim, n + 1),
 * sim_scratch (dim + 2), and a limit. 2D adds turn, prev_turn, rest_turn, sim_turn,
 * best_turn and track_turn (2 each), angle, prev_angle and best_angle; 3D adds rot, wrot,
 * prev_rot, points_rot, rest_rot, sim_rot, best_rot and track_rot (4 each).
 */
static size_t reals_per_bone(int dim)
{
    return dim == 2 ? 1 + 1 + 2 * 5 + 4 + 12 + 3 : 1 + 1 + 3 * 5 + 5 + 32;
}
static size_t reals_extra(int dim) { return 1 + 4 * (size_t)dim; }

static size_t chain_size(int dim, int n)
{
    size_t per_bone = reals_per_bone(dim) * sizeof(ik_real) + sizeof(ik_limit);
    size_t extra = reals_extra(dim) * sizeof(ik_real);
    if (n < 1) return 0;
    /* The range of coordinates needs it (ik.h); it also keeps 4 * (n + 1) within an int. */
    if (n > IK_MAX_BONES) return 0;
    if ((size_t)n > (SIZE_MAX - HEADER_SIZE - extra) / per_bone) return 0;
    return HEADER_SIZE + per_bone * (size_t)n + extra;
}

size_t ik_chain2d_size(int n) { return chain_size(2, n); }
size_t ik_chain3d_size(int n) { return chain_size(3, n); }

/* Points the array pointers into the block after the header. */
static void layout(ik_chain *c)
{
    size_t n = (size_t)c->n, dim = (size_t)c->dim;
    ik_real *p;
    /* The limits first: their struct's alignment is that of ik_real or less. */
    c->limit = (ik_limit *)((unsigned char *)c + HEADER_SIZE);
    p = (ik_real *)(c->limit + n);
    c->length = p, p += n;
    c->weight = p, p += n + 1;
    c->joint = p, p += dim * (n + 1);
    c->dir = p, p += dim * n;
    c->work = p, p += dim * (n + 1);
    c->sim = p, p += 2 * dim * (n + 1);
    c->sim_scratch = p, p += (dim + 2) * n;
    c->turn = NULL, c->angle = NULL, c->prev_turn = NULL, c->prev_angle = NULL;
    c->rest_turn = NULL, c->sim_turn = NULL, c->best_turn = NULL, c->best_angle = NULL;
    c->rot = NULL, c->wrot = NULL, c->prev_rot = NULL, c->points_rot = NULL;
    c->rest_rot = NULL, c->sim_rot = NULL, c->best_rot = NULL;
    c->track_turn = NULL, c->track_rot = NULL;
    if (dim == 2) {
        c->turn = (ik_vec2 *)p, p += 2 * n;
        c->prev_turn = (ik_vec2 *)p, p += 2 * n;
        c->rest_turn = (ik_vec2 *)p, p += 2 * n;
        c->sim_turn = (ik_vec2 *)p, p += 2 * n;
        c->best_turn = (ik_vec2 *)p, p += 2 * n;
        c->track_turn = (ik_vec2 *)p, p += 2 * n;
        c->angle = p, p += n;
        c->prev_angle = p, p += n;
        c->best_angle = p;
    } else {
        c->rot = (ik_quat *)p, p += 4 * n;
        c->wrot = (ik_quat *)p, p += 4 * n;
        c->prev_rot = (ik_quat *)p, p += 4 * n;
        c->points_rot = (ik_quat *)p, p += 4 * n;
        c->rest_rot = (ik_quat *)p, p += 4 * n;
        c->sim_rot = (ik_quat *)p, p += 4 * n;
        c->track_rot = (ik_quat *)p, p += 4 * n;
        c->best_rot = (ik_quat *)p;
    }
}

static ik_status check_lengths(int dim, int n, const ik_real *lengths)
{
    int i;
    if (n < 1) return IK_ERR_COUNT;
    if (chain_size(dim, n) == 0) return IK_ERR_TOO_LARGE;
    for (i = 0; i < n; i++) {
        if (!isfinite(lengths[i])) return IK_ERR_NOT_FINITE;
        if (lengths[i] < 0) return IK_ERR_NEGATIVE;
        if (lengths[i] > IK_MAX_COORD) return IK_ERR_RANGE;
    }
    return IK_OK;
}

static ik_status chain_init(int dim, void *memory, size_t size, int n, const ik_real *lengths,
                            ik_chain **out)
{
    ik_chain *c = (ik_chain *)memory;
    int i;
    ik_status st = check_lengths(dim, n, lengths);
    if (st != IK_OK) return st;
    if (memory == NULL || size < chain_size(dim, n)) return IK_ERR_TOO_LARGE;

    memset(c, 0, chain_size(dim, n));
    c->magic = IK_CHAIN_MAGIC;
    c->n = n;
    c->dim = dim;
    c->settings = ik_default_settings();
    c->base = ik_v3(0, 0, 0);
    c->base_angle = 0;
    c->base_turn = ik_v2(1, 0);
    c->base_rot = ik_q_identity();
    c->offset_turn = ik_v2(1, 0);
    c->offset_rot = ik_q_identity();
    c->target_turn = ik_v2(1, 0);
    c->target_rot = ik_q_identity();
    c->scale = 1;
    layout(c);
    for (i = 0; i < n; i++) {
        c->length[i] = lengths[i] + 0.0; /* + 0.0 turns -0 into +0 */
        if (dim == 2) ik_chain_set_turn_angle(c, i, 0), c->rest_turn[i] = ik_v2(1, 0);
        else c->rot[i] = ik_q_identity(), c->rest_rot[i] = ik_q_identity();
    }
    for (i = 0; i <= n; i++) c->weight[i] = 1;
    ik_chain_lengths_changed(c);
    c->stale_from = 0;
    ik_chain_fk(c);
    *out = c;
    return IK_OK;
}

ik_status ik_chain2d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out)
{
    return chain_init(2, memory, size, n, lengths, out);
}

ik_status ik_chain3d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out)
{
    return chain_init(3, memory, size, n, lengths, out);
}

static ik_chain *chain_create(int dim, int n, const ik_real *lengths, ik_status *status)
{
    ik_chain *c = NULL;
    void *memory = NULL;
    ik_status st = check_lengths(dim, n, lengths);
    if (st == IK_OK) {
        memory = malloc(chain_size(dim, n));
        st = memory ? chain_init(dim, memory, chain_size(dim, n), n, lengths, &c)
                    : IK_ERR_NO_MEMORY;
        if (st != IK_OK) free(memory);
    }
    if (status) *status = st;
    return st == IK_OK ? c : NULL;
}

ik_chain *ik_chain2d_create(int n, const ik_real *lengths, ik_status *status)
{
    return chain_create(2, n, lengths, status);
}

ik_chain *ik_chain3d_create(int n, const ik_real *lengths, ik_status *status)
{
    return chain_create(3, n, lengths, status);
}

void ik_chain_destroy(ik_chain *chain) { free(chain); }

ik_status ik_chain_copy(void *memory, size_t size, const ik_chain *from, ik_chain **out)
{
    size_t bytes = chain_size(from->dim, from->n);
    ik_chain *c = (ik_chain *)memory;
    if (memory == NULL || size < bytes) return IK_ERR_TOO_LARGE;
    memcpy(c, from, bytes);
    layout(c); /* the pointers, into the new block */
    *out = c;
    return IK_OK;
}

int ik_chain_check(const void *memory, size_t size)
{
    const ik_chain *c = (const ik_chain *)memory;
    if (memory == NULL || size < HEADER_SIZE || c->magic != IK_CHAIN_MAGIC) return 0;
    if (c->dim != 2 && c->dim != 3) return 0;
    return chain_size(c->dim, c->n) != 0 && size >= chain_size(c->dim, c->n) &&
           c->limit == (const ik_limit *)((const unsigned char *)c + HEADER_SIZE);
}

int ik_chain_bone_count(const ik_chain *chain) { return chain->n; }
int ik_chain_count(const ik_chain *chain) { return chain->n; }
int ik_chain_dim(const ik_chain *chain) { return chain->dim; }
ik_real ik_chain_reach(const ik_chain *chain) { return chain->reach; }

void ik_chain_lengths_changed(ik_chain *c)
{
    ik_real total = 0, longest = 0;
    int i;
    for (i = 0; i < c->n; i++) {
        total += c->length[i];
        if (c->length[i] > longest) longest = c->length[i];
    }
    c->reach = total;
    c->longest = longest;
    c->sim_live = 0; /* simulate's joints were at the old lengths */
    /* A stretched bone stays within the range of ik.h, so no joint can overflow. */
    if (longest * c->scale > IK_MAX_COORD) {
        c->scale = IK_MAX_COORD / longest; /* longest * scale > 1e300: no overflow here */
        ik_chain_mark_stale(c, 0);
    }
}

ik_vec3 ik_chain_bend_side(const ik_chain *c, ik_vec3 line)
{
    ik_vec3 side;
    if (c->dim == 2) return ik_v3_scale(ik_v3(line.y, -line.x, 0), c->settings.bend);
    if (!c->settings.use_pole) return ik_v3_any_perpendicular(line);
    side = ik_v3(c->settings.pole[0], c->settings.pole[1], c->settings.pole[2]);
    side = ik_v3_sub(side, ik_v3_scale(line, ik_v3_dot(side, line)));
    return ik_v3_normalize_or(side, ik_v3_any_perpendicular(line));
}

/* ---- forward kinematics ---- */

/*
 * World data of bone i and joint i + 1 from bone i - 1's (or the base's). The world turn or
 * rotation is the parent's times the local one. Rounding would grow along a long chain (|w|
 * off by 1e-9 after 100,000 bones), so each is pulled back to unit length to first order,
 * (3 - |w|^2) / 2, which needs no square root.
 */
void ik_chain_fk_bone(ik_chain *c, int i)
{
    ik_real step = c->length[i] * c->scale;
    if (c->dim == 2) {
        ik_vec2 parent = i == 0 ? c->base_turn : ik_dir2(c, i - 1);
        ik_vec2 world = ik_v2_renorm(ik_v2_rotate(c->turn[i], parent));
        ik_vec2 joint = ik_joint2(c, i);
        ik_v2_store(ik_dir(c, i), world);
        ik_v2_store(ik_joint(c, i + 1), ik_v2_add(joint, ik_v2_scale(world, step)));
    } else {
        ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
        ik_quat w = ik_q_mul(parent, c->rot[i]);
        ik_real k = (3 - (w.w * w.w + w.x * w.x + w.y * w.y + w.z * w.z)) / 2;
        ik_vec3 dir;
        c->wrot[i] = ik_q(w.w * k, w.x * k, w.y * k, w.z * k);
        dir = ik_q_x_axis(c->wrot[i]);
        ik_v3_store(ik_dir(c, i), dir);
        ik_v3_store(ik_joint(c, i + 1), ik_v3_add(ik_joint3(c, i), ik_v3_scale(dir, step)));
    }
}

/*
 * Bones i..n-1 as ik_chain_fk_bone makes them, each from the one before it kept in locals:
 * the same arithmetic, without reading back what was just stored (a chain's stores may
 * alias its other arrays as far as the compiler knows). Tracking's joint-space step runs
 * this once a frame on the whole chain; the batch's lanes have it too (free2 in
 * batch_lanes.h).
 */
static void fk2(ik_chain *c, int i)
{
    const ik_real *length = c->length, scale = c->scale;
    const ik_vec2 *turn = c->turn;
    ik_real *dir = c->dir, *joint = c->joint;
    ik_vec2 parent = i == 0 ? c->base_turn : ik_v2_load(dir + 2 * (size_t)(i - 1));
    ik_vec2 at = ik_v2_load(joint + 2 * (size_t)i);
    const int n = c->n;
    for (; i < n; i++) {
        ik_real step = length[i] * scale;
        parent = ik_v2_renorm(ik_v2_rotate(turn[i], parent));
        at = ik_v2_add(at, ik_v2_scale(parent, step));
        ik_v2_store(dir + 2 * (size_t)i, parent);
        ik_v2_store(joint + 2 * (size_t)(i + 1), at);
    }
}

void ik_chain_fk(ik_chain *c)
{
    int i = c->stale_from;
    if (c->pose_behind || i >= c->n) return;
    if (i == 0) {
        ik_real *p = ik_joint(c, 0);
        p[0] = c->base.x, p[1] = c->base.y;
        if (c->dim == 3) p[2] = c->base.z;
    }
    if (c->dim == 2) fk2(c, i);
    else
        for (; i < c->n; i++) ik_chain_fk_bone(c, i);
    c->stale_from = c->n;
}

/* ---- the pose derived from the joints ---- */

ik_vec2 ik_chain_derive_dir2(const ik_chain *c, int i)
{
    ik_vec2 before = ik_dir2(c, i);
    if (!(c->length[i] > 0)) return before;
    return ik_v2_normalize_or(ik_v2_sub(ik_joint2(c, i + 1), ik_joint2(c, i)), before);
}

static ik_vec3 derive_dir3(const ik_chain *c, int i)
{
    ik_vec3 before = ik_dir3(c, i);
    if (!(c->length[i] > 0)) return before;
    return ik_v3_normalize_or(ik_v3_sub(ik_joint3(c, i + 1), ik_joint3(c, i)), before);
}

ik_vec2 ik_chain_derive_turn(const ik_chain *c, int i)
{
    ik_vec2 parent = i == 0 ? c->base_turn : ik_chain_derive_dir2(c, i - 1);
    return ik_v2_renorm(ik_v2_unrotate(ik_chain_derive_dir2(c, i), parent));
}

ik_quat ik_chain_derive_wrot(const ik_chain *c, int i)
{
    return ik_q_normalize(ik_q_mul(ik_q_from_to(ik_dir3(c, i), derive_dir3(c, i)), c->wrot[i]));
}

ik_real ik_chain_local_angle(const ik_chain *c, int i)
{
    ik_vec2 t;
    if (!c->pose_behind) return ik_turn_angle(c, i);
    t = ik_chain_derive_turn(c, i);
    return atan2(t.y, t.x);
}

ik_real ik_chain_world_angle_of(const ik_chain *c, int i)
{
    ik_vec2 d = c->pose_behind ? ik_chain_derive_dir2(c, i) : ik_dir2(c, i);
    return atan2(d.y, d.x);
}

ik_quat ik_chain_world_rot(const ik_chain *c, int i)
{
    return c->pose_behind ? ik_chain_derive_wrot(c, i) : c->wrot[i];
}

ik_quat ik_chain_local_rot(const ik_chain *c, int i)
{
    ik_quat parent;
    if (!c->pose_behind) return c->rot[i];
    parent = i == 0 ? c->base_rot : ik_chain_derive_wrot(c, i - 1);
    return ik_q_normalize(ik_q_mul(ik_q_conj(parent), ik_chain_derive_wrot(c, i)));
}

void ik_chain_settle(ik_chain *c)
{
    int i;
    if (!c->pose_behind) return;
    if (c->dim == 2) {
        /* Every turn first: they read the directions before, which are then replaced. */
        for (i = 0; i < c->n; i++) {
            c->turn[i] = ik_chain_derive_turn(c, i);
            c->angle[i] = IK_ANGLE_UNKNOWN;
        }
        for (i = c->n - 1; i >= 0; i--) ik_v2_store(ik_dir(c, i), ik_chain_derive_dir2(c, i));
    } else {
        ik_quat parent = c->base_rot;
        for (i = 0; i < c->n; i++) {
            /* derive_wrot(i) reads bone i's arrays only, so bone i - 1's may be replaced. */
            ik_quat world = ik_chain_derive_wrot(c, i);
            c->rot[i] = ik_q_normalize(ik_q_mul(ik_q_conj(parent), world));
            c->wrot[i] = world;
            ik_v3_store(ik_dir(c, i), ik_q_x_axis(world));
            parent = world;
        }
    }
    c->pose_behind = 0;
    c->stale_from = c->n;
}

/* ---- attachment ---- */

ik_vec2 ik_chain_frame2(const ik_chain *c, int j)
{
    if (j == 0) return c->base_turn;
    return c->pose_behind ? ik_chain_derive_dir2(c, j - 1) : ik_dir2(c, j - 1);
}

ik_quat ik_chain_frame3(const ik_chain *c, int j)
{
    return j == 0 ? c->base_rot : ik_chain_world_rot(c, j - 1);
}

/* Where c's base belongs on its parent as the parent is now: the joint, and the frame. */
static void parent_frame(const ik_chain *c, ik_vec3 *at, ik_vec2 *turn, ik_quat *rot)
{
    const ik_chain *p = c->parent;
    int j = c->parent_joint;
    *at = ik_joint_v3(p, j);
    if (c->dim == 2) *turn = ik_v2_renorm(ik_v2_rotate(c->offset_turn, ik_chain_frame2(p, j)));
    else *rot = ik_q_normalize(ik_q_mul(ik_chain_frame3(p, j), c->offset_rot));
}

/*
 * Puts c's base where its parent's joint now is. When it moved, the local pose is made the
 * truth first (against the old base), so the chain is carried rigidly.
 */
static void rebase(ik_chain *c)
{
    ik_vec3 at;
    ik_vec2 turn = c->base_turn;
    ik_quat rot = c->base_rot;
    ik_chain_fk(c->parent);
    parent_frame(c, &at, &turn, &rot);
    if (memcmp(&at, &c->base, sizeof at) != 0 || memcmp(&turn, &c->base_turn, sizeof turn) != 0 ||
        memcmp(&rot, &c->base_rot, sizeof rot) != 0) {
        ik_chain_settle(c);
        c->base = at;
        c->base_turn = turn;
        c->base_rot = rot;
        c->stale_from = 0;
        ik_chain_base_moved(c);
    }
    c->parent_seen = c->parent->version;
}

void ik_chain_take_base(ik_chain *c)
{
    ik_real *p = ik_joint(c, 0);
    parent_frame(c, &c->base, &c->base_turn, &c->base_rot);
    p[0] = c->base.x, p[1] = c->base.y;
    if (c->dim == 3) p[2] = c->base.z;
}

/*
 * Brings the bases up to date from the root of c's tree down. A first walk up finds the
 * highest chain whose parent changed since it last looked (reading only, so chains that
 * are current can be read by several threads at once); a second leaves each chain on the
 * way a pointer to its child towards c, and the walk down rebases every chain whose parent
 * changed, each after its parent. O(depth), with no recursion, so any depth of attachment
 * is safe.
 */
void ik_chain_follow(ik_chain *c)
{
    ik_chain *x, *top = NULL;
    for (x = c; x->parent; x = x->parent)
        if (x->parent->version != x->parent_seen) top = x;
    if (top == NULL) return;
    for (x = c; x != top; x = x->parent) x->parent->down = x;
    for (x = top;; x = x->down) {
        ik_chain_follow_parent(x);
        if (x == c) return;
    }
}

void ik_chain_follow_parent(ik_chain *c)
{
    if (c->parent && c->parent->version != c->parent_seen) rebase(c);
}

void ik_chain_update(ik_chain *c)
{
    ik_chain_follow(c);
    ik_chain_fk(c);
}

static ik_status attach(ik_chain *child, ik_chain *parent, int joint)
{
    ik_chain *x;
    if (child->dim != parent->dim) return IK_ERR_DIMENSION;
    if (joint < 0 || joint > parent->n) return IK_ERR_INDEX;
    if (child->parent) return IK_ERR_ATTACHED;
    for (x = parent; x; x = x->parent)
        if (x == child) return IK_ERR_CYCLE;
    return IK_OK;
}

static void link(ik_chain *child, ik_chain *parent, int joint)
{
    ik_chain_follow(parent);
    child->parent = parent;
    child->parent_joint = joint;
    child->links++;
    rebase(child);
    ik_chain_changed(child); /* its base is no longer its own */
}

ik_status ik_chain2d_attach(ik_chain *child, ik_chain *parent, int joint, ik_real angle)
{
    ik_status st = child->dim != 2 ? IK_ERR_DIMENSION : attach(child, parent, joint);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    child->offset_angle = ik_wrap_angle(angle);
    child->offset_turn = ik_v2_turn(child->offset_angle);
    link(child, parent, joint);
    return IK_OK;
}

static ik_status quat_in(const ik_real in[4], ik_quat *q);

ik_status ik_chain3d_attach(ik_chain *child, ik_chain *parent, int joint,
                            const ik_real *rotation)
{
    ik_quat q = ik_q_identity();
    ik_status st = child->dim != 3 ? IK_ERR_DIMENSION : attach(child, parent, joint);
    if (st != IK_OK) return st;
    if (rotation) {
        st = quat_in(rotation, &q);
        if (st != IK_OK) return st;
    }
    child->offset_rot = q;
    link(child, parent, joint);
    return IK_OK;
}

void ik_chain_detach(ik_chain *c)
{
    if (c->parent == NULL) return;
    ik_chain_follow(c);
    c->parent = NULL;
    c->parent_joint = 0; /* a root's joint is 0 (ik_chain_parent, and the rigs comparing it) */
    c->links++;
    if (c->dim == 2) c->base_angle = atan2(c->base_turn.y, c->base_turn.x);
    ik_chain_changed(c);
}

ik_chain *ik_chain_parent(const ik_chain *c, int *joint)
{
    if (joint) *joint = c->parent ? c->parent_joint : 0;
    return c->parent;
}

/* ---- the tip hold (closed loops) ---- */

ik_vec3 ik_hold_point(const ik_chain *c, int j, ik_vec3 offset)
{
    ik_vec3 at = ik_joint_v3(c, j);
    if (offset.x == 0 && offset.y == 0 && offset.z == 0) return at;
    if (c->dim == 2) {
        ik_vec2 v = ik_v2_rotate(ik_v2(offset.x, offset.y), ik_chain_frame2(c, j));
        return ik_v3(at.x + v.x, at.y + v.y, 0);
    }
    return ik_v3_add(at, ik_q_rotate(ik_chain_frame3(c, j), offset));
}

void ik_chain_read_hold(ik_chain *c)
{
    if (c->tip_parent == NULL) return;
    ik_chain_update(c->tip_parent);
    c->target = ik_hold_point(c->tip_parent, c->tip_joint, c->tip_offset);
    c->has_target = 1;
}

ik_status ik_chain_attach_tip(ik_chain *c, ik_chain *other, int joint, const ik_real *offset)
{
    ik_vec3 v = ik_v3(0, 0, 0);
    if (other->dim != c->dim) return IK_ERR_DIMENSION;
    if (other == c) return IK_ERR_SELF;
    if (joint < 0 || joint > other->n) return IK_ERR_INDEX;
    if (c->tip_parent) return IK_ERR_TIP_HELD;
    if (offset) {
        ik_status st = ik_check_coords(offset, c->dim);
        if (st != IK_OK) return st;
        v = ik_v3(offset[0] + 0.0, offset[1] + 0.0, c->dim == 3 ? offset[2] + 0.0 : 0);
    }
    c->tip_parent = other;
    c->tip_joint = joint;
    c->tip_offset = v;
    c->holds++;
    ik_chain_read_hold(c);
    return IK_OK;
}

void ik_chain_detach_tip(ik_chain *c)
{
    if (c->tip_parent == NULL) return;
    c->tip_parent = NULL;
    c->tip_joint = 0;
    c->tip_offset = ik_v3(0, 0, 0);
    c->holds++;
    c->has_target = 0;
}

ik_chain *ik_chain_tip_parent(const ik_chain *c, int *joint, ik_real *offset)
{
    if (joint) *joint = c->tip_parent ? c->tip_joint : 0;
    if (offset) {
        offset[0] = c->tip_offset.x, offset[1] = c->tip_offset.y;
        if (c->dim == 3) offset[2] = c->tip_offset.z;
    }
    return c->tip_parent;
}

/* ---- getters and setters ---- */

const ik_real *ik_chain_positions(ik_chain *c)
{
    ik_chain_update(c);
    return c->joint;
}


static int all_finite(const ik_real *v, int count)
{
    int i;
    for (i = 0; i < count; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

ik_status ik_check_coords(const ik_real *v, int count)
{
    int i;
    /* One quiet comparison each on the way through: NaN and the infinities fail it too. */
    for (i = 0; i < count; i++)
        if (!islessequal(fabs(v[i]), IK_MAX_COORD))
            return all_finite(v, count) ? IK_ERR_RANGE : IK_ERR_NOT_FINITE;
    return IK_OK;
}
/* A change of bone `bone` onwards: the pose becomes the truth, and the world data after it
   goes stale. */
static void pose_changes(ik_chain *c, int bone)
{
    ik_chain_follow(c);
    ik_chain_settle(c);
    ik_chain_mark_stale(c, bone);
    ik_chain_changed(c);
}

/* A move of the base: the same, but the local pose stays as it was (a base move). */
static void base_changes(ik_chain *c)
{
    pose_changes(c, 0);
    c->base_moves++;
}

ik_status ik_chain_length(const ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_BONE(c, bone);
    *out = c->length[bone];
    return IK_OK;
}

ik_status ik_chain_set_length(ik_chain *c, int bone, ik_real length)
{
    IK_CHECK_BONE(c, bone);
    if (!isfinite(length)) return IK_ERR_NOT_FINITE;
    if (length < 0) return IK_ERR_NEGATIVE;
    if (length > IK_MAX_COORD) return IK_ERR_RANGE;
    pose_changes(c, bone);
    c->length[bone] = length + 0.0;
    ik_chain_lengths_changed(c);
    return IK_OK;
}

ik_status ik_chain_weight(const ik_chain *c, int joint, ik_real *out)
{
    IK_CHECK_JOINT(c, joint);
    *out = c->weight[joint];
    return IK_OK;
}

ik_status ik_chain_set_weight(ik_chain *c, int joint, ik_real weight)
{
    IK_CHECK_JOINT(c, joint);
    if (!isfinite(weight)) return IK_ERR_NOT_FINITE;
    if (weight < 0) return IK_ERR_NEGATIVE;
    c->weight[joint] = weight + 0.0;
    return IK_OK;
}

ik_status ik_chain2d_base(ik_chain *c, ik_real *x, ik_real *y, ik_real *angle)
{
    IK_CHECK_DIM(c, 2);
    ik_chain_follow(c);
    *x = c->base.x;
    *y = c->base.y;
    *angle = c->parent ? atan2(c->base_turn.y, c->base_turn.x) : c->base_angle;
    return IK_OK;
}

ik_status ik_chain2d_set_base(ik_chain *c, ik_real x, ik_real y, ik_real angle)
{
    ik_real position[2];
    ik_status st;
    IK_CHECK_DIM(c, 2);
    position[0] = x, position[1] = y;
    st = ik_check_coords(position, 2);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    if (c->parent) return IK_ERR_ATTACHED;
    base_changes(c);
    c->base = ik_v3(x + 0.0, y + 0.0, 0);
    c->base_angle = ik_wrap_angle(angle);
    c->base_turn = ik_v2_turn(c->base_angle);
    return IK_OK;
}

ik_status ik_chain2d_angle(ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    ik_chain_follow(c);
    *out = ik_chain_local_angle(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_set_angle(ik_chain *c, int bone, ik_real angle)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    pose_changes(c, bone);
    ik_chain_set_turn_angle(c, bone, angle);
    return IK_OK;
}

ik_status ik_chain2d_world_angle(ik_chain *c, int bone, ik_real *out)
{
    IK_CHECK_DIM(c, 2);
    IK_CHECK_BONE(c, bone);
    ik_chain_update(c);
    *out = ik_chain_world_angle_of(c, bone);
    return IK_OK;
}

static void quat_out(ik_quat q, ik_real out[4])
{
    out[0] = q.w, out[1] = q.x, out[2] = q.y, out[3] = q.z;
}

/* A unit quaternion from 4 user numbers: finite and of nonzero length. */
static ik_status quat_in(const ik_real in[4], ik_quat *q)
{
    ik_real len;
    if (!all_finite(in, 4)) return IK_ERR_NOT_FINITE;
    /* Scaled first, so huge or tiny (but nonzero) inputs normalise without overflow. */
    len = fmax(fmax(fabs(in[0]), fabs(in[1])), fmax(fabs(in[2]), fabs(in[3])));
    if (len == 0) return IK_ERR_ZERO_ROTATION;
    *q = ik_q_normalize(ik_q(in[0] / len, in[1] / len, in[2] / len, in[3] / len));
    return IK_OK;
}

ik_status ik_chain3d_base(ik_chain *c, ik_real position[3], ik_real rotation[4])
{
    IK_CHECK_DIM(c, 3);
    ik_chain_follow(c);
    position[0] = c->base.x, position[1] = c->base.y, position[2] = c->base.z;
    quat_out(c->base_rot, rotation);
    return IK_OK;
}

ik_status ik_chain3d_set_base(ik_chain *c, const ik_real position[3], const ik_real *rotation)
{
    ik_quat q = c->base_rot;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    st = ik_check_coords(position, 3);
    if (st != IK_OK) return st;
    if (rotation) {
        st = quat_in(rotation, &q);
        if (st != IK_OK) return st;
    }
    if (c->parent) return IK_ERR_ATTACHED;
    base_changes(c);
    c->base = ik_v3(position[0] + 0.0, position[1] + 0.0, position[2] + 0.0);
    c->base_rot = q;
    return IK_OK;
}

ik_status ik_chain3d_rotation(ik_chain *c, int bone, ik_real out[4])
{
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    ik_chain_follow(c);
    quat_out(ik_chain_local_rot(c, bone), out);
    return IK_OK;
}

ik_status ik_chain3d_set_rotation(ik_chain *c, int bone, const ik_real rotation[4])
{
    ik_quat q;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    st = quat_in(rotation, &q);
    if (st != IK_OK) return st;
    pose_changes(c, bone);
    c->rot[bone] = q;
    return IK_OK;
}

ik_status ik_chain3d_world_rotation(ik_chain *c, int bone, ik_real out[4])
{
    IK_CHECK_DIM(c, 3);
    IK_CHECK_BONE(c, bone);
    ik_chain_update(c);
    quat_out(ik_chain_world_rot(c, bone), out);
    return IK_OK;
}

/* ---- settings ---- */

const ik_settings *ik_chain_settings(const ik_chain *c) { return &c->settings; }

ik_real ik_chain_stretch_factor(const ik_chain *c) { return c->scale; }
ik_real ik_chain_stretch(const ik_chain *c) { return c->scale; }

ik_status ik_chain_configure(ik_chain *c, const ik_settings *settings)
{
    ik_status st = ik_settings_validate(settings);
    if (st != IK_OK) return st;
    if (settings->solver == IK_SOLVER_TWO_BONE && c->n != 2 && c->n != 3) return IK_ERR_NOT_TWO_BONE;
    if (settings->use_pole && c->dim != 3) return IK_ERR_POLE;
    c->settings = *settings;
    c->settings.greed_ramp = settings->greed_ramp != 0;
    c->settings.use_pole = settings->use_pole != 0;
    c->settings.escape = settings->escape != 0;
    c->settings.stretch = settings->stretch != 0;
    c->settings.tolerance += 0.0; /* -0 is kept as +0 */
    c->settings.angle_tolerance += 0.0;
    c->settings.softness += 0.0;
    c->settings.mix += 0.0;
    c->settings.effector_weight += 0.0;
    c->settings.stiffness += 0.0;
    c->settings.damping += 0.0;
    c->settings.gravity[0] += 0.0, c->settings.gravity[1] += 0.0;
    c->settings.gravity[2] = c->dim == 3 ? settings->gravity[2] + 0.0 : 0;
    if (c->settings.use_pole) {
        /* Normalised once, so no solve multiplies a pole near 1e308 (ik_v3_normalize_or
           rescales first, so this itself cannot overflow). */
        ik_vec3 p = ik_v3_normalize_or(ik_v3(settings->pole[0], settings->pole[1], settings->pole[2]),
                                       ik_v3(0, 1, 0));
        c->settings.pole[0] = p.x, c->settings.pole[1] = p.y, c->settings.pole[2] = p.z;
    }
    return IK_OK;
}

/* ---- goals ---- */

ik_status ik_chain_set_target(ik_chain *c, const ik_real *target)
{
    ik_status st = c->tip_parent ? IK_ERR_HELD : ik_check_coords(target, c->dim);
    if (st != IK_OK) return st;
    ik_chain_keep_target(c, target);
    return IK_OK;
}

ik_status ik_chain_target(ik_chain *c, ik_real *out, int *has)
{
    ik_chain_read_hold(c);
    *has = c->has_target;
    if (c->has_target) {
        out[0] = c->target.x, out[1] = c->target.y;
        if (c->dim == 3) out[2] = c->target.z;
    }
    return IK_OK;
}

ik_status ik_chain2d_set_target_angle(ik_chain *c, ik_real angle)
{
    IK_CHECK_DIM(c, 2);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->target_angle = ik_wrap_angle(angle);
    c->target_turn = ik_v2_turn(c->target_angle);
    c->has_orientation = 1;
    return IK_OK;
}

ik_status ik_chain2d_target_angle(const ik_chain *c, ik_real *out, int *has)
{
    IK_CHECK_DIM(c, 2);
    *has = c->has_orientation;
    if (c->has_orientation) *out = c->target_angle;
    return IK_OK;
}

ik_status ik_chain3d_set_target_rotation(ik_chain *c, const ik_real rotation[4])
{
    ik_quat q;
    ik_status st;
    IK_CHECK_DIM(c, 3);
    st = quat_in(rotation, &q);
    if (st != IK_OK) return st;
    c->target_rot = q;
    c->has_orientation = 1;
    return IK_OK;
}

ik_status ik_chain3d_target_rotation(const ik_chain *c, ik_real out[4], int *has)
{
    IK_CHECK_DIM(c, 3);
    *has = c->has_orientation;
    if (c->has_orientation) quat_out(c->target_rot, out);
    return IK_OK;
}

void ik_chain_clear_target(ik_chain *c)
{
    ik_chain_detach_tip(c);
    c->has_target = 0;
    c->has_orientation = 0;
}
