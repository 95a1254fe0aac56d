/*
 * chain.c - chain construction, pose, forward kinematics, settings and solver dispatch.
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
    case IK_ERR_SOLVER: return "solver must be 'fabrik', 'ccd', 'relax' or 'two_bone'";
    case IK_ERR_NOT_TWO_BONE: return "the two-bone solver needs a chain of exactly 2 bones";
    case IK_ERR_DIMENSION: return "wrong dimension for this chain";
    case IK_ERR_ZERO_ROTATION: return "quaternion has zero length";
    case IK_ERR_POLE: return "pole must be a nonzero finite direction, on a 3D chain";
    case IK_ERR_RANGE: return "number out of range (magnitude above 1e300)";
    }
    return "unknown status";
}

static const char *const solver_names[] = {"fabrik", "ccd", "relax", "two_bone"};

const char *ik_solver_name(ik_solver solver)
{
    if ((int)solver < 0 || (int)solver > (int)IK_SOLVER_TWO_BONE) return NULL;
    return solver_names[solver];
}

ik_status ik_solver_parse(const char *name, ik_solver *out)
{
    int i;
    for (i = 0; name && i <= (int)IK_SOLVER_TWO_BONE; i++) {
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
    s.greed = IK_DEFAULT_GREED;
    s.greed_ramp = IK_DEFAULT_GREED_RAMP;
    s.bend = IK_DEFAULT_BEND;
    s.use_pole = 0;
    return s;
}

ik_status ik_settings_validate(const ik_settings *s)
{
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return IK_ERR_TOLERANCE;
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return IK_ERR_GREED;
    if (s->bend != 1 && s->bend != -1) return IK_ERR_BEND;
    if (ik_solver_name(s->solver) == NULL) return IK_ERR_SOLVER;
    if (s->use_pole) {
        ik_vec3 p = ik_v3(s->pole[0], s->pole[1], s->pole[2]);
        if (!isfinite(p.x) || !isfinite(p.y) || !isfinite(p.z)) return IK_ERR_POLE;
        if (p.x == 0 && p.y == 0 && p.z == 0) return IK_ERR_POLE;
    }
    return IK_OK;
}

/* ---- construction ---- */

/* The header rounded up so the arrays after it are aligned for any scalar. */
#define HEADER_SIZE ((sizeof(struct ik_chain) + 15u) / 16u * 16u)

/*
 * Reals a chain of n bones needs, as per_bone * n + extra. Both: length, weight (n + 1),
 * dir, joint (n + 1) and work (n + 1) as vec3. 2D adds angle and world; 3D adds rot and
 * wrot as quaternions.
 */
static size_t reals_per_bone(int dim) { return dim == 2 ? 1 + 1 + 3 + 3 + 3 + 2 : 1 + 1 + 9 + 8; }
#define REALS_EXTRA 7u

static size_t chain_size(int dim, int n)
{
    size_t bones;
    if (n < 1) return 0;
    /* The range of coordinates needs it (ik.h); it also keeps 4 * (n + 1) within an int. */
    if (n > IK_MAX_BONES) return 0;
    bones = (size_t)n;
    if (bones > (SIZE_MAX - HEADER_SIZE) / sizeof(ik_real) / reals_per_bone(dim) - REALS_EXTRA)
        return 0;
    return HEADER_SIZE + (reals_per_bone(dim) * bones + REALS_EXTRA) * sizeof(ik_real);
}

size_t ik_chain2d_size(int n) { return chain_size(2, n); }
size_t ik_chain3d_size(int n) { return chain_size(3, n); }

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
    ik_real *p;
    int i;
    ik_status st = check_lengths(dim, n, lengths);
    if (st != IK_OK) return st;
    if (memory == NULL || size < chain_size(dim, n)) return IK_ERR_TOO_LARGE;

    memset(c, 0, HEADER_SIZE);
    c->n = n;
    c->dim = dim;
    c->settings = ik_default_settings();
    c->base = ik_v3(0, 0, 0);
    c->base_angle = 0;
    c->base_rot = ik_q_identity();
    p = (ik_real *)((unsigned char *)memory + HEADER_SIZE);
    c->length = p, p += n;
    c->weight = p, p += n + 1;
    c->dir = (ik_vec3 *)p, p += 3 * n;
    c->joint = (ik_vec3 *)p, p += 3 * (n + 1);
    c->work = (ik_vec3 *)p, p += 3 * (n + 1);
    if (dim == 2) {
        c->angle = p, p += n;
        c->world = p;
    } else {
        c->rot = (ik_quat *)p, p += 4 * n;
        c->wrot = (ik_quat *)p;
    }
    for (i = 0; i < n; i++) {
        c->length[i] = lengths[i] + 0.0; /* + 0.0 turns -0 into +0 */
        if (dim == 2) c->angle[i] = 0;
        else c->rot[i] = ik_q_identity();
    }
    for (i = 0; i <= n; i++) c->weight[i] = 1;
    c->stale_from = 0;
    ik_chain_update(c);
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

int ik_chain_count(const ik_chain *chain) { return chain->n; }
int ik_chain_dim(const ik_chain *chain) { return chain->dim; }

