/*
 * chain_checks.h - what the chain and rig harnesses share: a chain in a slot, what of it is
 * observable through ik.h's getters, the checks that it is sound, and the oracle's rules for
 * chain arguments and settings. Header-only (static inline: each harness uses a part).
 */
#ifndef IK_FUZZ_CHAIN_CHECKS_H
#define IK_FUZZ_CHAIN_CHECKS_H

#include "fuzzer.h"

#include <limits.h>

/*
 * The largest valid iteration count the input may set: more is only slower. One value
 * asks for INT_MAX, so a solve meets the bound of its work (IK_MAX_ITERATIONS) instead.
 */
#define MAX_ITERATIONS 200

#define MAX_BONES 12

/* A set of statuses (there are more than 32). */
typedef unsigned long long errset;
#define BIT(status) (1ull << (status))

typedef struct slot {
    ik_chain *chain; /* NULL: no chain */
    void *memory; /* the chain's block, for byte snapshots */
    size_t size;
    int created; /* by ik_chainNd_create (free with ik_chain_destroy) */
    int dim, n;
    ik_real lengths[MAX_BONES]; /* as set */
    int in_limits; /* a solve or set_points brought the pose within the limits since they
                      or the pose were last set */
} slot;

/* ---- what is observable, in parts ---- */

enum {
    P_BASE = 1,
    P_LEN = 2,
    P_WEIGHT = 4,
    P_POSE = 8,
    P_WORLD = 16,
    P_POS = 32, /* the joints and the stretch factor */
    P_SETTINGS = 64,
    P_LIMITS = 128,
    P_GOALS = 256,
    P_PARENT = 512
};
#define P_ALL 1023
#define N_SETTINGS 17

typedef struct observed {
    ik_real base[7];
    ik_real len[MAX_BONES];
    ik_real weight[MAX_BONES + 1];
    ik_real pose[4 * MAX_BONES];
    ik_real world[4 * MAX_BONES];
    ik_real pos[3 * (MAX_BONES + 1) + 1];
    ik_real settings[N_SETTINGS];
    ik_real limits[12 * MAX_BONES];
    ik_real goals[9];
    ik_chain *parent;
    int joint;
} observed;

/* The settings as numbers, in a fixed order. */
static inline void settings_numbers(const ik_settings *st, ik_real out[N_SETTINGS])
{
    out[0] = st->solver, out[1] = st->iterations, out[2] = st->tolerance;
    out[3] = st->greed, out[4] = st->greed_ramp, out[5] = st->bend;
    out[6] = st->use_pole;
    out[7] = st->pole[0], out[8] = st->pole[1], out[9] = st->pole[2];
    out[10] = st->angle_tolerance, out[11] = st->escape, out[12] = st->mix;
    out[13] = st->softness, out[14] = st->stretch, out[15] = st->max_turn;
    out[16] = st->effector_weight;
}

static inline void observe(const slot *s, observed *o)
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
    o->pos[3 * (MAX_BONES + 1)] = ik_chain_stretch(c);
    settings_numbers(st, o->settings);
    for (i = 0; i < s->n; i++) {
        ik_real *l = &o->limits[12 * i];
        if (s->dim == 2) {
            int has;
            CHECK(ik_chain2d_limit(c, i, &has, &l[1], &l[2]) == IK_OK, "limit %d", i);
            l[0] = has;
        } else {
            ik_limit3d lim;
            CHECK(ik_chain3d_limit(c, i, &lim) == IK_OK, "limit %d", i);
            l[0] = lim.hinge, l[1] = lim.axis[0], l[2] = lim.axis[1], l[3] = lim.axis[2];
            l[4] = lim.min, l[5] = lim.max, l[6] = lim.cone, l[7] = lim.half_angle;
            l[8] = lim.twist, l[9] = lim.twist_min, l[10] = lim.twist_max;
        }
    }
    {
        int has, j;
        ik_chain *held = ik_chain_tip_parent(c, &j, NULL);
        CHECK(ik_chain_target(c, o->goals, &has) == IK_OK, "target");
        o->goals[3] = has;
        if (held) { /* a held tip's goal is its hold: the point moves with the chain holding it */
            CHECK(has, "a held tip without a goal");
            o->goals[0] = (ik_real)(uintptr_t)held, o->goals[1] = j, o->goals[2] = 0, o->goals[3] = 2;
        }
        if (s->dim == 2)
            CHECK(ik_chain2d_target_angle(c, &o->goals[4], &has) == IK_OK, "target angle");
        else
            CHECK(ik_chain3d_target_rotation(c, &o->goals[4], &has) == IK_OK, "target rotation");
        o->goals[8] = has;
    }
    o->parent = ik_chain_parent(c, &o->joint);
}

