/*
 * chain_fuzzer.c - libFuzzer harness for the chains of src/ik.h.
 *
 * The input builds up to three chains, 2D or 3D (ik_chainNd_init in memory of exactly the
 * size asked for, or too little, or NULL; or ik_chainNd_create), then calls chain entry
 * points on them -- every one of ik.h's, on chains of either dimension -- with numbers from
 * the input, valid or not (see fuzz.h). An oracle knows ik.h's rules and gives, for every
 * call, the statuses it may return (none: it must return IK_OK). After every call:
 *   - a call that returned an error changed nothing: the chain's memory is byte for byte
 *     what it was (the output arguments too, but solve_many's *failed);
 *   - after IK_OK, what the call must keep is kept (compared through the getters), and
 *     every chain is sound: positions finite (z == 0 in 2D), lengths what was set and kept
 *     by the joints (1e-9), angles in [-pi, pi], rotations unit (1e-9); a solve's result is
 *     consistent (distance finite and the tip's, reached == distance <= tolerance,
 *     iterations within the maximum).
 * And no core call may raise the floating-point invalid flag (see fuzz.h).
 */
#include "fuzzer.h"

#include <limits.h>

#define MAX_BONES 12
#define MAX_CHAINS 3
#define MAX_OPS 200
/* The largest valid iteration count the input may set: more is only slower. */
#define MAX_ITERATIONS 200

#define BIT(status) (1u << (status))

typedef struct slot {
    ik_chain *chain; /* NULL: no chain */
    void *memory; /* the chain's block, for byte snapshots */
    size_t size;
    int created; /* by ik_chainNd_create (free with ik_chain_destroy) */
    int dim, n;
    ik_real lengths[MAX_BONES]; /* as set */
} slot;

static slot slots[MAX_CHAINS];

/* ---- what is observable, in parts ---- */

enum { P_BASE = 1, P_LEN = 2, P_WEIGHT = 4, P_POSE = 8, P_WORLD = 16, P_POS = 32, P_SETTINGS = 64 };
#define P_ALL 127

typedef struct observed {
    ik_real base[7];
    ik_real len[MAX_BONES];
    ik_real weight[MAX_BONES + 1];
    ik_real pose[4 * MAX_BONES];
    ik_real world[4 * MAX_BONES];
    ik_real pos[3 * (MAX_BONES + 1)];
    ik_real settings[10];
} observed;

static void observe(const slot *s, observed *o)
{
    ik_chain *c = s->chain;
    const ik_settings *st = ik_chain_settings(c);
    const ik_real *p;
    int i;
    memset(o, 0, sizeof *o);
    if (s->dim == 2) {
        CHECK(ik_chain2d_base(c, &o->base[0], &o->base[1], &o->base[2]) == IK_OK, "2D base");
    } else {
        CHECK(ik_chain3d_base(c, o->base, o->base + 3) == IK_OK, "3D base");
    }
    for (i = 0; i < s->n; i++) {
        CHECK(ik_chain_length(c, i, &o->len[i]) == IK_OK, "length %d", i);
        if (s->dim == 2) {
            CHECK(ik_chain2d_angle(c, i, &o->pose[i]) == IK_OK, "angle %d", i);
            CHECK(ik_chain2d_world_angle(c, i, &o->world[i]) == IK_OK, "world angle %d", i);
        } else {
            CHECK(ik_chain3d_rotation(c, i, &o->pose[4 * i]) == IK_OK, "rotation %d", i);
            CHECK(ik_chain3d_world_rotation(c, i, &o->world[4 * i]) == IK_OK, "world rotation %d",
                  i);
        }
    }
    for (i = 0; i <= s->n; i++)
        CHECK(ik_chain_weight(c, i, &o->weight[i]) == IK_OK, "weight %d", i);
    p = ik_chain_positions(c);
    for (i = 0; i <= s->n; i++) { /* 3 numbers a joint here; the core keeps dim */
        o->pos[3 * i] = p[s->dim * i], o->pos[3 * i + 1] = p[s->dim * i + 1];
        o->pos[3 * i + 2] = s->dim == 3 ? p[s->dim * i + 2] : 0;
    }
    o->settings[0] = st->solver, o->settings[1] = st->iterations, o->settings[2] = st->tolerance;
    o->settings[3] = st->greed, o->settings[4] = st->greed_ramp, o->settings[5] = st->bend;
    o->settings[6] = st->use_pole;
    o->settings[7] = st->pole[0], o->settings[8] = st->pole[1], o->settings[9] = st->pole[2];
}