/* ---- forward kinematics ---- */

void ik_chain_update(ik_chain *c)
{
    int i = c->stale_from;
    if (i >= c->n) return;
    if (i == 0) c->joint[0] = c->base;
    for (; i < c->n; i++) {
        if (c->dim == 2) {
            ik_real parent = i == 0 ? c->base_angle : c->world[i - 1];
            ik_real w = ik_wrap_angle(parent + c->angle[i]);
            c->world[i] = w;
            c->dir[i] = ik_v3(cos(w), sin(w), 0);
        } else {
            ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
            c->wrot[i] = ik_q_mul(parent, c->rot[i]);
            c->dir[i] = ik_q_x_axis(c->wrot[i]);
        }
        c->joint[i + 1] = ik_v3_add(c->joint[i], ik_v3_scale(c->dir[i], c->length[i]));
    }
    c->stale_from = c->n;
}

static void mark_stale(ik_chain *c, int bone)
{
    if (bone < c->stale_from) c->stale_from = bone;
}

void ik_chain_apply_points(ik_chain *c, const ik_vec3 *points)
{
    ik_real parent_angle = c->base_angle;
    ik_quat parent_rot = c->base_rot;
    int i;
    for (i = 0; i < c->n; i++) {
        ik_vec3 old_dir = c->dir[i];
        /* A zero-length bone, or a segment with no direction, keeps its world orientation. */
        ik_vec3 dir = c->length[i] > 0
                          ? ik_v3_normalize_or(ik_v3_sub(points[i + 1], points[i]), old_dir)
                          : old_dir;
        if (c->dim == 2) {
            ik_real world = ik_wrap_angle(atan2(dir.y, dir.x));
            c->angle[i] = ik_wrap_angle(world - parent_angle);
            parent_angle = world;
        } else {
            /* The smallest turn from the old direction, applied to the old world rotation. */
            ik_quat world = ik_q_normalize(ik_q_mul(ik_q_from_to(old_dir, dir), c->wrot[i]));
            c->rot[i] = ik_q_normalize(ik_q_mul(ik_q_conj(parent_rot), world));
            parent_rot = world;
        }
    }
    mark_stale(c, 0);
    ik_chain_update(c);
}

void ik_chain_finish(ik_chain *c, ik_vec3 target, int iterations, ik_result *out)
{
    ik_chain_update(c);
    out->distance = ik_chain_tip_distance(c, target);
    out->reached = out->distance <= c->settings.tolerance;
    out->iterations = iterations;
}

/* ---- getters and setters ---- */

const ik_real *ik_chain_positions(ik_chain *c)
{
    ik_chain_update(c);
    return &c->joint[0].x;
}

#define CHECK_BONE(c, i) \
    if ((i) < 0 || (i) >= (c)->n) return IK_ERR_INDEX
#define CHECK_JOINT(c, i) \
    if ((i) < 0 || (i) > (c)->n) return IK_ERR_INDEX
#define CHECK_DIM(c, d) \
    if ((c)->dim != (d)) return IK_ERR_DIMENSION