/* Bitwise: -0 and +0 differ. */
static inline void check_kept(const observed *a, const observed *b, int parts, const char *what)
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
    CHECK(!(parts & P_LIMITS) || memcmp(a->limits, b->limits, sizeof a->limits) == 0,
          "%s changed a limit", what);
    CHECK(!(parts & P_GOALS) || memcmp(a->goals, b->goals, sizeof a->goals) == 0,
          "%s changed the goals", what);
    CHECK(!(parts & P_PARENT) || (a->parent == b->parent && a->joint == b->joint),
          "%s changed the parent", what);
}

/* Every bone within its limits (1e-9), as ik.h promises after a solve. */
static inline void check_limits(const slot *s, const observed *o, const char *what)
{
    int i;
    for (i = 0; i < s->n; i++) {
        const ik_real *l = &o->limits[12 * i];
        if (s->dim == 2) {
            if (l[0])
                CHECK(outside_range(o->pose[i], l[1], l[2]) <= 1e-9,
                      "%s: bone %d's angle %.17g is outside its limit [%.17g, %.17g]", what, i,
                      o->pose[i], l[1], l[2]);
        } else {
            const ik_real *q = &o->pose[4 * i];
            if (l[0]) { /* hinge: a turn about the axis only, within [min, max] */
                ik_real along = q[1] * l[1] + q[2] * l[2] + q[3] * l[3];
                ik_real off[3] = {q[1] - along * l[1], q[2] - along * l[2], q[3] - along * l[3]};
                ik_real angle = along == 0 && q[0] == 0 ? 0 : wrap_pi(2 * atan2(along, q[0]));
                CHECK(half_norm(off[0], off[1], off[2]) <= 1e-9,
                      "%s: bone %d turns off its hinge axis", what, i);
                CHECK(outside_range(angle, l[4], l[5]) <= 1e-9,
                      "%s: bone %d's hinge angle %.17g is outside [%.17g, %.17g]", what, i, angle,
                      l[4], l[5]);
            }
            if (l[6]) { /* cone: the direction within half_angle of the parent's +x */
                ik_real x[3] = {1, 0, 0}, d[3];
                quat_rotate(q, x, d);
                CHECK(atan2(hypot(d[1], d[2]), d[0]) <= l[7] + 1e-9,
                      "%s: bone %d points %.17g from its parent, its cone is %.17g", what, i,
                      atan2(hypot(d[1], d[2]), d[0]), l[7]);
            }
            if (l[8] && hypot(q[0], q[1]) > 1e-6) { /* twist about its own +x */
                ik_real angle = wrap_pi(2 * atan2(q[1], q[0]));
                CHECK(outside_range(angle, l[9], l[10]) <= 1e-9,
                      "%s: bone %d's twist %.17g is outside [%.17g, %.17g]", what, i, angle, l[9],
                      l[10]);
            }
        }
    }
}

