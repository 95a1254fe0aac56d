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
 *     every chain is sound: positions finite (z == 0 in 2D), lengths what was set, times
 *     the stretch factor, kept by the joints (1e-9), angles in [-pi, pi], rotations unit
 *     (1e-9), every bone's world angle or rotation pointing where its joints show (1e-9),
 *     an attached chain's base on its parent's joint, and once a solve or set_points has
 *     brought the pose within the limits, every bone within them (1e-9); a solve's result
 *     is consistent (distance finite and the tip's, reached == distance <= tolerance and
 *     angle_error <= angle_tolerance, iterations within the maximum and IK_MAX_ITERATIONS);
 *     mix 0 keeps the pose
 *     to the bit and no bone turns by more than max_turn (from a pose within the limits,
 *     which win over both).
 * The chains may hang on each other (attach, detach, copy keep a tree): a slot released
 * detaches its children first.
 * And no core call may raise the floating-point invalid flag (see fuzz.h).
 */
#include "chain_checks.h"

#define MAX_CHAINS 3
#define MAX_OPS 200

static slot slots[MAX_CHAINS];
static int trace; /* IK_FUZZ_TRACE=1: each operation on stderr */

/* ---- building ---- */

/* Frees slot s's chain: its children are detached first (a parent outlives its children). */
static void release(slot *s)
{
    int k;
    if (s->chain == NULL) return;
    for (k = 0; k < MAX_CHAINS; k++)
        if (slots[k].chain && &slots[k] != s && ik_chain_parent(slots[k].chain, NULL) == s->chain)
            CORE_VOID(ik_chain_detach(slots[k].chain));
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

static void build(slot *s, reader *r)
{
    int dim = 2 + (take_u8(r) & 1), n = take_count(r), k, valid_n = n >= 1 && n <= MAX_BONES;
    uint8_t how = take_u8(r);
    /* exactly n lengths on the heap, so reading one more is an error the sanitizer sees */
    ik_real *lengths = (ik_real *)malloc(sizeof(ik_real) * (size_t)(valid_n ? n : 1));
    errset expect = 0;
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
        CHECK((chain == NULL) == (expect != 0), "create: %s, expected %#llx",
              chain ? "built" : "refused", expect);
        CHECK(status == NULL || (chain ? st == IK_OK : (BIT(st) & expect) != 0),
              "create: status %d, expected %#llx", st, expect);
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
        CHECK(expect ? (BIT(st) & expect) != 0 : st == IK_OK, "init: status %d, expected %#llx", st,
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

static slot *slot_of(const ik_chain *c)
{
    int k;
    for (k = 0; k < MAX_CHAINS; k++)
        if (c && slots[k].chain == c) return &slots[k];
    return NULL;
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
    OP_SOLVE_AIM,
    OP_SOLVE_MANY,
    OP_REBUILD,
    OP_SET_LIMIT2,
    OP_LIMIT2,
    OP_SET_HINGE,
    OP_SET_CONE,
    OP_SET_TWIST,
    OP_LIMIT3,
    OP_CLEAR_LIMIT,
    OP_SET_POINTS,
    OP_SET_TARGET,
    OP_TARGET,
    OP_SET_TARGET_ANGLE,
    OP_TARGET_ANGLE,
    OP_SET_TARGET_ROTATION,
    OP_TARGET_ROTATION,
    OP_CLEAR_TARGET,
    OP_ATTACH,
    OP_DETACH,
    OP_PARENT,
    OP_COPY,
    OP_CHECK,
    OP_UPDATE,
    OP_REACH,
    OP_DRAG,
    OP_SIMULATE,
    OP_SET_REST,
    OP_GAIT,
    OP_COUNT_OF_OPS
};

typedef ik_status (*solve_fn)(ik_chain *, const ik_real *, ik_result *);

#define IK_PI_FUZZ 3.14159265358979323847

/* target: the one the solve was given, or the kept one. */
static void check_result(const slot *s, const ik_real *target, const ik_result *res, int two_bone,
                         int aim, const char *what)
{
    const ik_settings *st = ik_chain_settings(s->chain);
    ik_real tip[3];
    ik_real tz = s->dim == 3 ? target[2] : 0, scale, half;
    int oriented = !aim && has_orientation(s);
    joint3(s, s->n, tip);
    scale = fmax(fmax(fabs(target[0]), fabs(target[1])),
                 fmax(fmax(fabs(tip[0]), fabs(tip[1])), fmax(fabs(tz), fabs(tip[2]))));
    half = half_norm(target[0] - tip[0], target[1] - tip[1], tz - tip[2]);
    CHECK(isfinite(res->distance) && res->distance >= 0, "%s: distance %g", what, res->distance);
    CHECK(res->angle_error >= 0 && res->angle_error <= IK_PI_FUZZ, "%s: angle error %g", what,
          res->angle_error);
    if (aim) {
        /* aiming: the distance is the angle between the tip bone and the target */
        CHECK(res->distance == res->angle_error, "%s: aim error %g", what, res->angle_error);
        CHECK(res->reached == (res->angle_error <= st->angle_tolerance), "%s: aim reached", what);
        CHECK(res->iterations >= 0 && res->iterations <= st->iterations &&
                  res->iterations <= IK_MAX_ITERATIONS,
              "%s: %d iterations of %d", what, res->iterations, st->iterations);
        return;
    }
    CHECK(oriented || res->angle_error == 0, "%s: angle error %g without an orientation goal", what,
          res->angle_error);
    CHECK(res->reached == (res->distance <= st->tolerance &&
                           (!oriented || res->angle_error <= st->angle_tolerance)),
          "%s: reached %d, distance %g, tolerance %g, angle error %g", what, res->reached,
          res->distance, st->tolerance, res->angle_error);
    CHECK(two_bone ? res->iterations >= 0 && res->iterations <= 1
                   : res->iterations >= 0 && res->iterations <= st->iterations &&
                         res->iterations <= IK_MAX_ITERATIONS,
          "%s: %d iterations of %d", what, res->iterations, st->iterations);
    CHECK(fabs(half - res->distance * 0.5) <= 1e-12 * half + 1e-15 * scale + 1e-320,
          "%s: distance %.17g, but the tip is %.17g from the target", what, res->distance,
          2 * half);
}

/* After a solve of slot s (IK_OK) from the pose `before`: what mix and max_turn promise. */
static void check_solved(slot *s, const observed *before, const char *what)
{
    const ik_settings *st = ik_chain_settings(s->chain);
    observed now;
    int i;
    observe(s, &now);
    if (trace) {
        fprintf(stderr, "  solver %d mix %.17g max_turn %.17g stretch %d escape %d in_limits %d\n",
                st->solver, st->mix, st->max_turn, st->stretch, st->escape, s->in_limits);
        for (i = 0; i < s->n * (s->dim == 2 ? 1 : 4); i++)
            if (memcmp(&now.pose[i], &before->pose[i], sizeof(ik_real)) != 0)
                fprintf(stderr, "  pose[%d] %.17g -> %.17g\n", i, before->pose[i], now.pose[i]);
    }
    /* the limits win over mix and max_turn: only from a pose within them */
    if (s->in_limits && st->mix == 0 && !st->stretch)
        check_kept(before, &now, P_POSE, "a solve with mix 0");
    if (s->in_limits && st->max_turn < INFINITY)
        for (i = 0; i < s->n; i++) {
            ik_real turn = s->dim == 2 ? fabs(wrap_pi(now.pose[i] - before->pose[i]))
                                       : quat_turn(&before->pose[4 * i], &now.pose[4 * i]);
            CHECK(turn <= st->max_turn * (1 + 1e-9) + 1e-9,
                  "%s: bone %d turned by %.17g, max_turn %.17g", what, i, turn, st->max_turn);
        }
    s->in_limits = 1;
}

static void solve_many(reader *r)
{
    ik_chain *chains[4];
    slot *of[4];
    ik_real targets[12];
    void *raw[4] = {NULL, NULL, NULL, NULL};
    observed seen[4];
    int count = take_u8(r) % 5, k, d, reached = -7, failed = -7, want_failed = -1, dim = 0;
    int kept = take_u8(r) < 64; /* targets NULL: each towards its kept goal */
    errset expect = 0;
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
        errset e = of[k]->dim != dim ? BIT(IK_ERR_DIMENSION)
                                       : solve_errors(of[k], ik_chain_settings(chains[k])->solver,
                                                      kept ? NULL : &targets[k * dim]);
        if (e) want_failed = k, expect = e;
    }
    for (k = 0; k < count; k++) {
        observe(of[k], &seen[k]);
        raw[k] = malloc(of[k]->size);
        memcpy(raw[k], of[k]->memory, of[k]->size);
    }
    st = CORE(ik_solve_many(count ? chains : NULL, count, count && !kept ? targets : NULL, &reached,
                            NULL, &failed));
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "solve_many: status %d, expected %#llx", st, expect);
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
            of[k]->in_limits = 1;
            check_sound(of[k], "after solve_many");
            observe(of[k], &now);
            check_kept(&seen[k], &now, P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_PARENT,
                       "solve_many");
        }
    }
    for (k = 0; k < count; k++) free(raw[k]);
}