static int all_finite(const ik_real *v, int count)
{
    int i;
    for (i = 0; i < count; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/* count coordinates: finite, and within the range of ik.h. */
static ik_status check_coords(const ik_real *v, int count)
{
    int i;
    if (!all_finite(v, count)) return IK_ERR_NOT_FINITE;
    for (i = 0; i < count; i++)
        if (fabs(v[i]) > IK_MAX_COORD) return IK_ERR_RANGE;
    return IK_OK;
}

ik_status ik_chain_length(const ik_chain *c, int bone, ik_real *out)
{
    CHECK_BONE(c, bone);
    *out = c->length[bone];
    return IK_OK;
}

ik_status ik_chain_set_length(ik_chain *c, int bone, ik_real length)
{
    CHECK_BONE(c, bone);
    if (!isfinite(length)) return IK_ERR_NOT_FINITE;
    if (length < 0) return IK_ERR_NEGATIVE;
    if (length > IK_MAX_COORD) return IK_ERR_RANGE;
    c->length[bone] = length + 0.0;
    mark_stale(c, bone);
    return IK_OK;
}

ik_status ik_chain_weight(const ik_chain *c, int joint, ik_real *out)
{
    CHECK_JOINT(c, joint);
    *out = c->weight[joint];
    return IK_OK;
}

ik_status ik_chain_set_weight(ik_chain *c, int joint, ik_real weight)
{
    CHECK_JOINT(c, joint);
    if (!isfinite(weight)) return IK_ERR_NOT_FINITE;
    if (weight < 0) return IK_ERR_NEGATIVE;
    c->weight[joint] = weight + 0.0;
    return IK_OK;
}

ik_status ik_chain2d_base(const ik_chain *c, ik_real *x, ik_real *y, ik_real *angle)
{
    CHECK_DIM(c, 2);
    *x = c->base.x;
    *y = c->base.y;
    *angle = c->base_angle;
    return IK_OK;
}

ik_status ik_chain2d_set_base(ik_chain *c, ik_real x, ik_real y, ik_real angle)
{
    ik_real position[2];
    ik_status st;
    CHECK_DIM(c, 2);
    position[0] = x, position[1] = y;
    st = check_coords(position, 2);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->base = ik_v3(x, y, 0);
    c->base_angle = ik_wrap_angle(angle);
    mark_stale(c, 0);
    return IK_OK;
}

ik_status ik_chain2d_angle(const ik_chain *c, int bone, ik_real *out)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    *out = c->angle[bone];
    return IK_OK;
}

ik_status ik_chain2d_set_angle(ik_chain *c, int bone, ik_real angle)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->angle[bone] = ik_wrap_angle(angle);
    mark_stale(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_world_angle(ik_chain *c, int bone, ik_real *out)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    ik_chain_update(c);
    *out = c->world[bone];
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

ik_status ik_chain3d_base(const ik_chain *c, ik_real position[3], ik_real rotation[4])
{
    CHECK_DIM(c, 3);
    position[0] = c->base.x, position[1] = c->base.y, position[2] = c->base.z;
    quat_out(c->base_rot, rotation);
    return IK_OK;
}

ik_status ik_chain3d_set_base(ik_chain *c, const ik_real position[3], const ik_real *rotation)
{
    ik_quat q = c->base_rot;
    ik_status st;
    CHECK_DIM(c, 3);
    st = check_coords(position, 3);
    if (st != IK_OK) return st;
    if (rotation) {
        st = quat_in(rotation, &q);
        if (st != IK_OK) return st;
    }
    c->base = ik_v3(position[0], position[1], position[2]);
    c->base_rot = q;
    mark_stale(c, 0);
    return IK_OK;
}

ik_status ik_chain3d_rotation(const ik_chain *c, int bone, ik_real out[4])
{
    CHECK_DIM(c, 3);
    CHECK_BONE(c, bone);
    quat_out(c->rot[bone], out);
    return IK_OK;
}

ik_status ik_chain3d_set_rotation(ik_chain *c, int bone, const ik_real rotation[4])
{
    ik_quat q;
    ik_status st;
    CHECK_DIM(c, 3);
    CHECK_BONE(c, bone);
    st = quat_in(rotation, &q);
    if (st != IK_OK) return st;
    c->rot[bone] = q;
    mark_stale(c, bone);
    return IK_OK;
}

ik_status ik_chain3d_world_rotation(ik_chain *c, int bone, ik_real out[4])
{
    CHECK_DIM(c, 3);
    CHECK_BONE(c, bone);
    ik_chain_update(c);
    quat_out(c->wrot[bone], out);
    return IK_OK;
}

/* ---- settings ---- */

const ik_settings *ik_chain_settings(const ik_chain *c) { return &c->settings; }

ik_status ik_chain_configure(ik_chain *c, const ik_settings *settings)
{
    ik_status st = ik_settings_validate(settings);
    if (st != IK_OK) return st;
    if (settings->solver == IK_SOLVER_TWO_BONE && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    if (settings->use_pole && c->dim != 3) return IK_ERR_POLE;
    c->settings = *settings;
    c->settings.greed_ramp = settings->greed_ramp != 0;
    c->settings.use_pole = settings->use_pole != 0;
    return IK_OK;
}

/* ---- solves ---- */

typedef void (*solver_fn)(ik_chain *, ik_vec3, ik_result *);

static ik_status check_target(const ik_chain *c, const ik_real *target, ik_vec3 *t)
{
    ik_status st = check_coords(target, c->dim);
    if (st != IK_OK) return st;
    *t = ik_v3(target[0], target[1], c->dim == 3 ? target[2] : 0);
    return IK_OK;
}

static ik_status run(ik_chain *c, const ik_real *target, ik_result *out, solver_fn solve)
{
    ik_vec3 t;
    ik_status st = check_target(c, target, &t);
    if (st != IK_OK) return st;
    if (solve == ik_two_bone_chain && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    ik_chain_update(c);
    solve(c, t, out);
    return IK_OK;
}

ik_status ik_chain_solve_fabrik(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_fabrik);
}

ik_status ik_chain_solve_ccd(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_ccd);
}

ik_status ik_chain_solve_relax(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_relax);
}

ik_status ik_chain_solve_two_bone(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_two_bone_chain);
}

static const solver_fn solvers[] = {ik_fabrik, ik_ccd, ik_relax, ik_two_bone_chain};

ik_status ik_chain_solve(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, solvers[c->settings.solver]);
}

ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, int *failed)
{
    int k, reached = 0, dim = count > 0 ? chains[0]->dim : 2;
    ik_vec3 t;
    ik_result r;
    for (k = 0; k < count; k++) {
        ik_status st = chains[k]->dim != dim
                           ? IK_ERR_DIMENSION
                           : check_target(chains[k], targets + (size_t)k * (size_t)dim, &t);
        if (st != IK_OK) {
            if (failed) *failed = k;
            return st;
        }
    }
    for (k = 0; k < count; k++) {
        ik_chain_solve(chains[k], targets + (size_t)k * (size_t)dim, &r);
        reached += r.reached;
    }
    if (reached_count) *reached_count = reached;
    return IK_OK;
}