/* Bitwise: -0 and +0 differ. */
static void check_kept(const observed *a, const observed *b, int parts, const char *what)
{
    CHECK(!(parts & P_BASE) || memcmp(a->base, b->base, sizeof a->base) == 0, "%s moved the base",
          what);
    CHECK(!(parts & P_LEN) || memcmp(a->len, b->len, sizeof a->len) == 0, "%s changed a length",
          what);
    CHECK(!(parts & P_WEIGHT) || memcmp(a->weight, b->weight, sizeof a->weight) == 0,
          "%s changed a weight", what);
    CHECK(!(parts & P_POSE) || memcmp(a->pose, b->pose, sizeof a->pose) == 0, "%s changed the pose",
          what);
    CHECK(!(parts & P_WORLD) || memcmp(a->world, b->world, sizeof a->world) == 0,
          "%s changed the world pose", what);
    CHECK(!(parts & P_POS) || memcmp(a->pos, b->pos, sizeof a->pos) == 0, "%s moved a joint", what);
    CHECK(!(parts & P_SETTINGS) || memcmp(a->settings, b->settings, sizeof a->settings) == 0,
          "%s changed the settings", what);
}

/* The chain is sound; see the top of the file. */
static void check_sound(const slot *s, const char *what)
{
    observed o;
    int i, k;
    CHECK(ik_chain_count(s->chain) == s->n && ik_chain_dim(s->chain) == s->dim, "%s: count or dim",
          what);
    observe(s, &o);
    for (k = 0; k < 3 * (s->n + 1); k++) {
        CHECK(isfinite(o.pos[k]), "%s: position value %d is %g", what, k, o.pos[k]);
        CHECK(s->dim == 3 || k % 3 != 2 || o.pos[k] == 0, "%s: a 2D joint has z = %g", what,
              o.pos[k]);
    }
    for (k = 0; k < 7; k++)
        CHECK(isfinite(o.base[k]), "%s: base value %d is %g", what, k, o.base[k]);
    if (s->dim == 3) CHECK(is_unit(o.base + 3), "%s: the base rotation is not unit", what);
    for (i = 0; i < s->n; i++) {
        const ik_real *a = &o.pos[3 * i], *b = &o.pos[3 * i + 3];
        ik_real scale = fmax(fmax(fmax(fabs(a[0]), fabs(a[1])), fmax(fabs(a[2]), fabs(b[0]))),
                             fmax(fabs(b[1]), fabs(b[2])));
        ik_real half = half_norm(b[0] - a[0], b[1] - a[1], b[2] - a[2]);
        CHECK(memcmp(&o.len[i], &s->lengths[i], sizeof(ik_real)) == 0,
              "%s: length %d is %.17g, was set to %.17g", what, i, o.len[i], s->lengths[i]);
        CHECK(near_length(half, o.len[i] * 0.5, scale * 0.5),
              "%s: bone %d's joints are %.17g apart, its length is %.17g", what, i, 2 * half,
              o.len[i]);
        if (s->dim == 2) {
            CHECK(isfinite(o.pose[i]) && fabs(o.pose[i]) <= 3.14159265358979323846,
                  "%s: angle %d is %g", what, i, o.pose[i]);
            CHECK(isfinite(o.world[i]) && fabs(o.world[i]) <= 3.14159265358979323846,
                  "%s: world angle %d is %g", what, i, o.world[i]);
        } else {
            CHECK(is_unit(&o.pose[4 * i]), "%s: rotation %d is not unit", what, i);
            CHECK(is_unit(&o.world[4 * i]), "%s: world rotation %d is not unit", what, i);
        }
    }
}