/* The chain is sound; see the top of the file. */
static inline void check_sound(const slot *s, const char *what)
{
    observed o;
    int i, k;
    ik_real stretch;
    CHECK(ik_chain_count(s->chain) == s->n && ik_chain_dim(s->chain) == s->dim, "%s: count or dim",
          what);
    observe(s, &o);
    stretch = o.pos[3 * (MAX_BONES + 1)];
    CHECK(isfinite(stretch) && stretch >= 1, "%s: stretch factor %g", what, stretch);
    if (o.parent) {
        const ik_real *p = ik_chain_positions(o.parent) + s->dim * o.joint;
        CHECK(o.joint >= 0 && o.joint <= ik_chain_count(o.parent), "%s: parent joint %d", what,
              o.joint);
        CHECK(o.pos[0] == p[0] && o.pos[1] == p[1] && (s->dim == 2 || o.pos[2] == p[2]),
              "%s: the base (%.17g, %.17g) is not on its parent's joint %d (%.17g, %.17g)", what,
              o.pos[0], o.pos[1], o.joint, p[0], p[1]);
    }
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
        ik_real len = o.len[i] * stretch, slack;
        CHECK(memcmp(&o.len[i], &s->lengths[i], sizeof(ik_real)) == 0,
              "%s: length %d is %.17g, was set to %.17g", what, i, o.len[i], s->lengths[i]);
        CHECK(near_length(half, len * 0.5, scale * 0.5),
              "%s: bone %d's joints are %.17g apart, its length is %.17g (stretched %.17g)", what,
              i, 2 * half, o.len[i], stretch);
        /* the world orientation points along the bone, to the rounding of its joints */
        slack = 1e-9 + (4e-16 * scale + 1e-320) / (half > 0 ? half : 1e-320);
        if (slack < 0.1) {
            ik_real d[3] = {(b[0] - a[0]) * 0.5 / half, (b[1] - a[1]) * 0.5 / half,
                            (b[2] - a[2]) * 0.5 / half},
                    x[3] = {1, 0, 0}, w[3];
            if (s->dim == 2)
                w[0] = cos(o.world[i]), w[1] = sin(o.world[i]), w[2] = 0;
            else
                quat_rotate(&o.world[4 * i], x, w);
            CHECK(half_norm(w[0] - d[0], w[1] - d[1], w[2] - d[2]) <= slack * 0.5,
                  "%s: bone %d's world orientation is %.3g off the direction of its joints", what,
                  i, 2 * half_norm(w[0] - d[0], w[1] - d[1], w[2] - d[2]));
        }
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
    if (s->in_limits) check_limits(s, &o, what);
}

/* ---- arguments ---- */

static inline errset length_errors(ik_real v)
{
    if (!isfinite(v)) return BIT(IK_ERR_NOT_FINITE);
    if (v < 0) return BIT(IK_ERR_NEGATIVE);
    return v > IK_MAX_COORD ? BIT(IK_ERR_RANGE) : 0;
}

/* An index: mostly in 0..count-1, sometimes just past it or far out. */
static inline int take_index(reader *r, int count)
{
    static const int bad[] = {-1, INT_MIN, INT_MAX};
    uint8_t v = take_u8(r);
    if (v < 232) return v % count;
    v %= 4;
    return v == 3 ? count : bad[v];
}

static inline errset index_errors(int i, int count)
{
    return i < 0 || i >= count ? BIT(IK_ERR_INDEX) : 0;
}

static inline errset coord_errors(const ik_real *v, int count)
{
    int k;
    errset e = 0;
    for (k = 0; k < count; k++) {
        if (!isfinite(v[k])) return BIT(IK_ERR_NOT_FINITE);
        if (fabs(v[k]) > IK_MAX_COORD) e = BIT(IK_ERR_RANGE);
    }
    return e;
}

/* Joint j of the slot's chain as 3 numbers (z = 0 in 2D). */
static inline void joint3(const slot *s, int j, ik_real out[3])
{
    const ik_real *p = ik_chain_positions(s->chain) + s->dim * j;
    out[0] = p[0], out[1] = p[1], out[2] = s->dim == 3 ? p[2] : 0;
}

/* A target: often exactly a joint of the chain or a point on a bone's line, else numbers. */
static inline void take_target(reader *r, const slot *s, ik_real t[3])
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