/* The ground of a gait: heights from the input, sometimes none (the update then fails). */
typedef struct fuzz_ground {
    reader *r;
    int calls;
} fuzz_ground;

static int fuzz_ground_at(void *user, ik_real x, ik_real z, ik_real *y)
{
    fuzz_ground *g = (fuzz_ground *)user;
    uint8_t how = take_u8(g->r);
    (void)z;
    g->calls++;
    if (how == 255) return 0;
    *y = how < 200 ? sin(x) * (how / 100.0) : take_real(g->r);
    return 1;
}

/*
 * A gait over s and up to two other chains as legs, with options from the input, updated a
 * few times: each update fails as the oracle says and then changes nothing, or succeeds
 * with every foot finite, planted feet still, and every leg's goal on its foot.
 */
static void gait_op(reader *r, slot *s)
{
    ik_chain *legs[3];
    slot *of[3];
    int count = 1, k, groups[3], use_groups, step;
    ik_gait_options o = ik_gait_default_options(take_u8(r) < 200 ? 0.05 + take_u8(r) / 64.0 : take_real(r));
    fuzz_ground ground;
    errset expect = 0;
    ik_status st;
    ik_gait *gait = NULL;
    void *memory;
    uint8_t how = take_u8(r);
    legs[0] = s->chain, of[0] = s;
    for (k = 1; k < 3 && (how >> k & 1); k++) {
        slot *t = &slots[take_u8(r) % MAX_CHAINS];
        if (t->chain == NULL) continue;
        of[count] = t, legs[count++] = t->chain;
    }
    if (how & 8) o.step_time = take_u8(r) < 200 ? 0.01 + take_u8(r) / 100.0 : take_real(r);
    if (how & 16) o.lift = take_u8(r) < 200 ? take_u8(r) / 100.0 : take_real(r);
    if (how & 32) o.lead = take_u8(r) < 200 ? take_u8(r) / 100.0 : take_real(r);
    if (how & 64) o.max_groups = (int)(take_u8(r) % 4) - 1, o.up = (int)(take_u8(r) % 4) - 2;
    ground.r = r, ground.calls = 0;
    if (how & 128) o.ground = fuzz_ground_at, o.user = &ground;
    use_groups = take_u8(r) & 1;
    for (k = 0; k < count; k++) groups[k] = use_groups ? (int)(take_u8(r) % 3) : k;
    /* the oracle, in ik_gait_init's order */
    expect = validate_gait(&o);
    for (k = 0; k < count && !expect; k++) {
        int j;
        if (ik_chain_dim(legs[k]) != ik_chain_dim(legs[0])) expect = BIT(IK_ERR_DIMENSION);
        for (j = 0; j < k && !expect; j++)
            if (legs[j] == legs[k]) expect = BIT(IK_ERR_GROUPS);
        if (!expect && use_groups && groups[k] >= count) expect = BIT(IK_ERR_GROUPS);
    }
    if (!expect && use_groups) {
        int most = -1, j;
        for (k = 0; k < count; k++) most = groups[k] > most ? groups[k] : most;
        for (j = 0; j <= most && !expect; j++) {
            for (k = 0; k < count && groups[k] != j; k++) {}
            if (k == count) expect = BIT(IK_ERR_GROUPS);
        }
    }
    memory = malloc(ik_gait_size(count));
    st = CORE(ik_gait_init(memory, ik_gait_size(count), legs, count, use_groups ? groups : NULL, &o, &gait));
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "gait_init: status %d, expected %#llx", st, expect);
        free(memory);
        return;
    }
    CHECK(st == IK_OK && gait == memory, "gait_init: status %d", st);
    for (step = 0; step < 4 && r->n > 0; step++) {
        ik_real dt = take_u8(r) < 240 ? (1 + take_u8(r)) / 240.0 : take_real(r), before[3][3], feet[3][3];
        ik_real was_progress[3], progress[3];
        int stepping[3], was[3];
        for (k = 0; k < count; k++) ik_gait_foot(gait, k, before[k], &was[k], &was_progress[k]);
        st = CORE(ik_gait_update(gait, dt));
        if (!(isfinite(dt) && dt > 0)) {
            CHECK(st == IK_ERR_TIME_STEP, "gait_update: status %d for dt %g", st, dt);
        } else {
            CHECK(st == IK_OK || st == IK_ERR_GROUND || st == IK_ERR_RANGE, "gait_update: status %d", st);
            CHECK(st != IK_ERR_GROUND || o.ground, "gait_update: a ground failed without one");
        }
        if (st != IK_OK) { /* what the gait shows is as it was (its scratch may differ) */
            for (k = 0; k < count; k++) {
                ik_gait_foot(gait, k, feet[k], &stepping[k], &progress[k]);
                CHECK(memcmp(before[k], feet[k], sizeof feet[k]) == 0 && stepping[k] == was[k] &&
                          memcmp(&progress[k], &was_progress[k], sizeof progress[k]) == 0,
                      "a failed gait update changed foot %d", k);
            }
        } else {
            for (k = 0; k < count; k++) {
                ik_real t[3];
                int has = 0;
                ik_gait_foot(gait, k, feet[k], &stepping[k], NULL);
                CHECK(isfinite(feet[k][0]) && isfinite(feet[k][1]) && isfinite(feet[k][2]), "gait: foot %d not finite", k);
                if (!was[k] && !stepping[k] && o.step_time > dt)
                    CHECK(memcmp(before[k], feet[k], sizeof feet[k]) == 0, "gait: planted foot %d moved", k);
                ik_chain_target(legs[k], t, &has);
                CHECK(has && t[0] == feet[k][0] && t[1] == feet[k][1] && (ik_chain_dim(legs[k]) == 2 || t[2] == feet[k][2]),
                      "gait: leg %d's goal is not its foot", k);
            }
        }
    }
    for (k = 0; k < count; k++) check_sound(of[k], "after a gait");
    free(memory);
}