/* ---- building ---- */

static void release(slot *s)
{
    if (s->chain == NULL) return;
    if (s->created)
        ik_chain_destroy(s->chain);
    else
        free(s->memory);
    memset(s, 0, sizeof *s);
}

/* A bone count: mostly 1..MAX_BONES, sometimes one the core must refuse before it reads. */
static int take_count(reader *r)
{
    static const int bad[] = {0, -1, INT_MIN, IK_MAX_BONES + 1, INT_MAX};
    uint8_t v = take_u8(r);
    if (v < 240) return 1 + v % MAX_BONES;
    return bad[v % 5];
}

static unsigned length_errors(ik_real v)
{
    if (!isfinite(v)) return BIT(IK_ERR_NOT_FINITE);
    if (v < 0) return BIT(IK_ERR_NEGATIVE);
    return v > IK_MAX_COORD ? BIT(IK_ERR_RANGE) : 0;
}

static void build(slot *s, reader *r)
{
    int dim = 2 + (take_u8(r) & 1), n = take_count(r), k, valid_n = n >= 1 && n <= MAX_BONES;
    uint8_t how = take_u8(r);
    /* exactly n lengths on the heap, so reading one more is an error the sanitizer sees */
    ik_real *lengths = (ik_real *)malloc(sizeof(ik_real) * (size_t)(valid_n ? n : 1));
    unsigned expect = 0;
    size_t size = dim == 2 ? ik_chain2d_size(n) : ik_chain3d_size(n), given = size;
    ik_chain *chain = NULL;
    void *memory = NULL;
    ik_status st = IK_OK;

    lengths[0] = 1;
    for (k = 0; valid_n && k < n; k++) {
        lengths[k] = take_length(r);
        expect |= length_errors(lengths[k]);
    }
    CHECK((size == 0) == (n < 1 || n > IK_MAX_BONES), "size %zu for %d bones", size, n);
    if (n < 1)
        expect = BIT(IK_ERR_COUNT);
    else if (n > IK_MAX_BONES)
        expect = BIT(IK_ERR_TOO_LARGE);

    if (how & 1) {
        ik_status *status = (how & 2) ? &st : NULL; /* the status pointer is optional */
        chain = dim == 2 ? ik_chain2d_create(n, lengths, status)
                         : ik_chain3d_create(n, lengths, status);
        CHECK((chain == NULL) == (expect != 0), "create: %s, expected %#x",
              chain ? "built" : "refused", expect);
        CHECK(status == NULL || (chain ? st == IK_OK : (BIT(st) & expect) != 0),
              "create: status %d, expected %#x", st, expect);
        memory = chain; /* the block starts at the chain: ik_chain_destroy frees that pointer */
    } else {
        /* exact size, one byte too few, or no memory at all */
        ik_chain *sentinel = (ik_chain *)&slots; /* a failed init must not touch *out */
        if ((how & 6) == 2 && size > 0) given = size - 1;
        if ((how & 6) != 4 && size > 0) memory = malloc(given);
        if (memory == NULL || given < size)
            expect |= n >= 1 && n <= IK_MAX_BONES ? BIT(IK_ERR_TOO_LARGE) : 0;
        chain = sentinel;
        st = CORE(dim == 2 ? ik_chain2d_init(memory, given, n, lengths, &chain)
                           : ik_chain3d_init(memory, given, n, lengths, &chain));
        CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK, "init: status %d, expected %#x", st,
              expect);
        CHECK(st == IK_OK || chain == sentinel, "init failed but set *out");
        if (st != IK_OK) {
            free(memory);
            memory = NULL;
            chain = NULL;
        }
    }
    memset(s, 0, sizeof *s);
    if (chain) {
        s->chain = chain;
        s->memory = memory;
        s->size = given;
        s->created = how & 1;
        s->dim = dim;
        s->n = n;
        for (k = 0; k < n; k++) s->lengths[k] = lengths[k] + 0.0; /* -0 is stored as +0 */
        check_sound(s, "a new chain");
    }
    free(lengths);
}

