/*
 * chain.c - chain construction, pose, forward kinematics, settings and solver dispatch.
 */
#include "chain.h"

#include <limits.h>
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
    s.solver = IK_SOLVER_FABRIK;
    s.iterations = IK_DEFAULT_ITERATIONS;
    s.tolerance = IK_DEFAULT_TOLERANCE;
    s.greed = IK_DEFAULT_GREED;
    s.greed_ramp = IK_DEFAULT_GREED_RAMP;
    s.bend = IK_DEFAULT_BEND;
    return s;
}

ik_status ik_settings_validate(const ik_settings *s)
{
    if (s->iterations < 1) return IK_ERR_ITERATIONS;
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return IK_ERR_TOLERANCE;
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return IK_ERR_GREED;
    if (s->bend != 1 && s->bend != -1) return IK_ERR_BEND;
    if (ik_solver_name(s->solver) == NULL) return IK_ERR_SOLVER;
    return IK_OK;
}

/* ---- construction ---- */

/* The header rounded up so the arrays after it are aligned for any scalar. */
#define HEADER_SIZE ((sizeof(struct ik_chain) + 15u) / 16u * 16u)
/* length, weight, angle, world: 4 reals a bone (+1 weight); dir, joint, work: 2 each. */
#define REALS_PER_BONE 10u
#define REALS_EXTRA 5u

size_t ik_chain2d_size(int n)
{
    size_t bones;
    if (n < 1) return 0;
    bones = (size_t)n;
    /* Index arithmetic on joints uses int: keep 2 * (n + 1) within range too. */
    if (n > INT_MAX / 4) return 0;
    if (bones > (SIZE_MAX - HEADER_SIZE) / sizeof(ik_real) / REALS_PER_BONE - REALS_EXTRA)
        return 0;
    return HEADER_SIZE + (REALS_PER_BONE * bones + REALS_EXTRA) * sizeof(ik_real);
}

static ik_status check_lengths(int n, const ik_real *lengths)
{
    int i;
    if (n < 1) return IK_ERR_COUNT;
    if (ik_chain2d_size(n) == 0) return IK_ERR_TOO_LARGE;
    for (i = 0; i < n; i++) {
        if (!isfinite(lengths[i])) return IK_ERR_NOT_FINITE;
        if (lengths[i] < 0) return IK_ERR_NEGATIVE;
    }
    return IK_OK;
}

ik_status ik_chain2d_init(void *memory, size_t size, int n, const ik_real *lengths,
                          ik_chain **out)
{
    ik_chain *c = (ik_chain *)memory;
    ik_real *p;
    int i;
    ik_status st = check_lengths(n, lengths);
    if (st != IK_OK) return st;
    if (memory == NULL || size < ik_chain2d_size(n)) return IK_ERR_TOO_LARGE;

    memset(c, 0, HEADER_SIZE);
    c->n = n;
    c->dim = 2;
    c->settings = ik_default_settings();
    p = (ik_real *)((unsigned char *)memory + HEADER_SIZE);
    c->length = p, p += n;
    c->weight = p, p += n + 1;
    c->angle = p, p += n;
    c->world = p, p += n;
    c->dir = (ik_vec2 *)p, p += 2 * n;
    c->joint = (ik_vec2 *)p, p += 2 * (n + 1);
    c->work = (ik_vec2 *)p;
    for (i = 0; i < n; i++) {
        c->length[i] = lengths[i] + 0.0; /* + 0.0 turns -0 into +0 */
        c->angle[i] = 0;
    }
    for (i = 0; i <= n; i++) c->weight[i] = 1;
    c->stale_from = 0;
    ik_chain_update(c);
    *out = c;
    return IK_OK;
}

ik_chain *ik_chain2d_create(int n, const ik_real *lengths, ik_status *status)
{
    ik_chain *c = NULL;
    void *memory;
    ik_status st = check_lengths(n, lengths);
    if (st == IK_OK) {
        memory = malloc(ik_chain2d_size(n));
        st = memory ? ik_chain2d_init(memory, ik_chain2d_size(n), n, lengths, &c)
                    : IK_ERR_NO_MEMORY;
        if (st != IK_OK) free(memory);
    }
    if (status) *status = st;
    return st == IK_OK ? c : NULL;
}

void ik_chain_destroy(ik_chain *chain) { free(chain); }

int ik_chain_count(const ik_chain *chain) { return chain->n; }
int ik_chain_dim(const ik_chain *chain) { return chain->dim; }

/* ---- forward kinematics ---- */

void ik_chain_update(ik_chain *c)
{
    int i = c->stale_from;
    if (i >= c->n) return;
    if (i == 0) c->joint[0] = ik_v2(c->base_x, c->base_y);
    for (; i < c->n; i++) {
        ik_real parent = i == 0 ? c->base_angle : c->world[i - 1];
        ik_real w = ik_wrap_angle(parent + c->angle[i]);
        c->world[i] = w;
        c->dir[i] = ik_v2(cos(w), sin(w));
        c->joint[i + 1] = ik_v2_add(c->joint[i], ik_v2_scale(c->dir[i], c->length[i]));
    }
    c->stale_from = c->n;
}

static void mark_stale(ik_chain *c, int bone)
{
    if (bone < c->stale_from) c->stale_from = bone;
}

/*
 * Sets bone i's world angle through its local angle. The parent's world angle must be
 * current; the world cache from bone i + 1 on is left stale for the caller to refresh.
 */