static inline errset quat_errors(const ik_real q[4])
{
    int k;
    for (k = 0; k < 4; k++)
        if (!isfinite(q[k])) return BIT(IK_ERR_NOT_FINITE);
    return q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0 ? BIT(IK_ERR_ZERO_ROTATION) : 0;
}

/* An angle, mostly within [-pi, pi], sometimes any number. */
static inline ik_real take_angle(reader *r)
{
    uint8_t v = take_u8(r);
    if (v < 200) return ((ik_real)v / 199.0 * 2 - 1) * 3.14159265358979323846;
    return take_real(r);
}

static inline ik_settings take_settings(reader *r, const ik_settings *current)
{
    ik_settings s = *current;
    unsigned fields = take_u8(r);
    fields |= (unsigned)take_u8(r) << 8;
    if (fields & 1) s.solver = (ik_solver)((int)(take_u8(r) % 7) - 1);
    if (fields & 2) {
        static const int bad[] = {0, -1, INT_MIN};
        uint8_t v = take_u8(r);
        s.iterations = v < 240 ? 1 + v % MAX_ITERATIONS : v == 255 ? INT_MAX : bad[v % 3];
    }
    if (fields & 4) s.tolerance = take_real(r);
    if (fields & 8) s.greed = take_u8(r) < 128 ? (take_u8(r) + 1) / 256.0 : take_real(r);
    if (fields & 16) s.greed_ramp = (int)take_u8(r) - 128;
    if (fields & 32) s.bend = (int)(take_u8(r) % 5) - 2;
    if (fields & 64) s.use_pole = take_u8(r) % 3;
    if (fields & 128) s.pole[0] = take_real(r), s.pole[1] = take_real(r), s.pole[2] = take_real(r);
    if (fields & 256) s.angle_tolerance = take_real(r);
    if (fields & 512) s.escape = (int)take_u8(r) - 128;
    if (fields & 1024) s.mix = take_u8(r) < 128 ? take_u8(r) / 255.0 : take_real(r);
    if (fields & 2048) s.softness = take_real(r);
    if (fields & 4096) s.stretch = (int)take_u8(r) - 128;
    if (fields & 8192) {
        uint8_t v = take_u8(r);
        s.max_turn = v < 64 ? INFINITY : v < 160 ? (v - 63) / 32.0 : take_real(r);
    }
    if (fields & 16384) s.effector_weight = take_u8(r) < 128 ? take_u8(r) / 16.0 : take_real(r);
    if (fields & 32768) { /* secondary motion: mostly sensible numbers, sometimes any */
        uint8_t how = take_u8(r);
        if (how & 1) s.gravity[0] = take_real(r), s.gravity[1] = take_real(r), s.gravity[2] = take_real(r);
        else if (how & 2) s.gravity[0] = 0, s.gravity[1] = -9.81, s.gravity[2] = 0;
        if (how & 4) s.stiffness = how & 8 ? take_real(r) : take_u8(r) * 4.0;
        if (how & 16) s.damping = how & 32 ? take_real(r) : take_u8(r) / 32.0;
    }
    return s;
}