/* ---- arguments ---- */

/* An index: mostly in 0..count-1, sometimes just past it or far out. */
static int take_index(reader *r, int count)
{
    static const int bad[] = {-1, INT_MIN, INT_MAX};
    uint8_t v = take_u8(r);
    if (v < 232) return v % count;
    v %= 4;
    return v == 3 ? count : bad[v];
}

static unsigned index_errors(int i, int count)
{
    return i < 0 || i >= count ? BIT(IK_ERR_INDEX) : 0;
}

static unsigned coord_errors(const ik_real *v, int count)
{
    int k;
    unsigned e = 0;
    for (k = 0; k < count; k++) {
        if (!isfinite(v[k])) return BIT(IK_ERR_NOT_FINITE);
        if (fabs(v[k]) > IK_MAX_COORD) e = BIT(IK_ERR_RANGE);
    }
    return e;
}

/* Joint j of the slot's chain as 3 numbers (z = 0 in 2D). */
static void joint3(const slot *s, int j, ik_real out[3])
{
    const ik_real *p = ik_chain_positions(s->chain) + s->dim * j;
    out[0] = p[0], out[1] = p[1], out[2] = s->dim == 3 ? p[2] : 0;
}

/* A target: often exactly a joint of the chain or a point on a bone's line, else numbers. */
static void take_target(reader *r, const slot *s, ik_real t[3])
{
    uint8_t how = take_u8(r);
    if (how < 64) {
        joint3(s, how % (s->n + 1), t);
    } else if (how < 96) {
        int j = how % s->n;
        ik_real f = take_real(r), a[3], b[3];
        int k;
        joint3(s, j, a);
        joint3(s, j + 1, b);
        for (k = 0; k < 3; k++) t[k] = a[k] + (b[k] - a[k]) * f;
    } else {
        t[0] = take_real(r), t[1] = take_real(r), t[2] = take_real(r);
    }
}

static unsigned quat_errors(const ik_real q[4])
{
    int k;
    for (k = 0; k < 4; k++)
        if (!isfinite(q[k])) return BIT(IK_ERR_NOT_FINITE);
    return q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0 ? BIT(IK_ERR_ZERO_ROTATION) : 0;
}

static ik_settings take_settings(reader *r, const ik_settings *current)
{
    ik_settings s = *current;
    uint8_t fields = take_u8(r);
    if (fields & 1) s.solver = (ik_solver)((int)(take_u8(r) % 7) - 1);
    if (fields & 2) {
        static const int bad[] = {0, -1, INT_MIN};
        uint8_t v = take_u8(r);
        s.iterations = v < 240 ? 1 + v % MAX_ITERATIONS : bad[v % 3];
    }
    if (fields & 4) s.tolerance = take_real(r);
    if (fields & 8) s.greed = take_u8(r) < 128 ? (take_u8(r) + 1) / 256.0 : take_real(r);
    if (fields & 16) s.greed_ramp = (int)take_u8(r) - 128;
    if (fields & 32) s.bend = (int)(take_u8(r) % 5) - 2;
    if (fields & 64) s.use_pole = take_u8(r) % 3;
    if (fields & 128) s.pole[0] = take_real(r), s.pole[1] = take_real(r), s.pole[2] = take_real(r);
    return s;
}