/* Memory for a copy of s: exact, one byte short, or none. */
static void copy_op(reader *r, slot *s)
{
    slot *t = &slots[take_u8(r) % MAX_CHAINS];
    uint8_t how = take_u8(r);
    size_t size = s->size, given = size;
    void *memory = NULL;
    ik_chain *copy = (ik_chain *)&slots, *sentinel = copy;
    errset expect = 0;
    observed seen, now;
    slot fresh;
    ik_status st;
    if (t == s) t = &slots[(s - slots + 1) % MAX_CHAINS];
    release(t); /* first: s may hang on it */
    if ((how & 3) == 1) given = size - 1;
    if ((how & 3) != 2) memory = malloc(given);
    if (memory == NULL || given < size) expect = BIT(IK_ERR_TOO_LARGE);
    observe(s, &seen);
    st = CORE(ik_chain_copy(memory, given, s->chain, &copy));
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "copy: status %d, expected %#llx", st, expect);
        CHECK(copy == sentinel, "a rejected copy set *out");
        free(memory);
        return;
    }
    CHECK(st == IK_OK && copy == memory, "copy: status %d", st);
    CHECK(ik_chain_check(memory, given), "a copy is no chain");
    fresh = *s;
    fresh.chain = copy, fresh.memory = memory, fresh.size = given, fresh.created = 0;
    *t = fresh;
    observe(t, &now);
    check_kept(&seen, &now, P_ALL, "copy");
    check_sound(t, "a copy");
}