/* The status ik_settings_validate gives: its rules in its order. */
static inline errset validate_errors(const ik_settings *s)
{
    int k;
    if (s->iterations < 1) return BIT(IK_ERR_ITERATIONS);
    if (!(isfinite(s->tolerance) && s->tolerance >= 0)) return BIT(IK_ERR_TOLERANCE);
    if (!(isfinite(s->angle_tolerance) && s->angle_tolerance >= 0))
        return BIT(IK_ERR_ANGLE_TOLERANCE);
    if (!(isfinite(s->greed) && s->greed > 0 && s->greed <= 1)) return BIT(IK_ERR_GREED);
    if (s->bend != 1 && s->bend != -1) return BIT(IK_ERR_BEND);
    if ((int)s->solver < 0 || (int)s->solver > (int)IK_SOLVER_AIM) return BIT(IK_ERR_SOLVER);
    if (!(isfinite(s->mix) && s->mix >= 0 && s->mix <= 1)) return BIT(IK_ERR_MIX);
    if (!(isfinite(s->softness) && s->softness >= 0)) return BIT(IK_ERR_SOFTNESS);
    if (isnan(s->max_turn) || !(s->max_turn > 0)) return BIT(IK_ERR_MAX_TURN);
    if (!(isfinite(s->effector_weight) && s->effector_weight >= 0))
        return BIT(IK_ERR_EFFECTOR_WEIGHT);
    for (k = 0; k < 3; k++)
        if (!(isfinite(s->gravity[k]) && fabs(s->gravity[k]) <= IK_MAX_COORD)) return BIT(IK_ERR_GRAVITY);
    if (!(isfinite(s->stiffness) && s->stiffness >= 0)) return BIT(IK_ERR_STIFFNESS);
    if (!(isfinite(s->damping) && s->damping >= 0)) return BIT(IK_ERR_DAMPING);
    if (s->use_pole) {
        int zero = s->pole[0] == 0 && s->pole[1] == 0 && s->pole[2] == 0;
        if (!isfinite(s->pole[0]) || !isfinite(s->pole[1]) || !isfinite(s->pole[2]) || zero)
            return BIT(IK_ERR_POLE);
    }
    return 0;
}

/* The status ik_gait_validate gives: its rules in its order. */
static inline errset validate_gait(const ik_gait_options *o)
{
    if (!(isfinite(o->stride) && o->stride > 0 && o->stride <= IK_MAX_COORD)) return BIT(IK_ERR_STRIDE);
    if (!(isfinite(o->step_time) && o->step_time > 0 && o->step_time <= IK_MAX_COORD)) return BIT(IK_ERR_STEP_TIME);
    if (!(isfinite(o->lift) && o->lift >= 0 && o->lift <= IK_MAX_COORD)) return BIT(IK_ERR_LIFT);
    if (!(isfinite(o->lead) && o->lead >= 0 && o->lead * o->stride <= IK_MAX_COORD)) return BIT(IK_ERR_LEAD);
    if (o->max_groups < 1) return BIT(IK_ERR_MAX_GROUPS);
    if (o->up != 1 && o->up != -1) return BIT(IK_ERR_UP);
    return 0;
}

/* The status ik_chain_configure gives: ik_settings_validate's, then the chain's own rules. */
static inline errset settings_errors(const ik_settings *s, const slot *c)
{
    errset e = validate_errors(s);
    if (e) return e;
    /* two_bone: 2 bones, or 3 for an orientation goal (checked when solving) */
    if (s->solver == IK_SOLVER_TWO_BONE && c->n != 2 && c->n != 3) return BIT(IK_ERR_NOT_TWO_BONE);
    if (s->use_pole && c->dim != 3) return BIT(IK_ERR_POLE);
    return 0;
}

/* Whether the chain keeps an orientation goal. */
static inline int has_orientation(const slot *s)
{
    ik_real out[4];
    int has = 0;
    if (s->dim == 2)
        ik_chain2d_target_angle(s->chain, out, &has);
    else
        ik_chain3d_target_rotation(s->chain, out, &has);
    return has;
}

static inline int has_target(const slot *s, ik_real out[3])
{
    int has = 0;
    out[2] = 0;
    ik_chain_target(s->chain, out, &has);
    return has;
}

/* What a solve with solver of slot s's chain towards target (NULL: the kept goal) returns. */
static inline errset solve_errors(const slot *s, ik_solver solver, const ik_real *target)
{
    ik_real kept[3];
    if (target) {
        errset e = ik_chain_tip_parent(s->chain, NULL, NULL) ? BIT(IK_ERR_HELD) : coord_errors(target, s->dim);
        if (e) return e;
    } else if (!has_target(s, kept)) {
        return BIT(IK_ERR_NO_TARGET);
    }
    if (solver == IK_SOLVER_TWO_BONE && s->n != (has_orientation(s) ? 3 : 2))
        return BIT(IK_ERR_NOT_TWO_BONE);
    return 0;
}

#endif /* IK_FUZZ_CHAIN_CHECKS_H */