static unsigned settings_errors(const ik_settings *s, const slot *c)
{
    unsigned e = 0;
    if (s->iterations < 1) e |= BIT(IK_ERR_ITERATIONS);
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) e |= BIT(IK_ERR_TOLERANCE);
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) e |= BIT(IK_ERR_GREED);
    if (s->bend != 1 && s->bend != -1) e |= BIT(IK_ERR_BEND);
    if ((int)s->solver < 0 || (int)s->solver > (int)IK_SOLVER_AIM) e |= BIT(IK_ERR_SOLVER);
    if (s->use_pole) {
        int zero = s->pole[0] == 0 && s->pole[1] == 0 && s->pole[2] == 0;
        if (!isfinite(s->pole[0]) || !isfinite(s->pole[1]) || !isfinite(s->pole[2]) || zero)
            e |= BIT(IK_ERR_POLE);
    }
    if (e) return e; /* the chain's own rules come after validation */
    /* two_bone: 2 bones, or 3 for an orientation goal (checked when solving) */
    if (s->solver == IK_SOLVER_TWO_BONE && c->n != 2 && c->n != 3) e |= BIT(IK_ERR_NOT_TWO_BONE);
    if (s->use_pole && c->dim != 3) e |= BIT(IK_ERR_POLE);
    return e;
}

/* ---- the operations ---- */

enum {
    OP_COUNT,
    OP_POSITIONS,
    OP_LENGTH,
    OP_SET_LENGTH,
    OP_WEIGHT,
    OP_SET_WEIGHT,
    OP_BASE2,
    OP_SET_BASE2,
    OP_ANGLE,
    OP_SET_ANGLE,
    OP_WORLD_ANGLE,
    OP_BASE3,
    OP_SET_BASE3,
    OP_ROTATION,
    OP_SET_ROTATION,
    OP_WORLD_ROTATION,
    OP_CONFIGURE,
    OP_SOLVE,
    OP_SOLVE_FABRIK,
    OP_SOLVE_CCD,
    OP_SOLVE_RELAX,
    OP_SOLVE_TWO_BONE,
    OP_SOLVE_MANY,
    OP_REBUILD,
    OP_COUNT_OF_OPS
};

typedef ik_status (*solve_fn)(ik_chain *, const ik_real *, ik_result *);

#define IK_PI_FUZZ 3.14159265358979323847

static void check_result(const slot *s, const ik_real *target, const ik_result *res, int two_bone,
                         int aim, const char *what)
{
    const ik_settings *st = ik_chain_settings(s->chain);
    ik_real tip[3];
    ik_real tz = s->dim == 3 ? target[2] : 0, scale, half;
    joint3(s, s->n, tip);
    scale = fmax(fmax(fabs(target[0]), fabs(target[1])),
                         fmax(fmax(fabs(tip[0]), fabs(tip[1])), fmax(fabs(tz), fabs(tip[2]))));
    half = half_norm(target[0] - tip[0], target[1] - tip[1], tz - tip[2]);
    CHECK(isfinite(res->distance) && res->distance >= 0, "%s: distance %g", what, res->distance);
    if (aim) {
        /* aiming: the distance is the angle between the tip bone and the target */
        CHECK(res->distance == res->angle_error && res->angle_error <= IK_PI_FUZZ,
              "%s: aim error %g", what, res->angle_error);
        CHECK(res->reached == (res->angle_error <= st->angle_tolerance), "%s: aim reached", what);
        return;
    }
    CHECK(res->reached == (res->distance <= st->tolerance),
          "%s: reached %d, distance %g, tolerance %g", what, res->reached, res->distance,
          st->tolerance);
    CHECK(two_bone ? res->iterations == 1
                   : res->iterations >= 0 && res->iterations <= st->iterations,
          "%s: %d iterations of %d", what, res->iterations, st->iterations);
    CHECK(fabs(half - res->distance * 0.5) <= 1e-12 * half + 1e-15 * scale + 1e-320,
          "%s: distance %.17g, but the tip is %.17g from the target", what, res->distance,
          2 * half);
}