/* One operation on slot s, checked. */
static void operate(reader *r, slot *s)
{
    int op = take_u8(r) % OP_COUNT_OF_OPS, i, keep = P_ALL, two_bone = 0, aim = 0, has, k;
    errset expect = 0;
    ik_status st = IK_OK;
    ik_real v[8], out[12], sentinel[12], target[3], *solve_target = NULL;
    ik_result res;
    observed seen, now;
    unsigned char *raw;
    const char *what = "?";
    solve_fn solve = NULL;
    ik_chain *c = s->chain;
    int limits_set = 0, was_in_limits = s->in_limits;

    if (op == OP_SOLVE_MANY) {
        solve_many(r);
        return;
    }
    if (op == OP_REBUILD) {
        release(s);
        build(s, r);
        return;
    }
    if (op == OP_COPY) {
        copy_op(r, s);
        return;
    }
    if (op == OP_GAIT) {
        gait_op(r, s);
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
        keep = P_BASE | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
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
        if (!expect && seen.parent) expect = BIT(IK_ERR_ATTACHED);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
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
        v[0] = take_angle(r);
        expect = s->dim != 2
                     ? BIT(IK_ERR_DIMENSION)
                     : index_errors(i, s->n) | (isfinite(v[0]) ? 0 : BIT(IK_ERR_NOT_FINITE));
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        st = CORE(ik_chain2d_set_angle(c, i, v[0]));
        if (st == IK_OK) s->in_limits = 0;
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
        if (!expect && seen.parent) expect = BIT(IK_ERR_ATTACHED);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
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
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        st = CORE(ik_chain3d_set_rotation(c, i, v));
        if (st == IK_OK) s->in_limits = 0;
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
                      got->use_pole == (want.use_pole != 0) &&
                      got->angle_tolerance == want.angle_tolerance &&
                      got->escape == (want.escape != 0) && got->mix == want.mix &&
                      got->softness == want.softness && got->stretch == (want.stretch != 0) &&
                      memcmp(&got->max_turn, &want.max_turn, sizeof want.max_turn) == 0 &&
                      got->effector_weight == want.effector_weight,
                  "configure stored other settings");
            CHECK(!got->use_pole || fabs(got->pole[0] * got->pole[0] + got->pole[1] * got->pole[1] +
                                         got->pole[2] * got->pole[2] - 1) <= 1e-12,
                  "configure: the pole is not unit");
        }
        break;
    }
    case OP_SOLVE: solve = ik_chain_solve, what = "solve"; break;
    case OP_SOLVE_FABRIK: solve = ik_chain_solve_fabrik, what = "solve_fabrik"; break;
    case OP_SOLVE_CCD: solve = ik_chain_solve_ccd, what = "solve_ccd"; break;
    case OP_SOLVE_RELAX: solve = ik_chain_solve_relax, what = "solve_relax"; break;
    case OP_SOLVE_TWO_BONE: solve = ik_chain_solve_two_bone, what = "solve_two_bone"; break;
    case OP_SOLVE_AIM: solve = ik_chain_solve_aim, what = "solve_aim"; break;
    case OP_SET_LIMIT2:
        what = "2D set_limit";
        i = take_index(r, s->n);
        v[0] = take_angle(r), v[1] = take_angle(r);
        if (take_u8(r) & 1) { /* often a valid order */
            ik_real lo = fmin(v[0], v[1]), hi = fmax(v[0], v[1]);
            if (!isnan(v[0]) && !isnan(v[1])) v[0] = lo, v[1] = hi;
        }
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        if (!expect && (!isfinite(v[0]) || !isfinite(v[1]))) expect = BIT(IK_ERR_NOT_FINITE);
        if (!expect && !(-IK_PI_FUZZ <= v[0] && v[0] <= v[1] && v[1] <= IK_PI_FUZZ))
            expect = BIT(IK_ERR_LIMIT_RANGE);
        keep = P_ALL & ~P_LIMITS;
        st = CORE(ik_chain2d_set_limit(c, i, v[0], v[1]));
        limits_set = 1;
        break;
    case OP_LIMIT2:
        what = "2D limit";
        i = take_index(r, s->n);
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        has = -7;
        st = CORE(ik_chain2d_limit(c, i, &has, &out[0], &out[1]));
        CHECK(st != IK_OK || has == 0 || has == 1, "limit: has %d", has);
        CHECK(st == IK_OK || has == -7, "a rejected limit wrote has");
        break;
    case OP_SET_HINGE:
    case OP_SET_TWIST:
        what = op == OP_SET_HINGE ? "set_hinge" : "set_twist";
        i = take_index(r, s->n);
        for (k = 0; k < 3; k++)
            v[2 + k] = take_u8(r) < 128 ? (ik_real)(take_u8(r) % 3) - 1 : take_real(r);
        v[0] = take_angle(r), v[1] = take_angle(r);
        if (take_u8(r) & 1) {
            ik_real lo = fmin(v[0], v[1]), hi = fmax(v[0], v[1]);
            if (!isnan(v[0]) && !isnan(v[1])) v[0] = lo, v[1] = hi;
        }
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        if (!expect && op == OP_SET_HINGE) {
            expect = coord_errors(v + 2, 3) & BIT(IK_ERR_NOT_FINITE);
            if (!expect && v[2] == 0 && v[3] == 0 && v[4] == 0) expect = BIT(IK_ERR_AXIS);
        }
        if (!expect && (!isfinite(v[0]) || !isfinite(v[1]))) expect = BIT(IK_ERR_NOT_FINITE);
        if (!expect && !(-IK_PI_FUZZ <= v[0] && v[0] <= v[1] && v[1] <= IK_PI_FUZZ))
            expect = BIT(IK_ERR_LIMIT_RANGE);
        keep = P_ALL & ~P_LIMITS;
        st = CORE(op == OP_SET_HINGE ? ik_chain3d_set_hinge(c, i, v + 2, v[0], v[1])
                                     : ik_chain3d_set_twist(c, i, v[0], v[1]));
        limits_set = 1;
        break;
    case OP_SET_CONE:
        what = "set_cone";
        i = take_index(r, s->n);
        v[0] = take_u8(r) < 128 ? take_u8(r) / 64.0 : take_real(r);
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        if (!expect && !isfinite(v[0])) expect = BIT(IK_ERR_NOT_FINITE);
        if (!expect && !(v[0] >= 0 && v[0] <= IK_PI_FUZZ)) expect = BIT(IK_ERR_CONE);
        keep = P_ALL & ~P_LIMITS;
        st = CORE(ik_chain3d_set_cone(c, i, v[0]));
        limits_set = 1;
        break;
    case OP_LIMIT3: {
        ik_limit3d lim;
        what = "3D limit";
        i = take_index(r, s->n);
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : index_errors(i, s->n);
        st = CORE(ik_chain3d_limit(c, i, &lim));
        break;
    }
    case OP_CLEAR_LIMIT:
        what = "clear_limit";
        i = take_index(r, s->n);
        expect = index_errors(i, s->n);
        keep = P_ALL & ~P_LIMITS;
        st = CORE(ik_chain_clear_limit(c, i));
        break;
    case OP_SET_POINTS: {
        ik_real points[3 * (MAX_BONES + 1)];
        uint8_t how = take_u8(r);
        what = "set_points";
        for (k = 0; k <= s->n; k++) { /* the joints, moved a little, or other numbers */
            ik_real j[3];
            joint3(s, k, j);
            for (i = 0; i < s->dim; i++)
                points[s->dim * k + i] =
                    how < 128 ? j[i] + (ik_real)(int8_t)take_u8(r) / 16.0 : take_real(r);
        }
        expect = coord_errors(points, s->dim * (s->n + 1));
        keep = P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT |
               (seen.parent ? P_BASE : 0);
        st = CORE(ik_chain_set_points(c, points));
        if (st == IK_OK) s->in_limits = 1;
        break;
    }
    case OP_DRAG:
        what = "drag";
        take_target(r, s, v);
        expect = coord_errors(v, s->dim);
        if (!expect && seen.parent) expect = BIT(IK_ERR_ATTACHED);
        keep = P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        st = CORE(ik_chain_drag(c, v));
        break;
    case OP_SIMULATE: {
        uint8_t how = take_u8(r);
        what = "simulate";
        v[0] = how < 200 ? (how + 1) / 240.0 : take_real(r);
        expect = isfinite(v[0]) && v[0] > 0 ? 0 : BIT(IK_ERR_TIME_STEP);
        keep = P_BASE | P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_GOALS | P_PARENT;
        st = CORE(ik_chain_simulate(c, v[0]));
        if (st == IK_OK) s->in_limits = 1;
        break;
    }
    case OP_SET_REST:
        what = "set_rest";
        st = CORE(ik_chain_set_rest(c));
        break;
    case OP_SET_TARGET:
        what = "set_target";
        take_target(r, s, v);
        expect = coord_errors(v, s->dim);
        keep = P_ALL & ~P_GOALS;
        st = CORE(ik_chain_set_target(c, v));
        if (st == IK_OK) {
            ik_real got[3];
            CHECK(has_target(s, got) && got[0] == v[0] && got[1] == v[1] &&
                      (s->dim == 2 || got[2] == v[2]),
                  "set_target kept another target");
        }
        break;
    case OP_TARGET:
        what = "target";
        has = -7;
        st = CORE(ik_chain_target(c, out, &has));
        CHECK(has == 0 || has == 1, "target: has %d", has);
        break;
    case OP_SET_TARGET_ANGLE:
        what = "set_target_angle";
        v[0] = take_angle(r);
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : isfinite(v[0]) ? 0 : BIT(IK_ERR_NOT_FINITE);
        keep = P_ALL & ~P_GOALS;
        st = CORE(ik_chain2d_set_target_angle(c, v[0]));
        break;
    case OP_TARGET_ANGLE:
        what = "target_angle";
        has = -7;
        expect = s->dim != 2 ? BIT(IK_ERR_DIMENSION) : 0;
        st = CORE(ik_chain2d_target_angle(c, out, &has));
        CHECK(st != IK_OK || has == 0 || has == 1, "target_angle: has %d", has);
        CHECK(st == IK_OK || has == -7, "a rejected target_angle wrote has");
        break;
    case OP_SET_TARGET_ROTATION:
        what = "set_target_rotation";
        for (k = 0; k < 4; k++) v[k] = take_real(r);
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : quat_errors(v);
        keep = P_ALL & ~P_GOALS;
        st = CORE(ik_chain3d_set_target_rotation(c, v));
        break;
    case OP_TARGET_ROTATION:
        what = "target_rotation";
        has = -7;
        expect = s->dim != 3 ? BIT(IK_ERR_DIMENSION) : 0;
        st = CORE(ik_chain3d_target_rotation(c, out, &has));
        CHECK(st != IK_OK || has == 0 || has == 1, "target_rotation: has %d", has);
        CHECK(st != IK_OK || !has || is_unit(out), "target_rotation: not unit");
        CHECK(st == IK_OK || has == -7, "a rejected target_rotation wrote has");
        break;
    case OP_CLEAR_TARGET:
        what = "clear_target";
        keep = P_ALL & ~P_GOALS;
        CORE_VOID(ik_chain_clear_target(c));
        CHECK(!has_target(s, v) && !has_orientation(s), "clear_target kept a goal");
        break;
    case OP_ATTACH: {
        slot *p = &slots[take_u8(r) % MAX_CHAINS];
        int joint;
        ik_chain *x;
        what = "attach";
        if (p->chain == NULL) p = s;
        joint = take_index(r, p->n + 1);
        v[0] = take_angle(r);
        for (k = 0; k < 4; k++) v[1 + k] = take_real(r);
        if (s->dim != p->dim)
            expect = BIT(IK_ERR_DIMENSION);
        else if (joint < 0 || joint > p->n)
            expect = BIT(IK_ERR_INDEX);
        else if (seen.parent)
            expect = BIT(IK_ERR_ATTACHED);
        for (x = p->chain; !expect && x; x = ik_chain_parent(x, NULL))
            if (x == c) expect = BIT(IK_ERR_CYCLE);
        has = take_u8(r) & 1; /* 3D: with a rotation */
        if (!expect && s->dim == 2 && !isfinite(v[0])) expect = BIT(IK_ERR_NOT_FINITE);
        if (!expect && s->dim == 3 && has) expect = quat_errors(v + 1);
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS;
        st = CORE(s->dim == 2 ? ik_chain2d_attach(c, p->chain, joint, v[0])
                              : ik_chain3d_attach(c, p->chain, joint, has ? v + 1 : NULL));
        if (st == IK_OK)
            CHECK(ik_chain_parent(c, &k) == p->chain && k == joint, "attach: parent or joint");
        break;
    }
    case OP_DETACH:
        what = "detach";
        keep = P_LEN | P_WEIGHT | P_POSE | P_SETTINGS | P_LIMITS | P_GOALS;
        CORE_VOID(ik_chain_detach(c));
        CHECK(ik_chain_parent(c, &k) == NULL && k == 0, "detach: still attached");
        if (!seen.parent) keep = P_ALL; /* a root: nothing to do */
        break;
    case OP_PARENT: {
        ik_chain *p = ik_chain_parent(c, &k);
        what = "parent";
        CHECK(p == NULL ? k == 0 : slot_of(p) != NULL && k >= 0 && k <= ik_chain_count(p),
              "parent: joint %d", k);
        break;
    }
    case OP_CHECK:
        what = "check";
        CHECK(ik_chain_check(s->memory, s->size) && !ik_chain_check(s->memory, s->size - 1) &&
                  !ik_chain_check(NULL, s->size),
              "ik_chain_check");
        break;
    case OP_UPDATE:
        what = "update";
        CORE_VOID(ik_chain_update(c));
        break;
    case OP_REACH:
        what = "reach";
        out[0] = ik_chain_reach(c);
        CHECK(isfinite(out[0]) && out[0] >= 0, "reach %g", out[0]);
        break;
    }
    if (solve) {
        int null_target = (take_u8(r) & 7) == 0;
        ik_solver solver = solve == ik_chain_solve_fabrik     ? IK_SOLVER_FABRIK
                           : solve == ik_chain_solve_ccd      ? IK_SOLVER_CCD
                           : solve == ik_chain_solve_relax    ? IK_SOLVER_RELAX
                           : solve == ik_chain_solve_two_bone ? IK_SOLVER_TWO_BONE
                           : solve == ik_chain_solve_aim      ? IK_SOLVER_AIM
                                                              : ik_chain_settings(c)->solver;
        take_target(r, s, target);
        solve_target = null_target ? NULL : target;
        expect = solve_errors(s, solver, solve_target);
        if (null_target) has_target(s, target);
        two_bone = solver == IK_SOLVER_TWO_BONE;
        aim = solver == IK_SOLVER_AIM;
        keep = P_LEN | P_WEIGHT | P_SETTINGS | P_LIMITS | P_PARENT | P_BASE |
               (null_target ? P_GOALS : 0);
        st = CORE(solve(c, solve_target, &res));
    }

    if (trace) fprintf(stderr, "%s on chain %d: status %d\n", what, (int)(s - slots), st);
    if (expect) {
        CHECK((BIT(st) & expect) != 0, "%s: status %d, expected one of %#llx", what, st, expect);
        CHECK(memcmp(raw, s->memory, s->size) == 0, "%s: a rejected call changed the chain", what);
        CHECK(memcmp(out, sentinel, sizeof out) == 0, "%s: a rejected call wrote its output", what);
        keep = P_ALL;
        s->in_limits = was_in_limits;
    } else {
        CHECK(st == IK_OK, "%s: status %d, expected IK_OK", what, st);
        if (limits_set) s->in_limits = 0;
        if (solve) {
            check_result(s, target, &res, two_bone, aim, what);
            s->in_limits = was_in_limits;
            check_solved(s, &seen, what);
        }
        for (i = 0; i < 12; i++)
            CHECK(memcmp(&out[i], &sentinel[i], sizeof(ik_real)) == 0 || isfinite(out[i]),
                  "%s: output %d is %g", what, i, out[i]);
    }
    observe(s, &now);
    check_kept(&seen, &now, keep, what);
    /* the chain, and those an operation on it may carry (a root other than s is untouched) */
    for (k = 0; k < MAX_CHAINS; k++)
        if (slots[k].chain && (&slots[k] == s || ik_chain_parent(slots[k].chain, NULL)))
            check_sound(&slots[k], what);
    free(raw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r;
    int count, k, ops;
    r.p = data, r.n = size;
    trace = getenv("IK_FUZZ_TRACE") != NULL;
    count = 1 + take_u8(&r) % MAX_CHAINS;
    for (k = 0; k < count; k++) build(&slots[k], &r);
    /* operations need a chain in slot 0: a refused first build ends the input */
    for (ops = 0; ops < MAX_OPS && r.n > 0 && slots[0].chain; ops++) {
        slot *s = &slots[take_u8(&r) % MAX_CHAINS];
        if (s->chain == NULL) s = &slots[0];
        operate(&r, s);
        if (slots[0].chain == NULL) break;
    }
    for (k = 0; k < MAX_CHAINS; k++) release(&slots[k]);
    return 0;
}