static void set_world_angle(ik_chain *c, int i, ik_real world)
{
    ik_real parent = i == 0 ? c->base_angle : c->world[i - 1];
    c->angle[i] = ik_wrap_angle(world - parent);
    c->world[i] = ik_wrap_angle(world);
}

void ik_chain2d_apply_points(ik_chain *c, const ik_vec2 *points, int count)
{
    int i;
    for (i = 0; i < count; i++) {
        ik_vec2 seg = ik_v2_sub(points[i + 1], points[i]);
        /* A zero-length bone, or a segment with no direction, keeps its world angle. */
        int has_dir = c->length[i] > 0 && (seg.x != 0 || seg.y != 0);
        set_world_angle(c, i, has_dir ? atan2(seg.y, seg.x) : c->world[i]);
    }
    mark_stale(c, 0);
    ik_chain_update(c);
}

void ik_chain2d_point_bone_at(ik_chain *c, int bone, ik_vec2 target)
{
    ik_vec2 to = ik_v2_sub(target, c->joint[bone]);
    if (c->length[bone] > 0 && (to.x != 0 || to.y != 0)) {
        set_world_angle(c, bone, atan2(to.y, to.x));
        mark_stale(c, bone);
        ik_chain_update(c);
    }
}

void ik_chain_finish(ik_chain *c, ik_vec2 target, int iterations, ik_result *out)
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
#define CHECK_2D(c) \
    if ((c)->dim != 2) return IK_ERR_DIMENSION

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
    CHECK_2D(c);
    *x = c->base_x;
    *y = c->base_y;
    *angle = c->base_angle;
    return IK_OK;
}

ik_status ik_chain2d_set_base(ik_chain *c, ik_real x, ik_real y, ik_real angle)
{
    CHECK_2D(c);
    if (!isfinite(x) || !isfinite(y) || !isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->base_x = x;
    c->base_y = y;
    c->base_angle = ik_wrap_angle(angle);
    mark_stale(c, 0);
    return IK_OK;
}

ik_status ik_chain2d_angle(const ik_chain *c, int bone, ik_real *out)
{
    CHECK_2D(c);
    CHECK_BONE(c, bone);
    *out = c->angle[bone];
    return IK_OK;
}

ik_status ik_chain2d_set_angle(ik_chain *c, int bone, ik_real angle)
{
    CHECK_2D(c);
    CHECK_BONE(c, bone);
    if (!isfinite(angle)) return IK_ERR_NOT_FINITE;
    c->angle[bone] = ik_wrap_angle(angle);
    mark_stale(c, bone);
    return IK_OK;
}

ik_status ik_chain2d_world_angle(ik_chain *c, int bone, ik_real *out)
{
    CHECK_2D(c);
    CHECK_BONE(c, bone);
    ik_chain_update(c);
    *out = c->world[bone];
    return IK_OK;
}

/* ---- settings ---- */

const ik_settings *ik_chain_settings(const ik_chain *c) { return &c->settings; }

ik_status ik_chain_configure(ik_chain *c, const ik_settings *settings)
{
    ik_status st = ik_settings_validate(settings);
    if (st != IK_OK) return st;
    if (settings->solver == IK_SOLVER_TWO_BONE && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    c->settings = *settings;
    c->settings.greed_ramp = settings->greed_ramp != 0;
    return IK_OK;
}

/* ---- solves ---- */

ik_status ik_chain_check_target(const ik_chain *c, const ik_real *target, ik_vec2 *t)
{
    CHECK_2D(c);
    if (!isfinite(target[0]) || !isfinite(target[1])) return IK_ERR_NOT_FINITE;
    *t = ik_v2(target[0], target[1]);
    return IK_OK;
}

typedef void (*solver_fn)(ik_chain *, ik_vec2, ik_result *);

static ik_status run(ik_chain *c, const ik_real *target, ik_result *out, solver_fn solve)
{
    ik_vec2 t;
    ik_status st = ik_chain_check_target(c, target, &t);
    if (st != IK_OK) return st;
    if (solve == ik_two_bone2d && c->n != 2) return IK_ERR_NOT_TWO_BONE;
    ik_chain_update(c);
    solve(c, t, out);
    return IK_OK;
}

ik_status ik_chain_solve_fabrik(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_fabrik2d);
}

ik_status ik_chain_solve_ccd(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_ccd2d);
}

ik_status ik_chain_solve_relax(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_relax2d);
}

ik_status ik_chain_solve_two_bone(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, ik_two_bone2d);
}

static const solver_fn solvers[] = {ik_fabrik2d, ik_ccd2d, ik_relax2d, ik_two_bone2d};

ik_status ik_chain_solve(ik_chain *c, const ik_real *target, ik_result *out)
{
    return run(c, target, out, solvers[c->settings.solver]);
}

ik_status ik_solve_many(ik_chain *const *chains, int count, const ik_real *targets,
                        int *reached_count, int *failed)
{
    int k, reached = 0;
    ik_vec2 t;
    ik_result r;
    for (k = 0; k < count; k++) {
        ik_status st = ik_chain_check_target(chains[k], targets + (size_t)k * 2, &t);
        if (st == IK_OK && chains[k]->dim != chains[0]->dim) st = IK_ERR_DIMENSION;
        if (st != IK_OK) {
            if (failed) *failed = k;
            return st;
        }
    }
    for (k = 0; k < count; k++) {
        ik_chain_solve(chains[k], targets + (size_t)k * 2, &r);
        reached += r.reached;
    }
    if (reached_count) *reached_count = reached;
    return IK_OK;
}