static void solve_many(reader *r)
{
    ik_chain *chains[4];
    slot *of[4];
    ik_real targets[12];
    void *raw[4] = {NULL, NULL, NULL, NULL};
    observed seen[4];
    int count = take_u8(r) % 5, k, d, reached = -7, failed = -7, want_failed = -1, dim = 0;
    unsigned expect = 0;
    ik_status st;
    for (k = 0; k < count; k++) {
        of[k] = &slots[take_u8(r) % MAX_CHAINS];
        if (of[k]->chain == NULL) of[k] = &slots[0];
        chains[k] = of[k]->chain;
        if (k == 0) dim = of[k]->dim;
        take_target(r, of[k], &targets[3 * k]);
    }
    /* the targets are packed: dim numbers each, dim of the first chain */
    for (k = 0; k < count; k++)
        for (d = 0; d < dim; d++) targets[k * dim + d] = targets[3 * k + d];
    for (k = 0; k < count && want_failed < 0; k++) {
        unsigned e =
            of[k]->dim != dim ? BIT(IK_ERR_DIMENSION) : coord_errors(&targets[k * dim], dim);
        if (e) want_failed = k, expect = e;
    }
    for (k = 0; k < count; k++) {
        observe(of[k], &seen[k]);
        raw[k] = malloc(of[k]->size);
        memcpy(raw[k], of[k]->memory, of[k]->size);
    }
    st = CORE(
        ik_solve_many(count ? chains : NULL, count, count ? targets : NULL, &reached, NULL, &failed));
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "solve_many: status %d, expected %#x", st, expect);
        CHECK(failed == want_failed, "solve_many: failed is %d, chain %d is the bad one", failed,
              want_failed);
        CHECK(reached == -7, "solve_many: an error set reached_count");
        for (k = 0; k < count; k++) {
            observed now;
            CHECK(memcmp(raw[k], of[k]->memory, of[k]->size) == 0,
                  "solve_many: an error changed chain %d", k);
            observe(of[k], &now);
            check_kept(&seen[k], &now, P_ALL, "a rejected solve_many");
        }
    } else {
        CHECK(st == IK_OK, "solve_many: status %d, expected IK_OK", st);
        CHECK(failed == -7, "solve_many: success set failed");
        CHECK(reached >= 0 && reached <= count, "solve_many: reached_count %d of %d", reached,
              count);
        for (k = 0; k < count; k++) {
            observed now;
            check_sound(of[k], "after solve_many");
            observe(of[k], &now);
            check_kept(&seen[k], &now, P_BASE | P_LEN | P_WEIGHT | P_SETTINGS, "solve_many");
        }
    }
    for (k = 0; k < count; k++) free(raw[k]);
}

