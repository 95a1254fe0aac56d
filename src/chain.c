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
    case IK_ERR_MIX: return "mix must be in [0, 1]";
    case IK_ERR_SOFTNESS: return "softness must be a finite number >= 0";
    case IK_ERR_LIMIT_RANGE: return "limits must satisfy -pi <= min <= max <= pi";
    case IK_ERR_AXIS: return "axis must be a nonzero finite direction";
    case IK_ERR_CONE: return "half angle must be in [0, pi]";
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
    s.escape = IK_DEFAULT_ESCAPE;
    s.mix = IK_DEFAULT_MIX;
    s.softness = IK_DEFAULT_SOFTNESS;
    s.stretch = IK_DEFAULT_STRETCH;
    return s;
}

ik_status ik_settings_validate(const ik_settings *s)
{
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return IK_ERR_TOLERANCE;
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return IK_ERR_GREED;
    if (s->bend != 1 && s->bend != -1) return IK_ERR_BEND;
    if (ik_solver_name(s->solver) == NULL) return IK_ERR_SOLVER;
    if (!(isfinite(s->mix) && s->mix >= 0 && s->mix <= 1)) return IK_ERR_MIX;
    if (!(isfinite(s->softness) && s->softness >= 0)) return IK_ERR_SOFTNESS;
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
 * Bytes a chain of n bones needs past the header, as per_bone * n + extra. Both: length,
 * weight (n + 1), dir, joint (n + 1) and work (n + 1) as vec3, a limit. 2D adds turn and
 * prev_turn (2 each), angle and prev_angle; 3D adds rot, wrot and prev_rot as quaternions.
 */
static size_t bytes_per_bone(int dim)
{
    return (dim == 2 ? 1 + 1 + 9 + 6 : 1 + 1 + 9 + 12) * sizeof(ik_real) + sizeof(ik_limit);
}
#define BYTES_EXTRA (7u * sizeof(ik_real))

static size_t chain_size(int dim, int n)
{
    size_t bones;
    if (n < 1) return 0;
    /* The range of coordinates needs it (ik.h); it also keeps 4 * (n + 1) within an int. */
    if (n > IK_MAX_BONES) return 0;
    bones = (size_t)n;
    if (bones > (SIZE_MAX - HEADER_SIZE - BYTES_EXTRA) / bytes_per_bone(dim)) return 0;
    return HEADER_SIZE + bytes_per_bone(dim) * bones + BYTES_EXTRA;
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
    c->base_turn = ik_v2(1, 0);
    c->base_rot = ik_q_identity();
    c->scale = 1;
    c->limited = 0;
    /* The limits first: their struct's alignment is that of ik_real or less. */
    c->limit = (ik_limit *)((unsigned char *)memory + HEADER_SIZE);
    p = (ik_real *)(c->limit + n);
    c->length = p, p += n;
    c->weight = p, p += n + 1;
    c->dir = (ik_vec3 *)p, p += 3 * n;
    c->joint = (ik_vec3 *)p, p += 3 * (n + 1);
    c->work = (ik_vec3 *)p, p += 3 * (n + 1);
    if (dim == 2) {
        c->turn = (ik_vec2 *)p, p += 2 * n;
        c->prev_turn = (ik_vec2 *)p, p += 2 * n;
        c->angle = p, p += n;
        c->prev_angle = p;
    } else {
        c->rot = (ik_quat *)p, p += 4 * n;
        c->wrot = (ik_quat *)p, p += 4 * n;
        c->prev_rot = (ik_quat *)p;
    }
    memset(c->limit, 0, (size_t)n * sizeof(ik_limit));
    for (i = 0; i < n; i++) {
        c->length[i] = lengths[i] + 0.0; /* + 0.0 turns -0 into +0 */
        if (dim == 2) ik_chain_set_turn_angle(c, i, 0);
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
        /*
         * The world turn or rotation is the parent's times the local one. Rounding would grow
         * along a long chain (|w| off by 1e-9 after 100,000 bones), so each is pulled back to
         * unit length to first order, (3 - |w|^2) / 2, which needs no square root.
         */
        if (c->dim == 2) {
            ik_vec2 parent = i == 0 ? c->base_turn : ik_v2(c->dir[i - 1].x, c->dir[i - 1].y);
            ik_vec2 world = ik_v2_rotate(c->turn[i], parent);
            world = ik_v2_scale(world, (3 - ik_v2_dot(world, world)) / 2);
            c->dir[i] = ik_v3(world.x, world.y, 0);
        } else {
            ik_quat parent = i == 0 ? c->base_rot : c->wrot[i - 1];
            ik_quat w = ik_q_mul(parent, c->rot[i]);
            ik_real k = (3 - (w.w * w.w + w.x * w.x + w.y * w.y + w.z * w.z)) / 2;
            c->wrot[i] = ik_q(w.w * k, w.x * k, w.y * k, w.z * k);
            c->dir[i] = ik_q_x_axis(c->wrot[i]);
        }
        c->joint[i + 1] = ik_v3_add(c->joint[i], ik_v3_scale(c->dir[i], c->length[i] * c->scale));
    }
    c->stale_from = c->n;
}

static void mark_stale(ik_chain *c, int bone)
{
    if (bone < c->stale_from) c->stale_from = bone;
}

void ik_chain_apply_points(ik_chain *c, const ik_vec3 *points)
{
    ik_aim parent = ik_aim_start(c);
    int i;
    for (i = 0; i < c->n; i++) {
        /* A zero-length bone, or a segment with no direction, keeps its world orientation. */
        ik_vec3 dir = c->length[i] > 0
                          ? ik_v3_normalize_or(ik_v3_sub(points[i + 1], points[i]), c->dir[i])
                          : c->dir[i];
        ik_aim_bone(c, i, dir, &parent);
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
ik_status ik_check_coords(const ik_real *v, int count)
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
    st = ik_check_coords(position, 2);
    if (st != IK_OK) return st;
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->base = ik_v3(x, y, 0);
    c->base_angle = ik_wrap_angle(angle);
    c->base_turn = ik_v2(cos(angle), sin(angle));
    mark_stale(c, 0);
    return IK_OK;
}

ik_status ik_chain2d_angle(const ik_chain *c, int bone, ik_real *out)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    *out = ik_chain_angle(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_set_angle(ik_chain *c, int bone, ik_real angle)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    ik_chain_set_turn_angle(c, bone, angle);
    mark_stale(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_world_angle(ik_chain *c, int bone, ik_real *out)
{
    CHECK_DIM(c, 2);
    CHECK_BONE(c, bone);
    ik_chain_update(c);
    *out = atan2(c->dir[bone].y, c->dir[bone].x);
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
    st = ik_check_coords(position, 3);
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

ik_real ik_chain_stretch(const ik_chain *c) { return c->scale; }

ik_status ik_chain_configure(ik_chain *c, const ik_settings *settings)
{
    ik_status st = ik_settings_validate(settings);
    if (st != IK_OK) return st;
    if (settings->solver == IK_SOLVER_TWO_BONE && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    if (settings->use_pole && c->dim != 3) return IK_ERR_POLE;
    c->settings = *settings;
    c->settings.greed_ramp = settings->greed_ramp != 0;
    c->settings.use_pole = settings->use_pole != 0;
    c->settings.escape = settings->escape != 0;
    c->settings.stretch = settings->stretch != 0;
    return IK_OK;
}