/* One operation on slot s, checked. */
static void operate(reader *r, slot *s)
{
    int op = take_u8(r) % OP_COUNT_OF_OPS, i, keep = P_ALL, two_bone = 0;
    unsigned expect = 0;
    ik_status st = IK_OK;
    ik_real v[4], out[8], sentinel[8], target[3];
    ik_result res;
    observed seen, now;
    unsigned char *raw;
    const char *what = "?";
    solve_fn solve = NULL;
    ik_chain *c = s->chain;

    if (op == OP_SOLVE_MANY) {
        solve_many(r);
        return;
    }
    if (op == OP_REBUILD) {
        release(s);
        build(s, r);
        return;
    }
    memset(out, 0xa5, sizeof out);
    memcpy(sentinel, out, sizeof out);
    memset(&res, 0xa5, sizeof res);
    observe(s, &seen);
    raw = (unsigned char *)malloc(s->size);
    memcpy(raw, s->memory, s->size);

    switch (op) {
    case OP_COUNT:
        what = "count";
        CHECK(ik_chain_count(c) == s->n && ik_chain_dim(c) == s->dim, "count or dim");
        break;
    case OP_POSITIONS:
        what = "positions";
        CHECK(ik_chain_positions(c) == ik_chain_positions(c), "positions moved");
        break;
    case OP_LENGTH:
        what = "length";
        i = take_index(r, s->n);
        expect = index_errors(i, s->n);
        st = CORE(ik_chain_length(c, i, out));
        if (st == IK_OK) CHECK(memcmp(out, &s->lengths[i], sizeof(ik_real)) == 0, "length %d", i);
        break;
    case OP_SET_LENGTH:
        what = "set_length";
        i = take_index(r, s->n);
        v[0] = take_length(r);
        expect = index_errors(i, s->n) | length_errors(v[0]);
        keep = P_BASE | P_WEIGHT | P_POSE | P_SETTINGS;
        st = CORE(ik_chain_set_length(c, i, v[0]));
        if (st == IK_OK) s->lengths[i] = v[0] + 0.0;
        break;
    case OP_WEIGHT:
        what = "weight";
        i = take_index(r, s->n + 1);
        expect = index_errors(i, s->n + 1);
        st = CORE(ik_chain_weight(c, i, out));
        break;
    case OP_SET_WEIGHT:
        what = "set_weight";
        i = take_index(r, s->n + 1);
        v[0] = take_u8(r) < 128 ? take_u8(r) / 16.0 : take_real(r);
        expect = index_errors(i, s->n + 1);
        if (!isfinite(v[0]))
            expect |= BIT(IK_ERR_NOT_FINITE);
        else if (v[0] < 0)
            expect |= BIT(IK_ERR_NEGATIVE);
        keep = P_ALL & ~P_WEIGHT;
        st = CORE(ik_chain_set_weight(c, i, v[0]));
        break;
    case OP_BASE2:
        what = "2D base";
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : 0;
        st = CORE(ik_chain2d_base(c, &out[0], &out[1], &out[2]));
        break;
    case OP_SET_BASE2:
        what = "2D set_base";
        v[0] = take_real(r), v[1] = take_real(r), v[2] = take_real(r);
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION)
                             : coord_errors(v, 2) | (isfinite(v[2]) ? 0 : BIT(IK_ERR_NOT_FINITE));
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS;
        st = CORE(ik_chain2d_set_base(c, v[0], v[1], v[2]));
        break;
    case OP_ANGLE:
    case OP_WORLD_ANGLE:
        what = op == OP_ANGLE ? "angle" : "world angle";
        i = take_index(r, s->n);
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        st = CORE(op == OP_ANGLE ? ik_chain2d_angle(c, i, out) : ik_chain2d_world_angle(c, i, out));
        break;
    case OP_SET_ANGLE:
        what = "set_angle";
        i = take_index(r, s->n);
        v[0] = take_real(r);
        expect = s->dim != 2
                     ? BIT(IK_ERR_DIMENSION)
                     : index_errors(i, s->n) | (isfinite(v[0]) ? 0 : BIT(IK_ERR_NOT_FINITE));
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS;
        st = CORE(ik_chain2d_set_angle(c, i, v[0]));
        break;
    case OP_BASE3:
        what = "3D base";
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : 0;
        st = CORE(ik_chain3d_base(c, out, out + 3));
        break;
    case OP_SET_BASE3: {
        ik_real position[3], q[4];
        int with_rotation = take_u8(r) & 1;
        what = "3D set_base";
        for (i = 0; i < 3; i++) position[i] = take_real(r);
        for (i = 0; i < 4; i++) q[i] = take_real(r);
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : coord_errors(position, 3);
        if (s->dim == 3 && !expect && with_rotation) expect = quat_errors(q);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS;
        st = CORE(ik_chain3d_set_base(c, position, with_rotation ? q : NULL));
        break;
    }
    case OP_ROTATION:
    case OP_WORLD_ROTATION:
        what = op == OP_ROTATION ? "rotation" : "world rotation";
        i = take_index(r, s->n);
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        st = CORE(op == OP_ROTATION ? ik_chain3d_rotation(c, i, out)
                                    : ik_chain3d_world_rotation(c, i, out));
        if (st == IK_OK) CHECK(is_unit(out), "%s %d is not unit", what, i);
        break;
    case OP_SET_ROTATION:
        what = "set_rotation";
        i = take_index(r, s->n);
        v[0] = take_real(r), v[1] = take_real(r), v[2] = take_real(r), v[3] = take_real(r);
        expect = s->dim != 3             ? BIT(IK_ERR_DIMENSION)
                 : index_errors(i, s->n) ? BIT(IK_ERR_INDEX)
                                         : quat_errors(v);
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS;
        st = CORE(ik_chain3d_set_rotation(c, i, v));
        break;
    case OP_CONFIGURE: {
        ik_settings want = take_settings(r, ik_chain_settings(c));
        what = "configure";
        expect = settings_errors(&want, s);
        keep = P_ALL & ~P_SETTINGS;
        st = CORE(ik_chain_configure(c, &want));
        if (st == IK_OK) {
            const ik_settings *got = ik_chain_settings(c);
            CHECK(got->solver == want.solver && got->iterations == want.iterations &&
                      got->tolerance == want.tolerance && /* -0 is kept as +0 */
                      memcmp(&got->greed, &want.greed, sizeof want.greed) == 0 &&
                      got->greed_ramp == (want.greed_ramp != 0) && got->bend == want.bend &&
                      got->use_pole == (want.use_pole != 0),
                  "configure stored other settings");
        }
        break;
    }
    case OP_SOLVE: solve = ik_chain_solve, what = "solve"; break;
    case OP_SOLVE_FABRIK: solve = ik_chain_solve_fabrik, what = "solve_fabrik"; break;
    case OP_SOLVE_CCD: solve = ik_chain_solve_ccd, what = "solve_ccd"; break;
    case OP_SOLVE_RELAX: solve = ik_chain_solve_relax, what = "solve_relax"; break;
    case OP_SOLVE_TWO_BONE: solve = ik_chain_solve_two_bone, what = "solve_two_bone"; break;
    }
    if (solve) {
        take_target(r, s, target);
        expect = coord_errors(target, s->dim);
        two_bone = solve == ik_chain_solve_two_bone ||
                   (solve == ik_chain_solve && ik_chain_settings(c)->solver == IK_SOLVER_TWO_BONE);
        if (!expect && two_bone && s->n != 2) expect = BIT(IK_ERR_NOT_TWO_BONE);
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS;
        st = CORE(solve(c, target, &res));
    }

    if (expect) {
        CHECK((BIT(st) & expect) != 0, "%s: status %d, expected one of %#x", what, st, expect);
        CHECK(memcmp(raw, s->memory, s->size) == 0, "%s: a rejected call changed the chain", what);
        CHECK(memcmp(out, sentinel, sizeof out) == 0, "%s: a rejected call wrote its output", what);
        keep = P_ALL;
    } else {
        CHECK(st == IK_OK, "%s: status %d, expected IK_OK", what, st);
        if (solve)
            check_result(s, target, &res, two_bone,
                         solve == ik_chain_solve && ik_chain_settings(c)->solver == IK_SOLVER_AIM,
                         what);
        for (i = 0; i < 8; i++)
            CHECK(memcmp(&out[i], &sentinel[i], sizeof(ik_real)) == 0 || isfinite(out[i]),
                  "%s: output %d is %g", what, i, out[i]);
    }
    observe(s, &now);
    check_kept(&seen, &now, keep, what);
    check_sound(s, what);
    free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r;
    int count, k, ops;
    r.p = data, r.n = size;
    count = 1 + take_u8(&r) % MAX_CHAINS;
    for (k = 0; k < count; k++) build(&slots[k], &r);
    /* operations need a chain in slot 0: a refused first build ends the input */
    for (ops = 0; ops < MAX_OPS && r.n > 0 && slots[0].chain; ops++) {
        slot *s = &slots[take_u8(&r) % count];
        if (s->chain == NULL) s = &slots[0];
        operate(&r, s);
        if (slots[0].chain == NULL) break;
    }
    for (k = 0; k < MAX_CHAINS; k++) release(&slots[k]);
    return 0;
}
